package io.github.dqgovernance.spark;

import io.github.dqgovernance.listener.Manifest;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;

/**
 * Writes the rule sees but cannot measure, said in one line per contract when their target is governed; they
 * proceed ungoverned, in {@code block} mode too. A Hive-format table's insert ({@code InsertIntoHiveTable}, also
 * the nested write of a Hive CTAS; a Hive parquet or ORC table that Spark converts to its own writer is an
 * {@code InsertIntoHadoopFsRelationCommand} and is measured) writes through Hive's serde past the commit
 * protocol the extension wraps. A Structured Streaming micro-batch ({@code WriteToMicroBatchDataSourceV1} for
 * Spark's file sink and other V1 sinks, {@code WriteToMicroBatchDataSource} for DSv2 sinks) is written by its
 * sink, which runs no write plan the rule could change. Matched by class name and read through their accessors:
 * Hive's classes are absent from sessions without Hive support.
 */
final class UnmeasuredWrites {
  private UnmeasuredWrites() {}

  /**
   * The one line for such a write to a governed dataset; any other plan is left alone, and any error here says
   * so in one line. Called by the optimizer rule and by the analyzer's checks (the streaming engine strips a V1
   * sink's write node before it optimizes a micro-batch), once per plan each: the line is logged once.
   */
  static void warn(LogicalPlan plan, org.apache.spark.sql.SparkSession any) {
    String kind;
    String node = plan == null ? "" : plan.getClass().getName();
    node = node.substring(node.lastIndexOf('.') + 1); // not getSimpleName, which can throw on Scala's nested names
    switch (node) {
      case "InsertIntoHiveTable":
        kind = "Hive-format table writes";
        break;
      case "WriteToMicroBatchDataSourceV1":
      case "WriteToMicroBatchDataSource":
        kind = "streaming writes";
        break;
      default:
        return;
    }
    try {
      SparkSession session = (SparkSession) any;
      Manifest manifest = EnforceSettings.read(session.sessionState().conf(), session.sparkContext().appName())
          .manifest();
      if (manifest == null) {
        return;
      }
      String[] identity = null;
      String target = null;
      String writer = node;
      List<String[]> symlinks = new ArrayList<>();
      if (kind.startsWith("Hive")) {
        CatalogTable table = (CatalogTable) accessor(plan, "table");
        target = table.identifier().unquotedString();
        symlinks.add(new String[] {"table", target});
        if (table.storage().locationUri().isDefined()) {
          identity = EnforceWrites.identity(table.storage().locationUri().get());
        }
      } else {
        @SuppressWarnings("unchecked")
        scala.collection.Map<String, String> options = (scala.collection.Map<String, String>) accessor(plan,
            "writeOptions");
        scala.Option<String> path = options.get("path");
        if (path.isDefined()) {
          target = path.get();
          identity = EnforceWrites.pathIdentity(target);
        }
        boolean v1 = writer.endsWith("V1");
        Object sink = accessor(plan, v1 ? "sink" : "table");
        scala.Option<?> named = (scala.Option<?>) accessor(plan, v1 ? "catalogTable" : "relation");
        writer = sink.getClass().getSimpleName();
        if (named.isDefined() && named.get() instanceof CatalogTable) {
          target = ((CatalogTable) named.get()).identifier().unquotedString();
          symlinks.add(new String[] {"table", target});
        } else if (named.isDefined() && named.get() instanceof DataSourceV2Relation) {
          DataSourceV2Relation relation = (DataSourceV2Relation) named.get();
          target = relation.name();
          symlinks.add(new String[] {"table", target});
          identity = EnforceWrites.tableIdentity(session, relation);
        }
      }
      if (target == null) {
        return;
      }
      String[] current = EnforceWrites.current(session);
      Manifest.Entry entry = identity == null ? manifest.match("", target, symlinks, current)
          : manifest.match(identity[0], identity[1], symlinks, current);
      if (entry != null) {
        EnforceSettings.warnOnce("contract " + entry.contractName + ": " + kind + " (" + target + ", " + writer
            + ") are not measured by this release; they proceed ungoverned");
      }
    } catch (Exception | LinkageError e) {
      EnforceSettings.warnOnce(kind + " (" + node + "): cannot tell whether the target "
          + "is governed (" + e.getClass().getSimpleName() + ": " + EnforceSettings.firstLine(e.getMessage())
          + "); they proceed ungoverned");
    }
  }

  private static Object accessor(LogicalPlan plan, String name) throws ReflectiveOperationException {
    return plan.getClass().getMethod(name).invoke(plan);
  }
}

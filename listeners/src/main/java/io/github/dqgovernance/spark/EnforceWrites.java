package io.github.dqgovernance.spark;

import io.github.dqgovernance.listener.Manifest;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.plans.logical.AppendData;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.OverwriteByExpression;
import org.apache.spark.sql.catalyst.plans.logical.V2WriteCommand;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.execution.command.CreateDataSourceTableAsSelectCommand;
import org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand;
import org.apache.spark.sql.execution.datasources.SaveIntoDataSourceCommand;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The optimizer rule (pre-CBO, once per plan): a write whose target a contract governs gets the contract's
 * same-pass checks on top of its query. File-source path writes, {@code saveAsTable}, {@code INSERT INTO} and
 * CTAS reach Spark as an {@code InsertIntoHadoopFsRelationCommand} (CTAS in its nested execution); a Delta path
 * write as a {@code SaveIntoDataSourceCommand}; a Delta table by name as a DSv2 write ({@code AppendData} and
 * the overwrites). Other DSv2 tables, Hive-format tables and streaming sinks are not measured and say so in one
 * line ({@link UnmeasuredWrites}). Writes that match no contract
 * keep their plan unchanged; any internal error leaves the write ungoverned. (Handlers catch {@code Exception}:
 * Spark's Scala code throws checked exceptions, such as {@code AnalysisException}, that Java sees undeclared.)
 */
final class EnforceWrites extends Rule<LogicalPlan> {
  /** Governed CTAS targets by location key, until their nested write is planned. */
  private static final java.util.Map<String, String[]> CTAS_TARGETS = new java.util.concurrent.ConcurrentHashMap<>();
  private final SparkSession session;

  EnforceWrites(SparkSession session) {
    this.session = session;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    if (plan instanceof CreateDataSourceTableAsSelectCommand) {
      rememberCtas((CreateDataSourceTableAsSelectCommand) plan);
      return plan;
    }
    if (plan instanceof SaveIntoDataSourceCommand) {
      return dataSourceWrite((SaveIntoDataSourceCommand) plan);
    }
    if (plan instanceof V2WriteCommand) {
      return tableWrite(plan, (V2WriteCommand) plan);
    }
    if (!(plan instanceof InsertIntoHadoopFsRelationCommand)) {
      UnmeasuredWrites.warn(plan, session);
      return plan;
    }
    InsertIntoHadoopFsRelationCommand cmd = (InsertIntoHadoopFsRelationCommand) plan;
    String target = String.valueOf(cmd.outputPath());
    String contract = null;
    try {
      if (GovernedWrite.isWrapped(cmd.query())) {
        return plan;
      }
      EnforceSettings settings = settings();
      Manifest manifest = settings.manifest();
      if (manifest == null) {
        return plan;
      }
      String[] identity = identity(cmd.outputPath().toUri());
      List<String[]> symlinks = new ArrayList<>();
      if (cmd.catalogTable().isDefined()) {
        CatalogTable table = cmd.catalogTable().get();
        target = table.identifier().unquotedString();
        symlinks.add(new String[] {"table", table.identifier().unquotedString()});
      }
      Manifest.Entry entry = manifest.match(identity[0], identity[1], symlinks, current(session));
      if (entry == null) {
        String[] ctas = CTAS_TARGETS.remove(Manifest.key(identity[0], identity[1]));
        if (ctas == null) {
          return plan;
        }
        target = ctas[0]; // CTAS: the nested write names no table; the outer command did
        entry = manifest.match(identity[0], identity[1], List.<String[]>of(new String[] {"table", ctas[0]}),
            current(session));
        if (entry == null) {
          return plan;
        }
      }
      contract = entry.contractName;
      if (!hasChecks(entry)) {
        return plan;
      }
      if (settings.block && cmd.mode() == SaveMode.Overwrite && !cmd.dynamicPartitionOverwrite()
          && holdsFiles(cmd.outputPath())) {
        // Spark deletes the old files before the job runs: a veto could not bring them back.
        throw new GovernanceVetoException("dq-governance: block mode refuses a static overwrite of " + target
            + " (contract " + contract + "): Spark deletes the old files before the checks run; append, or set "
            + "spark.sql.sources.partitionOverwriteMode=dynamic for a partitioned target");
      }
      LogicalPlan wrapped = govern(manifest, entry, identity, target, settings, cmd.query(), false);
      return cmd.withNewChildren(CollectionConverters.asScala(List.of(wrapped)).toSeq());
    } catch (GovernanceVetoException e) {
      throw e;
    } catch (Exception | LinkageError e) {
      stepAside(contract, target, e);
      return plan;
    }
  }

  /**
   * Whether a static overwrite has anything to lose: Spark deletes what the output path holds before the job
   * runs. A CTAS or a {@code saveAsTable} that creates a table writes in Overwrite mode to the new table's
   * location, which holds nothing (Spark refuses a non-empty one); so does a write to a new path: those are
   * measured and judged before their commit like an append. A path that cannot be listed counts as holding
   * files: the refusal is the safe side.
   */
  private boolean holdsFiles(org.apache.hadoop.fs.Path path) {
    try {
      org.apache.hadoop.fs.FileSystem fs = path.getFileSystem(session.sessionState().newHadoopConf());
      return fs.exists(path) && fs.listStatusIterator(path).hasNext();
    } catch (java.io.FileNotFoundException e) {
      return false;
    } catch (Exception e) {
      return true;
    }
  }

  private EnforceSettings settings() {
    return EnforceSettings.read(session.sessionState().conf(), session.sparkContext().appName());
  }

  /** Whether the entry has compiled checks; a version 1 manifest entry says once that its writes are ungoverned. */
  private static boolean hasChecks(Manifest.Entry entry) {
    if (entry.checks == null) {
      EnforceSettings.warnOnce("contract " + entry.contractName + ": the manifest has no compiled checks "
          + "(manifestVersion 1); writes to it proceed ungoverned");
    }
    return entry.checks != null;
  }

  /** The written query with the contract's checks on top, registered until its metrics are judged. */
  private LogicalPlan govern(Manifest manifest, Manifest.Entry entry, String[] identity, String target,
      EnforceSettings settings, LogicalPlan query, boolean abortOnFail) throws GovernedWrite.Skip {
    GovernedWrite write = new GovernedWrite(manifest, entry, new CompiledChecks(entry.checks), identity[0],
        identity[1], target, settings, CollectionConverters.asJava(query.output()));
    LogicalPlan wrapped = write.wrap(session, query, abortOnFail);
    PendingWrites.add(write);
    return wrapped;
  }

  /** The one line for a write left ungoverned: contract, target, and the reason (never a value). */
  private static void stepAside(String contract, String target, Throwable e) {
    String reason = e instanceof GovernedWrite.Skip ? e.getMessage()
        : e.getClass().getSimpleName() + ": " + EnforceSettings.firstLine(e.getMessage());
    EnforceSettings.LOG.warn(EnforceSettings.PREFIX + "contract " + contract + ", write to " + target + ": " + reason
        + "; the write proceeds ungoverned");
  }

  /**
   * CTAS (and saveAsTable of a new table) runs its write as a nested InsertIntoHadoopFsRelationCommand that
   * carries the table's location but not its name: remember the location of a governed table until then.
   */
  private void rememberCtas(CreateDataSourceTableAsSelectCommand cmd) {
    try {
      CatalogTable table = cmd.table();
      java.net.URI location = table.storage().locationUri().isDefined() ? table.storage().locationUri().get()
          : session.sessionState().catalog().defaultTablePath(table.identifier());
      String[] identity = identity(location);
      String name = table.identifier().unquotedString();
      EnforceSettings settings = settings();
      Manifest manifest = settings.manifest();
      if (manifest != null && manifest.match(identity[0], identity[1], List.<String[]>of(new String[] {"table", name}),
          current(session)) != null) {
        CTAS_TARGETS.put(Manifest.key(identity[0], identity[1]), new String[] {name});
      }
    } catch (Exception | LinkageError e) {
      EnforceSettings.LOG.warn(EnforceSettings.PREFIX + "CTAS " + cmd.table().identifier() + ": "
          + e.getClass().getSimpleName() + ": " + EnforceSettings.firstLine(e.getMessage())
          + "; the write proceeds ungoverned");
    }
  }

  /**
   * A data source write (SaveIntoDataSourceCommand) to a governed path. Delta is measured: its query gets the
   * metrics node, which runs inside Delta's own nested write ("deltaTransactionalWrite"), and
   * {@link DeltaResults} records the verdict when that execution ends. In block mode a failed {@code fail} rule
   * aborts the write's tasks (Delta commits nothing); a gate's thresholds are reported, never blocking, since
   * Delta offers no veto before its commit. Other data sources log one line and proceed ungoverned.
   */
  private LogicalPlan dataSourceWrite(SaveIntoDataSourceCommand cmd) {
    String target = null;
    String contract = null;
    try {
      scala.Option<String> path = cmd.options().get("path");
      if (path.isEmpty() || GovernedWrite.isWrapped(cmd.query())) {
        return cmd;
      }
      target = path.get();
      EnforceSettings settings = settings();
      Manifest manifest = settings.manifest();
      if (manifest == null) {
        return cmd;
      }
      String[] identity = pathIdentity(target);
      Manifest.Entry entry = manifest.match(identity[0], identity[1], List.of());
      if (entry == null) {
        return cmd;
      }
      contract = entry.contractName;
      String source = cmd.dataSource().getClass().getName();
      if (!source.startsWith("org.apache.spark.sql.delta.")) {
        EnforceSettings.warnOnce("contract " + contract + ": writes through " + cmd.dataSource().getClass().getSimpleName()
            + " are not measured by this release; the write to " + target + " proceeds ungoverned");
        return cmd;
      }
      if (!hasChecks(entry)) {
        return cmd;
      }
      LogicalPlan wrapped = govern(manifest, entry, identity, target, settings, cmd.query(), settings.block);
      return new SaveIntoDataSourceCommand(wrapped, cmd.dataSource(), cmd.options(), cmd.mode());
    } catch (Exception | LinkageError e) {
      stepAside(contract, target, e);
      return cmd;
    }
  }

  /**
   * A DSv2 table write (AppendData, OverwriteByExpression, OverwritePartitionsDynamic) to a governed table.
   * A Delta table (INSERT INTO, {@code saveAsTable}, {@code insertInto}, CTAS into a staged Delta table) is
   * measured as a Delta path write is: Delta runs the query in its nested write, where {@link DeltaResults}
   * reads the metrics, and in block mode a failed {@code fail} rule aborts the tasks. Other catalogs' tables
   * say in one line per contract that they are not measured.
   */
  private LogicalPlan tableWrite(LogicalPlan plan, V2WriteCommand cmd) {
    String target = null;
    String contract = null;
    try {
      if (!(cmd.table() instanceof DataSourceV2Relation) || GovernedWrite.isWrapped(cmd.query())) {
        return plan;
      }
      DataSourceV2Relation relation = (DataSourceV2Relation) cmd.table();
      EnforceSettings settings = settings();
      Manifest manifest = settings.manifest();
      if (manifest == null) {
        return plan;
      }
      target = relation.name();
      String[] identity = tableIdentity(session, relation);
      Manifest.Entry entry = manifest.match(identity[0], identity[1], List.<String[]>of(new String[] {"table", target}),
          current(session));
      if (entry == null) {
        return plan;
      }
      contract = entry.contractName;
      if (!relation.table().getClass().getName().startsWith("org.apache.spark.sql.delta.")) {
        EnforceSettings.warnOnce("contract " + contract + ": DSv2 table writes (" + target + ", "
            + relation.table().getClass().getSimpleName() + ") are not measured by this release; they proceed "
            + "ungoverned (Delta tables and file-source tables are measured)");
        return plan;
      }
      if (!hasChecks(entry)) {
        return plan;
      }
      GovernedWrite write = new GovernedWrite(manifest, entry, new CompiledChecks(entry.checks), identity[0],
          identity[1], target, settings, CollectionConverters.asJava(cmd.query().output()));
      LogicalPlan governed = withAnalyzedQuery((LogicalPlan) cmd.withNewQuery(
          write.wrap(session, cmd.query(), settings.block)), write, settings.block);
      PendingWrites.add(write);
      return governed;
    } catch (Exception | LinkageError e) {
      stepAside(contract, target, e);
      return plan;
    }
  }

  /**
   * A V1-fallback table write (Delta's) runs the query the analyzer stored, not the optimized one: that one
   * gets the same checks (the same metrics name; only one of the two plans ever runs).
   */
  private LogicalPlan withAnalyzedQuery(LogicalPlan plan, GovernedWrite write, boolean abortOnFail)
      throws GovernedWrite.Skip {
    if (plan instanceof AppendData) {
      AppendData a = (AppendData) plan;
      return a.analyzedQuery().isEmpty() ? a : a.copy(a.table(), a.query(), a.writeOptions(), a.isByName(),
          a.write(), scala.Option.apply(write.wrap(session, a.analyzedQuery().get(), abortOnFail)));
    }
    if (plan instanceof OverwriteByExpression) {
      OverwriteByExpression o = (OverwriteByExpression) plan;
      return o.analyzedQuery().isEmpty() ? o : o.copy(o.table(), o.deleteExpr(), o.query(), o.writeOptions(),
          o.isByName(), o.write(), scala.Option.apply(write.wrap(session, o.analyzedQuery().get(), abortOnFail)));
    }
    return plan;
  }

  /**
   * The session's current catalog and database at write time: an unqualified contract table names the current
   * database's table, as the Python engine reads it ({@link Manifest#match(String, String, List, String[])}).
   */
  static String[] current(SparkSession session) {
    CatalogManager catalogs = session.sessionState().catalogManager();
    String[] namespace = catalogs.currentNamespace();
    return new String[] {catalogs.currentCatalog().name(),
        namespace.length == 0 ? session.sessionState().catalog().getCurrentDatabase() : namespace[namespace.length - 1]};
  }

  /** The identity of a table's data: its location (the listener names the output by it), else its name. */
  static String[] tableIdentity(SparkSession session, DataSourceV2Relation relation) {
    String location = relation.table().properties().get("location");
    if (location != null) {
      return identity(new org.apache.hadoop.fs.Path(location).toUri());
    }
    if (relation.identifier().isDefined() && relation.catalog().isDefined() // a session table being created
        && relation.catalog().get().name().equals(CatalogManager.SESSION_CATALOG_NAME())) {
      org.apache.spark.sql.connector.catalog.Identifier ident = relation.identifier().get();
      String[] ns = ident.namespace();
      org.apache.spark.sql.catalyst.TableIdentifier id = new org.apache.spark.sql.catalyst.TableIdentifier(
          ident.name(), ns.length == 0 ? scala.Option.empty() : scala.Option.apply(ns[ns.length - 1]));
      return identity(session.sessionState().catalog().defaultTablePath(id));
    }
    return new String[] {"", relation.name()};
  }

  /** The identity of a path a write names (an option's text): a relative local path is taken from the working directory. */
  static String[] pathIdentity(String path) {
    String[] identity = identity(new org.apache.hadoop.fs.Path(path).toUri());
    if (!identity[1].startsWith("/") && "file".equals(identity[0])) {
      identity = identity(new java.io.File(path).getAbsoluteFile().toURI());
    }
    return identity;
  }

  /** The (namespace, name) of a written path, as the manifest names datasets ({@link DatasetIdentity}). */
  static String[] identity(URI uri) {
    return io.github.dqgovernance.listener.DatasetIdentity.of(uri);
  }
}

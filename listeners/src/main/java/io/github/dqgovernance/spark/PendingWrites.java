package io.github.dqgovernance.spark;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Writes the rule has wrapped, by metrics name, until their commit reads the metrics. Bounded: a write
 * whose job fails never commits, and its entry ages out.
 */
final class PendingWrites {
  private static final int LIMIT = 1000;
  private static final Map<String, GovernedWrite> WRITES = Collections.synchronizedMap(
      new LinkedHashMap<String, GovernedWrite>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, GovernedWrite> eldest) {
          return size() > LIMIT;
        }
      });

  private PendingWrites() {}

  static void add(GovernedWrite write) {
    WRITES.put(write.name, write);
  }

  /** The governed writes of this execution with their metrics rows, each taken out of the pending set. */
  static List<Map.Entry<GovernedWrite, Row>> take(QueryExecution qe) {
    List<Map.Entry<GovernedWrite, Row>> out = new ArrayList<>();
    if (WRITES.isEmpty() || qe == null) {
      return out;
    }
    collect(qe.executedPlan(), out);
    return out;
  }

  private static void collect(SparkPlan plan, List<Map.Entry<GovernedWrite, Row>> out) {
    for (Expression e : CollectionConverters.asJava(plan.expressions())) {
      RowTally tally = GovernedWrite.tallyIn(e);
      GovernedWrite write = tally == null ? null : WRITES.remove(tally.write());
      if (write != null) {
        long[] value = tally.value();
        Object[] counts = new Object[value.length];
        for (int i = 0; i < counts.length; i++) {
          counts[i] = value[i];
        }
        out.add(Map.entry(write, RowFactory.create(counts)));
      }
    }
    if (plan instanceof AdaptiveSparkPlanExec) {
      collect(((AdaptiveSparkPlanExec) plan).executedPlan(), out);
    }
    if (plan instanceof QueryStageExec) {
      collect(((QueryStageExec) plan).plan(), out);
    }
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) {
      collect(child, out);
    }
  }
}

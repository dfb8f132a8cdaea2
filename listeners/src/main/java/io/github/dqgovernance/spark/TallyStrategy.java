package io.github.dqgovernance.spark;

import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.CollectMetrics;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Plans a governed write's metrics node as a {@link TallyExec} on its {@link TallyCall}: the rows pass through one
 * generated predicate that counts their flags, where Spark's {@code CollectMetricsExec} would feed each row, joined
 * to its buffer, through an aggregation projection. Every other plan is left to Spark's own strategies.
 */
final class TallyStrategy extends SparkStrategy {
  private static final Seq<SparkPlan> NONE = CollectionConverters.asScala(List.<SparkPlan>of()).toList();

  @Override
  public Seq<SparkPlan> apply(LogicalPlan plan) {
    if (!(plan instanceof CollectMetrics) || !((CollectMetrics) plan).name().startsWith(GovernedWrite.NAME_PREFIX)) {
      return NONE;
    }
    CollectMetrics metrics = (CollectMetrics) plan;
    scala.Option<Expression> call = ((Expression) metrics.metrics().head()).find(e -> e instanceof TallyCall);
    if (metrics.metrics().size() != 1 || call.isEmpty()) {
      return NONE;
    }
    return CollectionConverters.asScala(List.<SparkPlan>of(new TallyExec(call.get(), planLater(metrics.child()))))
        .toList();
  }
}

package io.github.dqgovernance.spark;

import io.github.dqgovernance.ExecutorReach;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.SparkSessionExtensionsProvider;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.util.ExecutionListenerManager;
import org.apache.spark.sql.util.QueryExecutionListener;
import scala.runtime.BoxedUnit;

/**
 * {@code spark.sql.extensions=io.github.dqgovernance.spark.GovernanceExtensions}: every write to a contracted
 * dataset is measured against its contract in the write's own job ({@link EnforceWrites}), and judged before
 * its commit ({@link GovernedCommitProtocol}). Never loaded implicitly: the jar on {@code spark.jars} alone
 * changes nothing.
 *
 * <p>Supported on Spark 4.0 classic sessions. Elsewhere (Spark 3.5, whose extension API differs) the
 * extension logs one line and leaves the session as it was.
 */
public final class GovernanceExtensions implements SparkSessionExtensionsProvider {

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    try {
      if (!org.apache.spark.package$.MODULE$.SPARK_VERSION().startsWith("4.0")) {
        EnforceSettings.warnOnce("Spark " + org.apache.spark.package$.MODULE$.SPARK_VERSION()
            + " is not supported (Spark 4.0 only); the session is left as it was");
        return BoxedUnit.UNIT;
      }
      extensions.injectPreCBORule(GovernanceExtensions::enforceWrites);
      extensions.injectPlannerStrategy(session -> new TallyStrategy());
      // A streaming file sink's micro-batch reaches the optimizer without its write node (the streaming engine
      // strips it): the analyzer's checks still see it, to say that it is not measured.
      extensions.injectCheckRule(session -> plan -> {
        UnmeasuredWrites.warn(plan, session);
        return BoxedUnit.UNIT;
      });
    } catch (Exception | LinkageError e) {
      EnforceSettings.warnOnce("cannot start (" + e.getClass().getSimpleName() + ": "
          + EnforceSettings.firstLine(e.getMessage()) + "); the session is left as it was");
    }
    return BoxedUnit.UNIT;
  }

  /**
   * The optimizer rule for one session. Spark calls this builder each time it plans a query: the commit protocol
   * is wrapped again each time (a job may set {@code spark.sql.sources.commitProtocolClass} at runtime; the
   * wrapper then delegates to the new one), the results listener is registered once per session. Any error
   * logs one line and leaves the query as it was (its writes proceed ungoverned).
   */
  static Rule<LogicalPlan> enforceWrites(org.apache.spark.sql.SparkSession any) {
    try {
      SparkSession session = (SparkSession) any;
      if (!ExecutorReach.reachable(session.sparkContext())) {
        EnforceSettings.warnOnce("the executors cannot load this jar (it is on the driver's class path only; add it"
            + " to spark.jars or spark.executor.extraClassPath); writes proceed ungoverned");
        return new Unchanged();
      }
      installCommitProtocol(session);
      registerResults(session);
      return new EnforceWrites(session);
    } catch (Exception | LinkageError e) {
      EnforceSettings.warnOnce("cannot govern a query (" + e.getClass().getSimpleName() + ": "
          + EnforceSettings.firstLine(e.getMessage()) + "); its writes proceed ungoverned");
      return new Unchanged();
    }
  }

  /**
   * Registers {@link DeltaResults} unless the session's listener manager has one already: from an earlier query,
   * or copied from the session it was cloned from.
   */
  static void registerResults(SparkSession session) {
    ExecutionListenerManager listeners = session.listenerManager();
    synchronized (listeners) {
      for (QueryExecutionListener listener : listeners.listListeners()) {
        if (listener instanceof DeltaResults) {
          return;
        }
      }
      listeners.register(new DeltaResults());
    }
  }

  /** The rule in place of {@link EnforceWrites} when it cannot be built: every plan unchanged. */
  static final class Unchanged extends Rule<LogicalPlan> {
    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      return plan;
    }
  }

  /** Wraps the session's file commit protocol (whichever it is) in ours, so a governed write can be vetoed. */
  static void installCommitProtocol(SparkSession session) {
    SQLConf conf = session.sessionState().conf();
    String current = conf.getConfString(EnforceSettings.COMMIT_PROTOCOL, EnforceSettings.DEFAULT_COMMIT_PROTOCOL);
    if (current.equals(GovernedCommitProtocol.class.getName())) {
      return;
    }
    conf.setConfString(EnforceSettings.DELEGATE_COMMIT_PROTOCOL, current);
    conf.setConfString(EnforceSettings.COMMIT_PROTOCOL, GovernedCommitProtocol.class.getName());
  }
}

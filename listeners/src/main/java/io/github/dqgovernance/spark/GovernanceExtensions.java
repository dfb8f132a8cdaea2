package io.github.dqgovernance.spark;

import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.SparkSessionExtensionsProvider;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.internal.SQLConf;
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
      extensions.injectPreCBORule(session -> {
        installCommitProtocol((SparkSession) session);
        ((SparkSession) session).listenerManager().register(new DeltaResults());
        return new EnforceWrites((SparkSession) session);
      });
      extensions.injectPlannerStrategy(session -> new TallyStrategy());
    } catch (Exception | LinkageError e) {
      EnforceSettings.warnOnce("cannot start (" + e.getClass().getSimpleName() + ": "
          + EnforceSettings.firstLine(e.getMessage()) + "); the session is left as it was");
    }
    return BoxedUnit.UNIT;
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

package io.github.dqgovernance.spark;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.util.QueryExecutionListener;

/**
 * Records the verdict of governed Delta writes, which never reach {@link GovernedCommitProtocol} (Delta uses its
 * own committer). Delta runs the written query as a nested execution; when it ends, its metrics are read here,
 * before the outer write's execution ends, so the listener's COMPLETE event of the write carries them. Gate
 * thresholds are reported (status, gate) but cannot block a Delta write; row-level {@code fail} rules abort it.
 * An execution that fails (such an abort, or any other error) is recorded as a failed run: nothing was committed.
 * A file-source write whose job fails is recorded here too: its commit protocol never reaches commitJob.
 */
final class DeltaResults implements QueryExecutionListener {

  @Override
  public void onSuccess(String funcName, QueryExecution qe, long durationNs) {
    record(qe, true);
  }

  @Override
  public void onFailure(String funcName, QueryExecution qe, Exception exception) {
    record(qe, false);
  }

  private static void record(QueryExecution qe, boolean committed) {
    try {
      for (Map.Entry<GovernedWrite, Row> w : PendingWrites.take(qe)) {
        Judgement j = new Judgement(w.getKey(), w.getValue(), !committed);
        Recorder.record(j, committed, UUID.randomUUID().toString(), Instant.now());
      }
    } catch (Exception | LinkageError e) {
      EnforceSettings.warnOnce("cannot record a Delta write's results (" + e.getClass().getSimpleName() + ": "
          + EnforceSettings.firstLine(e.getMessage()) + ")");
    }
  }
}

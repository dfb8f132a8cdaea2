package io.github.dqgovernance.spark;

import java.io.Serializable;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.spark.SparkContext;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.internal.io.FileNameSpec;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SQLExecution;
import org.apache.spark.sql.internal.SQLConf;
import scala.Option;
import scala.collection.immutable.Seq;

/**
 * The file-source commit protocol the extension installs: it delegates everything to the protocol the
 * session had ({@code spark.dqgov.commitProtocolClass.delegate}, by default Spark's own), and in
 * {@code commitJob}, on the driver, after the write's job and before its commit, judges each governed write
 * of the execution from its metrics. A vetoed write throws before the delegate commits, so Spark aborts the
 * job: an append or a dynamic partition overwrite leaves the target as it was.
 */
public class GovernedCommitProtocol extends FileCommitProtocol implements Serializable {
  private static final long serialVersionUID = 1L;
  private final FileCommitProtocol delegate;

  public GovernedCommitProtocol(String jobId, String path, boolean dynamicPartitionOverwrite) {
    String delegateClass = SQLConf.get().getConfString(EnforceSettings.DELEGATE_COMMIT_PROTOCOL,
        EnforceSettings.DEFAULT_COMMIT_PROTOCOL);
    if (delegateClass.equals(GovernedCommitProtocol.class.getName())) {
      delegateClass = EnforceSettings.DEFAULT_COMMIT_PROTOCOL;
    }
    this.delegate = FileCommitProtocol.instantiate(delegateClass, jobId, path, dynamicPartitionOverwrite);
  }

  @Override
  public void setupJob(JobContext jobContext) {
    delegate.setupJob(jobContext);
  }

  @Override
  public void commitJob(JobContext jobContext, Seq<FileCommitProtocol.TaskCommitMessage> taskCommits) {
    List<Map.Entry<GovernedWrite, Row>> writes = List.of();
    try {
      writes = PendingWrites.take(currentExecution());
    } catch (Exception | LinkageError e) {
      EnforceSettings.warnOnce("cannot read the write's metrics (" + e.getClass().getSimpleName() + ": "
          + EnforceSettings.firstLine(e.getMessage()) + "); the write proceeds ungoverned");
    }
    Instant at = Instant.now();
    java.util.List<Judgement> judged = new java.util.ArrayList<>();
    for (Map.Entry<GovernedWrite, Row> w : writes) {
      Judgement j;
      try {
        j = new Judgement(w.getKey(), w.getValue());
      } catch (Exception e) {
        EnforceSettings.LOG.warn(EnforceSettings.PREFIX + "contract " + w.getKey().entry.contractName + ", write to "
            + w.getKey().target + ": cannot judge (" + e.getClass().getSimpleName() + ": "
            + EnforceSettings.firstLine(e.getMessage()) + "); the write proceeds ungoverned");
        continue;
      }
      if (j.vetoes()) {
        safeRecord(j, false, at);
        throw new GovernanceVetoException(j.vetoMessage());
      }
      judged.add(j);
    }
    try {
      delegate.commitJob(jobContext, taskCommits);
    } catch (Throwable t) {
      // the job fails in its commit: each judged write is a failed run (its counts are whole), then Spark aborts
      for (Judgement j : judged) {
        recordFailedCommit(j, t, at);
      }
      throw t;
    }
    for (Judgement j : judged) {
      safeRecord(j, true, at);
    }
  }

  private static void recordFailedCommit(Judgement j, Throwable t, Instant at) {
    Judgement failed;
    try {
      failed = j.failedWith("the write's commit failed (" + t.getClass().getSimpleName()
          + "); nothing of it was committed by this job");
    } catch (Exception | LinkageError e) {
      return; // judged once already; the commit's own error is what the job reports
    }
    safeRecord(failed, false, at);
  }

  private static void safeRecord(Judgement j, boolean committed, Instant at) {
    try {
      Recorder.record(j, committed, UUID.randomUUID().toString(), at);
    } catch (Exception | LinkageError e) {
      EnforceSettings.LOG.warn(EnforceSettings.PREFIX + "contract " + j.write.entry.contractName + ", write to "
          + j.write.target + ": results not recorded (" + e.getClass().getSimpleName() + ": "
          + EnforceSettings.firstLine(e.getMessage()) + ")");
    }
  }

  private static QueryExecution currentExecution() {
    scala.Option<SparkContext> sc = org.apache.spark.SparkContext$.MODULE$.getActive(); // never getOrCreate: that could start a context
    String id = sc.isDefined() ? sc.get().getLocalProperty(SQLExecution.EXECUTION_ID_KEY()) : null;
    return id == null ? null : SQLExecution.getQueryExecution(Long.parseLong(id));
  }

  @Override
  public void abortJob(JobContext jobContext) {
    delegate.abortJob(jobContext);
  }

  @Override
  public void setupTask(TaskAttemptContext taskContext) {
    delegate.setupTask(taskContext);
  }

  @Override
  @SuppressWarnings("deprecation")
  public String newTaskTempFile(TaskAttemptContext taskContext, Option<String> dir, String ext) {
    return delegate.newTaskTempFile(taskContext, dir, ext);
  }

  @Override
  public String newTaskTempFile(TaskAttemptContext taskContext, Option<String> dir, FileNameSpec spec) {
    return delegate.newTaskTempFile(taskContext, dir, spec);
  }

  @Override
  @SuppressWarnings("deprecation")
  public String newTaskTempFileAbsPath(TaskAttemptContext taskContext, String absoluteDir, String ext) {
    return delegate.newTaskTempFileAbsPath(taskContext, absoluteDir, ext);
  }

  @Override
  public String newTaskTempFileAbsPath(TaskAttemptContext taskContext, String absoluteDir, FileNameSpec spec) {
    return delegate.newTaskTempFileAbsPath(taskContext, absoluteDir, spec);
  }

  @Override
  public FileCommitProtocol.TaskCommitMessage commitTask(TaskAttemptContext taskContext) {
    return delegate.commitTask(taskContext);
  }

  @Override
  public void abortTask(TaskAttemptContext taskContext) {
    delegate.abortTask(taskContext);
  }

  @Override
  public boolean deleteWithJob(FileSystem fs, Path path, boolean recursive) {
    return delegate.deleteWithJob(fs, path, recursive);
  }

  @Override
  public void onTaskCommit(FileCommitProtocol.TaskCommitMessage taskCommit) {
    delegate.onTaskCommit(taskCommit);
  }
}

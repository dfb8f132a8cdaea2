package io.github.dqgovernance.spark;

import java.util.Arrays;
import org.apache.spark.util.AccumulatorV2;

/**
 * The same-pass counts of one governed write: the row count, then one counter per metric (rule violations, rule
 * scopes, null columns, valid and dropped rows), kept in a plain array that the write's own generated code
 * increments ({@link TallyCall}).
 *
 * <p>It is an accumulator, so Spark gives each task its own copy (deserialized with the task) and merges the copies
 * of successful tasks into the driver's one, once per partition of a result stage: the same guarantee as
 * {@code CollectMetrics}, whose boxed aggregation buffers it replaces. Only counts travel, never a value.
 */
public final class RowTally extends AccumulatorV2<long[], long[]> {
  private final String write; // the governed write's name, for plans and lookups
  private final long[] counts;

  RowTally(String write, int width) {
    this.write = write;
    this.counts = new long[width];
  }

  /** The governed write's name. */
  String write() {
    return write;
  }

  @Override
  public boolean isZero() {
    for (long v : counts) {
      if (v != 0) {
        return false;
      }
    }
    return true;
  }

  @Override
  public RowTally copy() {
    RowTally copy = new RowTally(write, counts.length);
    System.arraycopy(counts, 0, copy.counts, 0, counts.length);
    return copy;
  }

  @Override
  public void reset() {
    Arrays.fill(counts, 0L);
  }

  @Override
  public void add(long[] other) {
    for (int i = 0; i < counts.length; i++) {
      counts[i] += other[i];
    }
  }

  @Override
  public void merge(AccumulatorV2<long[], long[]> other) {
    add(other.value());
  }

  @Override
  public long[] value() {
    return counts;
  }

  @Override
  public String toString() {
    return "RowTally(" + write + ")";
  }
}

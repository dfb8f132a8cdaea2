package io.github.dqgovernance.listener;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.openlineage.client.dataset.DatasetConfig;
import io.openlineage.client.dataset.partition.trimmer.DatasetNameTrimmer;
import io.openlineage.client.utils.DatasetIdentifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The removePath trimmer on the names the listener builds job-name suffixes from. */
class RemovePathTrimmerTest {
  // the shape of dq_governance.publish.staging.STAGING_REMOVE_PATTERN (the Python test runs the real one)
  private static final String STAGING = "(?<remove>/\\.dqgov-staging-[^/]+)";

  private static String trimmed(RemovePathTrimmer ours, String name) {
    // as DatasetReducerUtils.trimDatasetName: the listener's default trimmers plus ours, repeated to a fixed point
    List<DatasetNameTrimmer> trimmers = new ArrayList<>(DatasetConfig.defaultConfig().getDatasetNameTrimmers());
    trimmers.add(ours);
    return new DatasetIdentifier(name, "file").withTrimmedName(trimmers).getName();
  }

  @Test
  void stagedWriteIsNamedAsItsTarget() {
    RemovePathTrimmer trimmer = new RemovePathTrimmer(RemovePathTrimmer.compile(STAGING));
    String staged = "/work/out/orders/.dqgov-staging-2b9ac5a7-0c4e-4b53-9d8e-1f0a6c3e5d21/quarantine";
    assertTrue(trimmer.canTrim(staged));
    assertEquals("/work/out/orders/quarantine", trimmed(trimmer, staged));
    // the default trimmers still act after ours: a run's partition directory goes too
    assertEquals("/work/out/orders/quarantine", trimmed(trimmer, staged + "/_dq_run_id=abc"));
    assertFalse(trimmer.canTrim("/work/out/orders/quarantine"));
    assertEquals("/work/out/orders/quarantine", trimmer.trim("/work/out/orders/quarantine"));
  }

  @Test
  void withoutAUsablePatternNothingIsTrimmed() {
    String staged = "/out/.dqgov-staging-r1/valid";
    assertFalse(new RemovePathTrimmer(null).canTrim(staged));
    assertNull(RemovePathTrimmer.compile(""));
    assertNull(RemovePathTrimmer.compile("(unclosed"));
    // a pattern without a `remove` group, or one whose group is empty, removes nothing (as the listener)
    assertFalse(new RemovePathTrimmer(RemovePathTrimmer.compile("/\\.dqgov-staging-[^/]+")).canTrim(staged));
    assertFalse(new RemovePathTrimmer(RemovePathTrimmer.compile("(?<remove>x?)")).canTrim(staged));
    // outside Spark (no SparkEnv) the public constructor finds no pattern
    assertFalse(new RemovePathTrimmer().canTrim(staged));
  }

  @Test
  void aPatternIsCompiledOncePerText() {
    assertSame(RemovePathTrimmer.compile(STAGING), RemovePathTrimmer.compile(STAGING));
  }
}

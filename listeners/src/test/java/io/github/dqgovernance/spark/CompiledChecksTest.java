package io.github.dqgovernance.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A manifest's checks as dqgov manifest writes them, or refused: never a misread value taken as a default. */
class CompiledChecksTest {
  private static CompiledChecks checks(Object action, Map<String, Object> gate) {
    Map<String, Object> rule = new HashMap<>(Map.of("name", "r", "type", "not_null", "level", "row",
        "columns", List.of("a"), "severity", "error", "violation", Map.of("typed", "a IS NULL"), "scope", Map.of()));
    rule.put("action", action);
    return new CompiledChecks(Map.of("fields", List.of(Map.of("name", "a", "type", "int")), "rules", List.of(rule),
        "notSamePass", List.of(), "gate", gate));
  }

  private static String refusal(Object action, Map<String, Object> gate) {
    return assertThrows(IllegalArgumentException.class, () -> checks(action, gate)).getMessage();
  }

  @Test
  void readsWhatTheManifestWrites() {
    CompiledChecks c = checks("drop", Map.of("on_failure", "block_publication", "minimum_valid_ratio", 0.99));
    assertEquals("drop", c.rules.get(0).action);
    assertEquals("block_publication", c.onFailure);
    assertEquals(0.99, c.minimumValidRatio);
    assertNull(checks(null, Map.of("on_failure", "warn")).minimumValidRatio);
  }

  @Test
  void refusesWhatWouldBeReadAsADefault() {
    // each of these turned a block into a commit: an unknown policy or action blocks nothing, a ratio in quotes
    // or under another name was no ratio
    assertEquals("checks: on_failure: blok is not one of fail, block_publication, warn, skip, quarantine",
        refusal(null, Map.of("on_failure", "blok")));
    assertEquals("checks: on_failure: Block_Publication is not one of fail, block_publication, warn, skip, quarantine",
        refusal(null, Map.of("on_failure", "Block_Publication")));
    assertEquals("checks: 0.99 is not a number",
        refusal(null, Map.of("on_failure", "quarantine", "minimum_valid_ratio", "0.99")));
    assertEquals("checks: gate: unknown key `minimum_valid_ration`",
        refusal(null, Map.of("on_failure", "quarantine", "minimum_valid_ration", 0.99)));
    assertEquals("checks: action: Fail is not one of warn, drop, quarantine, fail",
        refusal("Fail", Map.of("on_failure", "warn")));
  }
}

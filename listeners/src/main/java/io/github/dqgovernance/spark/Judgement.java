package io.github.dqgovernance.spark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Row;

/**
 * The verdict on one governed write, from its metrics row: per-rule results and the gate, with the same
 * semantics as the Python engine (dq_governance.checks.registry judge / status_of, checks.gate decide).
 */
final class Judgement {
  static final Set<String> BLOCKING_POLICIES = Set.of("fail", "block_publication");
  static final Set<String> NON_BLOCKING_POLICIES = Set.of("warn", "skip");

  static final class Result {
    final CompiledChecks.Rule rule;
    final long failed;
    final boolean passed;
    final String status;
    final Double metricValue;
    final String threshold;
    final String message;

    Result(CompiledChecks.Rule rule, long failed, boolean passed, String status, Double metricValue, String threshold,
        String message) {
      this.rule = rule;
      this.failed = failed;
      this.passed = passed;
      this.status = status;
      this.metricValue = metricValue;
      this.threshold = threshold;
      this.message = message;
    }
  }

  final GovernedWrite write;
  private final Row row; // the write's metrics, kept to judge it again as failed (failedWith)
  final long total;
  final long valid;
  final long dropped;
  /** Block mode: rows a quarantine rule left out of the write (not kept), apart from the dropped ones. */
  final long quarantined;
  final List<Long> nullCounts = new ArrayList<>();
  final List<Result> results = new ArrayList<>();
  final List<String> reasons = new ArrayList<>();
  final List<String> failedFailRules = new ArrayList<>();
  final boolean gatePassed;
  final String status;

  Judgement(GovernedWrite write, Row row) {
    this(write, row, false);
  }

  /**
   * {@code executionFailed}: the write's job failed, so nothing was committed and the counts cover only the tasks
   * that finished; the run is then failed, whatever those counts say.
   */
  Judgement(GovernedWrite write, Row row, boolean executionFailed) {
    this(write, row, executionFailed
        ? "the write failed before its commit; the counts cover only the tasks that finished" : null);
  }

  /** {@code failure}: why nothing was committed (null: the write was not stopped); the run is then failed. */
  Judgement(GovernedWrite write, Row row, String failure) {
    this.write = write;
    this.row = row;
    total = row.getLong(0);
    valid = row.getLong(write.metricNames.indexOf("valid"));
    dropped = write.drops ? row.getLong(write.metricNames.indexOf("dropped")) : 0L;
    quarantined = write.quarantines ? row.getLong(write.metricNames.indexOf("quarantined")) : 0L;
    for (int position : write.nullMetric) {
      nullCounts.add(row.getLong(position));
    }
    CompiledChecks checks = write.checks;
    for (int i = 0; i < checks.rules.size(); i++) {
      CompiledChecks.Rule rule = checks.rules.get(i);
      Integer v = write.violationMetric.get(i);
      Integer s = write.scopeMetric.get(i);
      long failed = v == null ? 0L : row.getLong(v);
      long scopeRows = s == null ? total : row.getLong(s);
      results.add(rule.metric == null ? rowOutcome(rule, failed, scopeRows) : metricOutcome(rule, failed, scopeRows));
    }
    boolean hasRatio = checks.minimumValidRatio != null;
    for (Result r : results) {
      if (r.passed) {
        continue;
      }
      if ("fail".equals(r.rule.action)) {
        reasons.add("rule " + r.rule.name + " failed with action fail");
        failedFailRules.add(r.rule.name);
      } else if (!"error".equals(r.rule.severity) || "warn".equals(r.rule.action)) {
        continue;
      } else if ("dataset".equals(r.rule.level)) {
        reasons.add(("dataset rule " + r.rule.name + " failed: " + r.message).replaceAll(": $", ""));
      } else if (BLOCKING_POLICIES.contains(checks.onFailure) && !hasRatio && r.rule.action == null) {
        // a rule with its own drop / quarantine acts by it, not by the contract's policy (as checks/gate.py)
        reasons.add("row rule " + r.rule.name + " failed on " + r.failed + " row(s)");
      }
    }
    if (hasRatio && total > 0) {
      double ratio = (double) valid / total;
      if (ratio < checks.minimumValidRatio) {
        reasons.add(String.format(Locale.ROOT, "valid ratio %.4f is below minimum_valid_ratio %s", ratio,
            number(checks.minimumValidRatio)));
      }
    }
    if (NON_BLOCKING_POLICIES.contains(checks.onFailure)) {
      reasons.clear();
    }
    if (failure != null) {
      reasons.add(failure);
    }
    gatePassed = reasons.isEmpty();
    boolean anyWarned = false;
    for (Result r : results) {
      anyWarned |= r.status.equals("warned") || r.status.equals("failed");
    }
    status = !gatePassed ? "failed" : (anyWarned ? "warned" : "passed");
  }

  /** The same write and counts, judged as a failed run because nothing of it was committed ({@code failure}: why). */
  Judgement failedWith(String failure) {
    return new Judgement(write, row, failure);
  }

  /** Block mode stops the write: a failing gate, or a failed rule whose action is fail. */
  boolean vetoes() {
    return write.settings.block && (!gatePassed || !failedFailRules.isEmpty());
  }

  Double qualityScore() {
    return total == 0 ? null : (double) valid / total;
  }

  /** The one-line message a vetoed write fails with: contract, rules and counts against their thresholds. */
  String vetoMessage() {
    List<String> parts = new ArrayList<>(reasons);
    for (String rule : failedFailRules) {
      String reason = "rule " + rule + " failed with action fail";
      if (!parts.contains(reason)) {
        parts.add(reason);
      }
    }
    return "dq-governance: write to " + write.target + " blocked by contract " + write.entry.contractName + " ("
        + String.join("; ", parts) + "); " + total + " row(s) checked, " + valid + " valid; nothing was committed";
  }

  private static String status(CompiledChecks.Rule rule, boolean passed, boolean warned) {
    if (!passed) {
      return rule.blocks ? "failed" : "warned";
    }
    return warned ? "warned" : "passed";
  }

  private static Result rowOutcome(CompiledChecks.Rule rule, long failed, long scopeRows) {
    boolean passed = failed == 0;
    String message = passed ? "no violations" : failed + " of " + scopeRows + " row(s) violate the rule";
    return new Result(rule, failed, passed, status(rule, passed, false), (double) failed, null, message);
  }

  private static Result metricOutcome(CompiledChecks.Rule rule, long failed, long scopeRows) {
    List<String> problems = new ArrayList<>();
    Double metric;
    Double percent = scopeRows == 0 ? null : 100.0 * failed / scopeRows;
    String what;
    if (rule.metric.equals("rows")) {
      metric = (double) scopeRows;
      percent = null;
      what = "row count";
      if (rule.min != null && scopeRows < rule.min) {
        problems.add("row count " + scopeRows + " is below min " + number(rule.min));
      }
      if (rule.max != null && scopeRows > rule.max) {
        problems.add("row count " + scopeRows + " is above max " + number(rule.max));
      }
    } else {
      metric = rule.metric.equals("percent") ? percent : (Double) (double) failed;
      what = rule.type.substring(0, rule.type.lastIndexOf('_')) + " " + rule.type.substring(rule.type.lastIndexOf('_') + 1);
    }
    String shown = metric == null ? "none" : number(metric);
    String thresholdText = rule.mustBe != null ? "must_be " + rule.mustBe.text
        : (rule.warn != null ? "warn " + rule.warn.text : null);
    if (thresholdText == null && (rule.min != null || rule.max != null)) {
      List<String> bounds = new ArrayList<>();
      if (rule.min != null) {
        bounds.add(">= " + number(rule.min));
      }
      if (rule.max != null) {
        bounds.add("<= " + number(rule.max));
      }
      thresholdText = String.join(" and ", bounds);
    }
    long count = rule.metric.equals("rows") ? 0L : failed;
    boolean rows = rule.metric.equals("rows");
    if (rule.mustBe != null && !rule.mustBe.holds(valueFor(rule.mustBe, metric, percent, rows))) {
      problems.add(what + " " + shown + " fails must_be " + rule.mustBe.text);
    }
    if (!problems.isEmpty()) {
      return new Result(rule, count, false, status(rule, false, false), metric, thresholdText, String.join("; ", problems));
    }
    if (rule.warn != null && !rule.warn.holds(valueFor(rule.warn, metric, percent, rows))) {
      return new Result(rule, count, true, "warned", metric, "warn " + rule.warn.text,
          what + " " + shown + " outside warn " + rule.warn.text);
    }
    return new Result(rule, count, true, "passed", metric, thresholdText,
        what + " " + shown + (thresholdText != null ? " meets " + thresholdText : ""));
  }

  /** A percent threshold on a count rule compares the percent (Python: judge's unit_metrics). */
  private static Double valueFor(CompiledChecks.Threshold t, Double metric, Double percent, boolean rows) {
    return "percent".equals(t.unit) && !rows ? percent : metric;
  }

  static String number(double value) {
    if (value == Math.rint(value) && !Double.isInfinite(value)) {
      return Long.toString((long) value);
    }
    return String.format(Locale.ROOT, "%.6g", value).replaceAll("0+$", "").replaceAll("\\.$", "");
  }

  /** Per-rule results for the contract facet (no values of any column, only counts and thresholds). */
  List<Map<String, Object>> ruleFacet() {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Result r : results) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", r.rule.name);
      m.put("type", r.rule.type);
      m.put("status", r.status);
      m.put("passed", r.passed);
      if (r.rule.metric == null || !r.rule.metric.equals("rows")) {
        m.put("failed_count", r.failed);
      }
      if (r.rule.metric != null && r.metricValue != null) {
        m.put("metric_value", r.metricValue);
      }
      if (r.threshold != null) {
        m.put("threshold", r.threshold);
      }
      out.add(m);
    }
    return out;
  }
}

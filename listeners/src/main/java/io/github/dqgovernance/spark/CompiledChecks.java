package io.github.dqgovernance.spark;

import io.github.dqgovernance.listener.Manifest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * One contract's same-pass checks as {@code dqgov manifest} compiled them ({@code checks} of a manifest entry).
 *
 * <p>The SQL text comes from the Python engine's own rule expressions (dq_governance.checks.sql_text), in two
 * variants: {@code typed} (written columns have the contract's types) and {@code text} (written as strings).
 */
final class CompiledChecks {

  // The values the Python model allows (contracts/model.py): any other one is refused, never read as a default.
  static final List<String> ON_FAILURE = List.of("fail", "block_publication", "warn", "skip", "quarantine");
  static final List<String> ACTIONS = List.of("warn", "drop", "quarantine", "fail");
  static final List<String> SEVERITIES = List.of("error", "warn");

  static final class Field {
    final String name;
    final String type; // Spark simpleString of the declared type
    final boolean pii;

    Field(String name, String type, boolean pii) {
      this.name = name;
      this.type = type;
      this.pii = pii;
    }
  }

  /** A parsed must_be / warn threshold (operator, value, upper, unit), as Python's parse_threshold gives it. */
  static final class Threshold {
    final String text;
    final String operator;
    final double value;
    final Double upper;
    final String unit;

    Threshold(String text, String operator, double value, Double upper, String unit) {
      this.text = text;
      this.operator = operator;
      this.value = value;
      this.upper = upper;
      this.unit = unit;
    }

    boolean holds(Double metric) {
      if (metric == null) {
        return false;
      }
      double m = metric;
      switch (operator) {
        case "between":
          return value <= m && m <= upper;
        case "not between":
          return !(value <= m && m <= upper);
        case "=":
          return m == value;
        case "!=":
          return m != value;
        case "<":
          return m < value;
        case "<=":
          return m <= value;
        case ">":
          return m > value;
        case ">=":
          return m >= value;
        default:
          throw new IllegalArgumentException("unknown threshold operator " + operator);
      }
    }
  }

  static final class Rule {
    final String name;
    final String type;
    final String level;
    final List<String> columns;
    final String severity;
    final String action; // null: the contract's policy
    final boolean blocks;
    final String dimension;
    final Map<String, Object> violation; // variant -> SQL text or null
    final Map<String, Object> scope;
    final String metric; // null for row rules; rows | count | percent
    final Threshold mustBe;
    final Threshold warn;
    final Double min;
    final Double max;

    Rule(Map<String, Object> m) {
      known(m, "rules[]", "name", "type", "level", "columns", "severity", "action", "blocks", "dimension",
          "violation", "scope", "metric", "must_be", "warn", "min", "max");
      name = str(m, "name");
      type = str(m, "type");
      level = str(m, "level");
      columns = strings(m.get("columns"));
      severity = oneOf(m, "severity", SEVERITIES, false);
      action = oneOf(m, "action", ACTIONS, true);
      blocks = flag(m, "blocks");
      dimension = (String) m.get("dimension");
      violation = map(m.get("violation"));
      scope = map(m.get("scope"));
      metric = (String) m.get("metric");
      mustBe = threshold(m.get("must_be"));
      warn = threshold(m.get("warn"));
      min = number(m.get("min"));
      max = number(m.get("max"));
    }

    String violation(String variant) {
      return (String) violation.get(variant);
    }

    String scope(String variant) {
      return (String) scope.get(variant);
    }
  }

  final List<Field> fields = new ArrayList<>();
  final List<Rule> rules = new ArrayList<>();
  final List<Map<String, Object>> notSamePass = new ArrayList<>();
  final String onFailure;
  final Double minimumValidRatio;
  /** the engine's yyyy-MM-dd parse as SQL text over one column (DateRewrite), or null */
  final String isoDateParse;

  @SuppressWarnings("unchecked")
  CompiledChecks(Map<String, Object> checks) {
    known(checks, "checks", "fields", "rules", "notSamePass", "notes", "gate", "isoDateParse");
    for (Object f : (List<Object>) checks.get("fields")) {
      Map<String, Object> m = (Map<String, Object>) f;
      known(m, "fields[]", "name", "type", "pii");
      fields.add(new Field(str(m, "name"), str(m, "type"), flag(m, "pii")));
    }
    for (Object r : (List<Object>) checks.get("rules")) {
      rules.add(new Rule((Map<String, Object>) r));
    }
    for (Object r : (List<Object>) checks.get("notSamePass")) {
      notSamePass.add(Collections.unmodifiableMap((Map<String, Object>) r));
    }
    Map<String, Object> gate = (Map<String, Object>) checks.get("gate");
    known(gate, "gate", "on_failure", "minimum_valid_ratio");
    onFailure = oneOf(gate, "on_failure", ON_FAILURE, false);
    minimumValidRatio = number(gate.get("minimum_valid_ratio"));
    isoDateParse = checks.get("isoDateParse") instanceof String ? (String) checks.get("isoDateParse") : null;
  }

  private static String str(Map<String, Object> m, String key) {
    Object v = m.get(key);
    if (!(v instanceof String)) {
      throw new IllegalArgumentException("checks: " + key + ": expected a string");
    }
    return (String) v;
  }

  private static List<String> strings(Object v) {
    List<String> out = new ArrayList<>();
    if (v instanceof List) {
      for (Object item : (List<?>) v) {
        out.add(String.valueOf(item));
      }
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object v) {
    return v instanceof Map ? (Map<String, Object>) v : Map.of();
  }

  private static Double number(Object v) {
    if (v != null && !(v instanceof Number)) {
      throw new IllegalArgumentException("checks: " + v + " is not a number");
    }
    return v == null ? null : ((Number) v).doubleValue();
  }

  private static boolean flag(Map<String, Object> m, String key) {
    Object v = m.get(key);
    if (v != null && !(v instanceof Boolean)) {
      throw new IllegalArgumentException("checks: " + key + ": expected true or false");
    }
    return Boolean.TRUE.equals(v);
  }

  private static String oneOf(Map<String, Object> m, String key, List<String> allowed, boolean optional) {
    if (optional && m.get(key) == null) {
      return null;
    }
    String v = str(m, key);
    if (!allowed.contains(v)) {
      throw new IllegalArgumentException("checks: " + key + ": " + v + " is not one of " + String.join(", ", allowed));
    }
    return v;
  }

  private static void known(Map<String, Object> m, String at, String... keys) {
    String unknown = Manifest.unknownKey(m, List.of(keys));
    if (unknown != null) {
      throw new IllegalArgumentException("checks: " + at + ": unknown key `" + unknown + "`");
    }
  }

  @SuppressWarnings("unchecked")
  private static Threshold threshold(Object v) {
    if (!(v instanceof Map)) {
      return null;
    }
    Map<String, Object> m = (Map<String, Object>) v;
    known(m, "threshold", "text", "operator", "value", "upper", "unit");
    return new Threshold(str(m, "text"), str(m, "operator"), number(m.get("value")), number(m.get("upper")),
        (String) m.get("unit"));
  }
}

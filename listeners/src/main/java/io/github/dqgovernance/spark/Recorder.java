package io.github.dqgovernance.spark;

import io.github.dqgovernance.listener.QualityRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a governed write's verdict goes: the listener's events (through {@link QualityRegistry}, read by
 * GovernanceTransformer for the COMPLETE event of the write) and the report history ({@link ReportHistory}).
 * Only counts, thresholds and names leave; never a value of any column.
 */
final class Recorder {
  static final String METRICS_SCHEMA =
      "https://openlineage.io/spec/facets/1-0-0/DataQualityMetricsDatasetFacet.json#/$defs/DataQualityMetricsDatasetFacet";

  private Recorder() {}

  static void record(Judgement j, boolean committed, String runId, Instant at) {
    GovernedWrite w = j.write;
    Map<String, Object> doc = new LinkedHashMap<>();
    Map<String, Object> metrics = new LinkedHashMap<>();
    metrics.put("_producer", String.valueOf(w.manifestProducer));
    metrics.put("_schemaURL", METRICS_SCHEMA);
    metrics.put("rowCount", j.total);
    Map<String, Object> columns = new LinkedHashMap<>();
    for (int i = 0; i < w.checks.fields.size(); i++) {
      columns.put(w.checks.fields.get(i).name, Map.of("nullCount", j.nullCounts.get(i)));
    }
    metrics.put("columnMetrics", columns);
    doc.put("outputFacets", Map.of("dataQualityMetrics", metrics));
    Map<String, Object> contract = new LinkedHashMap<>(w.entry.contract());
    contract.put("_producer", String.valueOf(w.manifestProducer));
    contract.put("_schemaURL", String.valueOf(w.contractSchemaUrl));
    contract.put("status", j.status);
    if (j.qualityScore() != null) {
      contract.put("quality_score", j.qualityScore());
    }
    contract.put("valid_rows", j.valid);
    contract.put("invalid_rows", j.total - j.valid);
    contract.put("row_outputs", "write");
    contract.put("enforce", w.settings.block ? "block" : "observe");
    contract.put("vetoed", !committed);
    contract.put("written_rows", committed ? j.total - j.dropped - j.quarantined : 0L);
    contract.put("dropped_rows", j.dropped);
    contract.put("quarantined_rows", j.quarantined);
    contract.put("rules", j.ruleFacet());
    contract.put("not_evaluated", new ArrayList<>(w.checks.notSamePass));
    doc.put("contract", contract);
    doc.put("vetoed", !committed);
    doc.put("ended", true);
    QualityRegistry.record(w.namespace, w.datasetName, JsonWriter.write(doc));
    if (w.settings.history != null) {
      ReportHistory.append(w.settings.history, w.reportColumns, rows(j, committed, runId, at), w.settings.pipeline,
          runId);
    }
  }

  /** One report-history row per rule (dq_governance.checks.report_rows's columns), not-evaluated rules as skipped. */
  static List<Map<String, Object>> rows(Judgement j, boolean committed, String runId, Instant at) {
    GovernedWrite w = j.write;
    List<Map<String, Object>> out = new ArrayList<>();
    for (Judgement.Result r : j.results) {
      Map<String, Object> row = base(j, committed, runId, at);
      row.put("rule_type", r.rule.type);
      row.put("check_name", r.rule.name);
      row.put("column", r.rule.columns.size() == 1 ? r.rule.columns.get(0) : null);
      row.put("dimension", r.rule.dimension);
      row.put("severity", r.rule.severity);
      row.put("action", r.rule.action);
      row.put("level", r.rule.level);
      row.put("rule_status", r.status);
      row.put("passed", r.passed);
      row.put("failed_count", "rows".equals(r.rule.metric) ? null : r.failed);
      row.put("metric_value", r.metricValue);
      row.put("threshold", r.threshold);
      row.put("message", !r.passed && w.quarantinesRowsOf(r.rule)
          ? r.message + "; those rows were left out of the write (quarantine; the extension keeps no copy)"
          : r.message);
      out.add(row);
    }
    for (Map<String, Object> skipped : w.checks.notSamePass) {
      Map<String, Object> row = base(j, committed, runId, at);
      row.put("rule_type", skipped.get("type"));
      row.put("check_name", skipped.get("name"));
      row.put("level", "dataset");
      row.put("rule_status", "skipped");
      row.put("passed", true);
      row.put("message", "not evaluated in the write pass: " + skipped.get("reason"));
      out.add(row);
    }
    return out;
  }

  private static Map<String, Object> base(Judgement j, boolean committed, String runId, Instant at) {
    GovernedWrite w = j.write;
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("pipeline", w.settings.pipeline);
    row.put("run_id", runId);
    row.put("contract", w.entry.contractName);
    row.put("contract_version", w.entry.contract().get("version"));
    row.put("validated_at", at);
    row.put("run_status", j.status);
    row.put("published", committed);
    row.put("total_rows", j.total);
    row.put("valid_rows", j.valid);
    row.put("invalid_rows", j.total - j.valid);
    row.put("quality_score", j.qualityScore());
    row.put("source", w.target);
    row.put("gate_passed", j.gatePassed);
    row.put("row_outputs", "write");
    return row;
  }
}

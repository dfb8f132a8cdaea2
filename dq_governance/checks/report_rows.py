"""Report-history rows: one plain dict per rule per run, built from a CheckResult (no Spark).

Rows carry counts, metrics, thresholds and rule names only, never a data value of a PII column.
`publish.report` writes and reads them; the row shape lives here, next to the result it describes.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from dq_governance.checks.disclosure import reveals_pii
from dq_governance.observe.drift import encode_schema

if TYPE_CHECKING:  # pragma: no cover
    from dq_governance.checks.result import CheckResult

#: column -> Spark SQL type; a fixed schema so runs with None metrics still append cleanly
REPORT_COLUMNS: dict[str, str] = {
    "pipeline": "string",
    "run_id": "string",
    "contract": "string",
    "contract_version": "string",
    "rule_type": "string",
    "check_name": "string",
    "column": "string",
    "dimension": "string",
    "severity": "string",
    "action": "string",
    "level": "string",
    "rule_status": "string",
    "passed": "boolean",
    "failed_count": "bigint",
    "metric_value": "double",
    "threshold": "string",
    "message": "string",
    "validated_at": "timestamp",
    "run_status": "string",
    "published": "boolean",
    "total_rows": "bigint",
    "valid_rows": "bigint",
    "invalid_rows": "bigint",
    "quality_score": "double",
    "masking": "string",
    "source": "string",
    "gate_passed": "boolean",
    "run_schema": "string",  # the input's {column: type} as JSON, for schema drift between runs
    "row_outputs": "string",  # split | none (a metrics-only run: no valid or quarantine rows were built)
}
PARTITION_COLUMNS = ("pipeline", "run_id")


def report_rows(result: CheckResult, *, masking: str | None = None) -> list[dict[str, Any]]:
    """One dict per rule with the report-history columns (no raw PII values)."""
    pii = set(getattr(result, "pii_columns", None) or [])
    masking = masking if masking is not None else getattr(result, "masking", None)
    validated_at = _utc(result.finished_at)
    rows = []
    for rule in result.rules:
        metric = rule.metric_value
        message = rule.message
        if reveals_pii(rule.type, rule.columns, pii):  # the engine withheld it already; a result built elsewhere
            metric = None
            message = f"{rule.name}: metric withheld (PII column); passed={rule.passed}"
        rows.append({
            "pipeline": result.pipeline,
            "run_id": result.run_id,
            "contract": result.contract_name,
            "contract_version": result.contract_version,
            "rule_type": rule.type,
            "check_name": rule.name,
            "column": rule.column,
            "dimension": rule.dimension,
            "severity": rule.severity,
            "action": rule.action,
            "level": rule.level,
            "rule_status": rule.status,
            "passed": bool(rule.passed),
            "failed_count": None if rule.failed_count is None else int(rule.failed_count),
            "metric_value": None if metric is None else float(metric),
            "threshold": rule.threshold,
            "message": message,
            "validated_at": validated_at,
            "run_status": result.status,
            "published": bool(result.published),
            "total_rows": int(result.total_rows),
            "valid_rows": int(result.valid_rows),
            "invalid_rows": int(result.invalid_rows),
            "quality_score": result.quality_score,
            "masking": masking,
            "source": result.source,
            "gate_passed": bool(result.gate.passed),
            "run_schema": encode_schema(getattr(result, "input_schema", None)),
            "row_outputs": getattr(result, "row_outputs", "split"),
        })
    return rows


def _utc(moment: datetime) -> datetime:
    # An aware datetime converts to the same instant whatever the Python or Spark time zone.
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)

"""Report history: one row per rule per run, appended to a parquet (or Delta) directory by pipeline.

Rows carry counts, metrics, thresholds and rule names only, never a data value of a PII column.
Writing is idempotent per run: a run's rows live in `pipeline=<p>/run_id=<id>/` and a re-run with
the same run_id replaces exactly that directory (Delta: `replaceWhere` on pipeline and run_id).
Building rows is Spark-free; writing and reading import Spark lazily.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from dq_governance.checks.result import CheckResult
from dq_governance.observe.drift import encode_schema

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

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
}
PARTITION_COLUMNS = ("pipeline", "run_id")
# Aggregates that return one of the column's own values; withheld for PII columns.
_VALUE_REVEALING = frozenset({"min", "max"})


def report_rows(result: CheckResult, *, masking: str | None = None) -> list[dict[str, Any]]:
    """One dict per rule with the report-history columns (no raw PII values)."""
    pii = set(getattr(result, "pii_columns", None) or [])
    masking = masking if masking is not None else getattr(result, "masking", None)
    validated_at = _utc(result.finished_at)
    rows = []
    for rule in result.rules:
        metric = rule.metric_value
        message = rule.message
        if rule.type in _VALUE_REVEALING and pii.intersection(rule.columns):
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
        })
    return rows


def report_schema() -> Any:
    """The Spark StructType of the history table."""
    from pyspark.sql.types import StructType

    return StructType.fromDDL(", ".join(f"`{name}` {kind}" for name, kind in REPORT_COLUMNS.items()))


def write_report(
    spark: SparkSession, rows: list[dict[str, Any]], path: str, *, format: str = "parquet"
) -> int:
    """Write one run's rows to the history at `path`, replacing that run's earlier rows; return the count."""
    if not rows:
        return 0
    keys = {(row["pipeline"], row["run_id"]) for row in rows}
    if len(keys) != 1:
        raise ValueError("write_report takes the rows of exactly one run")
    pipeline, run_id = keys.pop()
    schema = report_schema()
    # One small file per run: a run has one row per rule.
    frame = spark.createDataFrame([tuple(row[c] for c in REPORT_COLUMNS) for row in rows], schema).coalesce(1)
    if format == "delta":
        from dq_governance.publish.writer import replace_delta_partition

        replace_delta_partition(frame, path, {"pipeline": pipeline, "run_id": run_id}, partition_by=["pipeline"])
    elif format == "parquet":
        from dq_governance.publish.writer import replace_partitions

        replace_partitions(frame, path, list(PARTITION_COLUMNS), run_id=run_id)
    else:
        raise ValueError(f"report format must be parquet or delta, not {format!r}")
    return len(rows)


def read_history(
    path: str,
    *,
    spark: SparkSession | None = None,
    format: str = "parquet",
    pipeline: str | None = None,
    contract: str | None = None,
) -> DataFrame:
    """The report history at `path` as a DataFrame (optionally one pipeline / contract)."""
    from pyspark.sql import SparkSession, functions as F

    session = spark or SparkSession.getActiveSession()
    if session is None:
        raise RuntimeError("read_history needs an active SparkSession")
    if format == "delta":
        frame = session.read.format("delta").load(path)
    else:
        # basePath keeps `pipeline` and `run_id` as columns; the schema is fixed, so no inference drift
        frame = session.read.schema(report_schema()).option("basePath", path).parquet(path)
    if pipeline is not None:
        frame = frame.where(F.col("pipeline") == pipeline)
    if contract is not None:
        frame = frame.where(F.col("contract") == contract)
    return frame.select(*REPORT_COLUMNS)


def run_row_counts(
    path: str,
    *,
    pipeline: str,
    contract: str | None = None,
    limit: int = 20,
    spark: SparkSession | None = None,
    format: str = "parquet",
) -> list[tuple[str, int]]:
    """(run_id, total_rows) of the last `limit` runs of a pipeline, newest first (for volume checks)."""
    from pyspark.sql import functions as F

    frame = read_history(path, spark=spark, format=format, pipeline=pipeline, contract=contract)
    runs = (
        frame.groupBy("run_id")
        .agg(F.max("validated_at").alias("at"), F.max("total_rows").alias("total_rows"))
        .orderBy(F.col("at").desc())
        .limit(limit)
        .collect()
    )
    return [(row["run_id"], int(row["total_rows"])) for row in runs]


def _utc(moment: datetime) -> datetime:
    # An aware datetime converts to the same instant whatever the Python or Spark time zone.
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)

"""Read the report history without Spark (pyarrow over the hive-partitioned parquet directory).

The history is one row per rule per run; `runs()` folds it into one summary per run, oldest first.
Delta histories are read through Spark (`publish.report.read_history`), since their file listing
is the transaction log, not the directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from dq_governance.errors import InputDataError
from dq_governance.observe.drift import decode_schema


@dataclass
class RunSummary:
    """One run of one pipeline, from its report rows."""

    pipeline: str
    run_id: str
    contract: str | None
    contract_version: str | None
    validated_at: datetime | None
    run_status: str | None
    total_rows: int | None
    valid_rows: int | None
    quality_score: float | None
    gate_passed: bool | None
    published: bool | None
    schema: dict[str, str] | None
    rules: list[dict[str, Any]] = field(default_factory=list)

    @property
    def valid_ratio(self) -> float | None:
        """valid_rows / total_rows, None for an empty run."""
        if not self.total_rows:
            return None
        return (self.valid_rows or 0) / self.total_rows


def read_history_rows(
    path: str | Path, *, pipeline: str | None = None, format: str = "parquet", spark: Any = None
) -> list[dict[str, Any]]:
    """Every report row at `path` (optionally one pipeline) as dicts with the REPORT_COLUMNS keys."""
    from dq_governance.checks.report_rows import REPORT_COLUMNS

    if format == "delta":
        from dq_governance.publish.report import read_history

        return [row.asDict() for row in read_history(str(path), spark=spark, format="delta", pipeline=pipeline).collect()]
    import pyarrow.dataset as ds

    root = Path(path)
    if not root.is_dir():
        raise InputDataError(f"{path}: no report history here (expected a directory written by `dqgov check --report`)")
    try:
        dataset = ds.dataset(str(root), format="parquet", partitioning="hive")
    except Exception as exc:  # pyarrow's ArrowInvalid and friends: one line
        raise InputDataError(f"{path}: cannot read the report history: {str(exc).splitlines()[0]}") from None
    if "pipeline" not in dataset.schema.names:
        raise InputDataError(f"{path}: not a report history (no pipeline=... partitions)")
    names = [c for c in REPORT_COLUMNS if c in dataset.schema.names]
    filt = (ds.field("pipeline") == pipeline) if pipeline is not None else None
    table = dataset.to_table(columns=names, filter=filt)
    rows = table.to_pylist()
    for row in rows:  # columns added to the history later are absent in old files
        for column in REPORT_COLUMNS:
            row.setdefault(column, None)
        at = row.get("validated_at")
        if isinstance(at, datetime) and at.tzinfo is None:
            row["validated_at"] = at.replace(tzinfo=timezone.utc)
    return rows


def runs(rows: Iterable[dict[str, Any]]) -> list[RunSummary]:
    """One RunSummary per (pipeline, run_id), oldest first (by validated_at, then run_id)."""
    by_run: dict[tuple[str, str], RunSummary] = {}
    for row in rows:
        key = (row["pipeline"], row["run_id"])
        summary = by_run.get(key)
        if summary is None:
            summary = by_run[key] = RunSummary(
                pipeline=row["pipeline"], run_id=row["run_id"], contract=row.get("contract"),
                contract_version=row.get("contract_version"), validated_at=row.get("validated_at"),
                run_status=row.get("run_status"), total_rows=row.get("total_rows"),
                valid_rows=row.get("valid_rows"), quality_score=row.get("quality_score"),
                gate_passed=row.get("gate_passed"), published=row.get("published"),
                schema=decode_schema(row.get("run_schema")),
            )
        summary.rules.append(row)
    epoch = datetime.min.replace(tzinfo=timezone.utc)
    return sorted(by_run.values(), key=lambda r: (r.validated_at or epoch, r.run_id))


def previous_schema(
    path: str | Path, *, pipeline: str, contract: str | None = None, exclude_run_id: str | None = None,
    format: str = "parquet", spark: Any = None,
) -> dict[str, str] | None:
    """The input schema recorded by the pipeline's latest earlier run, or None (no such run)."""
    if format != "delta" and not Path(path).is_dir():
        return None
    earlier = [r for r in runs(read_history_rows(path, pipeline=pipeline, format=format, spark=spark))
               if r.run_id != exclude_run_id and (contract is None or r.contract == contract)]
    for run in reversed(earlier):
        if run.schema is not None:
            return run.schema
    return None


def volume_history(spark: Any, contract: Any, report: str, report_format: str, pipeline: str,
                   run_id: str) -> list[int] | None:
    """Row counts of earlier runs (oldest first) from the report history, when a volume rule needs them."""
    if not any(rule.type == "volume" for rule in contract.quality.rules):
        return None
    from dq_governance.publish.report import run_row_counts
    from dq_governance.publish.writer import path_exists

    if not path_exists(spark, report):
        return []
    limit = max(rule.history_runs for rule in contract.quality.rules if rule.type == "volume")
    counts = run_row_counts(report, pipeline=pipeline, contract=contract.name, limit=limit, spark=spark,
                            format=report_format)
    return [count for earlier, count in reversed(counts) if earlier != run_id]


def previous_run_schema(spark: Any, contract: Any, report: str, report_format: str, pipeline: str,
                        run_id: str) -> dict[str, str] | None:
    """The input schema of the pipeline's last earlier run, when a schema_drift rule needs it."""
    if not any(rule.type == "schema_drift" for rule in contract.quality.rules):
        return None
    if report_format == "delta":
        from dq_governance.publish.writer import path_exists

        if not path_exists(spark, report):
            return None
    return previous_schema(report, pipeline=pipeline, contract=contract.name, exclude_run_id=run_id,
                           format=report_format, spark=spark)

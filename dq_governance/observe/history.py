"""Read the report history: pyarrow over a local hive-partitioned parquet directory, else through Spark.

The history is one row per rule per run; `runs()` folds it into one summary per run, oldest first.
Delta histories, and histories at a URI (file:, s3a://, abfss://...) when a Spark session is given, are read
through Spark (`publish.report.read_history`): a Delta listing is its transaction log, and a URI is no local
directory.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from dq_governance.errors import InputDataError
from dq_governance.observe.drift import decode_schema
from dq_governance.session import first_line

#: a URI scheme of two or more characters (file:, s3a:, hdfs:); one letter is a Windows drive (C:)
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+:")


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
    def key(self) -> tuple[str, str, str | None]:
        """(pipeline, run_id, contract): an orchestrator's run id may be shared by a pipeline's contracts."""
        return self.pipeline, self.run_id, self.contract

    @property
    def valid_ratio(self) -> float | None:
        """valid_rows / total_rows, None for an empty run."""
        if not self.total_rows:
            return None
        return (self.valid_rows or 0) / self.total_rows


def _local_dir(path: str | Path) -> bool:
    return not _URI.match(str(path)) and Path(path).is_dir()


def read_history_rows(
    path: str | Path, *, pipeline: str | None = None, format: str = "parquet", spark: Any = None
) -> list[dict[str, Any]]:
    """Every report row at `path` (optionally one pipeline) as dicts with the REPORT_COLUMNS keys."""
    if format == "delta" or (spark is not None and not _local_dir(path)):
        return _read_through_spark(path, pipeline, format, spark)
    return _read_with_pyarrow(path, pipeline)


def _read_with_pyarrow(path: str | Path, pipeline: str | None) -> list[dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.dataset as ds

    from dq_governance.checks.report_rows import PARTITION_COLUMNS, REPORT_COLUMNS

    root = Path(path)
    if not root.is_dir():
        raise InputDataError(f"{path}: no report history here (expected a directory written by `dqgov check --report`)")
    # The partition values are names: inferred, `pipeline=2024` would be read as int32 and fail every comparison.
    partitioning = ds.partitioning(pa.schema([(c, pa.string()) for c in PARTITION_COLUMNS]), flavor="hive")
    try:
        dataset = ds.dataset(str(root), format="parquet", partitioning=partitioning)
        if not any(os.path.relpath(name, root).startswith("pipeline=") for name in dataset.files):
            raise InputDataError(f"{path}: not a report history (no pipeline=... partitions)")
        # A dataset takes its schema from one file: a history begun by an older release would hide every column
        # added since, in every run. The union of the files' schemas reads each file's absent columns as null.
        unified = pa.unify_schemas([dataset.schema, *(part.physical_schema for part in dataset.get_fragments())])
        dataset = ds.dataset(str(root), format="parquet", partitioning=partitioning, schema=unified)
        names = [c for c in REPORT_COLUMNS if c in dataset.schema.names]
        filt = (ds.field("pipeline") == pipeline) if pipeline is not None else None
        rows = dataset.to_table(columns=names, filter=filt).to_pylist()
    except (pa.ArrowException, OSError) as exc:  # a corrupt file, clashing column types: one line
        raise InputDataError(f"{path}: cannot read the report history: {first_line(exc)}") from None
    for row in rows:  # columns added to the history later are absent in old files
        for column in REPORT_COLUMNS:
            row.setdefault(column, None)
        at = row.get("validated_at")
        if isinstance(at, datetime) and at.tzinfo is None:
            row["validated_at"] = at.replace(tzinfo=timezone.utc)
    return rows


def _read_through_spark(path: str | Path, pipeline: str | None, format: str, spark: Any) -> list[dict[str, Any]]:
    from dq_governance.publish.report import read_history

    try:
        collected = read_history(str(path), spark=spark, format=format, pipeline=pipeline).collect()
    except Exception as exc:  # Spark's AnalysisException and friends (no such path, not a Delta table): one line
        raise InputDataError(f"{path}: cannot read the report history as {format}: {first_line(exc)}") from None
    rows = [row.asDict() for row in collected]
    for row in rows:
        at = row.get("validated_at")
        if isinstance(at, datetime) and at.tzinfo is None:  # PySpark returns the instant as naive local time
            row["validated_at"] = at.astimezone(timezone.utc)
    return rows


def runs(rows: Iterable[dict[str, Any]]) -> list[RunSummary]:
    """One RunSummary per (pipeline, run_id, contract), oldest first (by validated_at, then run_id)."""
    by_run: dict[tuple[str, str, str | None], RunSummary] = {}
    for row in rows:
        key = (row["pipeline"], row["run_id"], row.get("contract"))
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
    if spark is None:
        if format != "delta" and not Path(path).is_dir():
            return None
    else:
        from dq_governance.publish.writer import path_exists

        if not path_exists(spark, str(path)):  # any Hadoop file system: a URI is no local directory
            return None
    earlier = [r for r in runs(read_history_rows(path, pipeline=pipeline, format=format, spark=spark))
               if r.run_id != exclude_run_id and (contract is None or r.contract == contract)]
    for run in reversed(earlier):
        if run.schema is not None:
            return run.schema
    return None


def volume_history(spark: Any, contract: Any, report: str, report_format: str, pipeline: str,
                   run_id: str) -> dict[str, list[int]] | None:
    """Each volume rule's counts in earlier runs (rule name -> counts, oldest first), when the contract has one.

    A rule without `filter` is judged against the earlier runs' row counts (`total_rows`). A rule with one is
    judged against its own recorded counts (its `metric_value`, found by its name) in those runs: the whole
    input's count of an earlier run says nothing about how many of its rows the filter kept. One Spark job.
    """
    rules = [rule for rule in contract.check_rules() if rule.type == "volume"]
    if not rules:
        return None
    from dq_governance.publish.report import volume_series
    from dq_governance.publish.writer import path_exists

    if not path_exists(spark, report):
        return {rule.name: [] for rule in rules}
    series = volume_series(report, pipeline=pipeline, contract=contract.name, spark=spark, format=report_format,
                           check_names=[rule.name for rule in rules if rule.filter is not None],
                           limit=max(rule.history_runs for rule in rules), exclude_run_id=run_id)
    out: dict[str, list[int]] = {}
    for rule in rules:
        recent = list(reversed(series[:rule.history_runs]))  # oldest first
        if rule.filter is None:
            out[rule.name] = [total for _run, total, _counts in recent]
        else:  # a run that did not record the rule (it was added later) gives it no count
            out[rule.name] = [int(counts[rule.name]) for _run, _total, counts in recent if rule.name in counts]
    return out


def previous_run_schema(spark: Any, contract: Any, report: str, report_format: str, pipeline: str,
                        run_id: str) -> dict[str, str] | None:
    """The input schema of the pipeline's last earlier run, when a schema_drift rule needs it."""
    if not any(rule.type == "schema_drift" for rule in contract.quality.rules):
        return None
    return previous_schema(report, pipeline=pipeline, contract=contract.name, exclude_run_id=run_id,
                           format=report_format, spark=spark)

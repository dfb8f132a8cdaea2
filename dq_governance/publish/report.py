"""Report history: one row per rule per run, appended to a parquet (or Delta) directory by pipeline.

Rows carry counts, metrics, thresholds and rule names only, never a data value of a PII column.
Writing is idempotent per run: a run's rows live in `pipeline=<p>/run_id=<id>/` and a re-run with
the same run_id replaces that contract's rows there, keeping the rows other contracts of the pipeline wrote under
the same run id (an orchestrator's run id shared by several contracts; Delta: `replaceWhere` on pipeline, run_id
and contract).
The rows are built by `checks.report_rows` (Spark-free); writing and reading import Spark lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from dq_governance.checks.report_rows import PARTITION_COLUMNS, REPORT_COLUMNS, report_rows
from dq_governance.errors import ConfigError

__all__ = ["PARTITION_COLUMNS", "REPORT_COLUMNS", "REPORT_FORMATS", "report_rows", "report_schema",
           "validate_report_format", "write_report", "read_history", "run_published", "run_row_counts", "volume_series"]

#: the formats a report history is written in
REPORT_FORMATS = ("parquet", "delta")

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession


def report_schema() -> Any:
    """The Spark StructType of the history table."""
    from dq_governance.checks.compat import struct_type

    return struct_type(REPORT_COLUMNS)


def validate_report_format(format: str) -> str:
    """Refuse a report format other than parquet or delta (ConfigError); before any Spark work."""
    if format not in REPORT_FORMATS:
        raise ConfigError(f"report format must be one of {', '.join(REPORT_FORMATS)}, not {format!r}")
    return format


def write_report(
    spark: SparkSession, rows: list[dict[str, Any]], path: str, *, format: str = "parquet"
) -> int:
    """Write one run's rows to the history at `path`, replacing that run's earlier rows; return the count."""
    validate_report_format(format)
    if not rows:
        return 0
    keys = {(row["pipeline"], row["run_id"], row["contract"]) for row in rows}
    if len(keys) != 1:
        raise ValueError("write_report takes the rows of exactly one run of one contract")
    pipeline, run_id, contract = keys.pop()
    schema = report_schema()
    from dq_governance.publish.writer import replace_delta_partition, replace_partitions, writing

    with writing("report", path):  # a Spark failure as one line naming the report
        records = [tuple(row[c] for c in REPORT_COLUMNS) for row in rows]
        if format == "delta":
            frame = spark.createDataFrame(records, schema).coalesce(1)
            replace_delta_partition(frame, path, {"pipeline": pipeline, "run_id": run_id, "contract": contract},
                                    partition_by=["pipeline"])
        else:
            # the run's directory is replaced whole, so it takes back the other contracts' rows (collected first:
            # a few rows per rule, and the directory cannot be read while it is overwritten)
            records += _other_contracts_rows(spark, path, pipeline=pipeline, run_id=run_id, contract=contract)
            # One small file per run: a run has one row per rule.
            frame = spark.createDataFrame(records, schema).coalesce(1)
            replace_partitions(frame, path, list(PARTITION_COLUMNS), run_id=run_id)
    return len(rows)


def _run_partition(spark: SparkSession, path: str, *, pipeline: str, run_id: str) -> DataFrame | None:
    """One run's parquet report rows (its `pipeline=/run_id=` directory alone), None when there is none."""
    from dq_governance.publish.writer import partition_dir, path_exists
    from dq_governance.session import join

    where = join(join(path, partition_dir("pipeline", pipeline)), partition_dir("run_id", run_id))
    if not path_exists(spark, where):
        return None
    from dq_governance.checks.compat import struct_type

    stored = struct_type({c: kind for c, kind in REPORT_COLUMNS.items() if c not in PARTITION_COLUMNS})
    return spark.read.schema(stored).parquet(where)


def _other_contracts_rows(spark: SparkSession, path: str, *, pipeline: str, run_id: str,
                          contract: str) -> list[tuple]:
    """The rows other contracts wrote to this run's parquet directory, as REPORT_COLUMNS tuples."""
    from pyspark.sql import functions as F

    frame = _run_partition(spark, path, pipeline=pipeline, run_id=run_id)
    if frame is None:
        return []
    others = frame.where(F.col("contract") != contract).collect()  # a null contract (no name) is this run's own
    given = {"pipeline": pipeline, "run_id": run_id}
    return [tuple(given[c] if c in given else row[c] for c in REPORT_COLUMNS) for row in others]


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
    # A Delta history written by an older version lacks the newer columns until its next run (mergeSchema).
    present = set(frame.columns)
    return frame.select(*[F.col(c) if c in present else F.lit(None).cast(kind).alias(c)
                          for c, kind in REPORT_COLUMNS.items()])


def run_published(spark: SparkSession, path: str, *, pipeline: str, run_id: str, contract: str,
                  format: str = "parquet") -> bool:
    """Whether the history holds rows of this run of `pipeline` and `contract` saying an attempt published; its
    partition alone is read (False when there is no history or no such run)."""
    from pyspark.sql import functions as F

    from dq_governance.publish.writer import is_delta_table

    if format == "delta":
        if not is_delta_table(spark, path):
            return False
        frame = spark.read.format("delta").load(path).where(
            (F.col("pipeline") == pipeline) & (F.col("run_id") == run_id))
    else:
        frame = _run_partition(spark, path, pipeline=pipeline, run_id=run_id)
        if frame is None:
            return False
    return frame.where(F.col("published") & (F.col("contract") == contract)).limit(1).count() > 0


def run_row_counts(
    path: str,
    *,
    pipeline: str,
    contract: str | None = None,
    limit: int = 20,
    spark: SparkSession | None = None,
    format: str = "parquet",
    exclude_run_id: str | None = None,
) -> list[tuple[str, int]]:
    """(run_id, total_rows) of the last `limit` runs of a pipeline but `exclude_run_id`, newest first (for volume)."""
    return [(run_id, total) for run_id, total, _values in volume_series(
        path, pipeline=pipeline, contract=contract, limit=limit, spark=spark, format=format,
        exclude_run_id=exclude_run_id)]


def volume_series(
    path: str,
    *,
    pipeline: str,
    contract: str | None = None,
    check_names: Sequence[str] = (),
    limit: int = 20,
    spark: SparkSession | None = None,
    format: str = "parquet",
    exclude_run_id: str | None = None,
) -> list[tuple[str, int, dict[str, float]]]:
    """(run_id, total_rows, {volume rule in `check_names`: its recorded count}) of the last `limit` runs of a
    pipeline but `exclude_run_id`, newest first: one Spark job, whatever the number of volume rules."""
    from pyspark.sql import functions as F

    frame = read_history(path, spark=spark, format=format, pipeline=pipeline, contract=contract)
    if exclude_run_id is not None:  # before the limit: a re-run of a run id still sees `limit` earlier runs
        frame = frame.where(F.col("run_id") != exclude_run_id)
    recorded = (F.col("rule_type") == "volume") & F.col("check_name").isin(list(check_names)) \
        & F.col("metric_value").isNotNull()
    runs = (
        frame.groupBy("run_id")
        .agg(F.max("validated_at").alias("at"), F.max("total_rows").alias("total_rows"),
             F.collect_list(F.when(recorded, F.struct("check_name", "metric_value"))).alias("counts"))
        .orderBy(F.col("at").desc(), F.col("run_id").desc())
        .limit(limit)
        .collect()
    )
    return [(row["run_id"], int(row["total_rows"]), {c["check_name"]: float(c["metric_value"]) for c in row["counts"]})
            for row in runs]

"""Staging, then promotion: outputs are fully written beside the target before the target is touched.

`stage()` materialises a DataFrame as parquet in a hidden per-run directory next to the target
(`<parent>/.dqgov-staging-<run_id>/<name>`) and counts what landed. Removing the path segment
`/.dqgov-staging-<run_id>` gives the target, so the OpenLineage Spark listener names the staged write as
the target itself (`publish.staging.STAGING_REMOVE_PATTERN`, set by `dq_governance.lineage.spark`). `StagedWrite.promote()` moves it
into place, only after the gate passed; `discard()` deletes it, leaving the target as it was.

Promotion by format and mode:
- parquet path: overwrite swaps directories (old one restored if the swap fails), append moves the
  staged files in, `replace_partitions` replaces just the staged partition directories (per run);
- delta path or table: one Delta transaction (overwrite, append, merge on keys, replaceWhere);
- catalog table: `saveAsTable` (overwrite / append), or a Delta MERGE when the table is Delta.
Files move through the Hadoop FileSystem API, so the same code serves local disks, HDFS and object stores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from dq_governance.errors import ConfigError, InputDataError
from dq_governance.publish.staging import STAGING_PREFIX, staged_path

FORMATS = ("parquet", "delta", "table")
MODES = ("overwrite", "append", "merge", "replace_partitions")
_SAFE_VALUE = re.compile(r"^[A-Za-z0-9._:-]+$")


@dataclass
class Output:
    """Where and how one DataFrame is published."""

    location: str  # a path, or a table name when format == "table"
    format: str = "parquet"
    mode: str = "overwrite"
    merge_keys: list[str] = field(default_factory=list)
    partition_by: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ConfigError(f"output {self.location}: format must be one of {', '.join(FORMATS)}, not {self.format!r}")
        if self.mode not in MODES:
            raise ConfigError(f"output {self.location}: mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.mode == "merge" and not self.merge_keys:
            raise ConfigError(f"output {self.location}: mode merge needs merge_keys")
        if self.mode == "merge" and self.format == "parquet":
            raise ConfigError(f"output {self.location}: mode merge needs format delta (or a Delta table)")
        if self.mode == "replace_partitions" and not self.partition_by:
            raise ConfigError(f"output {self.location}: mode replace_partitions needs partition_by")


class _Fs:
    """The few Hadoop FileSystem calls promotion needs (py4j, no extra dependency)."""

    def __init__(self, spark: SparkSession, path: str):
        self._jvm = spark._jvm  # type: ignore[attr-defined]
        conf = spark._jsc.hadoopConfiguration()  # type: ignore[attr-defined]
        self._fs = self._jvm.org.apache.hadoop.fs.Path(path).getFileSystem(conf)

    def _p(self, path: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(path)

    def qualify(self, path: str) -> str:
        """The fully qualified URI of a path (file:/abs/path for local ones)."""
        return str(self._fs.makeQualified(self._p(path)).toString())

    def exists(self, path: str) -> bool:
        return bool(self._fs.exists(self._p(path)))

    def delete(self, path: str) -> None:
        if self.exists(path):
            self._fs.delete(self._p(path), True)

    def mkdirs(self, path: str) -> None:
        self._fs.mkdirs(self._p(path))

    def rename(self, src: str, dst: str) -> None:
        # Hadoop moves src *into* dst when dst is an existing directory; callers make sure it is not.
        if self.exists(dst):
            raise ConfigError(f"cannot promote {src}: {dst} already exists")
        parent = self._p(dst).getParent()
        if parent is not None and not self._fs.exists(parent):
            self._fs.mkdirs(parent)
        if not self._fs.rename(self._p(src), self._p(dst)):
            raise ConfigError(f"cannot move {src} to {dst}")

    def is_empty(self, path: str) -> bool:
        return self.exists(path) and len(self._fs.listStatus(self._p(path))) == 0

    def children(self, path: str) -> list[tuple[str, bool]]:
        """(name, is_dir) of visible children, by Spark's rule: `_x` and `.x` are hidden, `_k=v` is not."""
        if not self.exists(path):
            return []
        out = []
        for status in self._fs.listStatus(self._p(path)):
            name = status.getPath().getName()
            if not (name.startswith(".") or (name.startswith("_") and "=" not in name)):
                out.append((name, bool(status.isDirectory())))
        return out


def _join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/"), *parts])


def _beside(target: str, tag: str, run_id: str) -> str:
    """A hidden sibling of the target: `<parent>/.<name>.__<tag>__<run_id>`."""
    trimmed = target.rstrip("/")
    parent, _, name = trimmed.rpartition("/")
    return _join(parent or ".", f".{name}.__{tag}__{run_id}")


def staging_location(spark: SparkSession, output: Output, run_id: str) -> str:
    """Where a run stages an output before promotion."""
    if output.format == "table":
        warehouse = spark.conf.get("spark.sql.warehouse.dir", "spark-warehouse")
        return _join(warehouse, f".{output.location}.__staging__{run_id}")
    return staged_path(output.location, run_id)


@dataclass
class StagedWrite:
    """An output written to its staging location, waiting for promote() or discard()."""

    spark: SparkSession
    output: Output
    staging: str
    rows: int
    run_id: str
    schema: Any
    clear: list[str] = field(default_factory=list)  # partition dirs a replace also removes

    def promote(self) -> None:
        """Move the staged data into the target (the gate has passed)."""
        try:
            _PROMOTERS[(self.output.format == "table", self.output.format == "delta")](self)
        finally:
            self.discard()

    def discard(self) -> None:
        """Delete the staging data; the target is not touched."""
        fs = _Fs(self.spark, self.staging)
        fs.delete(self.staging)
        holder = self.staging.rpartition("/")[0]
        if holder.rpartition("/")[2].startswith(STAGING_PREFIX) and fs.is_empty(holder):
            fs.delete(holder)

    def staged_frame(self) -> DataFrame:
        """The staged rows, read back with the schema they were written with."""
        reader = self.spark.read.schema(self.schema)
        if self.output.partition_by:
            reader = reader.option("basePath", self.staging)
        return reader.parquet(self.staging)


def stage(df: DataFrame, output: Output, *, run_id: str, spark: SparkSession | None = None) -> StagedWrite:
    """Write `df` to the output's staging location and count the rows that landed there."""
    session = spark or df.sparkSession
    staging = staging_location(session, output, run_id)
    fs = _Fs(session, staging)
    fs.delete(staging)  # a crashed earlier attempt of the same run
    writer = df.write.mode("overwrite")
    if output.partition_by:
        writer = writer.partitionBy(*output.partition_by)
    writer.parquet(staging)
    if not fs.exists(staging):  # nothing written (e.g. an empty partitioned frame)
        fs.mkdirs(staging)
    staged = StagedWrite(session, output, staging, 0, run_id, df.schema)
    staged.rows = staged.staged_frame().count()
    return staged


# --------------------------------------------------------------------------- parquet paths


def _promote_parquet(staged: StagedWrite) -> None:
    output, fs = staged.output, _Fs(staged.spark, staged.output.location)
    target = output.location
    if output.mode == "merge":
        raise ConfigError(f"output {target}: mode merge needs format delta (or a Delta table)")
    if output.mode == "overwrite":
        _swap(fs, staged.staging, target, staged.run_id)
        return
    if not fs.exists(target):  # append or per-run replace into a new directory
        fs.rename(staged.staging, target)
        return
    if output.mode == "append":
        _check_append_schema(staged)
        _move_files(fs, staged.staging, target)
        return
    _replace_partition_dirs(fs, staged)


def _swap(fs: _Fs, staging: str, target: str, run_id: str) -> None:
    """Replace target by staging; if the second rename fails, the old target comes back."""
    if not fs.exists(target):
        fs.rename(staging, target)
        return
    previous = _beside(target, "previous", run_id)
    fs.delete(previous)
    fs.rename(target, previous)
    try:
        fs.rename(staging, target)
    except Exception:
        fs.rename(previous, target)
        raise
    fs.delete(previous)


def _move_files(fs: _Fs, source: str, target: str) -> None:
    """Move every visible file under source to the same relative place under target."""
    for name, is_dir in fs.children(source):
        src, dst = _join(source, name), _join(target, name)
        if is_dir:
            fs.mkdirs(dst)
            _move_files(fs, src, dst)
        else:
            fs.rename(src, dst)


def _leaf_dirs(fs: _Fs, base: str, depth: int, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if depth == 0:
        return [prefix]
    out = []
    for name, is_dir in fs.children(_join(base, *prefix) if prefix else base):
        if is_dir:
            out.extend(_leaf_dirs(fs, base, depth - 1, (*prefix, name)))
    return out


def _replace_partition_dirs(fs: _Fs, staged: StagedWrite) -> None:
    target = staged.output.location
    for rel in staged.clear:
        fs.delete(_join(target, rel))
    for rel in _leaf_dirs(fs, staged.staging, len(staged.output.partition_by)):
        dst = _join(target, *rel)
        fs.delete(dst)
        fs.rename(_join(staged.staging, *rel), dst)


def _check_append_schema(staged: StagedWrite) -> None:
    existing = staged.spark.read.parquet(staged.output.location).schema
    want = {f.name: f.dataType.simpleString() for f in existing.fields}
    have = {f.name: f.dataType.simpleString() for f in staged.schema.fields}
    if want != have:
        diff = sorted(set(want.items()) ^ set(have.items()))
        raise InputDataError(
            f"cannot append to {staged.output.location}: schema differs from the existing data ({diff[:4]})"
        )


# --------------------------------------------------------------------------- Delta and tables


def delta_enabled(spark: SparkSession) -> bool:
    """True when delta-spark is importable and the session has the Delta SQL extension."""
    try:
        import delta  # noqa: F401
    except ImportError:
        return False
    return "DeltaSparkSessionExtension" in (spark.conf.get("spark.sql.extensions", "") or "")


def _require_delta(spark: SparkSession, where: str) -> None:
    if not delta_enabled(spark):
        raise ConfigError(
            f"{where}: Delta needs delta-spark and a session with "
            "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension"
        )


def _merge_condition(keys: list[str]) -> str:
    return " AND ".join(f"t.`{k}` = s.`{k}`" for k in keys)


def _delta_merge(table: Any, staged_df: DataFrame, keys: list[str]) -> None:
    (
        table.alias("t")
        .merge(staged_df.alias("s"), _merge_condition(keys))
        .whenMatchedUpdateAll()
        .whenNotMatchedInsertAll()
        .execute()
    )


def _sql_literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _promote_delta_path(staged: StagedWrite) -> None:
    from delta.tables import DeltaTable

    output, spark = staged.output, staged.spark
    _require_delta(spark, f"output {output.location}")
    frame = staged.staged_frame()
    exists = DeltaTable.isDeltaTable(spark, output.location)
    if output.mode == "merge" and exists:
        _delta_merge(DeltaTable.forPath(spark, output.location), frame, output.merge_keys)
        return
    writer = frame.write.format("delta")
    if output.partition_by:
        writer = writer.partitionBy(*output.partition_by)
    if output.mode == "replace_partitions" and exists:
        values = [row.asDict() for row in frame.select(*output.partition_by).distinct().collect()]
        values += [dict(zip(output.partition_by, rel)) for rel in _clear_values(staged)]
        if not values:
            return
        predicate = " OR ".join(
            "(" + " AND ".join(f"`{k}` = {_sql_literal(str(v))}" for k, v in value.items()) + ")" for value in values
        )
        writer.mode("overwrite").option("replaceWhere", predicate).save(output.location)
        return
    writer.mode("append" if output.mode == "append" else "overwrite").save(output.location)


def _clear_values(staged: StagedWrite) -> list[tuple[str, ...]]:
    return [tuple(part.split("=", 1)[1] for part in rel.split("/")) for rel in staged.clear]


def _promote_table(staged: StagedWrite) -> None:
    output, spark = staged.output, staged.spark
    frame = staged.staged_frame()
    if output.mode == "merge":
        _require_delta(spark, f"table {output.location}")
        from delta.tables import DeltaTable

        if spark.catalog.tableExists(output.location):
            _delta_merge(DeltaTable.forName(spark, output.location), frame, output.merge_keys)
        else:
            frame.write.format("delta").saveAsTable(output.location)
        return
    if output.mode == "replace_partitions":
        raise ConfigError(f"table {output.location}: per-run replacement is supported for paths only")
    writer = frame.write.mode("append" if output.mode == "append" else "overwrite")
    if output.partition_by:
        writer = writer.partitionBy(*output.partition_by)
    writer.saveAsTable(output.location)


_PROMOTERS = {
    (False, False): _promote_parquet,
    (False, True): _promote_delta_path,
    (True, False): _promote_table,
}


# --------------------------------------------------------------------------- helpers for callers


def replace_partitions(frame: DataFrame, path: str, partition_by: list[str], *, run_id: str) -> int:
    """Stage `frame` partitioned, then replace exactly those partition directories at `path`."""
    staged = stage(frame, Output(path, "parquet", "replace_partitions", partition_by=partition_by), run_id=run_id)
    staged.promote()
    return staged.rows


def replace_delta_partition(frame: DataFrame, path: str, values: dict[str, str], *, partition_by: list[str]) -> None:
    """Overwrite the rows matching `values` in a Delta table at `path` with `frame` (idempotent re-runs)."""
    from delta.tables import DeltaTable

    spark = frame.sparkSession
    _require_delta(spark, f"report {path}")
    # mergeSchema: a history table written by an older version (fewer report columns) keeps accepting runs.
    writer = frame.write.format("delta").partitionBy(*partition_by).option("mergeSchema", "true")
    if DeltaTable.isDeltaTable(spark, path):
        predicate = " AND ".join(f"`{k}` = {_sql_literal(v)}" for k, v in values.items())
        writer.mode("overwrite").option("replaceWhere", predicate).save(path)
    else:
        writer.mode("append").save(path)


def partition_dir(column: str, value: str) -> str:
    """`column=value` for values that need no escaping (run ids, simple names)."""
    if not _SAFE_VALUE.match(value):
        raise ConfigError(f"partition value for {column} has characters that need escaping")
    return f"{column}={value}"


def dataset_identity(spark: SparkSession, output: Output) -> tuple[str, str]:
    """OpenLineage (namespace, name) of an output: scheme://authority + path, or a table's location."""
    location = output.location
    if output.format == "table":
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {output.location}").collect()
        found = [r["data_type"] for r in rows if r["col_name"] == "Location"]
        if not found:
            return ("spark_catalog", output.location)
        location = found[0]
    uri = _Fs(spark, location).qualify(location)
    scheme, _, rest = uri.partition(":")
    if rest.startswith("//"):
        authority, _, path = rest[2:].partition("/")
        return (f"{scheme}://{authority}" if authority else scheme, "/" + path)
    return (scheme, rest)


def path_exists(spark: SparkSession, path: str) -> bool:
    """Whether a path exists (any Hadoop file system)."""
    return _Fs(spark, path).exists(path)

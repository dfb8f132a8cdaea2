"""Staging, then promotion: outputs are fully written beside the target before the target is touched.

`stage()` materialises a DataFrame as parquet in a hidden per-run directory next to the target
(`<parent>/.dqgov-staging-<run_id>/<name>`) and counts what landed. Removing the path segment
`/.dqgov-staging-<run_id>` gives the target, so the OpenLineage Spark listener names the staged write as
the target itself (`publish.staging.STAGING_REMOVE_PATTERN`, set by `dq_governance.lineage.spark`). `StagedWrite.promote()` moves it
into place, only after the gate passed; `discard()` deletes it, leaving the target as it was.

Promotion by format and mode:
- parquet path: overwrite swaps directories (old one restored if the swap fails), append moves the
  staged files in under the run's name (below), `replace_partitions` replaces just the staged partition
  directories (per run);
- delta path or table: one Delta transaction (overwrite, append, merge on keys, replaceWhere);
- catalog table: `saveAsTable` overwrite, append like a parquet path into the table's location (parquet
  tables) or one Delta transaction (Delta tables), or a Delta MERGE.
Files move through the Hadoop FileSystem API, so the same code serves local disks, HDFS and object stores.

Retries: an append repeated with the same pipeline and run id never publishes the run twice.
- parquet path and parquet table: every file an append moves in is named `dqgov-<tag>.<Spark's name>`,
  `<tag>` = `retry_tag(pipeline, run_id)` (16 hex digits). Promotion first deletes the visible files that
  carry the run's tag (an earlier attempt's), then moves the new ones in, then (tables) refreshes the
  table: the retry *replaces* the run's rows. Files not written by an append (overwrite, older files) are
  never touched. A crash between the delete and the moves leaves the run's rows absent or partly present,
  never two copies of a row: the next attempt of the run removes whatever its tag left and moves all its
  files in. A table of another file format (orc, csv, Hive serde) is refused for append by `preflight`,
  before anything is written.
- Delta path and Delta table: the append commits with Delta's idempotent-write options `txnAppId =
  dqgov-<tag>`, `txnVersion = 0`. Delta *skips* the commit of a retry whose app id already committed: the
  first successful attempt's rows stay (a retry with corrected data needs a new run id, or overwrite /
  merge). The skip is logged and shows as `StagedWrite.skipped`. Each run leaves one small SetTransaction
  entry in the log; `delta.setTransactionRetentionDuration` bounds how long Delta keeps them.
- overwrite, merge and `replace_partitions` are idempotent by construction.
A run without an explicit run id gets a new uuid4: it is a new run, and its append adds rows.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from pyspark.sql import DataFrame, SparkSession

from dq_governance.errors import ConfigError, InputDataError
from dq_governance.publish.staging import STAGING_PREFIX, staged_path

log = logging.getLogger(__name__)

FORMATS = ("parquet", "delta", "table")
MODES = ("overwrite", "append", "merge", "replace_partitions")
_SAFE_VALUE = re.compile(r"^[A-Za-z0-9._:-]+$")
#: the file name prefix of an appended file: `dqgov-<tag>.`; Spark reads names not starting with `_` or `.`
RUN_FILE_PREFIX = "dqgov-"
#: table providers whose files an append can move in (our staged files are parquet)
FILE_TABLE_PROVIDERS = ("parquet",)


def retry_tag(pipeline: str | None, run_id: str) -> str:
    """The name a run's appended files and Delta transactions carry: the same for every attempt of a run."""
    return hashlib.sha256(f"{pipeline or ''}\n{run_id}".encode("utf-8")).hexdigest()[:16]


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

    def files(self, path: str) -> list[str]:
        """Relative paths of every visible file under path, at any depth (hidden directories skipped)."""
        found = []
        for name, is_dir in self.children(path):
            if is_dir:
                found.extend(f"{name}/{rel}" for rel in self.files(_join(path, name)))
            else:
                found.append(name)
        return found

    def children(self, path: str) -> list[tuple[str, bool]]:
        """(name, is_dir) of visible children, by Spark's rule: `_x` and `.x` are hidden, `_k=v` is not."""
        if not self.exists(path):
            return []
        out = []
        for status in self._fs.listStatus(self._p(path)):
            name = status.getPath().getName()
            if not _hidden(name):
                out.append((name, bool(status.isDirectory())))
        return out


def _hidden(name: str) -> bool:
    """Spark's rule for names its file sources skip: `_x` and `.x`, but not partition directories `_k=v`."""
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


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
        info = table_info(spark, output.location)
        if info is not None and info.location:  # beside the table's files: promotion moves them there
            return staged_path(info.location, run_id)
        warehouse = spark.conf.get("spark.sql.warehouse.dir", "spark-warehouse")
        return _join(warehouse, f".{output.location}.__staging__{run_id}")
    return staged_path(output.location, run_id)


@dataclass(frozen=True)
class TableInfo:
    """What promotion needs to know of an existing catalog table."""

    provider: str  # parquet, delta, orc, hive, ...
    location: str | None
    partition_by: list[str]


def table_info(spark: SparkSession, name: str) -> TableInfo | None:
    """Provider, location and partition columns of a catalog table, or None when it does not exist."""
    if not spark.catalog.tableExists(name):
        return None
    rows = {r["col_name"]: r["data_type"] for r in spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()}
    parts = [c.name for c in spark.catalog.listColumns(name) if c.isPartition]
    return TableInfo((rows.get("Provider") or "").lower(), rows.get("Location") or None, parts)


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
    pipeline: str | None = None  # with run_id, names the run's appended files and Delta transactions
    skipped: bool = False  # set by promote(): Delta skipped the append (this run was already committed)

    @property
    def tag(self) -> str:
        """The run's retry tag (see `retry_tag`)."""
        return retry_tag(self.pipeline, self.run_id)

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


def stage(
    df: DataFrame, output: Output, *, run_id: str, spark: SparkSession | None = None, pipeline: str | None = None,
) -> StagedWrite:
    """Write `df` to the output's staging location and count the rows that landed there.

    `pipeline` and `run_id` identify the run whose earlier attempts an append replaces (module doc).
    """
    session = spark or df.sparkSession
    preflight(session, output)
    staging = staging_location(session, output, run_id)
    fs = _Fs(session, staging)
    fs.delete(staging)  # a crashed earlier attempt of the same run
    writer = df.write.mode("overwrite")
    if output.partition_by:
        writer = writer.partitionBy(*output.partition_by)
    writer.parquet(staging)
    if not fs.exists(staging):  # nothing written (e.g. an empty partitioned frame)
        fs.mkdirs(staging)
    staged = StagedWrite(session, output, staging, 0, run_id, df.schema, pipeline=pipeline)
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
    if output.mode == "append":
        _check_append_schema(staged, _parquet_schema(staged.spark, fs, target), target)
        _append_run(fs, staged, target)
        return
    if not fs.exists(target):  # per-run replace into a new directory
        fs.rename(staged.staging, target)
        return
    _replace_partition_dirs(fs, staged)


def _append_run(fs: _Fs, staged: StagedWrite, target: str) -> None:
    """Delete the files an earlier attempt of this run appended, then move this attempt's files in."""
    prefix = f"{RUN_FILE_PREFIX}{staged.tag}."
    earlier = [rel for rel in fs.files(target) if rel.rpartition("/")[2].startswith(prefix)]
    for rel in earlier:
        fs.delete(_join(target, rel))
    if earlier:
        log.info("append to %s: replaced %d file(s) of an earlier attempt of run %s", target, len(earlier),
                 staged.run_id)
    fs.mkdirs(target)
    _move_files(fs, staged.staging, target, prefix)


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


def _move_files(fs: _Fs, source: str, target: str, prefix: str = "") -> None:
    """Move every visible file under source to the same relative place under target, `prefix` added to its name."""
    for name, is_dir in fs.children(source):
        src = _join(source, name)
        if is_dir:
            fs.mkdirs(_join(target, name))
            _move_files(fs, src, _join(target, name), prefix)
        else:
            fs.rename(src, _join(target, prefix + name))


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


def _parquet_schema(spark: SparkSession, fs: _Fs, path: str) -> Any:
    """The schema of the parquet data at path; None when it holds no data file (new, or emptied by a crash)."""
    if not fs.files(path):
        return None
    return spark.read.parquet(path).schema


def _check_append_schema(staged: StagedWrite, existing: Any, where: str) -> None:
    if existing is None:
        return
    want = {f.name: f.dataType.simpleString() for f in existing.fields}
    have = {f.name: f.dataType.simpleString() for f in staged.schema.fields}
    if want != have:
        diff = sorted(set(want.items()) ^ set(have.items()))
        raise InputDataError(f"cannot append to {where}: schema differs from the existing data ({diff[:4]})")


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
    if output.mode == "append":
        _delta_append(staged, writer, lambda w: w.save(output.location),
                      (lambda: DeltaTable.forPath(spark, output.location)) if exists else None)
        return
    writer.mode("overwrite").save(output.location)


def _delta_append(staged: StagedWrite, writer: Any, save: Callable[[Any], None],
                  table: Callable[[], Any] | None) -> None:
    """Append in one Delta transaction named after the run: Delta skips it when the run already committed.

    `table` gives the existing DeltaTable (None: the append creates it, so nothing can be skipped).
    """
    before = _delta_version(table()) if table is not None else None
    save(writer.mode("append").option("txnAppId", f"{RUN_FILE_PREFIX}{staged.tag}").option("txnVersion", 0))
    staged.skipped = table is not None and _delta_version(table()) == before
    if staged.skipped:
        log.info("append to %s: run %s was already committed; Delta skipped this attempt (txnAppId %s%s)",
                 staged.output.location, staged.run_id, RUN_FILE_PREFIX, staged.tag)


def _delta_version(table: Any) -> int:
    return int(table.history(1).select("version").first()[0])


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
    writer = frame.write
    if output.partition_by:
        writer = writer.partitionBy(*output.partition_by)
    if output.mode == "append":
        _append_table(staged, frame, writer)
        return
    writer.mode("overwrite").saveAsTable(output.location)


def _append_table(staged: StagedWrite, frame: DataFrame, writer: Any) -> None:
    """Append to a catalog table, replacing an earlier attempt of the run: by its files, or by Delta's txn."""
    spark, name = staged.spark, staged.output.location
    info = table_info(spark, name)
    provider = _table_append_provider(spark, staged.output, info)
    if provider == "delta":
        from delta.tables import DeltaTable

        _require_delta(spark, f"table {name}")
        _delta_append(staged, writer.format("delta"), lambda w: w.saveAsTable(name),
                      (lambda: DeltaTable.forName(spark, name)) if info is not None else None)
        return
    if info is None:  # create it empty, so that even the first append's files carry the run's name
        frame.limit(0).write.format(provider).partitionBy(*staged.output.partition_by).saveAsTable(name)
        info = table_info(spark, name)
    if info is None or not info.location:
        raise ConfigError(f"table {name}: append needs a table with a location (its files are moved there)")
    fs = _Fs(spark, info.location)
    _check_append_schema(staged, spark.table(name).schema, f"table {name}")
    _append_run(fs, staged, info.location)
    if info.partition_by:
        spark.catalog.recoverPartitions(name)  # new partition directories become visible to the catalog
    spark.catalog.refreshTable(name)


def preflight(spark: SparkSession, output: Output) -> None:
    """Refuse, before anything is written, an output whose retried runs could not replace their own rows."""
    if output.format == "table" and output.mode == "append":
        _table_append_provider(spark, output, table_info(spark, output.location))


def _table_append_provider(spark: SparkSession, output: Output, info: TableInfo | None) -> str:
    """The provider an append into this table writes (an existing table's, else the session default)."""
    default = spark.conf.get("spark.sql.sources.default", "parquet") or "parquet"
    provider = info.provider if info is not None else default.lower()
    if provider != "delta" and provider not in FILE_TABLE_PROVIDERS:
        raise ConfigError(
            f"table {output.location}: append needs a parquet or Delta table (provider is {provider}); a "
            "retried run could not replace its own rows"
        )
    if provider != "delta" and info is not None and sorted(info.partition_by) != sorted(output.partition_by):
        raise ConfigError(
            f"table {output.location}: append with partition_by [{', '.join(output.partition_by)}] into a "
            f"table partitioned by [{', '.join(info.partition_by)}]"
        )
    return provider


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
        info = table_info(spark, output.location)
        if info is None or not info.location:
            return ("spark_catalog", output.location)
        location = info.location
    uri = _Fs(spark, location).qualify(location)
    scheme, _, rest = uri.partition(":")
    if rest.startswith("//"):
        authority, _, path = rest[2:].partition("/")
        return (f"{scheme}://{authority}" if authority else scheme, "/" + path)
    return (scheme, rest)


def path_exists(spark: SparkSession, path: str) -> bool:
    """Whether a path exists (any Hadoop file system)."""
    return _Fs(spark, path).exists(path)

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

Retries: an append repeated with the same pipeline, contract and run id never publishes the run twice (two
contracts of a pipeline sharing a run id are two runs here: neither replaces or skips the other's rows).
- parquet path and parquet table: every file an append moves in is named `dqgov-<tag>.<Spark's name>`,
  `<tag>` = `retry_tag(pipeline, run_id, contract)` (16 hex digits). Promotion first deletes the visible files that
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
import os
import re
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from pyspark.sql import DataFrame, SparkSession

from dq_governance.errors import ConfigError, DqGovernanceError, InputDataError
from dq_governance.identifiers import quote_identifier
from dq_governance.publish.staging import STAGING_PREFIX, staged_path
from dq_governance.session import CLASSIC, CONNECT, HadoopFs, capabilities, first_line, kind, log_once, unsupported
from dq_governance.session import join as _join
from dq_governance.session import path_exists as _session_path_exists
from dq_governance.session import qualify as _qualify

log = logging.getLogger(__name__)

FORMATS = ("parquet", "delta", "table")
MODES = ("overwrite", "append", "merge", "replace_partitions")
#: characters Spark escapes in a partition directory name (`ExternalCatalogUtils.escapePathName`: 0x01-0x1F,
#: `"#%'*/:=?\\` 0x7F `{[]^`, and on Windows also space `<>|`), each written as `%XX` (upper-case hex)
_ESCAPED_CHARS = frozenset(
    [chr(c) for c in range(0x01, 0x20)] + list("\"#%'*/:=?\\\x7f{[]^") + (list(" <>|") if os.name == "nt" else [])
)
#: Spark's directory name for a null (or empty) partition value
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: a run id names directories (staging, quarantine and report partitions) and Delta transactions: letters and
#: digits first, then also `. _ : + @ -` (uuids, Airflow's `scheduled__2026-01-01T00:00:00+00:00`, ARNs)
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+@-]{0,127}$")
#: the file name prefix of an appended file: `dqgov-<tag>.`; Spark reads names not starting with `_` or `.`
RUN_FILE_PREFIX = "dqgov-"
#: table providers whose files an append can move in (our staged files are parquet)
FILE_TABLE_PROVIDERS = ("parquet",)


def retry_tag(pipeline: str | None, run_id: str, contract: str | None = None) -> str:
    """The name a run's appended files and Delta transactions carry: the same for every attempt of a run of one
    contract, another for each contract sharing the run id."""
    scope = f"{pipeline or ''}\n{run_id}" + (f"\n{contract}" if contract else "")
    return hashlib.sha256(scope.encode("utf-8")).hexdigest()[:16]


@dataclass
class Output:
    """Where and how one DataFrame is published."""

    location: str  # a path, or a table name when format == "table"
    format: str = "parquet"
    mode: str = "overwrite"
    merge_keys: list[str] = field(default_factory=list)
    partition_by: list[str] = field(default_factory=list)
    #: Delta only: a write may add columns (`mergeSchema`); set for the quarantine (its raw columns follow the input)
    merge_schema: bool = False

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ConfigError(f"output {self.location}: format must be one of {', '.join(FORMATS)}, not {self.format!r}")
        if self.mode not in MODES:
            raise ConfigError(f"output {self.location}: mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.merge_keys and self.mode != "merge":
            raise ConfigError(f"output {self.location}: merge_keys only go with mode merge, not {self.mode}")
        if self.mode == "merge" and not self.merge_keys:
            raise ConfigError(f"output {self.location}: mode merge needs merge_keys")
        if self.mode == "merge" and self.format == "parquet":
            raise ConfigError(f"output {self.location}: mode merge needs format delta (or a Delta table)")
        if self.mode == "replace_partitions" and not self.partition_by:
            raise ConfigError(f"output {self.location}: mode replace_partitions needs partition_by")


def _beside(target: str, tag: str, run_id: str) -> str:
    """A hidden sibling of the target: `<parent>/.<name>.__<tag>__<run_id>`."""
    trimmed = target.rstrip("/")
    parent, _, name = trimmed.rpartition("/")
    return _join(parent or ".", f".{name}.__{tag}__{run_id}")


def staging_location(spark: SparkSession, output: Output, run_id: str, tag: str) -> str:
    """Where a run of one contract (`tag`, see `retry_tag`) stages an output before promotion.

    Named by the tag too, not by the run id alone: two contracts sharing a run id and a target each stage in a
    folder of their own (one folder let the second's staging replace the first's rows before either promoted).
    """
    key = f"{run_id}-{tag}"
    if output.format == "table":
        info = table_info(spark, output.location)
        if info is not None and info.location:  # beside the table's files: promotion moves them there
            return staged_path(info.location, key)
        warehouse = spark.conf.get("spark.sql.warehouse.dir", "spark-warehouse")
        return _join(warehouse, f".{output.location}.__staging__{key}")
    return staged_path(output.location, key)


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
    pipeline: str | None = None  # with run_id and contract, names the run's appended files and Delta transactions
    contract: str | None = None
    skipped: bool = False  # set by promote(): Delta skipped the append (this run was already committed)

    @property
    def tag(self) -> str:
        """The run's retry tag (see `retry_tag`)."""
        return retry_tag(self.pipeline, self.run_id, self.contract)

    def promote(self) -> None:
        """Move the staged data into the target (the gate has passed)."""
        try:
            _PROMOTERS[(CLASSIC, self.output.format)](self)
        finally:
            self.discard()

    def discard(self) -> None:
        """Delete the staging data; the target is not touched."""
        fs = HadoopFs(self.spark, self.staging)
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
    contract: str | None = None,
) -> StagedWrite:
    """Write `df` to the output's staging location and count the rows that landed there.

    `pipeline`, `run_id` and `contract` identify the run whose earlier attempts an append replaces (module doc).
    """
    session = spark or df.sparkSession
    preflight(session, output)
    if kind(session) == CONNECT:  # no staging: the client cannot rename or delete files (section below)
        return pending(session, df, output, run_id=run_id, pipeline=pipeline, contract=contract)
    staging = staging_location(session, output, run_id, retry_tag(pipeline, run_id, contract))
    fs = HadoopFs(session, staging)
    fs.delete(staging)  # a crashed earlier attempt of the same run of this contract
    writer = df.write.mode("overwrite")
    if output.partition_by:
        writer = writer.partitionBy(*output.partition_by)
    writer.parquet(staging)
    if not fs.exists(staging):  # nothing written (e.g. an empty partitioned frame)
        fs.mkdirs(staging)
    staged = StagedWrite(session, output, staging, 0, run_id, df.schema, pipeline=pipeline, contract=contract)
    staged.rows = staged.staged_frame().count()
    return staged


# --------------------------------------------------------------------------- parquet paths


def _promote_parquet(staged: StagedWrite) -> None:
    output, fs = staged.output, HadoopFs(staged.spark, staged.output.location)
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
    # Per-run replace, partition by partition, also into a new directory: two runs creating it at once each
    # found it missing, and the second one's whole-directory rename was refused (its rows lost).
    fs.mkdirs(target)
    _replace_partition_dirs(fs, staged)
    _carry_success_marker(fs, staged.staging, target)


def _carry_success_marker(fs: HadoopFs, staging: str, target: str) -> None:
    """Spark's `_SUCCESS` marker of the write, into a directory that has none (as a new directory always got)."""
    for name in ("_SUCCESS", "._SUCCESS.crc"):
        src, dst = _join(staging, name), _join(target, name)
        if fs.exists(src) and not fs.exists(dst):
            try:
                fs.rename(src, dst)
            except ConfigError:  # another run's marker landed first: the same file
                pass


def _append_run(fs: HadoopFs, staged: StagedWrite, target: str) -> None:
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


def _swap(fs: HadoopFs, staging: str, target: str, run_id: str) -> None:
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


def _move_files(fs: HadoopFs, source: str, target: str, prefix: str = "") -> None:
    """Move every visible file under source to the same relative place under target, `prefix` added to its name."""
    for name, is_dir in fs.children(source):
        src = _join(source, name)
        if is_dir:
            fs.mkdirs(_join(target, name))
            _move_files(fs, src, _join(target, name), prefix)
        else:
            fs.rename(src, _join(target, prefix + name))


def _leaf_dirs(fs: HadoopFs, base: str, depth: int, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if depth == 0:
        return [prefix]
    out = []
    for name, is_dir in fs.children(_join(base, *prefix) if prefix else base):
        if is_dir:
            out.extend(_leaf_dirs(fs, base, depth - 1, (*prefix, name)))
    return out


def _replace_partition_dirs(fs: HadoopFs, staged: StagedWrite) -> None:
    target = staged.output.location
    for rel in staged.clear:
        fs.delete(_join(target, rel))
    for rel in _leaf_dirs(fs, staged.staging, len(staged.output.partition_by)):
        dst = _join(target, *rel)
        fs.delete(dst)
        fs.rename(_join(staged.staging, *rel), dst)


def _parquet_schema(spark: SparkSession, fs: HadoopFs, path: str) -> Any:
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


# --------------------------------------------------------------------------- before any promotion


def check_promotable(staged: StagedWrite) -> None:
    """Refuse, before any output of the run is promoted, a staged write its target would refuse for its schema.

    `pipeline.verify` calls it for every staged output, so a run failing here publishes nothing (its quarantine
    included). Checked: an append to a parquet path or parquet table (the same schema as the existing data);
    a Delta path or table written by overwrite, append or replace_partitions (what Delta's schema enforcement
    refuses: a column the table lacks, unless the output merges schemas, or a column of another type); a
    merge's keys present in the staged rows; an overwritten table's partition columns present.
    Not checked: a MERGE's other columns and types (Delta casts them), Delta constraints and NOT NULL columns
    (checked by Delta on the rows), and anything that changes between this check and the promotion.
    """
    output, spark = staged.output, staged.spark
    names = {f.name.lower() for f in staged.schema.fields}
    if output.mode == "merge":
        _require_delta(spark, f"output {output.location}")
        missing = [k for k in output.merge_keys if k.lower() not in names]
        if missing:
            raise InputDataError(f"cannot merge into {output.location}: merge key(s) {', '.join(missing)} are not "
                                 "columns of the published rows")
        return
    if output.format == "parquet":
        if output.mode == "append" and kind(spark) == CLASSIC:
            fs = HadoopFs(spark, output.location)
            _check_append_schema(staged, _parquet_schema(spark, fs, output.location), output.location)
        return
    if output.format == "delta":
        _require_delta(spark, f"output {output.location}")
        if is_delta_table(spark, output.location):
            existing = spark.read.format("delta").load(output.location).schema
            _check_delta_schema(staged, existing, output.location)
        return
    info = table_info(spark, output.location)
    if info is None:
        return
    where = f"table {output.location}"
    if info.provider == "delta":
        _require_delta(spark, where)
        _check_delta_schema(staged, spark.table(output.location).schema, where)
    elif output.mode == "append":
        _check_append_schema(staged, spark.table(output.location).schema, where)
    else:
        missing = [c for c in info.partition_by if c.lower() not in names]
        if missing:
            raise InputDataError(f"cannot overwrite {where}: its partition column(s) {', '.join(missing)} are not "
                                 "columns of the published rows")


def _check_delta_schema(staged: StagedWrite, existing: Any, where: str) -> None:
    """What Delta's schema enforcement refuses on a write without mergeSchema / overwriteSchema, said first."""
    problems = _delta_schema_problems(existing, staged.schema, staged.output.merge_schema)
    if problems:
        raise InputDataError(f"cannot write to {where}: schema differs from the existing Delta table "
                             f"({'; '.join(problems[:4])})")


def _delta_schema_problems(existing: Any, new: Any, allow_new: bool, prefix: str = "") -> list[str]:
    """Columns of `new` Delta would refuse against `existing` (names match case-insensitively; nullability is
    not compared: Delta checks NOT NULL on the rows)."""
    from pyspark.sql.types import ArrayType, MapType, NullType, StructType

    if isinstance(new, StructType) and isinstance(existing, StructType):
        have = {f.name.lower(): f for f in existing.fields}
        out = []
        for f in new.fields:
            name = prefix + f.name
            if f.name.lower() not in have:
                if not allow_new:
                    out.append(f"new column {name}")
                continue
            out.extend(_delta_schema_problems(have[f.name.lower()].dataType, f.dataType, allow_new, name + "."))
        return out
    if isinstance(new, ArrayType) and isinstance(existing, ArrayType):
        return _delta_schema_problems(existing.elementType, new.elementType, allow_new, prefix)
    if isinstance(new, MapType) and isinstance(existing, MapType):
        return (_delta_schema_problems(existing.keyType, new.keyType, allow_new, prefix)
                + _delta_schema_problems(existing.valueType, new.valueType, allow_new, prefix))
    if isinstance(new, NullType) or new.simpleString() == existing.simpleString():
        return []
    return [f"{prefix.rstrip('.') or 'value'}: {existing.simpleString()} in the table, {new.simpleString()} now"]


def remove_run_partition(spark: SparkSession, output: Output, run_id: str) -> None:
    """Remove a run's rows from an output partitioned by the run id (a promoted quarantine, when the target
    then failed). A parquet output on Spark Connect cannot be undone (the client cannot delete files): logged."""
    column = output.partition_by[0]
    if output.format == "delta":
        ref = DeltaRef(output.location)
        spark.sql(f"DELETE FROM {ref.sql} WHERE `{column}` = {_sql_literal(run_id)}").collect()
        return
    if kind(spark) == CONNECT:
        log.warning("Spark Connect: %s keeps the rows of run %s (a Connect client cannot delete files)",
                    output.location, run_id)
        return
    HadoopFs(spark, output.location).delete(_join(output.location, partition_dir(column, run_id)))


def partition_rows(spark: SparkSession, output: Output, value: str, columns: list[str]) -> set[tuple[Any, ...]]:
    """The distinct values of `columns` (strings) in one partition, `partition_by[0] = value`, of a parquet or
    Delta path; only that partition is read (empty when it does not exist). DataFrame reads only: Connect too."""
    from pyspark.sql import functions as F

    column = output.partition_by[0]
    if output.format == "delta":
        _require_delta(spark, f"output {output.location}")
        if not is_delta_table(spark, output.location):
            return set()
        frame = spark.read.format("delta").load(output.location).where(F.col(quote_identifier(column)) == F.lit(value))
    elif output.format == "parquet":
        where = _join(output.location, partition_dir(column, value))
        if not path_exists(spark, where):
            return set()
        # that directory alone, with the schema given: nothing else of the output is listed or inferred
        frame = spark.read.schema(", ".join(f"{quote_identifier(c)} string" for c in columns)).parquet(where)
    else:
        return set()
    return {tuple(row) for row in frame.select(*[F.col(quote_identifier(c)) for c in columns]).distinct().collect()}


# --------------------------------------------------------------------------- Delta and tables


def delta_enabled(spark: SparkSession) -> bool:
    """True when the session has the Delta SQL extension (and, classic, delta-spark is importable).

    A Connect client needs no delta-spark: it publishes Delta through the writer and SQL only.
    """
    if kind(spark) == CLASSIC:
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


@dataclass(frozen=True)
class DeltaRef:
    """A Delta table by path (`is_path`) or by catalog name."""

    location: str
    is_path: bool = True

    @property
    def sql(self) -> str:
        """The table as SQL names it: delta.`<path>`, or the catalog name as given."""
        return "delta.`" + self.location.replace("`", "``") + "`" if self.is_path else self.location


class _DeltaTableApi:
    """Delta through delta-spark's DeltaTable (classic sessions: unchanged behaviour)."""

    @staticmethod
    def _table(spark: SparkSession, ref: DeltaRef) -> Any:
        from delta.tables import DeltaTable

        return DeltaTable.forPath(spark, ref.location) if ref.is_path else DeltaTable.forName(spark, ref.location)

    @staticmethod
    def exists(spark: SparkSession, path: str) -> bool:
        from delta.tables import DeltaTable

        return bool(DeltaTable.isDeltaTable(spark, path))

    @classmethod
    def merge(cls, spark: SparkSession, ref: DeltaRef, frame: DataFrame, keys: list[str]) -> None:
        (
            cls._table(spark, ref).alias("t")
            .merge(frame.alias("s"), _merge_condition(keys))
            .whenMatchedUpdateAll()
            .whenNotMatchedInsertAll()
            .execute()
        )

    @classmethod
    def version(cls, spark: SparkSession, ref: DeltaRef) -> int:
        return int(cls._table(spark, ref).history(1).select("version").first()[0])


class _DeltaSql:
    """Delta through SQL (Spark Connect: DeltaTable there needs the server's Delta Connect plugin)."""

    @staticmethod
    def exists(spark: SparkSession, path: str) -> bool:
        try:
            row = spark.sql(f"DESCRIBE DETAIL {_sql_literal(path)}").select("format").first()
        except Exception:  # a missing path (DeltaFileNotFoundException / PATH_NOT_FOUND): not a Delta table
            return False
        return row is not None and row[0] == "delta"

    @staticmethod
    def merge(spark: SparkSession, ref: DeltaRef, frame: DataFrame, keys: list[str]) -> None:
        """MERGE the frame into the table, through a temporary view of it."""
        view = f"__dqgov_merge_{uuid.uuid4().hex[:16]}"
        frame.createOrReplaceTempView(view)
        try:
            spark.sql(
                f"MERGE INTO {ref.sql} t USING {view} s ON {_merge_condition(keys)} "
                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
            ).collect()  # a command runs when sent; collect() makes that explicit on both kinds
        finally:
            spark.catalog.dropTempView(view)

    @staticmethod
    def version(spark: SparkSession, ref: DeltaRef) -> int:
        return int(spark.sql(f"DESCRIBE HISTORY {ref.sql} LIMIT 1").select("version").first()[0])


_DELTA_OPS: dict[str, Any] = {CLASSIC: _DeltaTableApi, CONNECT: _DeltaSql}


def delta_ops(spark: SparkSession) -> Any:
    """The Delta operations (exists, merge, version) for the session's kind."""
    return _DELTA_OPS[kind(spark)]


def is_delta_table(spark: SparkSession, path: str) -> bool:
    """Whether a Delta table lives at `path` (Connect: DESCRIBE DETAIL; classic: DeltaTable.isDeltaTable)."""
    return delta_ops(spark).exists(spark, path)


def _sql_literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _promote_delta_path(staged: StagedWrite) -> None:
    output, spark = staged.output, staged.spark
    _require_delta(spark, f"output {output.location}")
    ops, ref = delta_ops(spark), DeltaRef(output.location)
    frame = staged.staged_frame()
    exists = ops.exists(spark, output.location)
    if output.mode == "merge" and exists:
        ops.merge(spark, ref, frame, output.merge_keys)
        return
    writer = frame.write.format("delta")
    if output.merge_schema:  # the quarantine: a run whose input gained a column adds it
        writer = writer.option("mergeSchema", "true")
    if output.partition_by:
        writer = writer.partitionBy(*output.partition_by)
    if output.mode == "replace_partitions" and exists:
        values = _partition_values(frame, output.partition_by)
        values += [dict(zip(output.partition_by, rel)) for rel in _clear_values(staged)]
        if not values:
            return
        writer.mode("overwrite").option("replaceWhere", _partition_predicate(values)).save(output.location)
        return
    if output.mode == "append":
        _delta_append(staged, writer, lambda w: w.save(output.location), ref if exists else None)
        return
    writer.mode("overwrite").save(output.location)


def _delta_append(staged: StagedWrite, writer: Any, save: Callable[[Any], None], table: DeltaRef | None) -> None:
    """Append in one Delta transaction named after the run: Delta skips it when the run already committed.

    `table` is the existing Delta table (None: the append creates it, so nothing can be skipped).
    """
    ops = delta_ops(staged.spark)
    before = ops.version(staged.spark, table) if table is not None else None
    save(writer.mode("append").option("txnAppId", f"{RUN_FILE_PREFIX}{staged.tag}").option("txnVersion", 0))
    staged.skipped = table is not None and ops.version(staged.spark, table) == before
    if staged.skipped:
        log.info("append to %s: run %s was already committed; Delta skipped this attempt (txnAppId %s%s)",
                 staged.output.location, staged.run_id, RUN_FILE_PREFIX, staged.tag)


def _clear_values(staged: StagedWrite) -> list[tuple[str | None, ...]]:
    return [tuple(partition_value(part) for part in rel.split("/")) for rel in staged.clear]


def _partition_values(frame: DataFrame, partition_by: list[str]) -> list[dict[str, Any]]:
    """The distinct partition values `frame` holds, one dict per partition (names may hold dots)."""
    return [row.asDict() for row in frame.select(*[quote_identifier(c) for c in partition_by]).distinct().collect()]


def _partition_predicate(values: list[dict[str, Any]]) -> str:
    """A replaceWhere predicate matching exactly these partition values (null as `IS NULL`)."""
    def term(k: str, v: Any) -> str:
        return f"{quote_identifier(k)} IS NULL" if v is None else f"{quote_identifier(k)} = {_sql_literal(str(v))}"

    return " OR ".join("(" + " AND ".join(term(k, v) for k, v in value.items()) + ")" for value in values)


def _promote_table(staged: StagedWrite) -> None:
    output, spark = staged.output, staged.spark
    frame = staged.staged_frame()
    if output.mode == "merge":
        _require_delta(spark, f"table {output.location}")
        if spark.catalog.tableExists(output.location):
            delta_ops(spark).merge(spark, DeltaRef(output.location, is_path=False), frame, output.merge_keys)
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
    _overwrite_table(staged, frame)


def _overwrite_table(staged: StagedWrite, frame: DataFrame) -> None:
    """Overwrite a catalog table, keeping what it is: a Delta table gets a Delta overwrite commit (its history,
    schema enforcement and partitioning stay); another table is rewritten with its own provider and partitioning.
    A table that does not exist yet is created (the session's default provider, the output's partitioning)."""
    spark, output = staged.spark, staged.output
    info = table_info(spark, output.location)
    if info is None:
        writer = frame.write.partitionBy(*output.partition_by) if output.partition_by else frame.write
        writer.mode("overwrite").saveAsTable(output.location)
        return
    if info.provider == "delta":
        _require_delta(spark, f"table {output.location}")
        from pyspark.sql import functions as F

        frame.writeTo(output.location).overwrite(F.lit(True))
        return
    writer = frame.write.format(info.provider)
    if info.partition_by:
        writer = writer.partitionBy(*info.partition_by)
    writer.mode("overwrite").saveAsTable(output.location)


def _append_table(staged: StagedWrite, frame: DataFrame, writer: Any) -> None:
    """Append to a catalog table, replacing an earlier attempt of the run: by its files, or by Delta's txn."""
    spark, name = staged.spark, staged.output.location
    info = table_info(spark, name)
    provider = _table_append_provider(spark, staged.output, info)
    if provider == "delta":
        _require_delta(spark, f"table {name}")
        _delta_append(staged, writer.format("delta"), lambda w: w.saveAsTable(name),
                      DeltaRef(name, is_path=False) if info is not None else None)
        return
    if info is None:  # create it empty, so that even the first append's files carry the run's name
        frame.limit(0).write.format(provider).partitionBy(*staged.output.partition_by).saveAsTable(name)
        info = table_info(spark, name)
    if info is None or not info.location:
        raise ConfigError(f"table {name}: append needs a table with a location (its files are moved there)")
    fs = HadoopFs(spark, info.location)
    _check_append_schema(staged, spark.table(name).schema, f"table {name}")
    _append_run(fs, staged, info.location)
    if info.partition_by:
        spark.catalog.recoverPartitions(name)  # new partition directories become visible to the catalog
    spark.catalog.refreshTable(name)


def preflight(spark: SparkSession, output: Output) -> None:
    """Refuse, before anything is written, an output whose retried runs could not replace their own rows."""
    provider = None
    if output.format == "table" and output.mode == "append":
        provider = _table_append_provider(spark, output, table_info(spark, output.location))
    if output.format == "table" and output.mode == "overwrite" and output.partition_by:
        info = table_info(spark, output.location)
        if info is not None and sorted(info.partition_by) != sorted(output.partition_by):
            raise ConfigError(
                f"table {output.location}: overwrite with partition_by [{', '.join(output.partition_by)}] of a "
                f"table partitioned by [{', '.join(info.partition_by)}] (an overwrite keeps the table's layout)"
            )
    if kind(spark) == CONNECT and output.mode == "append" and "delta" not in (output.format, provider):
        # a retried plain-file append would add its rows twice: the run's earlier files cannot be removed
        what = "table" if output.format == "table" else "path"
        raise unsupported(f"output {output.location}: append to a plain parquet {what}",
                          "format delta (an idempotent append) or mode replace_partitions")


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


# --------------------------------------------------------------------------- where an output goes, and its failures


def check_destination(spark: SparkSession, role: str, output: Output) -> None:
    """Refuse (ConfigError, one line) an output Spark could not create: a table in a schema that does not exist,
    or a path whose nearest existing ancestor is a file. Called before the check pass (`pipeline.precheck`).

    A Connect client cannot tell a file from a directory without listing the directory's whole tree, so there a
    path under a file is left to the write, which then fails as `writing()` says.
    """
    if output.format == "table":
        namespace = _table_namespace(output.location)
        if namespace is not None and not spark.catalog.databaseExists(namespace):
            raise ConfigError(f"{role} {output.location}: schema {namespace} does not exist; create it first or "
                              "name a table in an existing schema")
        return
    if capabilities(spark).hadoop_fs:
        blocker = HadoopFs(spark, output.location).file_ancestor(output.location)
        if blocker is not None:
            raise ConfigError(f"{role} {output.location}: {blocker} is a file, not a directory")


def _table_namespace(name: str) -> str | None:
    """The schema part of a table name (`db` of `db.t`, `cat.db` of `cat.db.t`; backquoted dots kept), or None."""
    parts, current, quoted = [], "", False
    for char in name:
        if char == "`":
            quoted = not quoted
        if char == "." and not quoted:
            parts.append(current)
            current = ""
        else:
            current += char
    return ".".join(parts) or None


@contextmanager
def writing(role: str, location: str) -> Iterator[None]:
    """Raise a Spark failure of the block as one line, `<role> <location>: writing failed: <Spark's first line>`
    (ConfigError: the output cannot be written where it was configured), chained to Spark's error; our own errors
    pass through unchanged."""
    try:
        yield
    except DqGovernanceError:
        raise
    except Exception as exc:
        if not _is_spark_error(exc):
            raise
        raise ConfigError(f"{role} {location}: writing failed: {first_line(exc)}") from exc


def _is_spark_error(exc: BaseException) -> bool:
    """A Spark failure: PySpark's own errors (classic and Connect) or a py4j error from the driver."""
    from pyspark.errors import PySparkException

    return isinstance(exc, PySparkException) or type(exc).__module__.startswith("py4j")


#: (session kind, output format) -> the function that publishes a staged (classic) or pending (Connect) write
_PROMOTERS: dict[tuple[str, str], Callable[[StagedWrite], None]] = {
    (CLASSIC, "parquet"): _promote_parquet,
    (CLASSIC, "delta"): _promote_delta_path,
    (CLASSIC, "table"): _promote_table,
    (CONNECT, "parquet"): lambda staged: publish_parquet(staged),  # defined with the Connect section below
    (CONNECT, "delta"): _promote_delta_path,
    (CONNECT, "table"): _promote_table,
}


def promoter(session_kind: str, output_format: str) -> Callable[[StagedWrite], None]:
    """The publisher for a session kind and output format."""
    return _PROMOTERS[(session_kind, output_format)]


# --------------------------------------------------------------------------- helpers for callers


def replace_partitions(frame: DataFrame, path: str, partition_by: list[str], *, run_id: str) -> int:
    """Stage `frame` partitioned, then replace exactly those partition directories at `path`."""
    staged = stage(frame, Output(path, "parquet", "replace_partitions", partition_by=partition_by), run_id=run_id)
    staged.promote()
    return staged.rows


#: Delta's optimistic-concurrency refusals: another writer committed first (two runs of one pipeline writing the
#: history at once share its `pipeline=` partition; two creating it both found it empty). Nothing was written.
_DELTA_CONFLICTS = ("ConcurrentAppendException", "ConcurrentDeleteReadException", "ConcurrentDeleteDeleteException",
                    "ConcurrentTransactionException", "ConcurrentWriteException", "ProtocolChangedException",
                    "MetadataChangedException")
#: how many times a conflicting replace is tried, with a short random wait growing between tries
DELTA_CONFLICT_ATTEMPTS = 6


def replace_delta_partition(frame: DataFrame, path: str, values: dict[str, str], *, partition_by: list[str]) -> None:
    """Overwrite the rows matching `values` in a Delta table at `path` with `frame` (idempotent re-runs).

    A write another writer's commit refused is tried again: it replaces only the rows `values` names, so a
    second try cannot touch another run's rows or duplicate its own.
    """
    import random
    import time

    for attempt in range(1, DELTA_CONFLICT_ATTEMPTS + 1):
        try:
            _replace_delta_rows(frame, path, values, partition_by)
            return
        except Exception as exc:
            text = f"{type(exc).__name__}: {exc}"
            if attempt == DELTA_CONFLICT_ATTEMPTS or not any(name in text for name in _DELTA_CONFLICTS):
                raise
            log.info("report %s: another writer committed first; trying again (%d of %d)", path, attempt + 1,
                     DELTA_CONFLICT_ATTEMPTS)
            time.sleep(random.uniform(0.2, 0.6) * attempt)


def _replace_delta_rows(frame: DataFrame, path: str, values: dict[str, str], partition_by: list[str]) -> None:
    spark = frame.sparkSession
    _require_delta(spark, f"report {path}")
    # mergeSchema: a history table written by an older version (fewer report columns) keeps accepting runs.
    writer = frame.write.format("delta").partitionBy(*partition_by).option("mergeSchema", "true")
    if is_delta_table(spark, path):
        predicate = " AND ".join(f"{quote_identifier(k)} = {_sql_literal(v)}" for k, v in values.items())
        writer.mode("overwrite").option("replaceWhere", predicate).save(path)
    else:
        writer.mode("append").save(path)


def escape_path_name(value: str) -> str:
    """A partition value (or column name) as Spark writes it in a directory name (`escapePathName`)."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED_CHARS else c for c in value)


def unescape_path_name(name: str) -> str:
    """The value a Spark partition directory name stands for (`unescapePathName`: `%XX` decoded)."""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), name)


def partition_dir(column: str, value: str | None) -> str:
    """`column=value` exactly as Spark names the partition directory (escaped; null or empty as Hive's default)."""
    text = NULL_PARTITION if value is None or value == "" else escape_path_name(value)
    return f"{escape_path_name(column)}={text}"


def partition_value(name: str) -> str | None:
    """The value of one `column=value` directory name (None for Spark's null partition)."""
    text = name.split("=", 1)[1]
    return None if text == NULL_PARTITION else unescape_path_name(text)


def validate_run_id(run_id: str) -> str:
    """Refuse a run id that cannot name the run's directories and transactions; before any Spark work."""
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise ConfigError(
            f"run id {run_id!r}: use 1-128 characters, letters and digits first, then also . _ : + @ - "
            "(it names the run's staging directory and its quarantine and report partitions)"
        )
    return run_id


def dataset_identity(spark: SparkSession, output: Output) -> tuple[str, str]:
    """OpenLineage (namespace, name) of an output: scheme://authority + path, or a table's location."""
    location = output.location
    if output.format == "table":
        info = table_info(spark, output.location)
        if info is None or not info.location:
            return ("spark_catalog", output.location)
        location = info.location
    uri = _qualify(spark, location)
    scheme, _, rest = uri.partition(":")
    if rest.startswith("//"):
        authority, _, path = rest[2:].partition("/")
        return (f"{scheme}://{authority}" if authority else scheme, "/" + path)
    return (scheme, rest)


def table_identity(spark: SparkSession, name: str) -> tuple[str, str, tuple[str, str]] | None:
    """A catalog table as the OpenLineage Spark listener names it: (namespace, name) of its location, and its
    `symlinks` identifier (the warehouse, `db.table`); None when `name` is no table with a location."""
    try:
        if not spark.catalog.tableExists(name):
            return None
        table = spark.catalog.getTable(name)
        info = table_info(spark, name)
        warehouse = _qualify(spark, spark.conf.get("spark.sql.warehouse.dir"))
    except Exception:  # not a table name Spark can parse (a logical dataset name): no table
        return None
    if info is None or not info.location:
        return None
    namespace, path = dataset_identity(spark, Output(info.location, "parquet"))
    qualified = f"{table.database}.{table.name}" if table.database else table.name
    return namespace, path, (warehouse.rstrip("/"), qualified)


def path_exists(spark: SparkSession, path: str) -> bool:
    """Whether a path exists (any Hadoop file system; on Connect as the server sees it)."""
    return _session_path_exists(spark, path)


# --------------------------------------------------------------------------- Spark Connect: written in place
#
# Publication on a Spark Connect session: written in place, because the client cannot rename or delete files.
#
# `publish.writer.stage()` returns a `PendingWrite` on Connect: nothing is written yet; its rows are counted
# from the (cached) frame, so `pipeline.verify` checks conservation before anything is written, exactly as it
# does for a staged write. `promote()` then writes the output once, in place, and checks what the write
# reported against that count (a mismatch raises `ConservationError`; the write cannot be undone then).
# A blocked gate never reaches here: the gate is decided from the check result, and its target is not staged.
#
# What each output gives on Connect (`writer.PROMOTERS[("connect", format)]`):
# - Delta path or Delta table: one Delta commit (atomic by itself). Append carries `txnAppId`/`txnVersion`:
#   a retried run is skipped (detected by `DESCRIBE HISTORY` before/after). Merge runs as SQL `MERGE INTO`,
#   `isDeltaTable` as `DESCRIBE DETAIL`: no DeltaTable API (it needs the server's Delta Connect plugin).
#   The written rows come from the commit's own `operationMetrics` (numOutputRows; a merge's numSourceRows),
#   read as the table's latest commit: a concurrent writer committing in between makes the check fail loudly.
# - parquet `replace_partitions` (the quarantine by run, the report history by pipeline/run):
#   Spark's dynamic partition overwrite. The job writes to a staging directory of its own and swaps only the
#   written partitions at commit: per-run replace, as on a classic session. One thing is lost: a retry that
#   now writes no row for a partition cannot remove that partition's earlier rows (logged once per run).
# - parquet overwrite, catalog parquet table overwrite: Spark deletes the old files before it writes the new
#   ones, so the output is **not atomic** (a failed write leaves it empty or partial). Logged once per run.
# - parquet append (path or catalog parquet table): refused by `writer.preflight` before anything is
#   written (a retried run would add its rows twice); use Delta or replace_partitions.
# Parquet writes are counted by an `Observation` on the write (4.x client and server), else read back.


#: Delta operationMetrics key holding the rows a commit wrote, by operation (DESCRIBE HISTORY)
_DELTA_ROW_METRICS = {
    "WRITE": "numOutputRows",
    "CREATE TABLE AS SELECT": "numOutputRows",
    "REPLACE TABLE AS SELECT": "numOutputRows",
    "CREATE OR REPLACE TABLE AS SELECT": "numOutputRows",
    "MERGE": "numSourceRows",
}


@dataclass
class PendingWrite(StagedWrite):
    """An output waiting for promote(): nothing written yet (Connect cannot stage); `rows` counted from the frame."""

    frame: Any = None
    observation: Any = None

    def promote(self) -> None:
        """Write the output in place (the gate has passed) and check the rows the write reports."""
        _log_weaker(self)
        promoter(CONNECT, self.output.format)(self)
        if not self.skipped:
            _check_written(self)

    def discard(self) -> None:
        """Nothing was written before promote(): nothing to remove."""

    def staged_frame(self) -> DataFrame:
        """The rows to write."""
        return self.frame


def pending(spark: SparkSession, df: DataFrame, output: Output, *, run_id: str, pipeline: str | None,
            contract: str | None = None) -> PendingWrite:
    """The Connect counterpart of `stage()`: count the rows (from the cache); write nothing yet."""
    write = PendingWrite(spark, output, "", 0, run_id, df.schema, pipeline=pipeline, contract=contract, frame=df)
    write.rows = df.count()
    return write


# --------------------------------------------------------------------------- parquet


def publish_parquet(write: StagedWrite) -> None:
    """A parquet path on Connect: overwrite in place, or replace the written partitions (dynamic overwrite)."""
    output = write.output
    frame = _observed(write, write.staged_frame())
    writer = frame.write.mode("overwrite")
    if output.partition_by:
        writer = writer.partitionBy(*output.partition_by)
    if output.mode == "replace_partitions":
        writer = writer.option("partitionOverwriteMode", "dynamic")
    writer.parquet(output.location)
    if output.mode == "replace_partitions" and write.rows == 0:
        _empty_cleared_partitions(write)


def _observed(write: StagedWrite, frame: DataFrame) -> DataFrame:
    """The frame with a row count observed on its write, when the session can observe (4.x)."""
    if not capabilities(write.spark).observation:
        return frame
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    write.observation = Observation(f"dqgov_written_{uuid.uuid4().hex[:12]}")  # type: ignore[attr-defined]
    return frame.observe(write.observation, F.count(F.lit(1)).alias("rows"))  # type: ignore[attr-defined]


def _empty_cleared_partitions(write: StagedWrite) -> None:
    """The partitions a classic run empties (an earlier attempt's, this attempt writing no row there), emptied.

    A dynamic overwrite of no rows replaces no partition, and a Connect client cannot delete files: each such
    directory (`clear` names whole partitions, one level per partition column: the quarantine's run id) is
    overwritten in place by the empty frame, its columns but the partition's, which Spark can do. Not the
    observed frame: its count is taken.
    """
    empty = write.staged_frame().drop(*write.output.partition_by)
    for rel in write.clear:
        where = f"{write.output.location.rstrip('/')}/{rel}"
        if path_exists(write.spark, where):
            empty.write.mode("overwrite").parquet(where)


# --------------------------------------------------------------------------- what was written


def _check_written(write: StagedWrite) -> None:
    """Compare the rows the write reports with the rows counted before it; raise on a mismatch."""
    from dq_governance.publish.policy import check_staged

    written = _written_rows(write)
    check_staged(f"written {write.output.location}", written, write.rows, write.run_id)


def _written_rows(write: StagedWrite) -> int:
    if write.output.format == "delta" or _table_provider(write) == "delta":
        if write.rows == 0:  # a Delta write of no rows may commit nothing: the last commit is not ours then
            return 0
        ref = DeltaRef(write.output.location, is_path=write.output.format == "delta")
        return _delta_commit_rows(write.spark, ref)
    observation = getattr(write, "observation", None)
    if observation is not None:
        return int(observation.get.get("rows", -1))
    return _read_back(write)


def _table_provider(write: StagedWrite) -> str | None:
    if write.output.format != "table":
        return None
    info = table_info(write.spark, write.output.location)
    return info.provider if info is not None else None


def _delta_commit_rows(spark: SparkSession, ref: DeltaRef) -> int:
    """The rows the table's last commit wrote, from its operationMetrics (-1 when it does not say)."""
    row = spark.sql(f"DESCRIBE HISTORY {ref.sql} LIMIT 1").select("operation", "operationMetrics").first()
    key = _DELTA_ROW_METRICS.get(str(row["operation"]))
    metrics = row["operationMetrics"] or {}
    return int(metrics[key]) if key and key in metrics else -1


def _read_back(write: StagedWrite) -> int:
    """Count what the output holds for the written partitions (all of it for an unpartitioned overwrite)."""
    from functools import reduce

    from pyspark.sql import functions as F

    output, spark = write.output, write.spark
    stored = spark.table(output.location) if output.format == "table" else spark.read.parquet(output.location)
    if not output.partition_by:
        return stored.count()
    values = _partition_values(write.staged_frame(), output.partition_by)
    if not values:
        return 0
    match = reduce(lambda a, b: a | b, [
        reduce(lambda a, b: a & b, [F.col(quote_identifier(k)).isNull() if v is None
                                    else F.col(quote_identifier(k)).cast("string") == str(v)
                                    for k, v in value.items()])
        for value in values])
    return stored.where(match).count()


# --------------------------------------------------------------------------- weaker guarantees, said once


def _log_weaker(write: StagedWrite) -> None:
    """Log once per run when this output's guarantee on Connect is weaker than on a classic session."""
    output = write.output
    plain = output.format == "parquet" or (output.format == "table" and _table_provider(write) in (None, "parquet")
                                           and output.mode != "merge")
    if plain and output.mode == "overwrite":
        log_once(write.run_id, f"overwrite:{output.location}",
                 "Spark Connect: overwrite of %s (parquet) is not atomic: Spark removes the old files before the "
                 "new ones are written, so a failed write leaves it empty or partial; use format delta for an "
                 "atomic overwrite", output.location, level=logging.WARNING, logger=log)

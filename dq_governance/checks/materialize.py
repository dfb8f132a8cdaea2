"""Keep the split's checked frame for its two outputs, in Spark's columnar cache (uncompressed).

The split evaluates every condition once and must not recompute the input for the valid and the quarantine
output, so the checked rows are kept while the outputs are written. Two layouts of the same cache:

- "packed": the row's own columns go into the cache as ONE struct column, and a view unpacks its fields
  again. The bit words (`loose`) stay cache columns of their own: the validity filter and the rule counts
  read them without unpacking the row, and the quarantine output unpacks only the rows it keeps.
  The cache then stores each row's binary form with one copy, instead of encoding every value into its
  column and gathering min/max statistics on it, and it holds a few large buffers rather than one Java
  object per row (which the garbage collector would copy while the pass runs). Measured side by side on
  bench_checks.py's data (2M rows, 7 columns): the split took 3.2 s packed, 3.7 s with one cache column per
  field and 3.9 s with a local checkpoint (Spark's binary rows, one object each; the engine's earlier
  storage), against a 2.1 s hand-written baseline.
- "cache": one cache column per field. Slower, but a plan-reading listener (the OpenLineage Spark listener,
  on `spark.extraListeners`) then sees each output column come from its own input column; through the
  packed struct every output column would seem to come from every input column.
- "auto" (default): "cache" when a Spark listener is configured, "packed" otherwise.

Both are fault tolerant (a lost executor's blocks are recomputed from the input). `unpersist()` frees the
rows; the outputs are then rebuilt over the unkept plan (see engine).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Sequence

from dq_governance.errors import ConfigError
from dq_governance.identifiers import quote_identifier
from dq_governance.session import capabilities

if TYPE_CHECKING:
    from pyspark import StorageLevel
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType, StructType

log = logging.getLogger(__name__)

STORAGES = ("auto", "packed", "cache")
_RUN_CACHE_SETTINGS = {
    "spark.sql.inMemoryColumnarStorage.compressed": "false",
    "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning": "true",
}
_LISTENER_SETTINGS = ("spark.extraListeners", "spark.sql.queryExecutionListeners")
_PACKED_COLUMN = "__dq_row"
_BATCH_SIZE = "spark.sql.inMemoryColumnarStorage.batchSize"
#: bytes of one cache batch, at most (see persist_for_run)
BATCH_BYTES = 512 << 10


class Kept:
    """A frame kept for several reads; `frame` is read, `unpersist()` frees it (safe to call twice)."""

    def __init__(self, frame: DataFrame, storage: str, persisted: DataFrame, on_disk: bool = False):
        self.frame = frame
        self.storage = storage  # "packed" | "cache": what was actually used
        self.persisted = persisted  # the cached frame itself (for "packed", the one struct column)
        self.on_disk = on_disk  # kept on local disk alone (DISK_ONLY), see storage_level

    def unpersist(self) -> None:
        """Free the kept rows."""
        self.persisted.unpersist()


def resolve_storage(storage: str, listeners: bool = False) -> str:
    """The storage used for `storage` ("auto" | "packed" | "cache") on a session with or without listeners."""
    if storage not in STORAGES:
        raise ConfigError(f"unknown split storage {storage!r}; expected one of {', '.join(STORAGES)}")
    if storage == "auto":
        return "cache" if listeners else "packed"
    return storage


def keep(frame: DataFrame, storage: str = "auto", loose: Sequence[str] = (), source: DataFrame | None = None) -> Kept:
    """Mark `frame` to be kept when it is first computed (no job runs here).

    With "packed", the `loose` columns stay cache columns of their own instead of going into the struct.
    `source` is the input the rows come from: its size picks the storage level (see storage_level).
    """
    from pyspark import StorageLevel

    chosen = resolve_storage(storage, _has_listeners(frame))
    level = storage_level(source) if source is not None else StorageLevel.MEMORY_AND_DISK_DESER
    on_disk = not level.useMemory
    if chosen == "cache":
        persisted = persist_for_run(frame, level)
        return Kept(persisted, chosen, persisted, on_disk)
    packed = [quote_identifier(c) for c in frame.columns if c not in loose]
    kept = [quote_identifier(c) for c in loose]
    # SQL text, two calls to the JVM. The view gives back every column under its own name, in frame's order.
    persisted = persist_for_run(frame.selectExpr(f"struct({', '.join(packed)}) AS {_PACKED_COLUMN}", *kept), level)
    unpacked = [quote_identifier(c) if c in loose else f"{_PACKED_COLUMN}.{quote_identifier(c)}"
                for c in frame.columns]
    return Kept(persisted.selectExpr(*unpacked), chosen, persisted, on_disk)


def storage_level(source: DataFrame) -> StorageLevel:
    """DISK_ONLY when Spark's own estimate of `source` is above the storage memory free on the cluster, else
    MEMORY_AND_DISK_DESER.

    Why: rows kept at MEMORY_AND_DISK_DESER that do not fit are first unrolled in memory until the store refuses
    them, then written to disk, and every read of a block from disk tries to unroll it into memory again. On
    bench_checks.py --wide 30 (66 columns, default 1 GB driver) the kept rows never fit: going to disk at once
    took the split from 58.5 s to 50 s at 4M rows and from 13.5 s to 12 s at 1M (same process, alternating).
    Where they fit, disk costs more (8 rules, 2M cached rows: 2.95 s against 2.69 s), so disk is chosen only
    when even the estimate is too large: of those two inputs, only the 4M one (664 MB of parquet, against
    455 MB free). The estimate is a lower bound for a file source (its bytes on disk,
    compressed; `spark.sql.sources.fileCompressionFactor` scales it, as for Spark's own broadcast choices) and
    exact for a cached one. A join's estimate without table statistics is the product of its sides, not a size,
    so a plan with a join keeps the default. So does a plan over a source that cannot say its size (a DataFrame
    made from an RDD, JDBC): Spark gives it `spark.sql.defaultSizeInBytes` (the largest long), which a projection
    then scales into a number that looks like a size. So does a Spark Connect session (no driver JVM to ask),
    and any failure to ask: the level only decides speed.
    """
    from pyspark import StorageLevel

    default = StorageLevel.MEMORY_AND_DISK_DESER
    spark = source.sparkSession
    if not capabilities(spark).driver_jvm:
        return default
    try:
        plan = source._jdf.queryExecution().optimizedPlan()
        if plan.containsPattern(spark._jvm.org.apache.spark.sql.catalyst.trees.TreePattern.JOIN()):
            return default
        unknown = int(spark._jsparkSession.sessionState().conf().defaultSizeInBytes())
        leaves = plan.collectLeaves()
        if any(int(leaves.apply(i).stats().sizeInBytes()) >= unknown for i in range(leaves.size())):
            return default  # a source that cannot say its size (an RDD, JDBC): Spark's placeholder, scaled
        estimate = int(plan.stats().sizeInBytes())
        infos = spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos()
        free = sum(int(i.totalOnHeapStorageMemory()) - int(i.usedOnHeapStorageMemory()) for i in infos)
    except Exception as exc:  # noqa: BLE001 - an estimate, never a reason to fail the check
        log.debug("no size estimate for the kept rows (%s); keeping them in memory and on disk", type(exc).__name__)
        return default
    if estimate <= free:
        return default
    log.info("keeping the checked rows on local disk: Spark estimates the input at %d MB, above the %d MB of "
             "storage memory free", estimate >> 20, free >> 20)
    return StorageLevel.DISK_ONLY


def _has_listeners(frame: DataFrame) -> bool:
    """True when the session was started with Spark listeners (e.g. the OpenLineage one)."""
    conf = frame.sparkSession.conf  # holds the static settings of the context too
    return any((conf.get(key, "") or "").strip() for key in _LISTENER_SETTINGS)


def count_rows(frame: DataFrame) -> int:
    """Rows of a (persisted) frame in one Spark job.

    DataFrame.count() plans a global aggregate: a shuffle stage, which adaptive execution runs as a job of its
    own. Counting the frame's rows directly is one job: 28 ms against 70 ms on a cached 30-row frame.
    """
    jdf = getattr(frame, "_jdf", None)
    if jdf is None:  # Spark Connect: no driver JVM to ask
        return frame.count()
    return int(jdf.queryExecution().toRdd().count())


def batch_rows(schema: StructType) -> int:
    """Rows per cache batch for rows of `schema`: BATCH_BYTES of estimated row size, 100 to 10,000 rows."""
    return max(100, min(10_000, BATCH_BYTES // max(1, _row_bytes(schema))))


def _row_bytes(dtype: DataType) -> int:
    """Estimated bytes of one value in Spark's binary row: 8 per field, plus the text of strings and nesting."""
    from pyspark.sql.types import ArrayType, BinaryType, MapType, StringType, StructType

    if isinstance(dtype, StructType):
        return 8 + sum(8 + _row_bytes(f.dataType) for f in dtype.fields)
    if isinstance(dtype, (StringType, BinaryType)):
        return 24  # Spark's default size of a string (20 bytes), in whole 8-byte words
    if isinstance(dtype, (ArrayType, MapType)):
        return 64
    return 0


def persist_for_run(frame: DataFrame, level: StorageLevel | None = None) -> DataFrame:
    """persist(level, MEMORY_AND_DISK_DESER by default) with settings fit for a cache that only this run reads.

    - column compression off: compressing costs more CPU than it saves for a cache that lives one run.
      Measured on the benchmark: the split over a compressed cache took 4.7 s, over an uncompressed one
      3.7 s (2M rows, one cache column per field);
    - adaptive execution may change the cached plan's partitioning: the duplicated keys (a shuffle's output)
      then land in the few partitions their size needs, not in one per `spark.sql.shuffle.partitions` (200 by
      default) that every later read of the cache schedules as a task.

    - batches of at most BATCH_BYTES (batch_rows): the cache must spill to disk, not fail, when the rows do
      not fit in memory, and Spark's memory store only checks what it holds every 16 batches. With its
      default 10,000 rows a batch of a 66-column row was 8.6 MB: two tasks each held 16 batches (about
      140 MB) more than they had asked for, and a session with the default 1 GB driver died with
      `OutOfMemoryError: Java heap space` while building the cache (a heap dump held 826 MB of cache
      batches, 155 of them of 3.9 MB);

    Spark reads these from a copy of the session conf taken when `persist` is called (not when the cache is
    built), so they are set around that call and restored right after (an unset key stays unset). Spark 3.5
    keeps a cached aggregate's shuffle partitions even so (measured: 50 partitions for 10 keys, also with
    the setting held until the cache was built); its answers are the same, each partition is one more task.
    """
    from pyspark import StorageLevel  # here, so the CLI can read STORAGES without importing Spark

    conf = frame.sparkSession.conf
    settings = {**_RUN_CACHE_SETTINGS, _BATCH_SIZE: str(batch_rows(frame.schema))}
    previous = {key: conf.get(key, None) for key in settings}
    for key, value in settings.items():
        conf.set(key, value)

    def restore() -> None:
        for key, value in previous.items():
            if value is None:
                conf.unset(key)
            else:
                conf.set(key, value)

    try:
        return frame.persist(level or StorageLevel.MEMORY_AND_DISK_DESER)
    finally:
        restore()

"""Check a Structured Streaming query micro-batch by micro-batch (`foreachBatch`), exactly once per batch id.

Each micro-batch goes through the same engine and policies as a batch run (`api.check` + the publish
path of `api.run`): valid rows to `target`, invalid rows to `quarantine`, report rows to `report`, with
the same `schema.undeclared_columns` policy and masks (`api.routed_outputs`).

Exactly once, for retries of a batch id (Spark replays the last uncommitted batch after a restart):
- every output is written by replacing partitions keyed by the batch: the target by `_dq_stream` (12 hex
  digits naming the query: its pipeline and checkpoint) and `_dq_batch_id`,
  the quarantine by `_dq_run_id` (a run id derived from the stream and the batch id), the report by
  `pipeline/run_id`. A replayed batch rewrites the same partitions, so no row is written twice; another
  query on the same target (a new checkpoint restarts batch ids at 0) writes partitions of its own;
- after all writes, a marker `<checkpoint>/dq_commits/batch=<id>` is created; a batch whose marker
  exists is skipped entirely (no write, no report row, no lineage event).

A batch the gate blocks (`on_failure: fail` / `block_publication`, a failed dataset rule, `minimum_valid_ratio`)
publishes nothing to the target, writes what a blocked run writes (its report rows; under
`block_publication` / `quarantine` its invalid rows as evidence), gets no marker, and raises
GateFailedError: the query stops before Spark commits the batch, so its rows are not lost. Fix the cause
and restart on the same checkpoint: Spark replays the batch, whose partitions are then replaced.
`StreamCheck.await_termination` raises that GateFailedError (one line, the gate's message), and a batch's
ConfigError as a one-line ConfigError, each chained from Spark's StreamingQueryException.

Uniqueness: within a batch it is exact (the engine's unique rules). Across batches it needs state:
- `key_table=PATH`: the keys of every published row, one parquet partition per batch
  (`PATH/<rule>/_dq_stream=<query>/_dq_batch_id=<id>`), are the state, shared by the queries that use it. A
  key with a PII column is stored as its keyed HMAC (the contract's masking key, normalised by the field's
  `format`), never as read. Each batch's rows whose key was published by an earlier batch fail the rule
  `<rule>_across_batches` and go to quarantine. The table grows with the number of distinct keys; prune old
  partitions to bound it (keys older than that are forgotten).
- or bound the state by event time before calling: `stream_df.withWatermark("ts", "1 day")
  .dropDuplicatesWithinWatermark(["id"])`. Spark keeps keys for the watermark delay only, and drops
  (does not quarantine) later duplicates.

Spark Connect: the server runs `foreachBatch` in a Python worker of its own (it needs `PYSPARK_PYTHON` with
pyspark's Connect dependencies and dq_governance importable, e.g. through `PYTHONPATH`), so the client's
`StreamCheck` never sees the batches in memory. There each batch's entry is also written to
`<checkpoint>/dq_batches/` (one small JSON dataset per entry) and `StreamCheck.batches` reads it back.
The worker also resolves the masking key itself (its own environment / files). So when keyed masks (hmac,
tokenize) or a PII key table need one, `check_stream` resolves the key on the client before the query starts
(missing: ConfigError, as `run()`), hands the batch function the key's fingerprint only, and each batch
refuses (ConfigError naming both fingerprints) when the worker's key is missing or is another key: a stream
never publishes pseudonyms under a key other than the client's `run()`.

Lineage: one OpenLineage run for the streaming query (its run id derived from the checkpoint); every
micro-batch emits one RUNNING event carrying that batch's quality facets (assertions, metrics, outputs,
and the `dqgov_microBatch` run facet with the batch id); `StreamCheck.stop()` emits COMPLETE, or FAIL with
the terminating error's line when the query ended on one (a blocked batch).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import attr
from openlineage.client.generated.base import RunFacet

from dq_governance.checks.disclosure import touches_pii
from dq_governance.errors import ConfigError, DqGovernanceError, GateFailedError
from dq_governance.identifiers import quote_identifier
from dq_governance.lineage.emit import LineageEmitter
from dq_governance.scrub import redact
from dq_governance.session import first_line, is_connect, isolate_plans, mark, path_exists

log = logging.getLogger(__name__)

BATCH_COL = "_dq_batch_id"
STREAM_COL = "_dq_stream"
#: the key-table flags: `_dq_` columns are ours, so no undeclared-columns policy or rule ever sees them as data
SEEN_PREFIX = "_dq_seen"
_NAMESPACE = uuid.UUID("6b1f9d5e-0c57-4bb4-9d8a-5f0d8f3a2c11")  # fixed: run ids are stable across restarts
MICRO_BATCH_FACET_SCHEMA_URL = "https://github.com/dq-governance/dq-governance/blob/main/docs/facets/MicroBatchRunFacet.json"


@attr.define
class MicroBatchRunFacet(RunFacet):
    """Custom run facet `dqgov_microBatch`: which micro-batch an event reports on."""

    batchId: int  # noqa: N815 - OpenLineage facet fields are camelCase
    checkRunId: str  # noqa: N815 - the batch's run id in the report history and quarantine
    totalRows: int  # noqa: N815
    validRows: int  # noqa: N815

    @staticmethod
    def _get_schema() -> str:
        return MICRO_BATCH_FACET_SCHEMA_URL


class _BatchEmitter(LineageEmitter):
    """The stream's emitter: one RUNNING event per batch, with the batch facet added to the run facets."""

    batch_facet: MicroBatchRunFacet | None = None

    lineage_spec: str | None = None  # the `lineage` argument: rebuilds the OpenLineage client after pickling

    def __getstate__(self) -> dict[str, Any]:
        # Connect pickles the checker (and this emitter) into the server's worker. The client session stays
        # here (each batch hands the emitter its own, see _BatchChecker.__call__), and so does the OpenLineage
        # client: its transport's config does not survive pickling, so the worker builds its own from the spec.
        return {**self.__dict__, "spark": None, "client": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        from dq_governance.lineage.emit import make_client

        self.__dict__.update(state)
        self.client = make_client(self.lineage_spec)

    def _run_facets(self, extra: Any = None) -> dict[str, Any]:
        facets = super()._run_facets(extra)
        if self.batch_facet is not None:
            facets["dqgov_microBatch"] = self.batch_facet
        return facets

    def running(self, result: Any, outputs: list[dict[str, Any]], facet: MicroBatchRunFacet) -> None:
        """RUNNING with this batch's assertions, metrics and outputs."""
        from openlineage.client.event_v2 import RunState

        self.batch_facet = facet
        try:
            self._guarded("RUNNING", lambda: self._finish(RunState.RUNNING, result, outputs, None))
        finally:
            self.batch_facet = None


BATCH_LOG = "dq_batches"
_HANDLE_KEY = "handle_key"


@dataclass
class StreamCheck:
    """A running checked stream: the Spark query, the per-batch function, and what each batch did."""

    query: Any
    process_batch: Any  # (batch_df, batch_id) -> None; what foreachBatch calls
    recorded: list[dict[str, Any]] = field(default_factory=list)
    emitter: _BatchEmitter | None = None
    batch_log: str | None = None  # Connect: where the batch entries are written (see the module doc)
    spark: Any = None  # Connect: the client session that reads batch_log
    #: Connect: tags this handle's entries in batch_log, which holds every query's on that checkpoint
    handle_key: str = field(default_factory=lambda: uuid.uuid4().hex)

    def __getstate__(self) -> dict[str, Any]:
        # foreachBatch on Connect pickles the checker with its handle: a client session cannot travel
        return {**self.__dict__, "spark": None, "query": None}

    @property
    def batches(self) -> list[dict[str, Any]]:
        """What each batch of this query did, in order: from memory (classic) or from `batch_log` (Connect)."""
        if self.batch_log is None or self.spark is None:
            return self.recorded
        return [{k: v for k, v in entry.items() if k != _HANDLE_KEY}
                for entry in read_batch_log(self.spark, self.batch_log) if entry.get(_HANDLE_KEY) == self.handle_key]

    def await_termination(self, timeout: float | None = None) -> Any:
        """Wait for the query (e.g. with trigger availableNow); re-raises a batch's error (ours as one line)."""
        try:
            return self.query.awaitTermination(timeout) if timeout is not None else self.query.awaitTermination()
        except Exception as error:
            ours = batch_error(error)
            if ours is None:
                raise
            raise ours from error

    def stop(self) -> None:
        """Stop the query and emit the stream's COMPLETE event, or FAIL when an error (a blocked batch) ended it."""
        self.query.stop()
        if self.emitter is not None:
            from openlineage.client.event_v2 import RunState

            error = self.query.exception()
            if error is None:
                self.emitter._guarded("COMPLETE", lambda: self.emitter._emit(  # type: ignore[union-attr]
                    RunState.COMPLETE, self.emitter._run_facets(), [], []))
            else:
                self.emitter.fail(None, termination_reason(error))
            self.emitter.close()


#: the errors a batch raises on purpose, recognised in Spark's text of the query's terminating error
_BATCH_ERRORS = (GateFailedError, ConfigError)


def batch_error(error: Any) -> DqGovernanceError | None:
    """Our error a batch raised, rebuilt from a query's terminating error (one line), else None.

    Spark wraps it (classic: through py4j; Connect: from the server's worker) in a StreamingQueryException
    whose text holds the Python traceback; the raised error is the last `module.Class: message` line.
    """
    text = str(getattr(error, "desc", None) or error)
    markers = {f"{cls.__module__}.{cls.__name__}: ": cls for cls in _BATCH_ERRORS}
    found = None
    for line in text.splitlines():
        for marker, cls in markers.items():
            if marker in line:
                found = cls(line.split(marker, 1)[1].strip())
    return found


def termination_reason(error: Any) -> str:
    """One line for a query's terminating error: a batch's own error (gate, config), else the error's first line."""
    ours = batch_error(error)
    if ours is not None:
        return str(ours)
    text = str(getattr(error, "desc", None) or error)
    return next((line.strip() for line in text.splitlines() if line.strip()), type(error).__name__)


def stream_tag(stream_key: str) -> str:
    """The `_dq_stream` partition value of a query: 12 hex digits, the same on every restart of its checkpoint."""
    return uuid.uuid5(_NAMESPACE, stream_key).hex[:12]


def batch_run_id(stream_key: str, batch_id: int) -> str:
    """The run id of one micro-batch: the same for every retry of the batch."""
    return str(uuid.uuid5(_NAMESPACE, f"{stream_key}#batch={int(batch_id)}"))


def check_stream(
    stream_df: Any,
    contract: Any,
    *,
    target: str,
    quarantine: str,
    report: str | None = None,
    checkpoint: str,
    key_table: str | None = None,
    lineage: str | None = None,
    pipeline: str | None = None,
    source: str | None = None,
    mask: bool = True,
    trigger: dict[str, Any] | None = None,
    start: bool = True,
) -> StreamCheck:
    """Validate each micro-batch of `stream_df` against `contract` through foreachBatch; see the module doc."""
    from dq_governance.api import resolve_contract, validate_pipeline

    resolved, location = resolve_contract(contract)
    pipeline = resolved.name if validate_pipeline(pipeline) is None else pipeline
    spark = stream_df.sparkSession
    stream_key = f"{pipeline}@{_absolute(checkpoint)}"
    checker = _BatchChecker(resolved, location, target=target, quarantine=quarantine, report=report,
                            checkpoint=checkpoint, key_table=key_table, pipeline=pipeline, source=source,
                            mask=mask, stream_key=stream_key)
    checker.key_fingerprint = _client_key_fingerprint(spark, checker, stream_df.columns)
    handle = StreamCheck(query=None, process_batch=checker)
    if is_connect(spark):
        handle.batch_log, handle.spark = checker.batch_log(), spark
    checker.handle = handle
    if lineage is not None and str(lineage).lower() != "none":
        from dq_governance.lineage.emit import build_emitter

        base = build_emitter(lineage, resolved, run_id=str(uuid.uuid5(_NAMESPACE, stream_key)), pipeline=pipeline,
                             spark=spark, contract_location=location)
        if base is not None:
            emitter = _BatchEmitter.__new__(_BatchEmitter)
            emitter.__dict__.update(base.__dict__)  # same client and identity, plus the batch facet
            emitter.lineage_spec = lineage
            from dq_governance.api import _input_identity

            emitter.input = emitter._input_identity(*_input_identity(source, resolved))
            handle.emitter = emitter
    if start:
        writer = stream_df.writeStream.foreachBatch(checker).option("checkpointLocation", checkpoint)
        if trigger:
            writer = writer.trigger(**trigger)
        handle.query = writer.queryName(f"dqgov_{pipeline}").start()
    return handle


def _client_key_fingerprint(spark: Any, checker: _BatchChecker, columns: list[str]) -> str | None:
    """Connect: the fingerprint of the client's masking key when the batches need one (a missing key raises
    ConfigError now, before the query starts); None on classic, where the batches run in this process."""
    if not is_connect(spark) or not checker.needs_key(columns):
        return None
    from dq_governance.masking.keys import resolve_key
    from dq_governance.masking.policies import effective_policy

    return resolve_key(effective_policy(checker.contract), base_dir=checker.base_dir()).fingerprint


class _BatchChecker:
    """The foreachBatch function: check, route, write (idempotently), report, mark committed, emit."""

    def __init__(self, contract: Any, location: str | None, *, target: str, quarantine: str, report: str | None,
                 checkpoint: str, key_table: str | None, pipeline: str, source: str | None, mask: bool,
                 stream_key: str) -> None:
        from dq_governance.publish import policy
        from dq_governance.publish.writer import Output

        self.contract = contract
        self.location = location
        self.report = report
        self.checkpoint = checkpoint
        self.key_table = key_table
        self.pipeline = pipeline
        self.source = None if source is None else redact(source)  # recorded in reports, events and rows
        self.mask = mask
        self.stream_key = stream_key
        self.stream = stream_tag(stream_key)
        self.target = Output(target, "parquet", "replace_partitions", partition_by=[STREAM_COL, BATCH_COL])
        self.quarantine = Output(quarantine, "parquet", "replace_partitions", partition_by=[policy.RUN_ID_COL])
        self.unique_keys = [(rule.name, list(rule.target_columns)) for rule in contract.rules()
                            if rule.type == "unique" and not rule.filter]
        # keys that hold PII are remembered as their keyed HMAC, never as read
        self.pii_keys = {name for name, columns in self.unique_keys if touches_pii(columns, contract.pii_columns())}
        self.handle: StreamCheck | None = None
        #: Connect: the client's masking key fingerprint (never the key), which each batch's worker key must match
        self.key_fingerprint: str | None = None

    def base_dir(self) -> Path | None:
        """The contract file's directory (a relative masking key_file is read from there)."""
        return Path(self.location).resolve().parent if self.location else None

    def needs_key(self, columns: list[str]) -> bool:
        """Whether a batch with `columns` needs the masking key: a keyed mask on a present column, or PII keys."""
        from dq_governance.masking.policies import KEYED_METHODS, masked_columns, undeclared_masks

        present = {c.lower() for c in columns}
        specs = [spec for path, spec in masked_columns(self.contract).items()
                 if path.split(".", 1)[0].lower() in present]
        specs += list(undeclared_masks(self.contract, columns).values())
        keyed_masks = self.mask and any(spec.method in KEYED_METHODS for spec in specs)
        return keyed_masks or bool(self.key_table and self.pii_keys)

    def verify_worker_key(self, batch_id: int) -> None:
        """Refuse the batch (ConfigError, fingerprints only) when this process's masking key is not the client's."""
        from dq_governance.masking.keys import DEFAULT_KEY_ENV, resolve_key
        from dq_governance.masking.policies import effective_policy

        policy = effective_policy(self.contract)
        env = policy.key_env or DEFAULT_KEY_ENV
        fix = (f"give the server's worker the client's key (masking.key_file {policy.key_file})" if policy.key_file
               else f"give the server's worker the client's key (env var {env} or {env}_FILE)")
        where = f"{self.pipeline}: micro-batch {int(batch_id)} refused"
        try:
            worker = resolve_key(policy, base_dir=self.base_dir()).fingerprint
        except ConfigError as exc:
            raise ConfigError(f"{where}: the Spark Connect server's Python worker has no usable masking key "
                              f"({first_line(exc)}), the client masks with key {self.key_fingerprint}; "
                              f"{fix}") from None
        if worker != self.key_fingerprint:
            raise ConfigError(f"{where}: the Spark Connect server's Python worker masks with key {worker}, "
                              f"the client with key {self.key_fingerprint}; {fix}")

    def marker(self, batch_id: int) -> str:
        """The commit marker of a batch."""
        return f"{self.checkpoint.rstrip('/')}/dq_commits/batch={int(batch_id)}"

    def batch_log(self) -> str:
        """Where batch entries are written on Connect."""
        return f"{self.checkpoint.rstrip('/')}/{BATCH_LOG}"

    def __call__(self, batch_df: Any, batch_id: int) -> None:
        from pyspark.sql import functions as F

        from dq_governance.api import _masking_state, _publish, check

        spark = batch_df.sparkSession
        isolate_plans(spark)  # before the first request this worker sends
        if path_exists(spark, self.marker(batch_id)):
            log.info("%s: batch %s already committed; skipped (replay)", self.pipeline, batch_id)
            self._record(spark, batch_id, None, skipped=True)
            return
        if self.key_fingerprint is not None:  # Connect: this worker's key must be the client's
            self.verify_worker_key(batch_id)
        run_id = batch_run_id(self.stream_key, batch_id)
        df = batch_df.withColumns({STREAM_COL: F.lit(self.stream), BATCH_COL: F.lit(int(batch_id)).cast("long")})
        contract = self.contract
        if self.key_table and self.unique_keys:
            df, contract = self._flag_seen_keys(df, batch_id)
        source = f"{self.source or self.pipeline} batch {batch_id}"
        result = check(df, contract, run_id=run_id, pipeline=self.pipeline, source=source)
        try:
            seen = [c for c in df.columns if c.startswith(SEEN_PREFIX)]
            result.masking = _masking_state(contract, self.mask, [c for c in df.columns if c not in seen])
            if seen:  # the key-table markers were inputs to the check, not data
                result.valid_df = result.valid_df.drop(*seen)
                result.quarantine_df = result.quarantine_df.drop(*seen)
            outputs = _publish(result, contract, self.target, self.quarantine, mask=result.masking == "applied",
                               source=source, base_dir=self.base_dir())
            if self.key_table and self.unique_keys and result.gate.publish:
                self._remember_keys(result, batch_id)
            if self.report:
                from dq_governance.publish.report import write_report

                write_report(spark, result.report_rows(), self.report)
            if result.gate.publish:
                mark(spark, self.marker(batch_id))  # committed: a replay of this batch id is now a no-op
            self._record(spark, batch_id, result, outputs=result.outputs)
            emitter = self.handle.emitter if self.handle else None
            if emitter is not None:
                emitter.spark = emitter.spark or spark  # None after pickling into a Connect worker
                emitter.running(result, outputs, MicroBatchRunFacet(
                    batchId=int(batch_id), checkRunId=run_id, totalRows=result.total_rows,
                    validRows=result.valid_rows))
            if not result.gate.publish:
                # Returning would let Spark commit the batch's offsets with its rows published nowhere. Failing
                # the query keeps them: no marker, no commit, and a restart replays the batch.
                raise GateFailedError(f"{self.pipeline}: micro-batch {int(batch_id)} blocked by the quality gate, "
                                      f"the query stops: {'; '.join(result.gate.reasons)}")
        finally:
            result.release()

    # -- cross-batch uniqueness (key table) ---------------------------------
    def _keys_dir(self, rule_name: str) -> str:
        return f"{self.key_table.rstrip('/')}/{rule_name}"  # type: ignore[union-attr]

    def _flag_seen_keys(self, df: Any, batch_id: int) -> tuple[Any, Any]:
        """Mark rows whose key an earlier batch published; add one expression rule per unique key."""
        from functools import reduce

        from pyspark.sql import functions as F

        from dq_governance.contracts.model import ExpressionRule

        spark = df.sparkSession
        rules = []
        for index, (name, columns) in enumerate(self.unique_keys):
            where = self._keys_dir(name)
            if not path_exists(spark, where):
                continue
            this_batch = (F.col(STREAM_COL) == self.stream) & (F.col(BATCH_COL) == int(batch_id))
            known = (spark.read.option("basePath", where).parquet(where)
                     .where(~this_batch).drop(STREAM_COL, BATCH_COL).distinct())
            aliases = [f"__dq_seen{index}_{j}" for j in range(len(columns))]
            known = known.select(*[F.col(quote_identifier(c)).alias(a) for c, a in zip(columns, aliases)]).withColumn(
                f"{SEEN_PREFIX}{index}", F.lit(True))
            probes = {c: f"__dq_probe{index}_{j}" for j, c in enumerate(columns)}
            if name in self.pii_keys:  # the table holds pseudonyms: compare the batch's keys as the same
                df = self._pseudonyms(df, probes)
            else:
                df = df.select("*", *[F.col(quote_identifier(c)).cast("string").alias(p) for c, p in probes.items()])
            condition = reduce(lambda a, b: a & b, [
                F.col(p) == F.col(a).cast("string") for p, a in zip(probes.values(), aliases)])
            df = df.join(F.broadcast(known), on=condition, how="left").drop(*aliases, *probes.values())
            rules.append(ExpressionRule(type="expression", name=f"{name}_across_batches",
                                        expression=f"`{SEEN_PREFIX}{index}` IS NULL", dimension="uniqueness",
                                        description=f"key ({', '.join(columns)}) not published by an earlier batch"))
        if not rules:
            return df, self.contract
        contract = self.contract.model_copy(deep=True)
        contract.quality.rules = [*contract.quality.rules, *rules]
        return df, contract

    def _remember_keys(self, result: Any, batch_id: int) -> None:
        """Add the keys of this batch's published rows to the key table (replacing the batch's partition)."""
        from pyspark.sql import functions as F

        from dq_governance.publish.writer import replace_partitions

        for name, columns in self.unique_keys:
            keys = result.valid_df.select(*[F.col(quote_identifier(c)) for c in columns])
            if name in self.pii_keys:
                probes = {c: f"__dq_probe_{j}" for j, c in enumerate(columns)}
                keys = self._pseudonyms(keys, probes).select(*[F.col(p).alias(c) for c, p in probes.items()])
            keys = keys.select(*[F.col(quote_identifier(c)).cast("string").alias(c) for c in columns]).distinct()
            keys = keys.withColumns({STREAM_COL: F.lit(self.stream), BATCH_COL: F.lit(int(batch_id)).cast("long")})
            replace_partitions(keys.coalesce(1), self._keys_dir(name), [STREAM_COL, BATCH_COL],
                               run_id=f"keys-{self.stream}-{int(batch_id)}")

    def _pseudonyms(self, df: Any, columns: dict[str, str]) -> Any:
        """`df` plus each key column's keyed HMAC under its alias (the contract's masking key)."""
        from dq_governance.masking.apply import with_pseudonyms

        return with_pseudonyms(df, columns, self.contract, base_dir=self.base_dir())

    def _record(self, spark: Any, batch_id: int, result: Any, *, skipped: bool = False,
                outputs: list[dict[str, Any]] | None = None) -> None:
        if self.handle is None:
            return
        entry: dict[str, Any] = {"batch_id": int(batch_id), "skipped": skipped}
        if result is not None:
            entry.update({"run_id": result.run_id, "total_rows": result.total_rows, "valid_rows": result.valid_rows,
                          "invalid_rows": result.invalid_rows, "status": result.status,
                          "published": result.published, "outputs": outputs or []})
        self.handle.recorded.append(entry)
        if is_connect(spark):  # this may run in the server's worker: the client reads the durable copy
            write_batch_entry(spark, self.batch_log(), {**entry, _HANDLE_KEY: self.handle.handle_key})


def write_batch_entry(spark: Any, log_dir: str, entry: dict[str, Any]) -> None:
    """Write one batch entry as its own small JSON dataset under `log_dir` (ordered by its name)."""
    name = f"{log_dir.rstrip('/')}/seq={time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
    text = json.dumps(entry, default=str, sort_keys=True)
    spark.createDataFrame([(text,)], "entry string").coalesce(1).write.mode("overwrite").text(name)


def read_batch_log(spark: Any, log_dir: str) -> list[dict[str, Any]]:
    """The batch entries under `log_dir`, oldest first ([] when none was written)."""
    if not path_exists(spark, log_dir):
        return []
    rows = spark.read.text(log_dir).select("seq", "value").collect()
    return [json.loads(row["value"]) for row in sorted(rows, key=lambda r: str(r["seq"]))]


def _absolute(path: str) -> str:
    return path if "://" in path else str(Path(path).resolve())

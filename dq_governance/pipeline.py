"""The run pipeline: one stage after another, each reading what the one before it left in the `Run`.

    precheck -> history -> check -> guard -> route -> stage -> verify -> promote -> report
                                                       (lineage START after precheck, COMPLETE / FAIL at the end)

Each stage calls the one module that does its job (observe, checks, publish.policy, masking,
publish.writer, publish.report, lineage.emit) and nothing calls back: the data flows one way, from the
contract to the published outputs and the events. `api.run` builds a `Run` and calls `execute`; a blocked
run leaves every target exactly as it was (nothing is staged for a blocked target).

One run's outputs come from one attempt: an attempt that publishes nothing, of a run an earlier attempt
published, leaves that attempt's quarantine partition and report rows as they are, and logs that its evidence
and report rows were not written (`stage`, `write_report`). The earlier publication is known from the run's
quarantine partition (rows of this pipeline with any `_dq_disposition` but `blocked`) or from its report rows
(`published`); a run with neither (no quarantine rows and no report history) is taken as not published. The quarantine's partition is the run id alone, so `precheck` refuses a run whose run id already
has another pipeline's rows there, before the check pass (its replace would delete them).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from dq_governance.errors import ConfigError, DqGovernanceError, GateFailedError
from dq_governance.identifiers import quote_identifier
from dq_governance.session import first_line

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

    from dq_governance.checks.result import CheckResult
    from dq_governance.contracts.model import Contract
    from dq_governance.publish.writer import Output

log = logging.getLogger(__name__)


@dataclass
class Run:
    """What one run was asked to do, and what its stages have produced so far."""

    df: DataFrame
    contract: Contract
    run_id: str
    pipeline: str
    location: str | None = None
    source: str | None = None
    target: Output | None = None
    quarantine: Output | None = None
    report: str | None = None
    report_format: str = "parquet"
    mask: bool = True
    outputs: bool = True  # False: a metrics-only run (no rows routed, staged or written)
    failed_sample: int = 0
    storage: str = "auto"
    merge_guard: Any = None
    emitter: Any = None
    raise_on_block: bool = True
    # produced by the stages
    quarantined_before: set[tuple[Any, ...]] | None = None  # (pipeline, contract, disposition) its partition held
    published_before: bool | None = None  # an earlier attempt of the run published (`_published_before`)
    kept_earlier: bool = False  # Delta skipped the target: the run keeps its earlier attempt's outputs
    input: tuple[str, str, tuple[str, str] | None] | None = None  # `input_dataset`, resolved once
    volume_history: dict[str, list[int]] | None = None  # volume rule name -> its earlier counts
    previous_schema: dict[str, str] | None = None
    result: CheckResult | None = None
    masking: str | None = None
    routing: Any = None
    frames: dict[str, Any] = field(default_factory=dict)
    staged: dict[str, Any] = field(default_factory=dict)
    written: list[dict[str, Any]] = field(default_factory=list)

    @property
    def base_dir(self) -> Path | None:
        """The contract file's directory (masking key files are relative to it)."""
        return Path(self.location).resolve().parent if self.location else None


# --------------------------------------------------------------------------- the stages


def precheck(run: Run) -> None:
    """Refusals before the check pass: an output Spark could not create (`writer.check_destination`); a merge key
    masked so that keys collide; a quarantine partition for this run id holding another pipeline's or another
    contract's rows (read once: `stage` uses it too)."""
    from dq_governance.publish import policy
    from dq_governance.publish.writer import Output, check_destination

    report = Output(run.report, run.report_format) if run.report else None
    for kind, output in (("target", run.target), ("quarantine", run.quarantine), ("report", report)):
        if output is not None:
            check_destination(run.df.sparkSession, kind, output)
    if run.target is not None and run.target.mode == "merge" and run.outputs and run.mask:
        policy.refuse_masked_merge_keys(run.contract, run.target.merge_keys)
    if run.quarantine is None or not run.outputs:
        return
    run.quarantined_before = _run_partition(run)
    others = sorted({str(pipeline) for pipeline, _, _ in run.quarantined_before if pipeline != run.pipeline})
    if others:
        raise ConfigError(f"quarantine {run.quarantine.location}: run id {run.run_id} already holds rows of pipeline "
                          f"{others[0]}, which this run of {run.pipeline} would delete; give each pipeline its own "
                          "run id or quarantine")
    # one orchestrator run id shared by a pipeline's contracts: each needs its own quarantine
    others = sorted({str(contract) for _, contract, _ in run.quarantined_before if contract != run.contract.name})
    if others:
        raise ConfigError(f"quarantine {run.quarantine.location}: run id {run.run_id} already holds rows of contract "
                          f"{others[0]}, which this run of contract {run.contract.name} would delete; give each "
                          "contract its own quarantine")


def read_history(run: Run) -> None:
    """Earlier runs' row counts and input schema from the report history, when a rule needs them."""
    if not run.report:
        return
    from dq_governance.observe.history import previous_run_schema, volume_history

    spark = run.df.sparkSession
    run.volume_history = volume_history(spark, run.contract, run.report, run.report_format, run.pipeline, run.run_id)
    run.previous_schema = previous_run_schema(spark, run.contract, run.report, run.report_format, run.pipeline,
                                              run.run_id)


def check(run: Run) -> None:
    """The check pass: every rule, metric and the gate (and the kept rows unless metrics-only)."""
    run.result = measure(run.df, run.contract, location=run.location, run_id=run.run_id, pipeline=run.pipeline,
                         source=run.source, volume_history=run.volume_history, previous_schema=run.previous_schema,
                         storage=run.storage, outputs=run.outputs)
    run.masking = run.result.masking = masking_state(run.contract, run.mask, run.df.columns)
    from dq_governance.lineage.jvm_registry import record_results

    namespace, name, _ = input_dataset(run)
    record_results(run.df.sparkSession, namespace, name, run.result, contract=run.contract)


def guard(run: Run) -> None:
    """A merge whose keys the check found duplicated or null is blocked (it would corrupt the target).

    Duplicates: the automatic unique rule (`policy.with_merge_guard`). Nulls, and masked keys that collide: counted
    on the rows the run would publish, masked as published (a MERGE never matches a null key, so each retry would
    insert them again; hmac normalises before it hashes). A key masked by a method that can give distinct keys one
    value was refused by `precheck`.
    """
    if run.target is None or run.target.mode != "merge" or not run.outputs:
        return
    from dq_governance.publish import policy

    assert run.result is not None
    reason = policy.merge_guard_reason(run.result, run.merge_guard, run.target.merge_keys)
    if reason:
        policy.block(run.result, reason)
    if run.result.gate.publish:
        keys = run.target.merge_keys
        target_df = policy.route(run.result, run.contract, source=run.source).target_df
        if run.masking == "applied" and target_df is not None and all(k in target_df.columns for k in keys):
            from dq_governance.masking import apply_masks

            # the keys alone, masked as published: hmac / tokenize turn a blank key into null
            target_df = apply_masks(target_df.select(*[quote_identifier(k) for k in keys]), run.contract,
                                    base_dir=run.base_dir)
        reason = policy.merge_keys_reason(target_df, keys, masked=run.masking == "applied")
        if reason:
            policy.block(run.result, reason)


def route(run: Run) -> None:
    """The frames to publish: rows by the policy, undeclared columns by theirs, masked (not written yet)."""
    run.routing, run.frames = routed_outputs(run.result, run.contract, mask=run.masking == "applied",
                                             source=run.source, base_dir=run.base_dir)


def stage(run: Run) -> None:
    """Each output written beside its target (on Spark Connect: counted, to be written in place).

    A blocked attempt's evidence is not staged when an earlier attempt of the run published (module doc).
    """
    from dq_governance.publish import policy
    from dq_governance.publish.writer import partition_dir, writing
    from dq_governance.publish.writer import stage as stage_output

    assert run.result is not None
    for kind, output in (("target", run.target), ("quarantine", run.quarantine)):
        if output is None or run.frames.get(kind) is None:
            continue
        if kind == "quarantine" and run.routing.blocked and _published_before(run):
            log.warning("%s: run %s already published; this blocked attempt's evidence was not written to %s (the "
                        "run keeps its published attempt's rows there)", run.result.contract_name, run.run_id,
                        output.location)
            continue
        try:
            with writing(kind, output.location):
                run.staged[kind] = stage_output(run.frames[kind], output, run_id=run.run_id, pipeline=run.pipeline,
                                               contract=run.contract.name)
        except Exception:
            discard(run)
            raise
        if kind == "quarantine":  # escaped as Spark names the directory (a run id may hold `:`)
            run.staged[kind].clear = [partition_dir(policy.RUN_ID_COL, run.run_id)]


def verify(run: Run) -> None:
    """Conservation: the staged rows are exactly the rows the check routed to each output; and each target
    takes the staged schema (an append's schema check, Delta's schema enforcement), before anything is promoted."""
    from dq_governance.publish import policy
    from dq_governance.publish.writer import check_promotable, writing

    assert run.result is not None
    valid_rows, quarantined_rows = policy.conservation_counts(run.result)
    expected = {"target": valid_rows + _published_with_errors(run.routing), "quarantine": quarantined_rows}
    try:
        for kind, item in run.staged.items():
            policy.check_staged(kind, item.rows, expected[kind], run.run_id)
        for kind, item in run.staged.items():
            with writing(kind, item.output.location):  # reading the target's schema can fail (a corrupt file)
                check_promotable(item)
    except Exception:
        discard(run)
        raise


def promote(run: Run) -> None:
    """Staged outputs into place.

    When the quarantine's run partition is empty, it is promoted first: if the target's promotion then fails, the
    partition is removed again before the error is raised (the run publishes nothing). When it holds an earlier
    attempt's rows, the target goes first, so a target that fails leaves those rows as they are (they could not be
    put back). When Delta skips the target (its append of the run committed before), the quarantine and report
    rows stay the earlier attempt's as well, so one run's outputs come from one attempt.
    """
    from dq_governance.publish.writer import dataset_identity, remove_run_partition, writing

    result = run.result
    assert result is not None
    spark = run.df.sparkSession
    earlier = any((pipeline, contract) == (run.pipeline, run.contract.name)
                  for pipeline, contract, _ in run.quarantined_before or ())
    order = ("target", "quarantine") if earlier else ("quarantine", "target")
    target = run.staged.get("target")
    promoted = []
    for kind in order:
        item = run.staged.get(kind)
        if item is None:
            continue
        if kind == "quarantine" and target is not None and target.skipped:
            item.discard()
            item.skipped = True
        else:
            try:
                with writing(kind, item.output.location):
                    item.promote()
            except Exception:
                discard(run)  # what is still staged
                if target in promoted:
                    log.warning("%s: promoting the quarantine failed after run %s was published to %s",
                                result.contract_name, run.run_id, target.output.location)
                _undo_quarantine(run, [done for done in promoted if done is not target], kind)
                raise
            promoted.append(item)
        namespace, name = dataset_identity(spark, item.output)
        run.written.append({"namespace": namespace, "name": name, "rows": item.rows, "kind": kind,
                            "location": item.output.location, "format": item.output.format,
                            "retry_skipped": item.skipped, "schema": item.schema})
    if target is not None and target.skipped:
        run.kept_earlier = True
        quarantine = run.staged.get("quarantine")
        if quarantine is not None and quarantine in promoted:  # promoted before the skip was known: taken back
            remove_run_partition(spark, quarantine.output, run.run_id)
            quarantine.skipped = True
            for out in run.written:
                out["retry_skipped"] = out["retry_skipped"] or out["kind"] == "quarantine"
        log.warning("%s: run %s was already published to %s; Delta kept that attempt's rows, and the run keeps its "
                    "quarantine and report rows too", result.contract_name, run.run_id, target.output.location)
    result.published = "target" in run.staged or (run.target is None and not run.routing.blocked)
    # the lineage events get the schema as published (undeclared columns, masked types); the result, plain data
    result.outputs = [{k: v for k, v in out.items() if k != "schema"} for out in run.written]
    if run.routing.blocked:
        log.warning("%s: gate blocked publication: %s", result.contract_name, "; ".join(result.gate.reasons))
    elif run.routing.kept_error_rules and run.contract.quality.on_failure != "skip":
        log.warning("%s: published rows failing %s (action warn)", result.contract_name,
                    ", ".join(run.routing.kept_error_rules))


def _undo_quarantine(run: Run, promoted: list[Any], failed: str) -> None:
    """Take a promoted quarantine's run partition back out after the target failed (a first attempt)."""
    from dq_governance.publish.writer import remove_run_partition

    for done in promoted:
        log.warning("%s: promoting the %s failed; removing run %s from %s", run.contract.name, failed, run.run_id,
                    done.output.location)
        remove_run_partition(run.df.sparkSession, done.output, run.run_id)


def write_report(run: Run) -> None:
    """One history row per rule; then the failed-row sample, read from the kept rows before their release."""
    result = run.result
    assert result is not None
    moves_rows = run.target is not None or run.quarantine is not None
    if run.report and moves_rows and (run.kept_earlier or not result.published and _published_before(run)):
        log.warning("%s: run %s already published; this attempt's report rows were not written to %s (the run "
                    "keeps its published attempt's rows there)", result.contract_name, run.run_id, run.report)
    elif run.report:
        from dq_governance.publish.report import write_report as write

        write(run.df.sparkSession, result.report_rows(), run.report, format=run.report_format)
    if run.failed_sample:
        from dq_governance.publish.policy import unpublished_columns

        gone = set(unpublished_columns(run.contract, result.quarantine_df.columns))
        result.failed_rows = [{k: v for k, v in row.items() if k not in gone}
                              for row in result.failed_sample(run.failed_sample)]


def discard(run: Run) -> None:
    """Remove whatever was staged (a failed stage or verification writes nothing)."""
    for item in run.staged.values():
        item.discard()
    run.staged.clear()


#: the stages of a run, in order, after `precheck` (which runs before lineage START); a metrics-only run skips
#: the ones that move rows
STAGES: tuple[Callable[[Run], None], ...] = (read_history, check, guard, route, stage, verify, promote, write_report)
_ROW_STAGES = frozenset({route, stage, verify, promote})


def execute(run: Run) -> CheckResult:
    """Every stage in order, lineage around them; the result (GateFailedError when a blocked run had a target)."""
    emitter = run.emitter
    try:
        precheck(run)
    except Exception:
        if emitter is not None:
            emitter.close()  # refused before START: no event
        raise
    if emitter is not None:
        namespace, name, symlink = input_dataset(run)
        emitter.start(input_namespace=namespace, input_name=name, input_symlink=symlink)
    try:
        for step in STAGES:
            if run.outputs or step not in _ROW_STAGES:
                step(run)
    except Exception as exc:
        if emitter is not None:
            text = str(exc) if isinstance(exc, DqGovernanceError) else f"{type(exc).__name__}: {first_line(exc)}"
            emitter.fail(run.result, text, outputs=run.written)  # what was published before the error
            emitter.close()
        _release(run.result)
        raise
    result = run.result
    assert result is not None
    if emitter is not None:
        if result.gate.publish:
            emitter.complete(result, outputs=run.written)
        else:
            emitter.fail(result, "quality gate blocked publication: " + "; ".join(result.gate.reasons),
                         outputs=run.written)
        emitter.close()
    _release(result)
    if not result.published and run.target is not None and run.raise_on_block:
        error = GateFailedError(f"{run.contract.name}: quality gate blocked publication: "
                                f"{'; '.join(result.gate.reasons)}")
        error.result = result  # type: ignore[attr-defined]
        raise error
    return result


def publish(result: CheckResult, contract: Contract, target: Output | None, quarantine: Output | None, *,
            mask: bool, source: str | None, base_dir: Path | None = None) -> list[dict[str, Any]]:
    """Route, stage, verify and promote one checked result (a micro-batch); the lineage outputs written."""
    run = Run(df=result.valid_df, contract=contract, run_id=result.run_id, pipeline=result.pipeline,
              source=source, target=target, quarantine=quarantine, result=result,
              masking="applied" if mask else "none")
    run.routing, run.frames = routed_outputs(result, contract, mask=mask, source=source, base_dir=base_dir)
    for step in (stage, verify, promote):
        step(run)
    return run.written


# --------------------------------------------------------------------------- what the stages share


def measure(df: DataFrame, contract: Contract, *, location: str | None = None, outputs: bool = True,
            **options: Any) -> CheckResult:
    """The engine's pass over `df` (split, or counts when `outputs` is False), with the contract's PII columns."""
    import uuid

    from dq_governance.checks.engine import evaluate

    options["run_id"] = options.get("run_id") or str(uuid.uuid4())
    options["pipeline"] = options.get("pipeline") or contract.name
    result = evaluate(df, contract, mode="split" if outputs else "counts", spark=df.sparkSession, **options)
    if not result.pii_columns:
        result.pii_columns = contract.pii_columns()
    if location and not result.contract_location:
        result.contract_location = location
    return result


def routed_outputs(
    result: CheckResult, contract: Contract, *, mask: bool, source: str | None = None, base_dir: Path | None = None,
    evidence: bool = False,
) -> tuple[Any, dict[str, Any]]:
    """The frames a run publishes (not written yet): rows by the policy, undeclared columns by theirs, masked.

    Returns (policy.Routing, {"target": frame | None, "quarantine": frame | None}); `evidence` is route()'s.
    """
    from dq_governance.publish import policy

    routing = policy.route(result, contract, source=source, evidence=evidence)
    _log_undeclared(result.contract_name, contract, result.valid_df.columns)
    frames = {"target": routing.target_df, "quarantine": routing.quarantine_df}
    if mask:
        from dq_governance.masking import apply_masks

        frames = {kind: (apply_masks(frame, contract, base_dir=base_dir) if frame is not None else None)
                  for kind, frame in frames.items()}
    return routing, frames


def masking_state(contract: Contract, mask: bool, columns: list[str]) -> str:
    """'applied', 'none' (nothing to mask in an input with `columns`) or 'disabled' (explicitly turned off)."""
    from dq_governance.masking import masked_columns
    from dq_governance.masking.policies import undeclared_masks

    if not masked_columns(contract) and not undeclared_masks(contract, columns):
        return "none"
    if not mask:
        log.warning("%s: masking disabled; PII columns are published unmasked", contract.name)
        return "disabled"
    return "applied"


def input_dataset(run: Run) -> tuple[str, str, tuple[str, str] | None]:
    """The input as the Spark listener names it, and its `symlinks` identifier: a catalog table by its location,
    with its `db.table` (so the check's quality and contract meet the listener's lineage on one node)."""
    if run.input is None:
        source = run.source
        table = None
        if source and not ("://" in source or source.startswith("file:") or "/" in source):
            from dq_governance.publish.writer import table_identity

            table = table_identity(run.df.sparkSession, source)
        run.input = table or (*input_identity(source, run.contract), None)
    return run.input


def input_identity(source: str | None, contract: Contract) -> tuple[str, str]:
    """OpenLineage (namespace, name) of the input as the Spark listener names it; else the contract's dataset."""
    from dq_governance.lineage.facets import dataset_identity

    if source and ("://" in source or source.startswith("file:")):
        return dataset_identity(source)  # one naming for URIs (s3a -> s3, no leading slash), as ingest reads them
    if source and ("/" in source or os.path.exists(source)):
        return "file", str(Path(source).resolve())
    return contract.dataset.namespace or "file", source or contract.dataset.name


_UNDECLARED_LOG = {
    "drop": (logging.INFO, "left undeclared column(s) %s out of the outputs"),
    "fail": (logging.INFO, "left undeclared column(s) %s out of the outputs"),
    "keep": (logging.WARNING, "published undeclared column(s) %s as read"),
    "mask": (logging.INFO, "masked undeclared column(s) %s with the PII default"),
}


def _log_undeclared(name: str, contract: Contract, columns: list[str]) -> None:
    from dq_governance.contracts.model import undeclared_columns

    found = undeclared_columns(contract, columns)
    if found:
        policy = contract.schema_.undeclared_columns
        level, text = _UNDECLARED_LOG[policy]
        log.log(level, "%s: " + text + " (schema.undeclared_columns: %s)", name, ", ".join(found), policy)


def _published_with_errors(routing: Any) -> int:
    if not routing.kept_error_rules or routing.quarantine_df is None:
        return 0
    from pyspark.sql import functions as F

    from dq_governance.publish.policy import DISPOSITION_COL

    return routing.quarantine_df.where(F.col(DISPOSITION_COL) == "published").count()


def _run_partition(run: Run) -> set[tuple[Any, ...]]:
    """(pipeline, contract, disposition) of the rows the quarantine holds for the run id (its partition alone is
    read)."""
    from dq_governance.publish.policy import CONTRACT_COL, DISPOSITION_COL, PIPELINE_COL
    from dq_governance.publish.writer import partition_rows

    assert run.quarantine is not None
    spark = run.df.sparkSession
    return partition_rows(spark, run.quarantine, run.run_id, [PIPELINE_COL, CONTRACT_COL, DISPOSITION_COL])


def _published_before(run: Run) -> bool:
    """Whether an earlier attempt of the run published: its quarantine partition holds rows of this pipeline an
    attempt published, or its report rows say so (read once, when an attempt publishes nothing)."""
    if run.published_before is None:
        found = False
        if run.quarantine is not None:
            before = run.quarantined_before if run.quarantined_before is not None else _run_partition(run)
            found = any((pipeline, contract) == (run.pipeline, run.contract.name) and disposition != "blocked"
                        for pipeline, contract, disposition in before)
        if not found and run.report:
            from dq_governance.publish.report import run_published

            found = run_published(run.df.sparkSession, run.report, pipeline=run.pipeline, run_id=run.run_id,
                                  contract=run.contract.name, format=run.report_format)
        run.published_before = found
    return run.published_before


def _release(result: CheckResult | None) -> None:
    if result is not None:
        result.release()

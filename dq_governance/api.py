"""The Python API: `check` evaluates a contract on any DataFrame; `run` applies the whole policy.

`run` = lineage START -> check -> route (policy) -> mask -> stage -> conservation -> promote
(only when the gate passes) -> report history -> lineage COMPLETE / FAIL. A blocked run leaves the
target exactly as it was and, by default, raises GateFailedError carrying the result (`exc.result`).

A run repeated with the same `run_id` (and pipeline) replaces that run's published rows, never adds them
twice: see `publish.writer` for what each write mode does on a retry. Without `run_id` each run gets a new
uuid4, so it is a new run. `check` returns its frames as read; `run`, the decorators and `check_stream`
publish `routed_outputs`: the policy's rows, `schema.undeclared_columns`' columns, the contract's masks.
"""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dq_governance.checks.result import CheckResult
from dq_governance.errors import DqGovernanceError, GateFailedError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

    from dq_governance.contracts.model import Contract

log = logging.getLogger(__name__)


def resolve_contract(contract: Any) -> tuple[Contract, str | None]:
    """A Contract from a Contract, a path, YAML text or a parsed document; plus its location if a file."""
    from dq_governance.contracts.model import Contract

    if isinstance(contract, Contract):
        return contract, None
    from dq_governance.contracts.load import load_contract

    location = str(contract) if isinstance(contract, (str, Path)) and Path(str(contract)).is_file() else None
    return load_contract(contract), location


def check(
    df: DataFrame,
    contract: Any,
    *,
    run_id: str | None = None,
    pipeline: str | None = None,
    source: str | None = None,
    volume_history: list[int] | None = None,
    now: Any = None,
    previous_schema: dict[str, str] | None = None,
    storage: str = "auto",
) -> CheckResult:
    """Evaluate every rule of `contract` on `df`; the result holds valid_df, quarantine_df and report_rows().

    `storage` keeps the checked rows for the outputs in Spark's cache: "packed" (each row as one struct
    column: fastest), "cache" (one column per field: a lineage listener's column-level view stays exact) or
    "auto" (packed unless a Spark listener is configured).
    """
    from dq_governance.checks.engine import evaluate

    resolved, location = resolve_contract(contract)
    result = evaluate(
        df, resolved, run_id=run_id or str(uuid.uuid4()), pipeline=pipeline or resolved.name, source=source,
        mode="split", spark=df.sparkSession, volume_history=volume_history, now=now,
        previous_schema=previous_schema, storage=storage,
    )
    if not result.pii_columns:
        result.pii_columns = resolved.pii_columns()
    if location and not result.contract_location:
        result.contract_location = location
    return result


def run(
    df: DataFrame,
    contract: Any,
    *,
    target: str | None = None,
    quarantine: str | None = None,
    report: str | None = None,
    mode: str = "overwrite",
    format: str = "parquet",
    merge_keys: list[str] | None = None,
    quarantine_format: str = "parquet",
    report_format: str = "parquet",
    mask: bool = True,
    lineage: str | None = None,
    lineage_strict: bool = False,
    parent_run_id: str | None = None,
    parent_job: str | None = None,
    run_id: str | None = None,
    pipeline: str | None = None,
    source: str | None = None,
    raise_on_block: bool = True,
    contract_location: str | None = None,
    failed_sample: int = 0,
    storage: str = "auto",
) -> CheckResult:
    """Check, route, mask, stage and (if the gate passes) publish; write the report; emit lineage.

    `failed_sample=N` keeps up to N invalid rows, masked like the outputs, in `result.failed_rows`;
    `storage` is check()'s.
    """
    from dq_governance.publish import policy
    from dq_governance.publish.writer import Output, preflight

    resolved, location = resolve_contract(contract)
    location = contract_location or location
    run_id = run_id or str(uuid.uuid4())
    pipeline = pipeline or resolved.name
    spark = df.sparkSession
    # Validate every output before any Spark work, so a bad option never leaves half a run behind.
    target_out = Output(target, format, mode, list(merge_keys or [])) if target else None
    quarantine_out = (
        Output(quarantine, quarantine_format, "replace_partitions", partition_by=[policy.RUN_ID_COL])
        if quarantine else None
    )
    if target_out is not None:
        preflight(spark, target_out)
    guard = None
    if target_out is not None and target_out.mode == "merge":
        resolved, guard = policy.with_merge_guard(resolved, target_out.merge_keys)
    masking = _masking_state(resolved, mask, df.columns)
    emitter = _emitter(lineage, resolved, run_id=run_id, pipeline=pipeline, strict=lineage_strict,
                       parent_run_id=parent_run_id, parent_job=parent_job, spark=spark,
                       contract_location=location)
    if emitter is not None:
        namespace, name = _input_identity(source, resolved)
        emitter.start(input_namespace=namespace, input_name=name)
    result: CheckResult | None = None
    try:
        history = _volume_history(spark, resolved, report, report_format, pipeline, run_id) if report else None
        drift = _previous_schema(resolved, report, report_format, pipeline, run_id, spark) if report else None
        result = check(df, resolved, run_id=run_id, pipeline=pipeline, source=source, volume_history=history,
                       previous_schema=drift, storage=storage)
        if location and not result.contract_location:
            result.contract_location = location
        result.masking = masking
        _record_for_listener(spark, source, resolved, result)
        if target_out is not None and guard is not None:
            reason = policy.merge_guard_reason(result, guard, target_out.merge_keys)
            if reason:
                policy.block(result, reason)
        outputs = _publish(result, resolved, target_out, quarantine_out, mask=masking == "applied", source=source,
                           base_dir=Path(location).resolve().parent if location else None)
        if report:
            from dq_governance.publish.report import write_report

            write_report(spark, result.report_rows(), report, format=report_format)
        if failed_sample:  # read from the cache, before it is released
            gone = set(policy.unpublished_columns(resolved, result.quarantine_df.columns))
            result.failed_rows = [{k: v for k, v in row.items() if k not in gone}
                                  for row in result.failed_sample(failed_sample)]
    except Exception as exc:
        if emitter is not None:
            text = str(exc) if isinstance(exc, DqGovernanceError) else f"{type(exc).__name__}: {_first_line(exc)}"
            emitter.fail(result, text, outputs=[])
            emitter.close()
        _release(result)
        raise
    if emitter is not None:
        if result.gate.publish:
            emitter.complete(result, outputs=outputs)
        else:
            emitter.fail(result, "quality gate blocked publication: " + "; ".join(result.gate.reasons),
                         outputs=outputs)
        emitter.close()
    _release(result)
    if not result.published and target_out is not None and raise_on_block:
        error = GateFailedError(f"{resolved.name}: quality gate blocked publication: {'; '.join(result.gate.reasons)}")
        error.result = result  # type: ignore[attr-defined]
        raise error
    return result


def _publish(
    result: CheckResult, contract: Contract, target: Any, quarantine: Any, *, mask: bool, source: str | None,
    base_dir: Path | None = None,
) -> list[dict[str, Any]]:
    """Route, mask, stage, check conservation, promote; return the lineage outputs actually written."""
    from dq_governance.publish import policy
    from dq_governance.publish.writer import dataset_identity, partition_dir, stage

    # Masks (and a missing key's ConfigError) are set up before anything is written.
    routing, frames = routed_outputs(result, contract, mask=mask, source=source, base_dir=base_dir)
    valid_rows, quarantined_rows = policy.conservation_counts(result)
    staged = {}
    try:
        if target is not None and frames["target"] is not None:
            staged["target"] = stage(frames["target"], target, run_id=result.run_id, pipeline=result.pipeline)
            expected = valid_rows + _published_with_errors(routing)
            policy.check_staged("target", staged["target"].rows, expected, result.run_id)
        if quarantine is not None and frames["quarantine"] is not None:
            staged["quarantine"] = stage(frames["quarantine"], quarantine, run_id=result.run_id,
                                         pipeline=result.pipeline)
            staged["quarantine"].clear = [partition_dir(policy.RUN_ID_COL, result.run_id)]
            policy.check_staged("quarantine", staged["quarantine"].rows, quarantined_rows, result.run_id)
    except Exception:
        for item in staged.values():
            item.discard()
        raise
    outputs = []
    # Quarantine first: if promoting the target then fails, no bad row was lost on the way.
    for kind in ("quarantine", "target"):
        item = staged.get(kind)
        if item is None:
            continue
        item.promote()
        namespace, name = dataset_identity(result.valid_df.sparkSession, item.output)
        outputs.append({"namespace": namespace, "name": name, "rows": item.rows, "kind": kind,
                        "location": item.output.location, "format": item.output.format,
                        "retry_skipped": item.skipped, "schema": item.schema})
    result.published = "target" in staged or (target is None and not routing.blocked)
    # the lineage events get the schema as published (undeclared columns, masked types); the result, plain data
    result.outputs = [{k: v for k, v in out.items() if k != "schema"} for out in outputs]
    if routing.blocked:
        log.warning("%s: gate blocked publication: %s", result.contract_name, "; ".join(result.gate.reasons))
    elif routing.kept_error_rules and contract.quality.on_failure != "skip":
        log.warning("%s: published rows failing %s (action warn)", result.contract_name,
                    ", ".join(routing.kept_error_rules))
    return outputs


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


def _masking_state(contract: Contract, mask: bool, columns: list[str]) -> str:
    """'applied', 'none' (nothing to mask in an input with `columns`) or 'disabled' (explicitly turned off)."""
    from dq_governance.masking import masked_columns
    from dq_governance.masking.policies import undeclared_masks

    if not masked_columns(contract) and not undeclared_masks(contract, columns):
        return "none"
    if not mask:
        log.warning("%s: masking disabled; PII columns are published unmasked", contract.name)
        return "disabled"
    return "applied"


def _emitter(spec: str | None, contract: Contract, **kw: Any) -> Any:
    if spec is None or str(spec).lower() == "none":
        return None
    from dq_governance.lineage.emit import build_emitter

    return build_emitter(spec, contract, **kw)


def _record_for_listener(spark: Any, source: str | None, contract: Contract, result: CheckResult) -> None:
    """Hand the results to the listener extension (if loaded) so later Spark events carry them."""
    from dq_governance.lineage.jvm_registry import record_results

    namespace, name = _input_identity(source, contract)
    record_results(spark, namespace, name, result, contract=contract)


def _input_identity(source: str | None, contract: Contract) -> tuple[str, str]:
    """OpenLineage (namespace, name) of the input: a file path, else the contract's dataset."""
    if source and ("/" in source or os.path.exists(source)) and "://" not in source:
        return "file", str(Path(source).resolve())
    if source and "://" in source:
        scheme, _, rest = source.partition("://")
        authority, _, path = rest.partition("/")
        return f"{scheme}://{authority}", "/" + path
    return contract.dataset.namespace or "file", source or contract.dataset.name


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def _release(result: CheckResult | None) -> None:
    if result is not None:
        result.release()


def _volume_history(
    spark: Any, contract: Contract, report: str, report_format: str, pipeline: str, run_id: str
) -> list[int] | None:
    """Row counts of earlier runs (oldest first) from the report history, when a volume rule needs them."""
    if not any(rule.type == "volume" for rule in contract.quality.rules):
        return None
    from dq_governance.publish.report import run_row_counts
    from dq_governance.publish.writer import path_exists

    if not path_exists(spark, report):
        return []
    limit = max(rule.history_runs for rule in contract.quality.rules if rule.type == "volume")
    runs = run_row_counts(report, pipeline=pipeline, contract=contract.name, limit=limit, spark=spark,
                          format=report_format)
    return [count for earlier, count in reversed(runs) if earlier != run_id]


def _previous_schema(
    contract: Contract, report: str, report_format: str, pipeline: str, run_id: str, spark: Any
) -> dict[str, str] | None:
    """The input schema of the pipeline's last earlier run, when a schema_drift rule needs it."""
    if not any(rule.type == "schema_drift" for rule in contract.quality.rules):
        return None
    from dq_governance.observe.history import previous_schema

    if report_format == "delta":
        from dq_governance.publish.writer import path_exists

        if not path_exists(spark, report):
            return None
    return previous_schema(report, pipeline=pipeline, contract=contract.name, exclude_run_id=run_id,
                           format=report_format, spark=spark)

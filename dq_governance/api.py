"""The Python API: `check` evaluates a contract on any DataFrame; `run` applies the whole policy.

`run` = lineage START -> history -> check -> guard -> route (policy, masks) -> stage -> verify (conservation)
-> promote (only when the gate passes) -> report history -> lineage COMPLETE / FAIL: the stages of
`dq_governance.pipeline`. A blocked run leaves the target exactly as it was and, by default, raises
GateFailedError carrying the result (`exc.result`).

A run repeated with the same `run_id` (and pipeline) replaces that run's published rows, never adds them
twice: see `publish.writer` for what each write mode does on a retry. Without `run_id` each run gets a new
uuid4, so it is a new run. `check` returns its frames as read; `run`, the decorators and `check_stream`
publish `routed_outputs`: the policy's rows, `schema.undeclared_columns`' columns, the contract's masks.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dq_governance import pipeline as pipeline_
from dq_governance.errors import ConfigError, InputDataError
from dq_governance.scrub import redact

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

    from dq_governance.checks.result import CheckResult
    from dq_governance.contracts.model import Contract


def resolve_contract(contract: Any) -> tuple[Contract, str | None]:
    """A Contract from a Contract, a path, YAML text or a parsed document; plus its location if a file."""
    from dq_governance.contracts.model import Contract

    if isinstance(contract, Contract):
        return contract, None
    validate_contract_argument(contract)
    from dq_governance.contracts.load import load_contract

    location = str(contract) if isinstance(contract, (str, Path)) and _is_file(str(contract)) else None
    return load_contract(contract), location


def _is_file(text: str) -> bool:
    """Whether `text` names a file; YAML text is too long a name for the OS (an OSError, not False)."""
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def validate_contract_argument(contract: Any) -> Any:
    """Refuse (ConfigError) what is not a Contract, a path, YAML text or a parsed document; nothing is read."""
    from dq_governance.contracts.model import Contract

    if not isinstance(contract, (Contract, str, os.PathLike, Mapping, list)):
        raise ConfigError(f"contract: expected a Contract, a path, YAML text or a parsed document, "
                          f"not {type(contract).__name__}")
    return contract


def is_frame(df: Any) -> bool:
    """Whether `df` is a Spark DataFrame, classic or Spark Connect (by its class: no Spark call)."""
    return hasattr(type(df), "sparkSession") and hasattr(type(df), "columns")


def require_frame(df: Any, what: str = "df") -> None:
    """Refuse (InputDataError) an input that is not a Spark DataFrame, classic or Spark Connect."""
    if not is_frame(df):
        raise InputDataError(f"{what}: expected a Spark DataFrame (classic or Spark Connect), "
                             f"not {type(df).__name__}")


def validate_pipeline(pipeline: Any) -> str | None:
    """Refuse (ConfigError) a blank or non-text pipeline name; None (the contract's name) passes."""
    if pipeline is not None and (not isinstance(pipeline, str) or not pipeline.strip()):
        raise ConfigError(f"pipeline {pipeline!r}: expected a non-blank name (leave pipeline out for the contract's "
                          "name)")
    return pipeline


def _checked_options(df: Any, *, run_id: str | None, pipeline: str | None, storage: str, outputs: bool) -> None:
    """What check() and run() refuse before any Spark work: the input, the run's names, a storage left unused."""
    from dq_governance.publish.writer import validate_run_id

    require_frame(df)
    if df.isStreaming:  # a streaming frame cannot be counted in one pass; Spark's own error names no way out
        raise InputDataError("df: a streaming DataFrame (readStream) is checked per micro-batch by "
                             "dq_governance.check_stream(df, contract, target=..., quarantine=..., checkpoint=...), "
                             "not by check(), run() or the decorators")
    if run_id is not None:  # an empty run id is refused, never replaced by a new one (a retry would publish twice)
        validate_run_id(run_id)
    validate_pipeline(pipeline)
    if not outputs and storage != "auto":
        raise ConfigError(f"storage={storage!r} says how the checked rows are kept, but outputs=False keeps none; "
                          "drop storage= or outputs=False")


def _shown(source: str | None) -> str | None:
    """The source as it is recorded (report, events, `_dq_source`): URL credentials and query strings removed."""
    return None if source is None else redact(source)


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
    outputs: bool = True,
) -> CheckResult:
    """Evaluate every rule of `contract` on `df`; the result holds valid_df, quarantine_df and report_rows().

    `storage` keeps the checked rows for the outputs in Spark's cache: "packed" (each row as one struct
    column: fastest), "cache" (one column per field: a lineage listener's column-level view stays exact) or
    "auto" (packed unless a Spark listener is configured). `outputs=False` measures only: every rule result,
    metric and the gate, in one pass that keeps no rows (valid_df and quarantine_df are None,
    `row_outputs` is "none").
    """
    _checked_options(df, run_id=run_id, pipeline=pipeline, storage=storage, outputs=outputs)
    resolved, location = resolve_contract(contract)
    return pipeline_.measure(df, resolved, location=location, outputs=outputs, run_id=run_id, pipeline=pipeline,
                             source=_shown(source), volume_history=volume_history, now=now,
                             previous_schema=previous_schema,
                             storage=storage)


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
    outputs: bool = True,
) -> CheckResult:
    """Check, route, mask, stage and (if the gate passes) publish; write the report; emit lineage.

    `failed_sample=N` keeps up to N invalid rows, masked like the outputs, in `result.failed_rows`;
    `storage` and `outputs` are check()'s: `outputs=False` writes the report and the lineage events only.
    Before any Spark work, ConfigError refuses an empty run id, a blank pipeline, a bad report format or
    failed_sample, and an option set for an output the run does not write (`mode` without `target`, ...).
    The stages are `dq_governance.pipeline`'s.
    """
    from dq_governance.publish import policy
    from dq_governance.publish.report import validate_report_format
    from dq_governance.publish.writer import Output, delta_enabled, preflight

    _checked_options(df, run_id=run_id, pipeline=pipeline, storage=storage, outputs=outputs)
    if isinstance(failed_sample, bool) or not isinstance(failed_sample, int) or failed_sample < 0:
        raise ConfigError(f"failed_sample={failed_sample!r}: expected a number of rows, 0 or more")
    if not outputs:
        rows_needed = [name for name, value in (("target", target), ("quarantine", quarantine),
                                                ("failed_sample", failed_sample)) if value]
        if rows_needed:
            raise ConfigError(f"outputs=False keeps no rows, so it cannot take {', '.join(rows_needed)}; "
                              "drop outputs=False to publish, or drop the output")
    _refuse_unused(outputs, target=target, mode=mode, format=format, merge_keys=merge_keys, quarantine=quarantine,
                   quarantine_format=quarantine_format, report=report, report_format=report_format, lineage=lineage,
                   lineage_strict=lineage_strict, parent_run_id=parent_run_id, parent_job=parent_job)
    if report:
        validate_report_format(report_format)
    resolved, location = resolve_contract(contract)
    location = contract_location or location
    run_id = str(uuid.uuid4()) if run_id is None else run_id  # a given run id was validated: it names directories
    pipeline = resolved.name if pipeline is None else pipeline
    spark = df.sparkSession
    # Validate every output before any Spark work, so a bad option never leaves half a run behind.
    if report and report_format == "delta" and not delta_enabled(spark):
        raise ConfigError(f"report {report}: Delta needs delta-spark and a session with "
                          "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension")
    target_out = Output(target, format, mode, list(merge_keys or [])) if target else None
    quarantine_out = (
        Output(quarantine, quarantine_format, "replace_partitions", partition_by=[policy.RUN_ID_COL],
               merge_schema=True)  # Delta: the raw columns follow the input, so a new input column is added
        if quarantine else None
    )
    if target_out is not None:
        preflight(spark, target_out)
    guard = None
    if target_out is not None and target_out.mode == "merge":
        resolved, guard = policy.with_merge_guard(resolved, target_out.merge_keys)
    emitter = _emitter(lineage, resolved, run_id=run_id, pipeline=pipeline, strict=lineage_strict,
                       parent_run_id=parent_run_id, parent_job=parent_job, spark=spark,
                       contract_location=location)
    plan = pipeline_.Run(df=df, contract=resolved, run_id=run_id, pipeline=pipeline, location=location,
                         source=_shown(source), target=target_out, quarantine=quarantine_out, report=report,
                         report_format=report_format, mask=mask, outputs=outputs, failed_sample=failed_sample,
                         storage=storage, merge_guard=guard, emitter=emitter, raise_on_block=raise_on_block)
    return pipeline_.execute(plan)


# Names the decorators and check_stream share with run() (the pipeline's own stages).
routed_outputs = pipeline_.routed_outputs
_masking_state = pipeline_.masking_state
_input_identity = pipeline_.input_identity
_publish = pipeline_.publish


#: run() options that configure one output, the output they need, and each option's default
_OUTPUT_OPTIONS = {
    "target": {"mode": "overwrite", "format": "parquet", "merge_keys": None},
    "quarantine": {"quarantine_format": "parquet"},
    "report": {"report_format": "parquet"},
    "lineage": {"lineage_strict": False, "parent_run_id": None, "parent_job": None},
}


def _refuse_unused(outputs: bool, **given: Any) -> None:
    """Refuse an option set away from its default for an output the run does not write (it would do nothing)."""
    for output, defaults in _OUTPUT_OPTIONS.items():
        if given[output]:
            continue
        unused = [f"{name}={given[name]!r}" for name, default in defaults.items()
                  if given[name] != default and (given[name] or default is not None)]
        if unused:
            one = len(unused) == 1
            why = ("outputs=False never writes" if not outputs and output in ("target", "quarantine")
                   else "this run does not have")
            fix = "" if not outputs and output in ("target", "quarantine") else f"give {output}= or "
            raise ConfigError(f"{', '.join(unused)} {'goes' if one else 'go'} with {output}=, which {why}; "
                              f"{fix}drop {'it' if one else 'them'}")


def _emitter(spec: str | None, contract: Contract, **kw: Any) -> Any:
    if spec is None or str(spec).lower() == "none":
        return None
    from dq_governance.lineage.emit import build_emitter

    return build_emitter(spec, contract, **kw)

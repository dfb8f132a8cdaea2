"""Policy: which rows go to the target, which to quarantine, and whether anything is published.

Each failed error rule has an effective action: its own `action`, else one derived from the
contract's `on_failure` (table below; `skip` overrides every rule). A row leaves the target when
one of its `_dq_errors` has an excluding action (drop, quarantine, fail). Every invalid row is kept
in the quarantine with its raw values and a `_dq_disposition`:
`quarantined` / `dropped` (left out of the target), `published` (an action-warn rule let it
through; the quarantine keeps its original values, which the typed target may have nulled) or
`blocked` (the gate blocked the run).

When the gate blocks, the target is not touched. Under `fail` nothing is written at all; under
`block_publication` / `quarantine` the invalid rows still go to quarantine as evidence, replacing the run's
partition, unless an earlier attempt of the run published (its partition holds rows not `blocked`): that
partition stays, so a run's target rows and quarantine rows always come from one attempt (`pipeline.stage`).
A published attempt that quarantined no row leaves no partition to recognise, so a blocked retry of it still
writes its rows, all `blocked`.

The quarantine is partitioned by `_dq_run_id` alone, so a run id names one pipeline's run in it: a run whose
run id already has another `_dq_pipeline`'s rows there is refused before its check (`pipeline.precheck`).
A merge key masked by a method that can give distinct keys one value (any but hmac and tokenize) is refused
too, when the run masks (`refuse_masked_merge_keys`): the merge guards see the keys before masking.

Columns: a data column the contract does not declare (not one of its top-level fields, not one of our
`_dq_*` columns; only when the contract declares at least one field: `contracts.model.undeclared_columns`)
follows `schema.undeclared_columns` in every output, target and quarantine alike:
`drop` (the default: data minimisation, an unknown column may hold PII nobody classified) leaves it
out; `keep` publishes it as read (a logged warning); `mask` publishes it masked with the contract's PII
default (`masking.pii`, else hmac; `masking.apply_masks` does it); `fail` leaves it out like `drop`, and
the check's `undeclared_columns` rule (error severity) blocks the gate. `check()` returns frames as read:
the policy acts where rows are published (`route`, used by `run`, the decorators and `check_stream`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dq_governance.checks.result import CheckResult, GateDecision
from dq_governance.errors import EXIT_GATE_FAILED, ConfigError, DqGovernanceError
from dq_governance.identifiers import quote_identifier

ERRORS_COL = "_dq_errors"
WARNINGS_COL = "_dq_warnings"
ANNOTATIONS = (ERRORS_COL, WARNINGS_COL)
DISPOSITION_COL = "_dq_disposition"
RUN_ID_COL = "_dq_run_id"
PIPELINE_COL = "_dq_pipeline"
CONTRACT_COL = "_dq_contract"
QUARANTINE_META = (
    RUN_ID_COL, PIPELINE_COL, CONTRACT_COL, "_dq_contract_version", "_dq_source", "_dq_quarantined_at",
    DISPOSITION_COL,
)

#: on_failure -> the action of a rule that sets none
DEFAULT_ACTION = {
    "quarantine": "quarantine",
    "fail": "quarantine",
    "block_publication": "quarantine",
    "warn": "warn",
    "skip": "warn",
}
EXCLUDING_ACTIONS = frozenset({"drop", "quarantine", "fail"})
#: on a blocked run: does the quarantine still get the invalid rows?
QUARANTINE_WHEN_BLOCKED = {"fail": False, "block_publication": True, "quarantine": True, "warn": True, "skip": True}
MERGE_GUARD_NAME = "merge_keys_unique"
#: masking methods that keep distinct merge keys distinct (keyed pseudonyms); any other can give two keys one
#: value (null, redact, partial, generalize), and a MERGE on those values matches the wrong rows or none
KEY_PRESERVING_MASKS = frozenset({"hmac", "tokenize"})
#: schema.undeclared_columns -> do undeclared columns leave in the outputs? (`mask`: masked on the way out)
PUBLISHES_UNDECLARED = {"drop": False, "fail": False, "keep": True, "mask": True}


class ConservationError(DqGovernanceError):
    """valid + quarantined != input: a row would be lost or duplicated; nothing is published."""

    exit_code = EXIT_GATE_FAILED


def unpublished_columns(contract: Any, columns: list[str]) -> list[str]:
    """The undeclared columns among `columns` that the contract's policy leaves out of every output."""
    from dq_governance.contracts.model import undeclared_columns

    if PUBLISHES_UNDECLARED[contract.schema_.undeclared_columns]:
        return []
    return undeclared_columns(contract, columns)


def published_columns(frame: Any, contract: Any) -> Any:
    """`frame` without the undeclared columns its contract's policy leaves out (drop, fail); None stays None."""
    gone = unpublished_columns(contract, frame.columns) if frame is not None else []
    return frame.drop(*gone) if gone else frame


def effective_action(action: str | None, on_failure: str) -> str:
    """The action a failed error rule takes under the contract's on_failure."""
    if on_failure == "skip":
        return "warn"
    return action or DEFAULT_ACTION.get(on_failure, "quarantine")


@dataclass
class Routing:
    """The frames a run writes, and the counts conservation is checked against."""

    blocked: bool
    target_df: Any  # typed rows for the target; None when blocked
    quarantine_df: Any  # raw rows + annotations + run metadata; None when nothing goes to quarantine
    excluded_rules: list[str] = field(default_factory=list)
    kept_error_rules: list[str] = field(default_factory=list)


def excluded_and_kept(result: CheckResult, on_failure: str) -> tuple[list[str], list[str], list[str]]:
    """Names of failed error row rules that (quarantine | drop) rows, and those that keep them in the target."""
    quarantine, drop, kept = [], [], []
    for rule in result.rules:
        if rule.level != "row" or rule.severity != "error" or rule.action == "warn" or not rule.failed_count:
            continue  # warn-severity and action-warn failures are warnings: those rows are valid already
        action = effective_action(rule.action, on_failure)
        (quarantine if action in ("quarantine", "fail") else drop if action == "drop" else kept).append(rule.name)
    return quarantine, drop, kept


def block(result: CheckResult, reason: str) -> None:
    """Mark a run blocked for a reason found outside the engine's gate (e.g. the merge guard)."""
    result.gate = GateDecision(passed=False, publish=False, reasons=[*result.gate.reasons, reason])
    result.status = "failed"


def route(result: CheckResult, contract: Any, *, source: str | None = None, evidence: bool = False) -> Routing:
    """Split the run's rows into target and quarantine frames under the contract's policy.

    `evidence=True` builds the quarantine frame even where a blocked run writes none (on_failure fail).
    """
    from pyspark.sql import functions as F

    on_failure = contract.quality.on_failure
    blocked = not result.gate.publish
    quarantine_rules, drop_rules, kept_rules = excluded_and_kept(result, on_failure)

    def any_error_in(names: list[str]) -> Any:
        return F.exists(F.col(ERRORS_COL), lambda name: name.isin(names)) if names else F.lit(False)

    quarantine_df = None
    if not blocked or evidence or QUARANTINE_WHEN_BLOCKED.get(on_failure, True):
        disposition = (
            F.lit("blocked") if blocked
            else F.when(any_error_in(quarantine_rules), F.lit("quarantined"))
            .when(any_error_in(drop_rules), F.lit("dropped"))
            .otherwise(F.lit("published"))
        )
        quarantine_df = result.quarantine_df.select(
            "*",
            F.lit(result.run_id).alias(RUN_ID_COL),
            F.lit(result.pipeline).alias(PIPELINE_COL),
            F.lit(result.contract_name).alias(CONTRACT_COL),
            F.lit(result.contract_version).alias("_dq_contract_version"),
            F.lit(source if source is not None else result.source).cast("string").alias("_dq_source"),
            F.current_timestamp().alias("_dq_quarantined_at"),
            disposition.alias(DISPOSITION_COL),
        )
    target_df = None
    if not blocked:
        target_df = result.valid_df
        if kept_rules:
            # Rows failing only action-warn rules are published too, typed the same way as valid rows.
            kept = result.annotated_df.where(
                (F.size(ERRORS_COL) > 0) & ~any_error_in(quarantine_rules + drop_rules)
            )
            target_df = target_df.unionByName(typed_like(kept, result.valid_df.schema, contract))
    return Routing(blocked, published_columns(target_df, contract), published_columns(quarantine_df, contract),
                   quarantine_rules + drop_rules, kept_rules)


def typed_like(raw_df: Any, schema: Any, contract: Any) -> Any:
    """Raw rows cast to `schema` (the valid output's), with the engine's conversions; bad values null."""
    from dq_governance.checks.casting import convert

    raw_types = {f.name: f.dataType for f in raw_df.schema.fields}
    columns = []
    for spec in schema.fields:
        declared = contract.field(spec.name)
        fmt = declared.date_format if declared is not None else None
        raw = raw_df[quote_identifier(spec.name)]
        typed = convert(raw, raw_types[spec.name], spec.dataType, fmt).typed if spec.name in raw_types else None
        columns.append((typed if typed is not None else raw).cast(spec.dataType).alias(spec.name))
    return raw_df.select(*columns)


def conservation_counts(result: CheckResult) -> tuple[int, int]:
    """(valid, quarantined) counted on the run's frames; raise unless they add up to the input."""
    valid = result.valid_df.count()
    quarantined = result.quarantine_df.count()
    if valid + quarantined != result.total_rows or valid != result.valid_rows:
        raise ConservationError(
            f"conservation violated in run {result.run_id}: valid {valid} + quarantined {quarantined} "
            f"!= input {result.total_rows} (engine counted valid {result.valid_rows})"
        )
    return valid, quarantined


def check_staged(name: str, staged_rows: int, expected: int, run_id: str) -> None:
    """Raise when a staged output does not hold the rows it should (nothing is promoted then)."""
    if staged_rows != expected:
        raise ConservationError(
            f"conservation violated in run {run_id}: staged {name} has {staged_rows} rows, expected {expected}"
        )


def with_merge_guard(contract: Any, keys: list[str]) -> tuple[Any, str | None]:
    """The contract plus an automatic unique rule on the merge keys, unless one already excludes duplicates."""
    from dq_governance.contracts.model import UniqueRule

    on_failure = contract.quality.on_failure
    for rule in contract.rules():
        if (
            rule.type == "unique" and sorted(rule.target_columns) == sorted(keys) and rule.severity == "error"
            and rule.filter is None and effective_action(rule.action, on_failure) in EXCLUDING_ACTIONS
        ):
            return contract, None
    known = set(contract.column_names())
    missing = [k for k in keys if known and k not in known]
    if missing:
        raise ConfigError(f"merge_keys {', '.join(missing)} are not columns of contract {contract.name}")
    guard = UniqueRule(
        type="unique", columns=list(keys), name=MERGE_GUARD_NAME, action="fail", severity="error",
        dimension="uniqueness", description="automatic guard: merge keys must be unique in the source",
    )
    quality = contract.quality.model_copy(update={"rules": [*contract.quality.rules, guard]})
    guarded = contract.model_copy(update={"quality": quality})
    return guarded, guarded.rules()[-1].name


def refuse_masked_merge_keys(contract: Any, keys: list[str]) -> None:
    """Refuse a merge on a key the contract masks with a method that can give distinct keys one value."""
    from dq_governance.masking.policies import masked_columns

    masked = masked_columns(contract)
    for key in keys:
        for path, spec in masked.items():
            whole = path.lower() == key.lower()
            if spec.method in KEY_PRESERVING_MASKS or not (whole or path.lower().startswith(f"{key.lower()}.")):
                continue
            where = "" if whole else f" (its field {path})"
            raise ConfigError(
                f"merge key {key}{where} is masked with {spec.method}, which can give distinct keys one value, so a "
                f"MERGE would match the wrong rows or none; merge on another key, or mask {path} with hmac or tokenize"
            )


def merge_guard_reason(result: CheckResult, guard: str | None, keys: list[str]) -> str | None:
    """Why a merge must not run: duplicate source keys, said plainly (None when keys are unique)."""
    if guard is None:
        return None
    rule = result.rule(guard)
    if rule.passed or not rule.failed_count:
        return None
    return (
        f"merge keys ({', '.join(keys)}) are not unique in the source: {rule.failed_count} row(s) share a key "
        "with another row; a Delta MERGE would fail with 'multiple source rows matched'"
    )


def merge_keys_reason(target_df: Any, keys: list[str], *, masked: bool = False) -> str | None:
    """Why a merge must not run on the keys it would publish (None when it may): a null key, or, masked, two
    distinct source keys that became one (one Spark job).

    A MERGE matches no null key (`t.k = s.k` is never true for null), so each retry of the run would insert
    those rows again: the run is blocked instead, like one with duplicate keys. hmac and tokenize keep distinct
    values apart, but a `format` normalises first (`529.982.247-25` and `52998224725` are one CPF): keys the
    check found unique can then collide in what is published, and Delta would refuse the MERGE.
    """
    if target_df is None or any(k not in target_df.columns for k in keys):
        return None  # nothing published, or a key missing from the output (writer.check_promotable refuses it)
    from functools import reduce

    from pyspark.sql import functions as F

    any_null = reduce(lambda a, b: a | b, [F.col(quote_identifier(k)).isNull() for k in keys])
    if masked:
        groups = target_df.groupBy(*[F.col(quote_identifier(k)) for k in keys]).agg(F.count(F.lit(1)).alias("n"))
        row = groups.agg(F.sum(F.when(any_null, F.col("n"))).alias("nulls"),
                         F.sum(F.when(~any_null & (F.col("n") > 1), F.col("n"))).alias("shared")).first()
        nulls, shared = int(row["nulls"] or 0), int(row["shared"] or 0)
    else:
        nulls, shared = target_df.where(any_null).count(), 0
    if nulls:
        return (
            f"merge keys ({', '.join(keys)}) are null in {nulls} row(s); a Delta MERGE matches no null key, so every "
            "retry of the run would insert those rows again"
        )
    if shared:
        return (
            f"merge keys ({', '.join(keys)}) collide once masked: {shared} row(s) share a masked key with another "
            "row (hmac and tokenize hash the trimmed value, normalised per `format`); a Delta MERGE would fail with "
            "'multiple source rows matched'"
        )
    return None

"""Pipeline decorators in the style of Lakeflow (Databricks DLT / Spark Declarative Pipelines) expectations.

    @dq_governance.contract("contracts/orders.yaml")      # optional: the whole contract
    @dq_governance.expect("valid_amount", "valor >= 0")   # violations recorded, rows kept
    @dq_governance.expect_or_drop("has_customer", "cliente_id IS NOT NULL")  # rows left out
    @dq_governance.expect_or_fail("known_status", "status IN ('PAGO', 'CRIADO')")  # run fails
    def orders():
        return spark.read.option("header", True).csv("examples/data/orders.csv")

    df = orders()               # the rows the policy publishes (dropped / quarantined rows left out)
    orders.last_result          # the CheckResult of that call: rules, counts, report_rows(), quarantine_df

Decorators stack in any order (one `@contract` per function and unique expectation names: a repeat
raises ContractError when decorating) and the function is checked once per call, on the same engine as
`check`: each expectation becomes an `expression` rule (expect: severity warn; expect_or_drop:
action drop; expect_or_fail: action fail). Without `@contract`, the rules form a contract named
after the function with `on_failure: quarantine`. An expectation's action is explicit, so it acts
whatever the contract's `on_failure` (also `warn` and `skip`, which only relax the contract's own
rules). When the gate blocks (an expect_or_fail violation, or the contract's own gate) the call raises
GateFailedError, its reasons under what blocked ("quality gate" / "expectations"); `exc.result` and
`fn.last_result` hold the result. A decorated method works as a method (`self` is passed on); its
`last_result` is shared by every instance, like the function's.

The rows returned are what `run()` would publish as its target, and `fn.last_result.quarantine_df` is
what it would write as its quarantine (with the run metadata columns; on a blocked call also under
`on_failure: fail`, where run() writes none): the same routing, the same `schema.undeclared_columns`
policy and the same masks (`api.routed_outputs`). A masked column whose key is missing raises ConfigError
before anything is returned. `last_result.valid_df` and `annotated_df` stay `check()`'s view of the rows,
as read, and so does `quarantine_df` again after `last_result.release()` (the result rebuilds its frames).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import os
import types
from pathlib import Path
from typing import Any, Callable

from dq_governance.errors import ContractError, GateFailedError, InputDataError

_KINDS = {
    "expect": {"severity": "warn", "action": "warn"},
    "expect_or_drop": {"severity": "error", "action": "drop"},
    "expect_or_fail": {"severity": "error", "action": "fail"},
}


class _Checked:
    """The wrapped function: collects expectations and a contract, checks each returned DataFrame."""

    def __init__(self, fn: Callable[..., Any]):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self.expectations: list[tuple[str, str, str]] = []  # (kind, name, sql), in source order
        self.contract_source: Any = None
        self.check_kwargs: dict[str, Any] = {}
        self.last_result: Any = None

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """On an instance, a bound method (calls pass `obj` as `self`; attributes read through to this wrapper)."""
        return self if obj is None else types.MethodType(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from dq_governance.api import _masking_state, check, is_frame, routed_outputs
        from dq_governance.publish import policy

        df = self._fn(*args, **kwargs)
        if not is_frame(df):
            raise InputDataError(f"{self.__name__}() returned {type(df).__name__}, not a Spark DataFrame: a checked "
                                 "function must return its DataFrame")
        contract, location = self.resolve()
        pipeline = self.check_kwargs.get("pipeline")
        result = check(df, contract, pipeline=self.__name__ if pipeline is None else pipeline,
                       source=self.check_kwargs.get("source"))
        self.last_result = result
        result.masking = _masking_state(contract, True, df.columns)
        kinds = self.expectation_rules(contract)
        expectation_reasons = {_fail_reason(name) for name, kind in kinds.items() if kind == "expect_or_fail"}
        for rule in result.rules:  # expect_or_fail blocks also where on_failure warn / skip clear the gate's reasons
            reason = _fail_reason(rule.name)
            failed = not rule.passed and rule.status != "skipped"
            if failed and reason in expectation_reasons and reason not in result.gate.reasons:
                policy.block(result, reason)
        base_dir = Path(location).resolve().parent if location else None
        routed, routing_contract = _routing_view(result, contract, kinds)
        routing, frames = routed_outputs(routed, routing_contract, mask=result.masking == "applied",
                                         base_dir=base_dir, evidence=True)
        result.quarantine_df = frames["quarantine"]
        if routing.blocked:
            error = GateFailedError(f"{self.__name__}: {_blocked_message(result.gate.reasons, expectation_reasons)}")
            error.result = result  # type: ignore[attr-defined]
            raise error
        result.published = True
        return frames["target"]

    def expectation_rules(self, contract: Any) -> dict[str, str]:
        """{rule name as checked: expectation kind} of this function's expectations, in build_contract()'s contract."""
        if not self.expectations:
            return {}
        rules = contract.rules()[-len(self.expectations):]  # appended last; names as the check gives them
        return {rule.name: kind for rule, (kind, _, _) in zip(rules, self.expectations)}

    def build_contract(self) -> Any:
        """The contract this function is checked against: @contract's, plus one rule per expectation."""
        return self.resolve()[0]

    def resolve(self) -> tuple[Any, str | None]:
        """build_contract()'s contract and the file it came from (masking key files are relative to it)."""
        from dq_governance.api import resolve_contract
        from dq_governance.contracts.model import Contract, ExpressionRule

        location = None
        if self.contract_source is not None:
            base, location = resolve_contract(self.contract_source)
        else:
            base = Contract.model_validate({
                "contract": {"name": self.__name__, "version": "0.0.0"},
                "dataset": {"name": self.__name__},
                "quality": {"on_failure": "quarantine"},
            })
        rules = [
            ExpressionRule(type="expression", name=name, expression=sql, dimension="validity", **_KINDS[kind])
            for kind, name, sql in self.expectations
        ]
        if not rules:
            return base, location
        names = {rule.name for rule in base.rules()}
        clash = [rule.name for rule in rules if rule.name in names]
        if clash:
            raise ContractError(f"expectation name {clash[0]!r} is already a rule of contract {base.name}")
        return base.model_copy(update={"quality": base.quality.model_copy(
            update={"rules": [*base.quality.rules, *rules]})}), location


def _fail_reason(rule_name: str) -> str:
    """The gate's reason for a failed rule whose action is fail (the wording of checks/gate.py)."""
    return f"rule {rule_name} failed with action fail"


def _blocked_message(reasons: list[str], expectation_reasons: set[str]) -> str:
    """The gate's reasons, each under what blocked: the contract's own gate or an expect_or_fail expectation."""
    parts = []
    gate_reasons = [reason for reason in reasons if reason not in expectation_reasons]
    if gate_reasons:
        parts.append("quality gate blocked the output: " + "; ".join(gate_reasons))
    failed_expectations = [reason for reason in reasons if reason in expectation_reasons]
    if failed_expectations:
        parts.append("expectations blocked the output: " + "; ".join(failed_expectations))
    return "; ".join(parts)


def _describe_source(source: Any) -> str:
    """A contract source as a message names it: its path, or its name when given as a Contract."""
    from dq_governance.contracts.model import Contract

    if isinstance(source, Contract):
        return f"contract {source.name}"
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source.strip()):
        return str(source)
    return "an inline contract document"


def _routing_view(result: Any, contract: Any, kinds: dict[str, str]) -> tuple[Any, Any]:
    """The result and contract to route by, so that an expect_or_drop drops its rows under `on_failure: skip` too.

    Under skip every failed rule's action is warn (`policy.effective_action`). Routed as `warn` instead, with every
    rule but the expect_or_drops stripped of its own excluding action (so it acts as under skip: its rows are
    published), only the expect_or_drops leave rows out (disposition `dropped`). Other policies keep an explicit
    `drop`, so they route as they are.
    """
    drops = {name for name, kind in kinds.items() if kind == "expect_or_drop"}
    if contract.quality.on_failure != "skip" or not drops:
        return result, contract
    view = copy.copy(result)  # a shallow copy for routing only: the user's result keeps its own rules
    view.rules = [rule if rule.name in drops or rule.action in (None, "warn")
                  else dataclasses.replace(rule, action=None) for rule in result.rules]
    quality = contract.quality.model_copy(update={"on_failure": "warn"})
    return view, contract.model_copy(update={"quality": quality})


def _wrap(fn: Callable[..., Any]) -> _Checked:
    return fn if isinstance(fn, _Checked) else _Checked(fn)


def _expectation(kind: str, constraints: dict[str, str]) -> Callable[[Callable[..., Any]], _Checked]:
    for name, sql in constraints.items():
        if not isinstance(name, str) or not name or not isinstance(sql, str) or not sql.strip():
            raise ContractError(f"@{kind}: expectation needs a name and a SQL boolean expression")

    def decorate(fn: Callable[..., Any]) -> _Checked:
        wrapped = _wrap(fn)
        taken = {name for _, name, _ in wrapped.expectations}
        repeated = [name for name in constraints if name in taken]
        if repeated:  # the contract would rename the second one `<name>_2` without a word
            raise ContractError(f"expectation name {repeated[0]!r} is already an expectation of {wrapped.__name__}")
        # Decorators apply bottom-up; prepend so the rules read in source order.
        wrapped.expectations[:0] = [(kind, name, sql) for name, sql in constraints.items()]
        return wrapped

    return decorate


def expect(name: str, sql: str) -> Callable[[Callable[..., Any]], _Checked]:
    """Record violations of `sql` (a row-level boolean); rows are kept."""
    return _expectation("expect", {name: sql})


def expect_or_drop(name: str, sql: str) -> Callable[[Callable[..., Any]], _Checked]:
    """Leave rows violating `sql` out of the output (they stay in the result's quarantine_df)."""
    return _expectation("expect_or_drop", {name: sql})


def expect_or_fail(name: str, sql: str) -> Callable[[Callable[..., Any]], _Checked]:
    """Fail the call (GateFailedError) when any row violates `sql`."""
    return _expectation("expect_or_fail", {name: sql})


def expect_all(constraints: dict[str, str]) -> Callable[[Callable[..., Any]], _Checked]:
    """Several `expect`s at once: {name: sql}."""
    return _expectation("expect", dict(constraints))


def expect_all_or_drop(constraints: dict[str, str]) -> Callable[[Callable[..., Any]], _Checked]:
    """Several `expect_or_drop`s at once."""
    return _expectation("expect_or_drop", dict(constraints))


def expect_all_or_fail(constraints: dict[str, str]) -> Callable[[Callable[..., Any]], _Checked]:
    """Several `expect_or_fail`s at once."""
    return _expectation("expect_or_fail", dict(constraints))


def contract(source: Any, *, pipeline: str | None = None, source_name: str | None = None) -> Callable[
        [Callable[..., Any]], _Checked]:
    """Check the function's DataFrame against a whole contract (path or Contract)."""
    from dq_governance.api import validate_contract_argument, validate_pipeline

    validate_contract_argument(source)  # None or a frame here would be found only at the first call
    validate_pipeline(pipeline)  # a blank name would fall back to the function's name without a word

    def decorate(fn: Callable[..., Any]) -> _Checked:
        wrapped = _wrap(fn)
        if wrapped.contract_source is not None:  # a second one would replace the first, its pipeline= and source_name=
            raise ContractError(f"{wrapped.__name__}: one @contract per function; it already has "
                                f"{_describe_source(wrapped.contract_source)}")
        wrapped.contract_source = source
        wrapped.check_kwargs = {"pipeline": pipeline, "source": source_name}
        return wrapped

    return decorate

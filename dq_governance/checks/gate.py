"""The quality gate: from rule results and the contract's policy, decide whether a run may publish.

Semantics (following the seed framework):
- a `warn` threshold is recorded but never blocks; `must_be` failing makes the rule fail;
- `on_failure: skip` and `on_failure: warn` evaluate and report everything but never block;
- under `quarantine`, failed row rules only route rows to quarantine; under `fail` /
  `block_publication` without `minimum_valid_ratio`, any failed error row rule blocks, except one whose own
  `action` (drop, quarantine) routes its rows instead;
- `minimum_valid_ratio` is compared with valid / total, where validity counts error rules only;
- any failed error-severity dataset rule (row_count, freshness, schema, sql, reconcile, ...) blocks,
  and so does any failed rule whose own `action` is `fail`.
"""

from __future__ import annotations

from typing import Iterable

from dq_governance.checks.result import GateDecision, RuleResult, RunStatus

NON_BLOCKING_POLICIES = frozenset({"warn", "skip"})
BLOCKING_POLICIES = frozenset({"fail", "block_publication"})


def _blocking_failures(rules: Iterable[RuleResult], on_failure: str, has_ratio: bool) -> list[str]:
    reasons = []
    for rule in rules:
        if rule.passed or rule.status == "skipped":
            continue
        if rule.action == "fail":
            reasons.append(f"rule {rule.name} failed with action fail")
        elif rule.severity != "error" or rule.action == "warn":
            continue
        elif rule.level == "dataset":
            reasons.append(f"dataset rule {rule.name} failed: {rule.message}".rstrip(": "))
        elif on_failure in BLOCKING_POLICIES and not has_ratio and rule.action is None:
            # a rule with its own `drop` / `quarantine` acts by it (routes its rows), not by the contract's policy
            reasons.append(f"row rule {rule.name} failed on {rule.failed_count} row(s)")
    return reasons


def decide(
    rules: list[RuleResult],
    *,
    on_failure: str,
    minimum_valid_ratio: float | None,
    total_rows: int,
    valid_rows: int,
) -> tuple[GateDecision, RunStatus]:
    """Gate decision and run status (`passed`, `warned` or `failed`) for one run."""
    reasons = _blocking_failures(rules, on_failure, minimum_valid_ratio is not None)
    if minimum_valid_ratio is not None and total_rows > 0:
        ratio = valid_rows / total_rows
        if ratio < minimum_valid_ratio:
            reasons.append(f"valid ratio {ratio:.4f} is below minimum_valid_ratio {minimum_valid_ratio}")
    if on_failure in NON_BLOCKING_POLICIES:
        reasons = []
    passed = not reasons
    if not passed:
        status: RunStatus = "failed"
    elif any(rule.status in ("warned", "failed") for rule in rules):
        status = "warned"
    else:
        status = "passed"
    return GateDecision(passed=passed, publish=passed, reasons=reasons), status

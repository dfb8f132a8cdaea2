"""What a rule's result may say about a PII column: counts and thresholds, never a value read from the data.

One place for the rule, so the engine, the report history, the OpenLineage facets and the catalog payloads
cannot disagree on it (a struct column declared PII covers its nested fields, and the other way round).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # result.py builds report rows, which ask this module: a runtime import would be a cycle
    from dq_governance.checks.result import RuleResult

#: rule types whose metric or message holds values of the columns they read: an aggregate of them, the newest
#: time of one (freshness: its age gives the time back), their sums beside a source's (reconcile)
VALUE_REVEALING = frozenset({"min", "max", "avg", "sum", "stddev", "freshness", "reconcile"})


def touches_pii(columns: Iterable[str], pii_columns: Iterable[str]) -> bool:
    """True when one of `columns` is a PII column, a nested field of one, or a struct holding one."""
    pii = list(pii_columns)
    return any(c == p or c.startswith(p + ".") or p.startswith(c + ".") for c in columns for p in pii)


def reveals_pii(rule_type: str, columns: Iterable[str], pii_columns: Iterable[str]) -> bool:
    """True when a rule of this type over `columns` would show values of a PII column."""
    return rule_type in VALUE_REVEALING and touches_pii(columns, pii_columns)


def withheld(result: RuleResult, read: Iterable[str], pii_columns: Iterable[str]) -> RuleResult:
    """`result` without its metric and with a counts-only message when the rule reads PII values (`read`)."""
    read = list(read)
    if not reveals_pii(result.type, read, pii_columns):
        return result
    verdict = {"passed": "passed", "warned": "outside its warn threshold", "failed": "failed",
               "skipped": "skipped"}.get(result.status, result.status)
    threshold = f" ({result.threshold})" if result.threshold else ""
    message = f"{result.type}({', '.join(read)}) {verdict}{threshold}: value withheld (PII column)"
    return replace(result, metric_value=None, message=message)

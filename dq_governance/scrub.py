"""Text that may leave the process (an event's error message, a CLI error line) without secrets or data values.

Spark-free: the engine scrubs its failure lines with it, and the lineage emitter its FAIL messages.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/\s@]+@", re.IGNORECASE)
_QUERY = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s?'\"]*)\?[^\s'\"]*", re.IGNORECASE)
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def redact(text: str) -> str:
    """Text with URL userinfo and query strings removed, wherever they occur (that is where tokens hide)."""
    return _QUERY.sub(r"\1", _USERINFO.sub(r"\1", text))


def scrub_message(message: str, identifiers: Iterable[str]) -> str:
    """An error message safe to show: first line, quoted literals other than known identifiers hidden.

    Spark and our own errors quote offending values ('ana@example.com' cannot be cast ...); a value of a
    PII column must not leave in an errorMessage facet or an error line, while column and rule names stay readable.
    """
    known = set(identifiers)
    first = redact((message or "").strip().splitlines()[0] if (message or "").strip() else "")

    def keep(match: re.Match[str]) -> str:
        inner = match.group(1) if match.group(1) is not None else match.group(2)
        return match.group(0) if inner in known else "'<redacted>'"

    return _QUOTED.sub(keep, first)[:1000]


def contract_identifiers(contract: Any) -> set[str]:
    """The names scrub_message keeps quoted: the contract's, its dataset's, its columns' (nested too), its rules'."""
    names = {contract.name, contract.dataset.name, *contract.column_names(nested=True)}
    try:
        names.update(rule.name for rule in contract.rules())
    except Exception:  # rule expansion problems are the checker's to report, not ours
        pass
    return names

"""`did you mean` hints for misspelt keys and names (no contract imports, so the model can use it)."""

from __future__ import annotations

import difflib
import typing
from typing import Any


def did_you_mean(word: Any, candidates: typing.Iterable[str]) -> str | None:
    """`did you mean `x`?` for the closest candidate, or None."""
    if not isinstance(word, str):
        return None
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else None

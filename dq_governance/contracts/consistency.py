"""Cross-field checks of a contract: duplicate field names and rules naming unknown columns.

They work on plain documents as well as on model objects, so the model validators (which stop
at the first problem) and lint (which reports every problem, even when other keys are invalid)
share one definition. Paths are relative to the `schema` / `quality` sections.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterable

#: rule types whose columns must be declared in the schema (when the schema declares any)
COLUMN_CHECKED_RULES: frozenset[str] = frozenset({"unique", "not_null", "duplicate_count", "duplicate_percent"})


@dataclass(frozen=True)
class Problem:
    """A consistency problem: where (a path tuple), what, and an optional hint."""

    path: tuple[Any, ...]
    message: str
    hint: str | None = None


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def duplicate_field_names(fields: Any) -> list[Problem]:
    """Every field whose name repeats an earlier sibling's, at `('fields', i, 'name')`."""
    out: list[Problem] = []

    def walk(items: list[Any], prefix: tuple[Any, ...]) -> None:
        seen: set[str] = set()
        for index, spec in enumerate(items):
            name = _get(spec, "name")
            if isinstance(name, str):
                if name in seen:
                    out.append(Problem((*prefix, index, "name"), f"duplicate field name {name!r}"))
                seen.add(name)
            walk(_items(_get(spec, "fields")), (*prefix, index, "fields"))

    walk(_items(fields), ("fields",))
    return out


def field_paths(fields: Any) -> list[str]:
    """Dotted paths of every named field, nested struct fields included."""
    out: list[str] = []

    def walk(items: list[Any], prefix: str) -> None:
        for spec in items:
            name = _get(spec, "name")
            if isinstance(name, str):
                out.append(f"{prefix}{name}")
                walk(_items(_get(spec, "fields")), f"{prefix}{name}.")

    walk(_items(fields), "")
    return out


def unknown_rule_columns(known: Iterable[str], rules: Any) -> list[Problem]:
    """Columns of unique / not_null / duplicate rules that the schema does not declare."""
    known_list = list(known)
    if not known_list:
        return []
    known_set = set(known_list)
    out: list[Problem] = []
    for index, rule in enumerate(_items(rules)):
        kind = _get(rule, "type")
        if kind not in COLUMN_CHECKED_RULES:
            continue
        named: list[tuple[tuple[Any, ...], Any]] = []
        if _get(rule, "column") is not None:
            named.append((("rules", index, "column"), _get(rule, "column")))
        named += [(("rules", index, "columns", i), c) for i, c in enumerate(_items(_get(rule, "columns")))]
        for path, column in named:
            if isinstance(column, str) and column not in known_set:
                close = difflib.get_close_matches(column, known_list, n=1)
                hint = f"did you mean `{close[0]}`?" if close else None
                out.append(Problem(path, f"{kind} rule names unknown column {column!r}", hint))
    return out

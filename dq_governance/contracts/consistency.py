"""Cross-field checks of a contract: duplicate field names, nested fields their struct's type lacks, rules naming
unknown columns, range bounds that do not fit their field's type, `masking.by_classification` keys that no
field's classification matches.

They work on plain documents as well as on model objects, so the model validators (which stop
at the first problem) and lint (which reports every problem, even when other keys are invalid)
share one definition. Paths are relative to the `schema` / `quality` sections.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import re
from dataclasses import dataclass
from typing import Any, Iterable

from dq_governance.contracts.spark_types import logical_type, struct_members

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


def ambiguous_paths(fields: Any) -> list[Problem]:
    """Every nested field whose dotted path could name another column, at `('fields', i, ..., 'name')`.

    Rules and masks name a struct's field by its dotted path (`a.b`), so that path must not also be a top-level
    field's name or another field's path, and a nested field's own name cannot hold a dot.
    """
    out: list[Problem] = []
    top = {name for spec in _items(fields) if isinstance(name := _get(spec, "name"), str)}

    def walk(items: list[Any], prefix: tuple[Any, ...], parent: str) -> None:
        for index, spec in enumerate(items):
            name = _get(spec, "name")
            if not isinstance(name, str):
                continue
            path = f"{parent}.{name}"
            if "." in name:
                out.append(Problem((*prefix, index, "name"), f"nested field name {name!r} holds a dot: its path "
                                   f"`{path}` would read as a struct `{parent}.{name.split('.')[0]}`; rename it"))
            elif path in top:
                out.append(Problem((*prefix, index, "name"), f"`{path}` names both field {name!r} of struct "
                                   f"`{parent}` and the top-level field `{path}`; rename one"))
            walk(_items(_get(spec, "fields")), (*prefix, index, "fields"), path)

    for index, spec in enumerate(_items(fields)):
        name = _get(spec, "name")
        if isinstance(name, str):
            walk(_items(_get(spec, "fields")), ("fields", index, "fields"), name)
    return out


def struct_member_problems(fields: Any) -> list[Problem]:
    """Every nested field its struct's declared type does not have, at `('fields', i, ..., 'name')`.

    A field's `fields` are checked against its own `struct<...>` type, or, for a nested field that declares no type,
    the member type its parent's struct gives it; any other type is not checked here.
    """
    out: list[Problem] = []

    def declared_type(spec: Any) -> Any:
        explicit = getattr(spec, "model_fields_set", None)
        return _get(spec, "type") if explicit is None or "type" in explicit else None

    def walk(items: list[Any], prefix: tuple[Any, ...], members: dict[str, str] | None, parent: str) -> None:
        for index, spec in enumerate(items):
            name = _get(spec, "name")
            if not isinstance(name, str):
                continue
            if members is not None and name not in members:
                close = difflib.get_close_matches(name, list(members), n=1)
                message = f"struct {parent} has no field {name!r} (its type declares {', '.join(members) or 'none'})"
                out.append(Problem((*prefix, index, "name"), message, f"did you mean `{close[0]}`?" if close else None))
            own = declared_type(spec)
            type_text = own if isinstance(own, str) else (members or {}).get(name)
            found = struct_members(type_text) if isinstance(type_text, str) else None
            inner = None if found is None else {m.name: m.type for m in found}
            here = f"{parent}.{name}" if parent else name
            walk(_items(_get(spec, "fields")), (*prefix, index, "fields"), inner, here)

    walk(_items(fields), ("fields",), None, "")
    return out


def field_paths(fields: Any) -> list[str]:
    """Dotted paths of every named field, nested struct fields included."""
    return [path for path, _spec in document_fields(fields)]


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


# --------------------------------------------------------------------------- bounds

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISO_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)?$")


def as_moment(value: Any) -> _dt.date | _dt.datetime | None:
    """A YAML date / datetime, or ISO text (`2024-01-01`, `2024-01-01T10:00:00Z`), as a date or datetime; else None.

    Text shaped like a date that is no calendar date (`2024-02-30`) raises ValueError.
    """
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        if _ISO_DATE.match(text):
            return _dt.date.fromisoformat(text)
        if _ISO_TIMESTAMP.match(text):
            return _dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a valid date: {exc}") from None
    return None


def bound_kind(value: Any) -> str | None:
    """`number`, `date` (dates and timestamps) or None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return "number"
    try:
        return "date" if as_moment(value) is not None else None
    except ValueError:
        return "date"


def bound_text(bound: Any) -> str:
    """A bound as a reader writes it: ISO text for dates and timestamps."""
    return bound.isoformat() if isinstance(bound, (_dt.date, _dt.datetime)) else str(bound)


def comparable_bound(bound: Any) -> Any:
    """A bound comparable with any other of its kind: a date as its midnight, an aware timestamp in UTC (naive)."""
    if isinstance(bound, _dt.datetime):
        return bound if bound.tzinfo is None else bound.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    if isinstance(bound, _dt.date):
        return _dt.datetime(bound.year, bound.month, bound.day)
    return bound


_TEMPORAL = ("date", "timestamp")


def range_bound_problems(fields: Iterable[tuple[str, Any]], rules: Any) -> list[Problem]:
    """Range rules on declared fields whose bounds are of the wrong kind: dates on a number, numbers on a date.

    `fields` is (dotted path, field) pairs; a field is a model or a document mapping.
    """
    types = {path: _get(spec, "type") for path, spec in fields}
    out: list[Problem] = []
    for index, rule in enumerate(_items(rules)):
        if _get(rule, "type") != "range" or _get(rule, "column") not in types:
            continue
        column = _get(rule, "column")
        type_text = str(types[column] or "string")
        temporal = logical_type(type_text) in _TEMPORAL
        for key in ("min", "max"):
            found = bound_kind(_get(rule, key))
            if found is None or (found == "date") == temporal:
                continue  # numbers bound any other field (text through a cast to double), as before
            if found == "date":
                message = (f"range {key} {str(_get(rule, key))!r} is a date, but `{column}` is `{type_text}`: "
                           "only `date` and `timestamp` fields take date bounds")
            else:
                message = (f"range {key} {_get(rule, key)!r} is a number, but `{column}` is `{type_text}`: "
                           "give an ISO date (e.g. '2024-01-01')")
            out.append(Problem(("rules", index, key), message))
    return out


def document_fields(fields: Any) -> list[tuple[str, Any]]:
    """(dotted path, field mapping) for every named field of a document's `schema.fields`."""
    out: list[tuple[str, Any]] = []

    def walk(items: list[Any], prefix: str) -> None:
        for spec in items:
            name = _get(spec, "name")
            if isinstance(name, str):
                out.append((f"{prefix}{name}", spec))
                walk(_items(_get(spec, "fields")), f"{prefix}{name}.")

    walk(_items(fields), "")
    return out


def unmatched_classifications(fields: Any, masking: Any) -> list[Problem]:
    """`masking.by_classification` keys no field's `classification` equals: they mask nothing (matching is exact).

    Paths are document paths (`('masking', 'by_classification', key)`); the hint names a classification that
    differs only by case, else a close spelling.
    """
    keys = [k for k in (_get(masking, "by_classification") or {}) if isinstance(k, str)]
    used = {c for _path, spec in document_fields(fields) if isinstance(c := _get(spec, "classification"), str)}
    out: list[Problem] = []
    for key in keys:
        if key in used:
            continue
        same = sorted(c for c in used if c.lower() == key.lower())
        close = same or difflib.get_close_matches(key, sorted(used), n=1)
        hint = (f"did you mean `{close[0]}`? classifications match case-sensitively" if same
                else f"did you mean `{close[0]}`?" if close else None)
        out.append(Problem(("masking", "by_classification", key),
                           f"masking.by_classification key {key!r} matches no field's classification: it masks "
                           "nothing", hint))
    return out

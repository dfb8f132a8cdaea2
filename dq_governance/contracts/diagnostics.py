"""Turn validation errors into positioned, readable issues with hints for near-miss spellings.

Pydantic reports a `loc` in model terms; this module walks it through the document to the YAML
node it names (dropping union tags such as the rule `type`), picks the key or the value to point
at, rewrites the message in contract terms and adds a "did you mean" hint where one helps.
"""

from __future__ import annotations

import re
import types
import typing
from typing import Any, Union

from pydantic import BaseModel, ValidationError

from dq_governance.contracts.hints import did_you_mean
from dq_governance.contracts.model import RULE_TYPES, Contract, ServiceLevel
from dq_governance.contracts.source import DocPath, LintIssue, SourceDocument

#: keys a model accepts through a `mode="before"` validator although they are not fields
_SHORTHAND_KEYS: dict[type[BaseModel], tuple[str, ...]] = {ServiceLevel: ("freshness_minutes", "freshness_column")}
_QUOTED = re.compile(r"'([^']*)'")
#: model loc steps that a shorthand key of the document stands for (ServiceLevel's seed keys)
_SHORTHAND_SOURCES: dict[tuple[str, ...], str] = {
    ("freshness", "max_age"): "freshness_minutes",
    ("freshness", "column"): "freshness_column",
    ("freshness",): "freshness_minutes",  # a problem of the SLA as a whole, written as the seed's shorthand
}


def validation_issues(doc: SourceDocument, error: ValidationError, root: type[BaseModel] = Contract) -> list[LintIssue]:
    """Every error of a model validation of `doc.data`, placed on its YAML node."""
    issues: list[LintIssue] = []
    seen: set[tuple[Any, ...]] = set()
    for err in error.errors(include_url=False):
        issue, merge_key = _issue(doc, err, root)
        key = (issue.line, issue.column, issue.field, issue.message if merge_key is None else merge_key)
        if key not in seen:
            seen.add(key)
            issues.append(issue)
    return issues


def _issue(doc: SourceDocument, err: Any, root: type[BaseModel]) -> tuple[LintIssue, Any]:
    kind = err["type"]
    loc = tuple(err["loc"])
    ctx = err.get("ctx") or {}
    if kind == "contract_consistency":  # a cross-field check that names its own relative path
        loc = loc + tuple(ctx.get("path", ()))
        path, _ = follow_loc(doc.data, loc)
        return doc.issue(path, ctx["message"], ctx.get("hint") or None), None
    path, rest = follow_loc(doc.data, loc)
    if kind == "missing" and len(rest) == 1:
        missing = rest[0]
        return doc.issue(path, f"missing required key `{missing}`", at_key=True, field_path=(*path, missing)), None
    if kind == "extra_forbidden" and not rest:
        key = path[-1]
        hint = did_you_mean(key, _allowed_keys(root, doc.data, path[:-1]))
        return doc.issue(path, f"unknown key `{key}`", hint, at_key=True), None
    if kind == "union_tag_invalid":
        tag = ctx.get("tag")
        return doc.issue((*path, "type"), f"unknown rule type `{tag}`", did_you_mean(tag, RULE_TYPES)), None
    if kind == "union_tag_not_found":
        return doc.issue(path, "missing required key `type`", "a rule needs `type`, e.g. `not_null`",
                         at_key=True, field_path=(*path, "type")), None
    message = message_of(err)
    if rest and rest[0] in ("int", "float"):  # `int | float`: one message for the number
        message = f"input should be a number, not {type(err.get('input')).__name__} {err.get('input')!r}"
    hint = None
    if kind in ("literal_error", "enum"):
        hint = did_you_mean(err.get("input"), _QUOTED.findall(str(ctx.get("expected", ""))))
    # Errors of each member of a plain union (`int | float`) land on the same node: report one.
    merge_key = "union" if rest else None
    return doc.issue(path, message, hint), merge_key


def follow_loc(data: Any, loc: tuple[Any, ...]) -> tuple[DocPath, tuple[Any, ...]]:
    """The longest prefix of `loc` present in the document (union tags skipped) and the rest."""
    path: list[Any] = []
    node = data
    for index, part in enumerate(loc):
        if index and isinstance(loc[index - 1], int) and isinstance(node, dict) and node.get("type") == part:
            continue  # a rule's discriminator tag, even where the rule also has a key of that name (`format`)
        if isinstance(node, dict) and part in node:
            path.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            path.append(part)
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str) and node.get("type") == part:
            continue  # the discriminator tag of a rule: not a document key
        elif isinstance(node, dict) and _SHORTHAND_SOURCES.get(tuple(loc[index:index + 2])) in node:
            return (*path, _SHORTHAND_SOURCES[tuple(loc[index:index + 2])]), ()
        else:
            return tuple(path), loc[index:]
    return tuple(path), ()


def message_of(err: Any) -> str:
    """A pydantic error's message in contract terms (no "Value error, " prefix, lower-case start)."""
    msg = str(err["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    if len(msg) > 1 and msg[0].isupper() and msg[1].islower():
        msg = msg[0].lower() + msg[1:]
    return msg


# ------------------------------------------------------------------ which keys a node accepts


def _allowed_keys(root: type[BaseModel], data: Any, path: DocPath) -> list[str]:
    """The keys the model accepts at `path` of the document (for spelling hints)."""
    model = _model_at(root, data, path)
    if model is None:
        return []
    keys = [info.alias or name for name, info in model.model_fields.items()]
    return keys + list(_SHORTHAND_KEYS.get(model, ()))


def _model_at(annotation: Any, data: Any, path: DocPath) -> type[BaseModel] | None:
    node = data
    for part in path:
        annotation = _pick(annotation, node)
        node = node[part] if isinstance(node, (dict, list)) else None
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = next((f for n, f in annotation.model_fields.items() if (f.alias or n) == part), None)
            if field is None:
                return None
            annotation = field.annotation
        elif typing.get_origin(annotation) is list and isinstance(part, int):
            annotation = typing.get_args(annotation)[0]
        elif typing.get_origin(annotation) is dict:
            annotation = typing.get_args(annotation)[1]
        else:
            return None
    annotation = _pick(annotation, node)
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _pick(annotation: Any, node: Any) -> Any:
    """Resolve Annotated / Optional / a discriminated union to the member `node` is written for."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
            continue
        if origin is Union or origin is types.UnionType:
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            models = [a for a in members if isinstance(a, type) and issubclass(a, BaseModel)]
            tag = node.get("type") if isinstance(node, dict) else None
            chosen = next((m for m in models if tag in _literal_values(m)), None)
            if chosen is None:
                chosen = models[0] if len(models) == 1 else next(
                    (a for a in members if typing.get_origin(a) in (list, dict)), None)
            if chosen is None:
                return None
            annotation = chosen
            continue
        return annotation


def _literal_values(model: type[BaseModel]) -> tuple[Any, ...]:
    field = model.model_fields.get("type")
    return typing.get_args(field.annotation) if field is not None else ()

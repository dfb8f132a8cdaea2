"""Load a contract from a file or text in any supported format into the one model.

The format (native, ODCS v3, a DQX checks list, the seed framework's `validations` JSON) is
detected from the document. Every problem is positioned on the file (`check_document` collects
them all, for lint); `load_contract` raises the first as a one-line ContractError.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import ValidationError

from dq_governance.contracts.consistency import (
    Problem,
    ambiguous_paths,
    document_fields,
    duplicate_field_names,
    field_paths,
    range_bound_problems,
    struct_member_problems,
    unknown_rule_columns,
    unmatched_classifications,
)
from dq_governance.contracts.diagnostics import did_you_mean, follow_loc, message_of, validation_issues
from dq_governance.contracts.model import ROLE_SLOTS, RULE_TYPES, Contract
from dq_governance.contracts.spark_types import is_spark_type
from dq_governance.contracts.source import LintIssue, SourceDocument, format_path, parse_text, read_source
from dq_governance.errors import ContractError

Format = Literal["native", "odcs", "dqx", "seed"]

#: top-level sections of the native format; a mapping with any of them is read as native
NATIVE_SECTIONS = frozenset(
    {"contract", "dataset", "schema", "service_level", "quality", "roles", "governance", "masking", "extensions"}
)


@dataclass(frozen=True)
class ContractSource:
    """Where a contract came from: its file (None for text) and the format it was written in."""

    path: str | None
    format: Format

    @property
    def standard(self) -> str:
        """The contract standard for lineage: `odcs` for ODCS files, else `native`."""
        return "odcs" if self.format == "odcs" else "native"

    @property
    def location(self) -> str | None:
        """The file as an absolute `file://` URI, or None when loaded from text."""
        return Path(self.path).resolve().as_uri() if self.path else None


@dataclass
class LoadResult:
    """A checked document: the contract (None when invalid), its source and every issue found."""

    contract: Contract | None
    source: ContractSource
    issues: list[LintIssue] = field(default_factory=list)

    @property
    def errors(self) -> list[LintIssue]:
        """The issues that make the contract invalid (warnings excluded)."""
        return [i for i in self.issues if i.severity == "error"]


# ------------------------------------------------------------------------- detection


def _is_odcs(doc: Any) -> bool:
    try:
        from dq_governance.contracts.odcs import is_odcs
    except ImportError:  # the ODCS module is optional at import time; its marker keys are not
        return isinstance(doc, Mapping) and "apiVersion" in doc and "kind" in doc
    return bool(is_odcs(doc))


def _is_native(doc: Any) -> bool:
    return isinstance(doc, Mapping) and any(key in NATIVE_SECTIONS for key in doc)


def _migrate_check(name: str) -> Callable[[Any], bool]:
    def check(doc: Any) -> bool:
        try:
            from dq_governance.contracts import migrate
        except ImportError:
            return False
        return bool(getattr(migrate, name)(doc))

    return check


#: tried in order; ODCS first because it also has `schema` and `quality` keys
_DETECTORS: tuple[tuple[Format, Callable[[Any], bool]], ...] = (
    ("odcs", _is_odcs),
    ("native", _is_native),
    ("seed", _migrate_check("is_seed_validations")),
    ("dqx", _migrate_check("is_dqx")),
)


def detect_format(doc: Any) -> Format:
    """Which format a parsed document is written in; ContractError when it is not a contract."""
    for name, check in _DETECTORS:
        if check(doc):
            return name
    raise ContractError(_not_a_contract(doc))


def _not_a_contract(doc: Any) -> str:
    if doc is None:
        return "empty document, not a contract"
    found = {dict: "a mapping", list: "a list"}.get(type(doc), f"a {type(doc).__name__}")
    return (
        f"not a data contract (found {found}): expected a native contract (`contract:`, `dataset:`, "
        "`schema:`), an ODCS v3 document (`apiVersion:`, `kind: DataContract`), a DQX checks list "
        "or a `validations` block"
    )


# ------------------------------------------------------------------------- building


def _contract_name(doc: SourceDocument) -> str:
    stem = Path(doc.file).name.split(".")[0] if doc.file and not doc.file.startswith("<") else ""
    return stem or "contract"


def _build_native(doc: SourceDocument) -> tuple[Contract | None, list[LintIssue]]:
    issues: list[LintIssue] = []
    contract = None
    try:
        contract = Contract.model_validate(doc.data)
    except ValidationError as exc:
        issues = validation_issues(doc, exc)
    # The model's cross-field checks stop at the first problem and only run once every key is
    # valid; run them on the document too so lint reports all of them in one go.
    data = doc.data
    schema = data.get("schema") if isinstance(data.get("schema"), dict) else {}
    quality = data.get("quality") if isinstance(data.get("quality"), dict) else {}
    problems = [(("schema", *p.path), p)
                for p in duplicate_field_names(schema.get("fields")) + struct_member_problems(schema.get("fields"))
                + ambiguous_paths(schema.get("fields"))]
    known = field_paths(schema.get("fields"))
    problems += [(("quality", *p.path), p) for p in unknown_rule_columns(known, quality.get("rules"))]
    problems += [(("quality", *p.path), p)
                 for p in range_bound_problems(document_fields(schema.get("fields")), quality.get("rules"))]
    for path, problem in problems:
        issues.append(doc.issue(path, problem.message, problem.hint))
    issues += _type_warnings(doc, schema.get("fields"), ("schema", "fields"))
    issues += _rule_type_warnings(doc, quality.get("rules"))
    issues += _seed_extension_issues(doc, data.get("extensions"))
    return contract, issues


def _seed_extension_issues(doc: SourceDocument, extensions: Any) -> list[LintIssue]:
    """`extensions.seed` (a converted pipeline JSON's destinations) is checked as the pipeline JSON is."""
    from dq_governance.contracts.migrate import seed_extension_issues

    return [doc.issue(("extensions", *path), message) for path, message in seed_extension_issues(extensions)]


_TYPE_WORDS = ("string", "boolean", "int", "integer", "bigint", "long", "smallint", "tinyint", "float", "double",
               "decimal", "date", "timestamp", "timestamp_ntz", "binary", "array", "map", "struct")


#: a char(n) or varchar(n) inside a struct, array or map type string (the run refuses it: casting.parse_type)
_NESTED_CHAR_RE = re.compile(r"[<:,]\s*(?:var)?char\s*\(", re.IGNORECASE)


def _type_warnings(doc: SourceDocument, fields: Any, prefix: tuple[Any, ...]) -> list[LintIssue]:
    """A field `type` Spark cannot parse fails the check job later: warn now, with a hint."""
    out: list[LintIssue] = []
    for index, spec in enumerate(fields if isinstance(fields, list) else []):
        if not isinstance(spec, dict):
            continue
        kind = spec.get("type")
        if isinstance(kind, str) and not is_spark_type(kind):
            out.append(doc.issue((*prefix, index, "type"), f"`{kind}` is not a Spark SQL type string",
                                 did_you_mean(kind.lower(), _TYPE_WORDS), severity="warning"))
        elif isinstance(kind, str) and _NESTED_CHAR_RE.search(kind):
            out.append(doc.issue((*prefix, index, "type"), f"`{kind}`: char(n) and varchar(n) are checked only as a "
                                 "field's own type; declare the member as a field (`fields`) with that type",
                                 severity="warning"))
        out += _type_warnings(doc, spec.get("fields"), (*prefix, index, "fields"))
    return out


def _rule_type_warnings(doc: SourceDocument, rules: Any) -> list[LintIssue]:
    """The Spark types a `type` rule (`data_type`) or a `schema` rule (`column_types`) names: as a field's `type`."""
    named: list[tuple[tuple[Any, ...], Any]] = []
    for index, rule in enumerate(rules if isinstance(rules, list) else []):
        if isinstance(rule, dict) and rule.get("type") == "type":
            named.append((("quality", "rules", index, "data_type"), rule.get("data_type")))
        elif isinstance(rule, dict) and rule.get("type") == "schema" and isinstance(rule.get("column_types"), dict):
            named += [(("quality", "rules", index, "column_types", column), kind)
                      for column, kind in rule["column_types"].items()]
    return [doc.issue(path, f"`{kind}` is not a Spark SQL type string", did_you_mean(kind.lower(), _TYPE_WORDS),
                      severity="warning")
            for path, kind in named if isinstance(kind, str) and not is_spark_type(kind)]


def _converted_issues(doc: SourceDocument, exc: Exception, what: str,
                      rename: dict[str, str] | None = None) -> list[LintIssue]:
    """Errors raised while converting another format: on the node they name, else at the file's start.

    `rename` maps a first path step of the converted contract to the document's (seed: quality -> validations).
    """
    line, column = doc.position(())
    if isinstance(exc, ValidationError):
        issues = []
        for e in exc.errors():
            found = _source_node(doc, tuple(e["loc"]), e.get("input")) if what == "ODCS" else ()
            message = message_of(e) if found else f"{e['msg']} (in the contract converted from {what})"
            issues.append(doc.issue(found, message) if found else
                          LintIssue(doc.file, line, column, format_path(tuple(e["loc"])), message))
        return issues
    if isinstance(exc, ContractError):
        loc = exc.location
        path = _doc_path(exc.field)
        if path and rename and path[0] in rename:
            path = (rename[path[0]], *path[1:])
        found, rest = follow_loc(doc.data, path)
        shown = exc.field or ""
        if loc is not None and loc.line is not None:
            line, column = loc.line, loc.column
        elif path and not rest:  # the converter named a place in the document itself
            (line, column), shown = doc.position(found), format_path(found)
        return [LintIssue(doc.file, line, column, shown, exc.message.removeprefix("Value error, "))]
    return [LintIssue(doc.file, line, column, "", f"cannot convert {what}: {exc}")]


#: a converted contract's key -> the ODCS custom property it came from (native spelling otherwise camelCased)
_CUSTOM_PROPERTIES = {"method": "masking", "on_failure": "onFailure", "minimum_valid_ratio": "minimumValidRatio"}


def _source_node(doc: SourceDocument, loc: tuple[Any, ...], value: Any) -> tuple[Any, ...]:
    """The ODCS custom property an invalid value of the converted contract came from (within its property when
    the value is a field's), or () when none holds that value."""
    keys = [k for k in loc if isinstance(k, str) and k not in RULE_TYPES]
    if not keys or isinstance(value, (dict, list)):
        return ()
    names = {_CUSTOM_PROPERTIES.get(keys[-1], keys[-1])}
    within = _odcs_path(doc, loc) if loc and loc[0] == "schema" else ()
    scope, _rest = follow_loc(doc.data, within)
    node: Any = doc.data
    for step in scope:
        node = node[step]
    found = _node_path(node, lambda n: isinstance(n, dict) and n.get("property") in names and n.get("value") == value)
    return (*scope, *found, "value") if found else ()


def _doc_path(dotted: str | None) -> tuple[Any, ...]:
    """`3.check.function` as the path (3, 'check', 'function')."""
    if not dotted:
        return ()
    return tuple(int(part) if part.isdigit() else part for part in dotted.split("."))


def _build_odcs(doc: SourceDocument) -> tuple[Contract | None, list[LintIssue]]:
    from dq_governance.contracts.odcs import odcs_issues, odcs_to_native

    issues = [_schema_issue(doc, tuple(path), message) for path, message in odcs_issues(doc.data)]
    if issues:
        return None, issues
    try:  # validated here, not by odcs_to_contract, so a bad value is placed on the ODCS node it came from
        contract = Contract.model_validate(odcs_to_native(doc.data))
    except (ContractError, ValidationError, ValueError, KeyError, TypeError) as exc:
        return None, _converted_issues(doc, exc, "ODCS")
    return contract, _odcs_unchecked(doc, contract)


def _odcs_unchecked(doc: SourceDocument, contract: Contract) -> list[LintIssue]:
    """What the ODCS import keeps for export but nothing checks: one warning each, on its node."""
    kept = contract.extensions.get("odcs") or {}
    out = [doc.issue(_node_path(doc.data, lambda n, o=obj: n == o), f"schema object `{obj.get('name')}` is not "
                     f"checked: a contract checks one dataset (`{contract.dataset.name}`); kept for export",
                     severity="warning")
           for obj in kept.get("objects") or [] if isinstance(obj, dict)]
    for raw in kept.get("checks") or []:
        check = raw.get("check") if isinstance(raw, dict) else None
        if not isinstance(check, dict) or check.get("type") == "text":  # prose, for readers
            continue
        what = check.get("metric") or check.get("rule") or check.get("engine") or check.get("type") or "check"
        out.append(doc.issue(_node_path(doc.data, lambda n, c=check: n == c),
                             f"check `{what}` has no equivalent rule: kept for export, not evaluated",
                             severity="warning"))
    for name, extra in (kept.get("properties") or {}).items():
        options = extra.get("logicalTypeOptions") if isinstance(extra, dict) else None
        for key in options if isinstance(options, dict) else ():
            leaf = str(name).rsplit(".", 1)[-1]
            node = _node_path(doc.data, lambda n, k=key, leaf=leaf: isinstance(n, dict) and n.get("name") == leaf
                              and isinstance(n.get("logicalTypeOptions"), dict) and k in n["logicalTypeOptions"])
            out.append(doc.issue((*node, "logicalTypeOptions", key) if node else (), f"logicalTypeOptions `{key}` of "
                                 f"`{name}` is not checked: no rule measures it; kept for export", severity="warning"))
        out += _kept_property_issues(doc, str(name), extra if isinstance(extra, dict) else {})
    relationships = (kept.get("schema") or {}).get("relationships")
    if relationships:
        node = _node_path(doc.data, lambda n, r=relationships: isinstance(n, dict) and n.get("relationships") == r)
        out.append(doc.issue((*node, "relationships") if node else (), f"relationships of `{contract.dataset.name}` "
                             "are not checked: no rule follows them; kept for export", severity="warning"))
    for entry in kept.get("otherSla") or []:
        what = entry.get("property") if isinstance(entry, dict) else None
        out.append(doc.issue(_node_path(doc.data, lambda n, e=entry: n == e), f"SLA property `{what}` has no "
                             "equivalent rule: kept for export, not evaluated", severity="warning"))
    if (kept.get("document") or {}).get("servers") and isinstance(doc.data, Mapping) and "servers" in doc.data:
        out.append(doc.issue(("servers",), "servers are not read: a run reads the dataset from its caller's input "
                             "or the schema object's `path` custom property; kept for export", severity="warning"))
    return out + _unread_custom_properties(doc, kept)


def _unread_custom_properties(doc: SourceDocument, kept: Mapping[str, Any]) -> list[LintIssue]:
    """An error on each custom property left unread that looks meant for us (`PII` read as `pii` is not one)."""
    from dq_governance.contracts.odcs import unread_property_problem

    out: list[LintIssue] = []
    stack: list[Any] = [{k: v for k, v in kept.items() if k not in ("objects", "checks")}]  # warned as a whole
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            for key, value in node.items():
                if key == "customProperties" and isinstance(value, list):
                    for entry in value:
                        problem = unread_property_problem(entry.get("property")) if isinstance(entry, Mapping) else None
                        if problem:
                            at = _node_path(doc.data, lambda n, e=entry: n == e)
                            out.append(doc.issue((*at, "property") if at else (), problem))
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return out


#: keys of an array property's `items` that the import reads (its element type) or that only describe it
_ITEM_TYPE_KEYS = frozenset({"name", "logicalType", "physicalType", "description", "businessName", "examples", "tags"})


def _kept_property_issues(doc: SourceDocument, name: str, extra: dict[str, Any]) -> list[LintIssue]:
    """An array property's `items` constraints and a property's relationships: kept for export, nothing checks them."""
    leaf = name.rsplit(".", 1)[-1]
    out = []
    items = extra.get("items")
    constraints = sorted(set(items) - _ITEM_TYPE_KEYS) if isinstance(items, dict) else []
    if constraints:
        node = _node_path(doc.data, lambda n: isinstance(n, dict) and n.get("name") == leaf and n.get("items") == items)
        out.append(doc.issue((*node, "items") if node else (), f"`items` {', '.join(constraints)} of `{name}` "
                             "are not checked: no rule reads array elements; kept for export", severity="warning"))
    relationships = extra.get("relationships")
    if relationships:
        node = _node_path(doc.data, lambda n: isinstance(n, dict) and n.get("name") == leaf
                          and n.get("relationships") == relationships)
        out.append(doc.issue((*node, "relationships") if node else (), f"relationships of `{name}` are not checked: "
                             "no rule follows them; kept for export", severity="warning"))
    return out


def _node_path(data: Any, match: Callable[[Any], bool]) -> tuple[Any, ...]:
    """The path of the first node (breadth first) that `match` accepts; () if none."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        path, node = stack.pop(0)
        if match(node):
            return path
        if isinstance(node, dict):
            stack += [((*path, k), v) for k, v in node.items()]
        elif isinstance(node, list):
            stack += [((*path, i), v) for i, v in enumerate(node)]
    return ()


_UNEXPECTED = re.compile(r"\('([^']+)' was unexpected\)")
_REQUIRED = re.compile(r"^'([^']+)' is a required property$")


def _schema_issue(doc: SourceDocument, path: tuple[Any, ...], message: str) -> LintIssue:
    """A JSON-Schema problem: an unexpected key points at that key, a missing one at its parent's key."""
    unexpected = _UNEXPECTED.search(message)
    if unexpected and (*path, unexpected.group(1)) in doc.keys:
        key = unexpected.group(1)
        hint = did_you_mean(key, _odcs_key_names(str(doc.data.get("apiVersion"))))
        return doc.issue((*path, key), f"unknown key `{key}`", hint, at_key=True)
    required = _REQUIRED.search(message)
    if required:
        return doc.issue(path, message, at_key=True, field_path=(*path, required.group(1)))
    return doc.issue(path, message)


@functools.lru_cache(maxsize=4)
def _odcs_key_names(api_version: str) -> frozenset[str]:
    """Every property name the ODCS JSON Schema defines, anywhere: spelling-hint candidates."""
    from dq_governance.contracts.odcs import schema_for

    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                names.update(props)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema_for(api_version))
    return frozenset(names)


def _build_dqx(doc: SourceDocument) -> tuple[Contract | None, list[LintIssue]]:
    from dq_governance.contracts.migrate import dqx_rules_to_contract, dqx_to_contract, is_dqx_rules

    if is_dqx_rules(doc.data):  # the DQX article's `rules: [{name, description, expression}]` shape
        try:
            contract, notes = dqx_rules_to_contract(doc.data, _contract_name(doc))
        except (ContractError, ValidationError, ValueError, KeyError, TypeError) as exc:
            return None, _converted_issues(doc, exc, "DQX rules")
        return contract, [doc.issue(path, note, severity="warning") for path, note in notes]
    try:
        contract, skipped = dqx_to_contract(doc.data, _contract_name(doc))
    except (ContractError, ValidationError, ValueError, KeyError, TypeError) as exc:
        return None, _converted_issues(doc, exc, "DQX checks")
    return contract, [doc.issue((s.index, *s.path), s.message, severity="warning") for s in skipped]


def _build_seed(doc: SourceDocument) -> tuple[Contract | None, list[LintIssue]]:
    from dq_governance.contracts.migrate import seed_issues, seed_to_contract

    problems = seed_issues(doc.data)  # every key dqgov cannot honour, each on its own line
    if problems:
        return None, [doc.issue(path, message) for path, message in problems]
    try:
        return seed_to_contract(doc.data, _contract_name(doc)), []
    except (ContractError, ValidationError, ValueError, KeyError, TypeError) as exc:
        return None, _converted_issues(doc, exc, "the validations block", {"quality": "validations"})


# ------------------------------------------------------------------------- advice on a valid contract


def _advice(contract: Contract) -> list[Problem]:
    """Warnings about a valid contract that would do something other than its author likely means (model paths)."""
    from dq_governance.masking.proposals import normalisation_problems

    out = list(normalisation_problems(contract))
    if "undeclared_columns" in contract.schema_.model_fields_set and not contract.fields:
        out.append(Problem(("schema", "undeclared_columns"),
                           f"undeclared_columns: {contract.schema_.undeclared_columns} has no effect: the schema "
                           "declares no fields, so no column can be told undeclared and every column is published"))
    out += unmatched_classifications(contract.schema_.fields, contract.masking)
    for role in (contract.roles.other_roles if contract.roles else {}):
        hint = did_you_mean(str(role).lower(), ROLE_SLOTS)
        if hint:  # any role name is allowed (ODCS), so a misspelt `stewart:` would pass as a role of its own
            out.append(Problem(("roles", role), f"`{role}` is read as a role of its own, not one of "
                                                f"{', '.join(ROLE_SLOTS)}", hint))
    return out


def _odcs_path(doc: SourceDocument, path: tuple[Any, ...]) -> tuple[Any, ...]:
    """A model path as the path of the ODCS node it came from (fields are the chosen schema object's properties)."""
    objects = doc.data.get("schema") if isinstance(doc.data, Mapping) else None
    if not path or path[0] != "schema" or not isinstance(objects, list) or not objects:
        return ()
    name = doc.data.get("name")
    index = next((i for i, o in enumerate(objects) if isinstance(o, Mapping) and name is not None
                  and o.get("name") == name), 0)
    rest = path[1:]
    out: list[Any] = ["schema", index]
    while len(rest) >= 2 and rest[0] == "fields":
        out += ["properties", rest[1]]
        rest = rest[2:]
    return tuple(out)


#: format -> how a model path maps onto the document (native: the same path; converted formats: their own nodes)
_DOC_PATHS: dict[str, Callable[[SourceDocument, tuple[Any, ...]], tuple[Any, ...]]] = {
    "native": lambda doc, path: path,
    "odcs": _odcs_path,
}


def _advice_issues(doc: SourceDocument, fmt: str, contract: Contract) -> list[LintIssue]:
    """The advice as warnings on the document's nodes (DQX and seed documents: at their start)."""
    place = _DOC_PATHS.get(fmt, lambda doc, path: ())
    out = []
    for problem in _advice(contract):
        path, _rest = follow_loc(doc.data, place(doc, problem.path))
        out.append(doc.issue(path, problem.message, problem.hint, severity="warning"))
    return out


_BUILDERS: dict[str, Callable[[SourceDocument], tuple[Contract | None, list[LintIssue]]]] = {
    "native": _build_native,
    "odcs": _build_odcs,
    "dqx": _build_dqx,
    "seed": _build_seed,
}


def check_document(doc: SourceDocument) -> LoadResult:
    """Detect the format, build the contract and collect every issue, sorted by position."""
    path = None if doc.file.startswith("<") else doc.file
    try:
        fmt = detect_format(doc.data)
    except ContractError as exc:
        line, column = doc.position(())
        issue = LintIssue(doc.file, line, column, "", exc.message)
        return LoadResult(None, ContractSource(path, "native"), [*doc.problems, issue])
    contract, issues = _BUILDERS[fmt](doc)
    if contract is not None and not any(i.severity == "error" for i in issues):
        issues = [*issues, *_advice_issues(doc, fmt, contract)]
    unique: dict[tuple[Any, ...], LintIssue] = {}
    for issue in [*doc.problems, *issues]:
        unique.setdefault((issue.line, issue.column, issue.field, issue.message), issue)
    ordered = sorted(unique.values(), key=lambda i: (i.line or 0, i.column or 0))
    if any(i.severity == "error" for i in ordered):
        contract = None
    return LoadResult(contract, ContractSource(path, fmt), ordered)


# ------------------------------------------------------------------------- public API


def _read(source: str | Path | Mapping[str, Any] | list[Any]) -> SourceDocument:
    if isinstance(source, (Mapping, list)):
        return SourceDocument("<document>", source, {(): (1, 1)})
    if isinstance(source, str) and ("\n" in source or source.lstrip().startswith("{")):
        return parse_text(source, "<string>")
    return read_source(source)


def load_contract_with_source(source: str | Path | Mapping[str, Any] | list[Any]) -> tuple[Contract, ContractSource]:
    """Load a contract (path, YAML/JSON text or parsed document) and say where it came from."""
    result = check_document(_read(source))
    errors = result.errors
    if errors or result.contract is None:
        first = errors[0] if errors else LintIssue(result.source.path or "<string>", None, None, "", "invalid contract")
        error = first.to_error()
        if len(errors) > 1:
            more = len(errors) - 1
            where = f" `dqgov lint {result.source.path}`" if result.source.path else " lint"
            error = ContractError(f"{error.message} [and {more} more problem{'s' if more > 1 else ''}; "
                                  f"run{where} to list them]", error.location, error.field)
        raise error
    return result.contract, result.source


def load_contract(source: str | Path | Mapping[str, Any] | list[Any]) -> Contract:
    """Load a contract (any format) from a path, YAML/JSON text (a str with a newline or leading `{`) or a document."""
    return load_contract_with_source(source)[0]


__all__ = [
    "ContractSource", "LoadResult", "check_document", "detect_format", "load_contract", "load_contract_with_source",
]

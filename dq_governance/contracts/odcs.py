"""ODCS v3.1.0 / v3.0.x: validation against the official JSON Schemas, import into and export from the model.

Mapping in short (details in the functions below):

- top level: id, name, version, status, domain <-> `contract`; description.purpose <-> contract.description,
  description.usage <-> governance.purpose; team.name <-> contract.owner; team members with role owner /
  steward <-> roles.owner / roles.steward, members with any other role <-> that role of `roles` (by the role's
  name as written); `roles[]` <-> roles.consumers.
- the first `schema[]` object <-> `dataset` (name, physicalName <-> table, description, tags) and its
  `properties[]` <-> `schema.fields` (physicalType <-> Spark type, logicalType derived, required, unique,
  primaryKey, classification, tags, logicalTypeOptions <-> bounds (numbers, or ISO dates on date / timestamp
  properties) / lengths / pattern / format / date_format); schema.undeclared_columns <-> the object's
  customProperty `undeclaredColumns`.
- `quality[]`: nullValues <-> missing_*, invalidValues <-> invalid_* (or the `allowed_values` shorthand),
  duplicateValues <-> duplicate_*, rowCount <-> row_count (or, named `volume_sla`, service_level.volume),
  `sql` <-> sql rules; every other native rule travels as `type: custom, engine: dq-governance`.
- `slaProperties`: freshness (its `element`, else `slaDefaultElement`, names the column: required; a second
  freshness entry becomes a freshness rule of its own), latency, retention.
- 2+ properties with `primaryKey` <-> one `unique` rule over the columns by primaryKeyPosition (each not null).
- what ODCS has no field for is written as customProperties on the element it belongs to; what the model has
  no field for is kept in `extensions.odcs` and written back on export, so nothing is silently dropped.
"""

from __future__ import annotations

import copy
import datetime as _dt
import decimal
import functools
import json
import re
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

from pydantic import TypeAdapter, ValidationError

from dq_governance.contracts.model import Contract, FieldSpec, Rule, role_slot
from dq_governance.contracts.spark_types import logical_type, member_type, spark_type_for, to_spark_type
from dq_governance.contracts.thresholds import parse_threshold
from dq_governance.errors import ContractError, ThresholdSyntaxError

API_VERSION = "v3.1.0"
ENGINE = "dq-governance"
_SCHEMA_DIR = Path(__file__).parent / "schemas"
_SCHEMA_FILES = {"v3.1": "odcs-json-schema-v3.1.0.json", "v3.0": "odcs-json-schema-v3.0.2.json"}
_SUPPORTED_RE = re.compile(r"^v3\.(1\.0|0\.[012])$")
_STABLE_ID_RE = re.compile(r"^[A-Za-z0-9_-]+$")
_RULE_ADAPTER: TypeAdapter[Any] = TypeAdapter(Rule)

_TOP_ORDER = (
    "apiVersion", "kind", "id", "name", "version", "status", "domain", "dataProduct", "tenant", "description",
    "tags", "schema", "servers", "support", "price", "team", "roles", "slaDefaultElement", "slaProperties",
    "authoritativeDefinitions", "customProperties", "contractCreatedTs",
)  # fmt: skip
_OPERATORS = {
    "=": "mustBe", "!=": "mustNotBe", ">": "mustBeGreaterThan", ">=": "mustBeGreaterOrEqualTo",
    "<": "mustBeLessThan", "<=": "mustBeLessOrEqualTo", "between": "mustBeBetween", "not between": "mustNotBeBetween",
}  # fmt: skip
_OPERATOR_TEXT = {v: k for k, v in _OPERATORS.items()}
# ODCS dimensions <-> native dimensions; ODCS `coverage` and native `integrity` have no counterpart.
_DIM_TO_ODCS = {"validity": "conformity", "completeness": "completeness", "uniqueness": "uniqueness",
                "consistency": "consistency", "timeliness": "timeliness", "accuracy": "accuracy"}
_DIM_FROM_ODCS = {v: k for k, v in _DIM_TO_ODCS.items()}
_WARN_SEVERITIES = {"info", "warning", "warn", "low", "minor", "trivial"}
# ODCS 3.0.x library `rule` names -> 3.1 metrics
_LEGACY_RULES = {"nullValues": "nullValues", "nullCount": "nullValues", "missingValues": "missingValues",
                 "missingCount": "missingValues", "invalidValues": "invalidValues", "invalidCount": "invalidValues",
                 "validValues": "invalidValues", "duplicateValues": "duplicateValues",
                 "duplicateCount": "duplicateValues", "rowCount": "rowCount"}
_UNIT_LETTERS = {"s": "s", "sec": "s", "second": "s", "seconds": "s", "m": "m", "min": "m", "mins": "m",
                 "minute": "m", "minutes": "m", "h": "h", "hr": "h", "hour": "h", "hours": "h", "d": "d",
                 "day": "d", "days": "d", "w": "w", "week": "w", "weeks": "w"}
_UNIT_DAYS = {"y": 365, "yr": 365, "year": 365, "years": 365, "mo": 30, "month": 30, "months": 30}
_UNIT_NAMES = {"s": "s", "m": "min", "h": "h", "d": "d", "w": "w"}
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_PLACEHOLDER_OBJECT = re.compile(r"\$?\{\s*(object|table|model)\s*\}")
_PLACEHOLDER_COLUMN = re.compile(r"\$?\{\s*(property|column|field)\s*\}")
_VIEW_RE = re.compile(r"\b_validation_df\b")
_FORMAT_TO_ODCS = {"url": "uri"}
_CHECK_ORDER = ("id", "name", "description", "type", "metric", "rule", "engine", "implementation", "query",
                "arguments", "unit", *_OPERATORS.values(), "dimension", "severity")
_FORMAT_FROM_ODCS = {"uri": "url", "url": "url", "email": "email", "uuid": "uuid", "ipv4": "ipv4", "cpf": "cpf",
                     "cnpj": "cnpj", "phone": "phone"}


# =========================================================================== detection and validation


def is_odcs(doc: Any) -> bool:
    """True for an ODCS v3.x data contract (`kind: DataContract`, `apiVersion: v3.x.y`)."""
    if not isinstance(doc, Mapping):
        return False
    api = doc.get("apiVersion")
    return doc.get("kind") == "DataContract" and isinstance(api, str) and bool(re.match(r"^v3\.\d+\.\d+$", api))


def odcs_issues(doc: Any) -> list[tuple[tuple, str]]:
    """Problems against the official JSON Schema of the document's apiVersion: (path, message), by path."""
    from jsonschema.exceptions import best_match

    plain = _plain(doc)
    api = plain.get("apiVersion") if isinstance(plain, dict) else None
    validator = _validator(api)
    if validator is None:
        return [(("apiVersion",), f"unsupported ODCS apiVersion {api!r}; expected v3.1.0 or v3.0.0 to v3.0.2")]
    found: list[tuple[tuple, str, bool]] = []
    for error in validator.iter_errors(plain):
        specific = best_match(error.context) if error.context else error
        if specific is None:
            specific = error
        found.append((tuple(specific.absolute_path), _short_message(specific),
                      specific.validator == "unevaluatedProperties"))
    # a subschema that fails leaves its keys "unevaluated": report the failure, not that echo of it
    failed_at = {path for path, _, echo in found if not echo}
    issues: list[tuple[tuple, str]] = []
    for path, message, echo in found:
        if (path, message) not in issues and not (echo and path in failed_at):
            issues.append((path, message))
    return sorted(issues, key=lambda item: [str(part) for part in item[0]])


def schema_for(api_version: str) -> dict[str, Any]:
    """The vendored official ODCS JSON Schema for an apiVersion (v3.1.0, or v3.0.2 for any v3.0.x)."""
    key = "v3.1" if api_version == "v3.1.0" else "v3.0"
    return _load_schema(_SCHEMA_FILES[key])


@functools.lru_cache(maxsize=None)
def _load_schema(filename: str) -> dict[str, Any]:
    return json.loads((_SCHEMA_DIR / filename).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _validator_for(filename: str) -> Any:
    from jsonschema import Draft201909Validator

    return Draft201909Validator(_load_schema(filename))


def _validator(api: Any) -> Any:
    if not isinstance(api, str) or not _SUPPORTED_RE.match(api):
        return None
    return _validator_for(_SCHEMA_FILES["v3.1" if api == "v3.1.0" else "v3.0"])


def _short_message(error: Any) -> str:
    if error.validator == "oneOf" and isinstance(error.instance, dict) and "valid under each of" in error.message:
        operators = [k for k in error.instance if k in _OPERATOR_TEXT]
        if len(operators) > 1:
            return f"a quality check takes exactly one operator, found {', '.join(operators)}"
        return "matches more than one of the allowed forms; it must match exactly one"
    message = str(error.message)
    text = repr(error.instance)
    if len(text) > 60 and message.startswith(text):
        message = "value" + message[len(text):]
    return message if len(message) <= 300 else message[:297] + "..."


def _plain(value: Any) -> Any:
    """Plain JSON-like data: YAML dates as ISO strings, mapping subclasses as dicts."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return value


# =========================================================================== small helpers


def _cp_list(props: Any) -> list[dict[str, Any]]:
    return [dict(p) for p in (props or []) if isinstance(p, Mapping) and "property" in p]


def _cp_get(props: list[dict[str, Any]], name: str) -> tuple[bool, Any]:
    """Pop the custom property `name` (in any case, with or without `_` / `-`) from the list; (found, value)."""
    for index, prop in enumerate(props):
        if cp_key(prop.get("property")) == cp_key(name):
            props.pop(index)
            return True, prop.get("value")
    return False, None


#: the customProperties the import reads, by the element that holds them (see _cp_get for how names match)
OWN_PROPERTIES: dict[str, frozenset[str]] = {
    "the contract's top level": frozenset({
        "dqgovDefaults", "steward", "onFailure", "minimumValidRatio", "ruleOrder", "legalBasis", "maskingPolicy",
        "dqgovExtensions", "freshnessTime"}),
    "a schema object": frozenset({"classification", "namespace", "path", "format", "catalog", "undeclaredColumns"}),
    "a property": frozenset({
        "id", "pii", "masking", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
        "maxLength", "pattern", "format", "dateFormat"}),
    "a quality check": frozenset({"dimension", "action", "filter", "thresholdText", "warnOnly", "warn", "errorMessage"}),
    "a team member or support channel": frozenset({"contact", "role"}),
}
#: names no other tool would use for its own property: read anywhere else, they were meant for us
_OURS_ALONE = frozenset({
    "dqgovDefaults", "onFailure", "minimumValidRatio", "ruleOrder", "legalBasis", "maskingPolicy", "dqgovExtensions",
    "freshnessTime", "undeclaredColumns", "pii", "masking", "exclusiveMinimum", "exclusiveMaximum", "minLength",
    "maxLength", "dateFormat", "thresholdText", "warnOnly"})


def cp_key(name: Any) -> str:
    """A custom property's name as matched: `PII`, `Pii` and `pii` are one name, so are `on_failure` and `onFailure`."""
    return "".join(ch for ch in str(name).casefold() if ch not in "_- ")


def unread_property_problem(name: Any) -> str | None:
    """Why a custom property the import left unread looks meant for dq-governance, or None when it looks like the
    user's own: one of our names on another element, or within an edit or two of one (`acton`, `minimumValidRation`)."""
    key = cp_key(name)
    same = [(where, n) for where, names in OWN_PROPERTIES.items() for n in names if cp_key(n) == key]
    if same:
        where, ours = same[0]
        return f"custom property `{name}` is not read here: dq-governance reads `{ours}` on {where}" \
            if ours in _OURS_ALONE else None
    known = sorted({n for names in OWN_PROPERTIES.values() for n in names})
    close = [n for n in known if len(cp_key(n)) >= 5 and _edits(key, cp_key(n)) <= (1 if len(cp_key(n)) < 8 else 2)]
    if close:
        return f"custom property `{name}` is not one dq-governance reads: did you mean `{close[0]}`?"
    return None


def _edits(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) between two names."""
    rows = [list(range(len(b) + 1))]
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            cost = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                cost = min(cost, rows[-2][j - 2] + 1)
            row.append(cost)
        rows.append(row)
    return rows[-1][-1]


def _cp(name: str, value: Any, description: str | None = None) -> dict[str, Any]:
    out = {"property": name, "value": value}
    if description:
        out["description"] = description
    return out


def _num(value: float | int) -> int | float:
    return int(value) if float(value).is_integer() and not isinstance(value, bool) else value


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", exclude_defaults=True, by_alias=True)


def _duration_parts(text: str | None) -> tuple[Any, str | None]:
    """`60m` -> (60, 'min'); anything else -> (text, None)."""
    match = _DURATION_RE.match(str(text)) if text is not None else None
    if not match:
        return text, None
    return _num(float(match.group(1))), _UNIT_NAMES[match.group(2)]


def _duration_text(value: Any, unit: Any, field: str, default_unit: str = "d") -> str:
    """(value, unit) from an SLA entry as a native duration: `60m`, `1825d` (years and months as days)."""
    if isinstance(value, str) and not unit:
        if _DURATION_RE.match(value):
            return value.replace(" ", "")
        try:
            value = float(value)
        except ValueError:
            raise ContractError(f"SLA value {value!r} is not a duration", field=field) from None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ContractError(f"SLA value {value!r} is not a number", field=field)
    number = float(value)
    name = str(unit or default_unit).strip().lower()
    if name in _UNIT_DAYS:
        return f"{_num(number * _UNIT_DAYS[name])}d"
    if name not in _UNIT_LETTERS:
        raise ContractError(f"unknown SLA unit {unit!r}; use s, min, h, d, w, mo or y", field=field)
    return f"{_num(number)}{_UNIT_LETTERS[name]}"


def _threshold_text(op_key: str, value: Any, percent: bool, field: str | None = None) -> str:
    sign = "%" if percent else ""
    if op_key in ("mustBeBetween", "mustNotBeBetween"):
        low, high = value
        word = "between" if op_key == "mustBeBetween" else "not between"
        return f"{word} {_fmt(low, field)}{sign} and {_fmt(high, field)}{sign}"
    return f"{_OPERATOR_TEXT[op_key]} {_fmt(value, field)}{sign}"


def _fmt(value: Any, field: str | None = None) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ContractError(f"threshold value {value!r} is not a number", field=field)
    number = _num(value)
    if isinstance(number, float):
        # plain decimal notation: the threshold grammar reads `0.00001`, not str()'s `1e-05`
        return format(decimal.Decimal(repr(number)), "f")
    return str(number)


def _operator_of(text: str) -> tuple[str, Any, bool]:
    """A native threshold as an ODCS operator: (operator key, value, is_percent)."""
    threshold = parse_threshold(text)
    if threshold.unit == "duration":
        raise ValueError("durations have no ODCS operator")
    key = _OPERATORS[threshold.operator]
    if threshold.upper is not None:
        return key, [_num(threshold.value), _num(threshold.upper)], threshold.unit == "percent"
    return key, _num(threshold.value), threshold.unit == "percent"


def _find_operator(check: Mapping[str, Any]) -> tuple[str, Any] | None:
    for key in _OPERATOR_TEXT:
        if key in check:
            return key, check[key]
    return None


# =========================================================================== native -> ODCS


def contract_to_odcs(contract: Contract) -> dict[str, Any]:
    """The contract as an ODCS v3.1.0 document (a plain dict, ready for YAML)."""
    return _Exporter(contract).run()


class _Exporter:
    def __init__(self, contract: Contract) -> None:
        self.c = contract
        self.ext: dict[str, Any] = copy.deepcopy(contract.extensions.get("odcs") or {})
        self.quality_extra: dict[str, Any] = self.ext.get("quality") or {}
        self.prop_extra: dict[str, Any] = self.ext.get("properties") or {}
        self.raw_checks: list[dict[str, Any]] = self.ext.get("checks") or []
        self.obj_name = contract.dataset.name
        self.fields_by_path = dict(contract.iter_fields())
        self.sla_rules: dict[str, Any] = self.ext.get("slaRules") or {}
        key = self.ext.get("primaryKey") or {}
        # the composite key is written as primaryKey flags while its rule is still the one import made
        self.key_columns: list[str] = list(key.get("columns") or []) if any(
            self._is_key_rule(rule) for rule in contract.quality.rules) else []

    def _is_key_rule(self, rule: Any) -> bool:
        key = self.ext.get("primaryKey") or {}
        return (rule.type == "unique" and rule.name == key.get("rule") and rule.column is None
                and rule.columns == key.get("columns") and rule.severity == "error" and rule.filter is None
                and rule.action is None)

    def _is_sla_rule(self, rule: Any) -> bool:
        made = self.sla_rules.get(rule.name or "")
        return (rule.type == "freshness" and isinstance(made, dict) and rule.column == made.get("column")
                and rule.must_be == made.get("must_be") and rule.warn is None and rule.time == "event"
                and rule.severity == "error" and rule.filter is None and rule.action is None)

    def run(self) -> dict[str, Any]:
        c, info = self.c, self.c.contract
        doc: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "DataContract"}
        top_cps: list[dict[str, Any]] = []
        defaulted: list[str] = []
        if info.id:
            doc["id"] = info.id
        else:
            doc["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"dq-governance:{info.name}"))
            defaulted.append("id")
        doc["name"] = info.name
        doc["version"] = info.version
        if info.status:
            doc["status"] = info.status
        else:
            doc["status"] = "active"
            defaulted.append("status")
        if info.domain:
            doc["domain"] = info.domain
        description = dict(self.ext.get("description") or {})
        if info.description:
            description["purpose"] = info.description
        if c.governance and c.governance.purpose:
            description["usage"] = c.governance.purpose
        if description:
            doc["description"] = {k: description[k] for k in _ordered(description, ("purpose", "usage", "limitations"))}

        # rules import derives from primaryKey flags and SLA entries go back there, not to quality checks
        rules = [r for r in c.quality.rules if not (self._is_key_rule(r) or self._is_sla_rule(r))]
        placed = self._place_rules(rules)
        doc["schema"] = [self._schema_object(placed)] + list(self.ext.get("objects") or [])

        team = self._team()
        if team:
            doc["team"] = team
        roles = self._consumers()
        if roles:
            doc["roles"] = roles
        sla = self._sla(top_cps)
        if sla:
            doc["slaProperties"] = sla

        if info.steward:
            top_cps.append(_cp("steward", info.steward))
        if c.quality.on_failure != "quarantine":
            top_cps.append(_cp("onFailure", c.quality.on_failure))
        if c.quality.minimum_valid_ratio is not None:
            top_cps.append(_cp("minimumValidRatio", c.quality.minimum_valid_ratio))
        if c.governance and c.governance.legal_basis:
            top_cps.append(_cp("legalBasis", c.governance.legal_basis))
        if c.masking is not None:
            top_cps.append(_cp("maskingPolicy", _masking_value(c.masking)))
        others = {k: v for k, v in c.extensions.items() if k != "odcs"}
        if others:
            top_cps.append(_cp("dqgovExtensions", others, "dq-governance extensions of the native contract"))
        order = placed["order"]
        if order != sorted(order):
            top_cps.append(_cp("ruleOrder", order, "position of each check in dq-governance quality.rules"))
        if defaulted:
            top_cps.append(_cp("dqgovDefaults", defaulted, "fields filled in on export; unset in the source"))
        top_cps.extend(_cp_list(self.ext.get("customProperties")))
        if top_cps:
            doc["customProperties"] = top_cps
        for key, value in (self.ext.get("document") or {}).items():
            doc.setdefault(key, value)
        return {k: doc[k] for k in _ordered(doc, _TOP_ORDER)}

    # -- schema object --------------------------------------------------
    def _schema_object(self, placed: dict[str, Any]) -> dict[str, Any]:
        ds = self.c.dataset
        extra = dict(self.ext.get("schema") or {})
        obj: dict[str, Any] = {}
        if "id" in extra:
            obj["id"] = extra.pop("id")
        obj["name"] = ds.name
        if ds.table:
            obj["physicalName"] = ds.table
        obj["physicalType"] = extra.pop("physicalType", "table")
        if ds.description:
            obj["description"] = ds.description
        if ds.tags:
            obj["tags"] = list(ds.tags)
        properties = [self._property(spec, spec.name, placed) for spec in self.c.fields]
        if properties:
            obj["properties"] = properties
        quality = self._volume_checks() + placed["schema"]
        quality += [r["check"] for r in self.raw_checks if r.get("at") == ""]
        if quality:
            obj["quality"] = quality
        cps: list[dict[str, Any]] = []
        for key, value in (("classification", ds.classification), ("namespace", ds.namespace), ("path", ds.path),
                           ("format", ds.format)):
            if value is not None:
                cps.append(_cp(key, value))
        if ds.catalog:
            cps.append(_cp("catalog", dict(ds.catalog)))
        schema = self.c.schema_
        if schema.undeclared_columns != "drop" or "undeclared_columns" in schema.model_fields_set:
            cps.append(_cp("undeclaredColumns", schema.undeclared_columns))
        cps.extend(_cp_list(extra.pop("customProperties", None)))
        if cps:
            obj["customProperties"] = cps
        for key, value in extra.items():
            obj.setdefault(key, value)
        return obj

    def _property(self, spec: FieldSpec, path: str, placed: dict[str, Any]) -> dict[str, Any]:
        extra = copy.deepcopy(self.prop_extra.get(path) or {})
        prop: dict[str, Any] = {}
        cps: list[dict[str, Any]] = []
        if spec.id is not None:
            if _STABLE_ID_RE.match(spec.id):
                prop["id"] = spec.id
            else:
                cps.append(_cp("id", spec.id))
        prop["name"] = spec.name
        logical = extra.pop("logicalType", None) or logical_type(spec.type)
        if logical:
            prop["logicalType"] = logical
        original_physical = extra.pop("physicalType", None)
        # the database type read at import comes back only while the field keeps the type it mapped to
        prop["physicalType"] = original_physical if (
            original_physical and spark_type_for(original_physical, logical) == spec.type) else spec.type
        if spec.description is not None:
            prop["description"] = spec.description
        if spec.required:
            prop["required"] = True
        if spec.unique:
            prop["unique"] = True
        if spec.primary_key:
            prop["primaryKey"] = True
        composite = extra.pop("_compositeKey", None)
        if isinstance(composite, dict):
            if path in self.key_columns:
                prop["primaryKey"] = True
                if "primaryKeyPosition" in extra:
                    prop["primaryKeyPosition"] = extra.pop("primaryKeyPosition")
                if composite.get("addedRequired") and prop.get("required") is True:
                    prop.pop("required")  # implied by primaryKey in the source
            else:  # the key rule was removed or changed: the flags would bring it back
                extra.pop("primaryKeyPosition", None)
        if spec.classification is not None:
            prop["classification"] = spec.classification
        if spec.tags:
            prop["tags"] = list(spec.tags)
        options, spill = _field_options(spec, logical)
        options.update(extra.pop("logicalTypeOptions", None) or {})
        if options:
            prop["logicalTypeOptions"] = options
        cps.extend(spill)
        if spec.pii:
            cps.append(_cp("pii", True))
        if spec.masking is not None:
            cps.append(_cp("masking", _masking_value(spec.masking)))
        cps.extend(_cp_list(extra.pop("customProperties", None)))
        if cps:
            prop["customProperties"] = cps
        if spec.fields:
            prop["properties"] = [self._property(child, f"{path}.{child.name}", placed) for child in spec.fields]
        quality: list[dict[str, Any]] = []
        if spec.allowed_values is not None:
            quality.append({"metric": "invalidValues", "arguments": {"validValues": list(spec.allowed_values)},
                            "mustBe": 0})
        quality.extend(placed["columns"].get(path, []))
        quality.extend(r["check"] for r in self.raw_checks if r.get("at") == path)
        if quality:
            prop["quality"] = quality
        for key, value in extra.items():
            prop.setdefault(key, value)
        return prop

    # -- quality ---------------------------------------------------------
    def _place_rules(self, rules: list[Any]) -> dict[str, Any]:
        """Checks per column path (property level) and for the schema object, plus the import order."""
        columns: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        schema: list[tuple[int, dict[str, Any]]] = []
        for index, rule in enumerate(rules):
            column, check = self._rule_check(rule)
            if column is not None and column in self.fields_by_path:
                columns.setdefault(column, []).append((index, check))
            else:
                schema.append((index, check))
        # import reads property checks in property order (nested too), then schema checks
        natural: list[int] = []
        for path, _spec in self.c.iter_fields():
            natural.extend(i for i, _ in columns.get(path, []))
        natural.extend(i for i, _ in schema)
        return {
            "columns": {path: [check for _, check in items] for path, items in columns.items()},
            "schema": [check for _, check in schema],
            "order": natural,
        }

    def _rule_check(self, rule: Any) -> tuple[str | None, dict[str, Any]]:
        exporter = _CANONICAL.get(rule.type)
        result = exporter(rule) if exporter else None
        if result is not None and result[0] is not None and result[0] not in self.fields_by_path:
            result = None  # a column check needs its property; without one it travels as a custom check
        if result is None:
            return None, self._decorate(rule, _custom_check(rule), canonical=False)
        column, check = result
        return column, self._decorate(rule, check, canonical=True)

    def _decorate(self, rule: Any, body: dict[str, Any], canonical: bool) -> dict[str, Any]:
        name = rule.name or rule.default_name()
        check: dict[str, Any] = {"name": name}
        if rule.description is not None:
            check["description"] = rule.description
        cps = body.pop("customProperties", [])
        if rule.dimension is not None:
            if rule.dimension in _DIM_TO_ODCS:
                check["dimension"] = _DIM_TO_ODCS[rule.dimension]
            else:
                cps.append(_cp("dimension", rule.dimension))
        extra = copy.deepcopy(self.quality_extra.get(name) or {})
        written = extra.pop("severity", None)
        if written is not None and _severity_of(written) == rule.severity:
            check["severity"] = written  # the source's own word (info, error, ...) while it still means the same
        elif rule.severity == "warn":
            check["severity"] = "warning"
        check.update(body)
        if canonical:
            for key in ("action", "filter"):
                if getattr(rule, key) is not None:
                    cps.append(_cp(key, getattr(rule, key)))
        cps.extend(_cp_list(extra.pop("customProperties", None)))
        if cps:
            check["customProperties"] = cps
        for key, value in extra.items():
            check.setdefault(key, value)
        return {k: check[k] for k in _ordered(check, _CHECK_ORDER)}

    def _volume_checks(self) -> list[dict[str, Any]]:
        level = self.c.service_level
        volume = level.volume if level else None
        if volume is None or (volume.min_rows is None and volume.max_rows is None):
            return []
        check: dict[str, Any] = {"name": "volume_sla", "dimension": "completeness", "metric": "rowCount"}
        if volume.min_rows is not None and volume.max_rows is not None:
            check["mustBeBetween"] = [volume.min_rows, volume.max_rows]
        elif volume.min_rows is not None:
            check["mustBeGreaterOrEqualTo"] = volume.min_rows
        else:
            check["mustBeLessOrEqualTo"] = volume.max_rows
        return [check]

    # -- team, roles, SLA ------------------------------------------------
    def _team(self) -> dict[str, Any]:
        extra = copy.deepcopy(self.ext.get("team") or {})
        member_extra: dict[str, Any] = extra.pop("memberExtras", {}) or {}
        other_members = extra.pop("otherMembers", []) or []
        team: dict[str, Any] = {}
        if "id" in extra:
            team["id"] = extra.pop("id")
        if self.c.contract.owner:
            team["name"] = self.c.contract.owner
        members: list[dict[str, Any]] = []
        roles = self.c.roles
        named = [(role, party) for role, _kind, party in (roles.parties() if roles else []) if role != "consumers"]
        for role, party in named:
            member = {"username": party.name, "role": role}
            cps = _party_cps(party)
            more = copy.deepcopy(member_extra.get(f"{role}/{party.name}") or {})
            cps.extend(_cp_list(more.pop("customProperties", None)))
            if cps:
                member["customProperties"] = cps
            member.update(more)
            members.append(member)
        members.extend(other_members)
        if members:
            team["members"] = members
        for key, value in extra.items():
            team.setdefault(key, value)
        return team

    def _consumers(self) -> list[dict[str, Any]]:
        extras = copy.deepcopy(self.ext.get("roles") or {})
        out = []
        for party in self.c.roles.consumers if self.c.roles else []:
            entry: dict[str, Any] = {"role": party.name, "access": "read"}
            more = extras.get(party.name) or {}
            cps = _party_cps(party) + _cp_list(more.pop("customProperties", None))
            entry.update(more)
            if cps:
                entry["customProperties"] = cps
            out.append(entry)
        return out

    def _sla(self, top_cps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        extras = self.ext.get("sla") or {}
        level, gov = self.c.service_level, self.c.governance

        def add(prop: str, text: str | None, element: str | None = None) -> None:
            value, unit = _duration_parts(text)
            more = dict(extras.get(prop) or {})
            source = more.pop("_source", None)
            if more.pop("_element", None) == "default":
                element = None  # the source named it once, in slaDefaultElement (kept with the document)
            if isinstance(source, dict) and source.get("as") == text:
                value, unit = source.get("value"), source.get("unit")
            entry: dict[str, Any] = {"property": prop}
            if "property" in more:
                entry["property"] = more.pop("property")
            entry["value"] = value
            if unit:
                entry["unit"] = unit
            if element:
                entry["element"] = element
            for key, item in more.items():
                entry.setdefault(key, item)
            out.append(entry)

        if level and level.freshness:
            fresh = level.freshness
            add("freshness", fresh.max_age, f"{self.obj_name}.{fresh.column}" if fresh.column else None)
            if fresh.time != "event":
                top_cps.append(_cp("freshnessTime", fresh.time))
        for name, made in self.sla_rules.items():
            if any(rule.name == name and self._is_sla_rule(rule) for rule in self.c.quality.rules):
                out.append(copy.deepcopy(made["entry"]))
        if level and level.latency is not None:
            add("latency", level.latency)
        if gov and gov.retention is not None:
            add("retention", gov.retention)
        out.extend(copy.deepcopy(self.ext.get("otherSla") or []))
        return out


def _severity_of(word: Any) -> str:
    """An ODCS severity word as the model's severity: info / warning / minor / ... warn, anything else errors."""
    return "warn" if str(word).lower() in _WARN_SEVERITIES else "error"


def _ordered(mapping: Mapping[str, Any], order: tuple[str, ...]) -> list[str]:
    known = [k for k in order if k in mapping]
    return known + [k for k in mapping if k not in order]


def _masking_value(spec: Any) -> Any:
    dumped = _dump(spec)
    if isinstance(dumped, dict) and set(dumped) == {"method"}:
        return dumped["method"]
    return dumped


def _party_cps(party: Any) -> list[dict[str, Any]]:
    cps = []
    if party.contact is not None:
        cps.append(_cp("contact", party.contact))
    if party.role is not None:
        cps.append(_cp("role", party.role))
    return cps


def _field_options(spec: FieldSpec, logical: str | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """logicalTypeOptions a field's constraints fit into, and customProperties for the rest."""
    options: dict[str, Any] = {}
    spill: list[dict[str, Any]] = []

    numeric = logical in ("integer", "number")
    temporal = logical in ("date", "timestamp")  # ODCS writes date bounds as ISO text
    for bound, flag, plain_key, excl_key in (
        (spec.minimum, spec.exclusive_minimum, "minimum", "exclusiveMinimum"),
        (spec.maximum, spec.exclusive_maximum, "maximum", "exclusiveMaximum"),
    ):
        if isinstance(bound, (_dt.date, _dt.datetime)):
            bound = bound.isoformat()
        if bound is not None and (numeric or temporal):
            options[excl_key if flag else plain_key] = bound
        else:
            if bound is not None:
                spill.append(_cp(plain_key, bound))
            if flag:
                spill.append(_cp(excl_key, True))
    if logical == "string":
        if spec.min_length is not None:
            options["minLength"] = spec.min_length
        if spec.max_length is not None:
            options["maxLength"] = spec.max_length
        if spec.pattern is not None:
            options["pattern"] = spec.pattern
        if spec.format is not None and spec.format not in ("date", "timestamp"):
            options["format"] = _FORMAT_TO_ODCS.get(spec.format, spec.format)
        elif spec.format is not None:
            spill.append(_cp("format", spec.format))
        if spec.date_format is not None:
            spill.append(_cp("dateFormat", spec.date_format))
    else:
        for value, key in ((spec.min_length, "minLength"), (spec.max_length, "maxLength"), (spec.pattern, "pattern"),
                           (spec.format, "format")):
            if value is not None:
                spill.append(_cp(key, value))
        if spec.date_format is not None:
            if logical in ("date", "timestamp"):
                options["format"] = spec.date_format
            else:
                spill.append(_cp("dateFormat", spec.date_format))
    return options, spill


def _threshold_fields(rule: Any, percent_type: bool) -> dict[str, Any] | None:
    """ODCS operator (+ unit, + customProperties for warn) for a metric rule, or None when not expressible."""
    primary = rule.must_be if rule.must_be is not None else rule.warn
    try:
        key, value, percent = _operator_of(primary)
    except (ValueError, ThresholdSyntaxError):
        return None
    if percent and not percent_type:
        return None
    out: dict[str, Any] = {}
    if percent_type:
        out["unit"] = "percent"
    out[key] = value
    cps: list[dict[str, Any]] = []
    if _threshold_text(key, value, percent_type) != primary:
        cps.append(_cp("thresholdText", primary))
    if rule.must_be is None:
        cps.append(_cp("warnOnly", True))
    elif rule.warn is not None:
        cps.append(_cp("warn", rule.warn))
    if cps:
        out["customProperties"] = cps
    return out


def _single_column(rule: Any) -> str | None:
    return rule.column if rule.column is not None and not rule.columns else None


def _export_missing(rule: Any) -> tuple[str | None, dict[str, Any]] | None:
    column = _single_column(rule)
    fields = _threshold_fields(rule, rule.type.endswith("_percent"))
    if column is None or fields is None:
        return None
    return column, {"metric": "nullValues", **fields}


def _export_invalid(rule: Any) -> tuple[str | None, dict[str, Any]] | None:
    column = _single_column(rule)
    fields = _threshold_fields(rule, rule.type.endswith("_percent"))
    if column is None or fields is None or rule.valid_format is not None or rule.date_format is not None:
        return None
    arguments = {"validValues": list(rule.valid_values)} if rule.valid_values is not None else {
        "pattern": rule.valid_regex}
    return column, {"metric": "invalidValues", "arguments": arguments, **fields}


def _export_duplicate(rule: Any) -> tuple[str | None, dict[str, Any]] | None:
    fields = _threshold_fields(rule, rule.type.endswith("_percent"))
    if fields is None:
        return None
    column = _single_column(rule)
    if column is not None:
        return column, {"metric": "duplicateValues", **fields}
    if rule.column is None and rule.columns:
        return None, {"metric": "duplicateValues", "arguments": {"properties": list(rule.columns)}, **fields}
    return None


def _export_row_count(rule: Any) -> tuple[str | None, dict[str, Any]] | None:
    if rule.min is not None or rule.max is not None or rule.filter is not None:
        return None
    fields = _threshold_fields(rule, False)
    return None if fields is None else (None, {"metric": "rowCount", **fields})


def _export_allowed_values(rule: Any) -> tuple[str | None, dict[str, Any]] | None:
    return rule.column, {"metric": "invalidValues", "arguments": {"validValues": list(rule.values)}, "mustBe": 0}


def _export_sql(rule: Any) -> tuple[str | None, dict[str, Any]] | None:
    # `{object}` is the ODCS placeholder for the checked dataset; import turns it back into the view name
    check: dict[str, Any] = {"type": "sql", "query": _VIEW_RE.sub("{object}", rule.query), "mustBe": True}
    if rule.error_message is not None:
        check["customProperties"] = [_cp("errorMessage", rule.error_message)]
    return None, check


_CANONICAL: dict[str, Callable[[Any], tuple[str | None, dict[str, Any]] | None]] = {
    "missing_count": _export_missing, "missing_percent": _export_missing,
    "invalid_count": _export_invalid, "invalid_percent": _export_invalid,
    "duplicate_count": _export_duplicate, "duplicate_percent": _export_duplicate,
    "row_count": _export_row_count, "sql": _export_sql, "allowed_values": _export_allowed_values,
}  # fmt: skip


def _custom_check(rule: Any) -> dict[str, Any]:
    implementation = _dump(rule)
    for key in ("name", "description", "dimension", "severity"):
        implementation.pop(key, None)
    implementation = {"type": implementation.pop("type"), **implementation}
    return {"type": "custom", "engine": ENGINE, "implementation": implementation}


# =========================================================================== ODCS -> native


def odcs_to_contract(doc: Any) -> Contract:
    """An ODCS v3.x document as the contract model; raise ContractError when invalid or not mappable."""
    issues = odcs_issues(doc)
    if issues:
        path, message = issues[0]
        raise ContractError(message, field=".".join(str(p) for p in path) or None)
    try:
        return Contract.model_validate(odcs_to_native(doc))
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise ContractError(f"{error['msg']} (in the contract converted from ODCS)", field=field) from None


def odcs_to_native(doc: Any) -> dict[str, Any]:
    """An ODCS v3.x document (already schema-valid) as a native contract document, not yet validated."""
    return _Importer(_plain(doc)).run()


class _Importer:
    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.ext: dict[str, Any] = {}
        self.rules: list[tuple[dict[str, Any], str]] = []  # (native rule, name used for extras)
        self.quality_extra: dict[str, Any] = {}
        self.raw_checks: list[dict[str, Any]] = []
        self.prop_extra: dict[str, Any] = {}
        self.volume: dict[str, Any] | None = None
        self.undeclared: Any = None  # the schema object's `undeclaredColumns`
        self.object_path = "schema.0"  # document path of the schema object read as the dataset
        self.check_path = ""  # document path of the quality check being mapped, for positioned errors
        # rules made from a property flag or an SLA entry (composite key, second freshness): after the checks' rules
        self.derived_rules: list[dict[str, Any]] = []
        self.sla_rules: dict[str, Any] = {}  # rule name -> the SLA entry it came from, written back on export

    def run(self) -> dict[str, Any]:
        doc = dict(self.doc)
        cps = _cp_list(doc.pop("customProperties", None))
        _, defaulted = _cp_get(cps, "dqgovDefaults")
        defaulted = set(defaulted or [])
        schema_objects = list(doc.pop("schema", None) or [])
        name = doc.pop("name", None)
        obj = self._pick_object(schema_objects, name)
        index = next((i for i, o in enumerate(schema_objects) if o is obj), 0)
        self.object_path = f"schema.{index}"
        info: dict[str, Any] = {"name": name or (obj or {}).get("name") or doc.get("id")}
        version = doc.pop("version")
        info["version"] = str(version)
        for key in ("id", "status"):
            value = doc.pop(key, None)
            if value is not None and key not in defaulted:
                info[key] = value
        if "domain" in doc:
            info["domain"] = doc.pop("domain")
        doc.pop("apiVersion", None)
        doc.pop("kind", None)
        governance: dict[str, Any] = {}
        description = dict(doc.pop("description", None) or {})
        if "purpose" in description:
            info["description"] = description.pop("purpose")
        if "usage" in description:
            governance["purpose"] = description.pop("usage")
        if description:
            self.ext["description"] = description

        native: dict[str, Any] = {"contract": info}
        found, steward = _cp_get(cps, "steward")
        if found:
            info["steward"] = steward
        native["dataset"], fields = self._dataset(obj)
        if fields:
            native["schema"] = {"fields": fields}
        if self.undeclared is not None:
            native.setdefault("schema", {})["undeclared_columns"] = self.undeclared
        others = [o for o in schema_objects if o is not obj]
        if others:
            self.ext["objects"] = others

        service_level = self._sla(list(doc.pop("slaProperties", None) or []), governance, cps, obj)
        if self.volume:
            service_level["volume"] = self.volume
        if service_level:
            native["service_level"] = service_level

        quality: dict[str, Any] = {}
        found, on_failure = _cp_get(cps, "onFailure")
        if found:
            quality["on_failure"] = on_failure
        found, ratio = _cp_get(cps, "minimumValidRatio")
        if found:
            quality["minimum_valid_ratio"] = ratio
        _, order = _cp_get(cps, "ruleOrder")
        rules = self._ordered_rules(order) + self.derived_rules
        if rules:
            quality["rules"] = rules
        if quality:
            native["quality"] = quality

        roles = self._roles(doc.pop("team", None), doc.pop("roles", None), info)
        if roles:
            native["roles"] = roles
        found, legal = _cp_get(cps, "legalBasis")
        if found:
            governance["legal_basis"] = legal
        if governance:
            native["governance"] = governance
        found, masking = _cp_get(cps, "maskingPolicy")
        if found:
            native["masking"] = masking
        _, extensions = _cp_get(cps, "dqgovExtensions")
        extensions = dict(extensions or {})
        if cps:
            self.ext["customProperties"] = cps
        if doc:
            self.ext["document"] = doc
        for key, value in (("properties", self.prop_extra), ("quality", self.quality_extra),
                           ("checks", self.raw_checks)):
            if value:
                self.ext[key] = value
        if self.ext:
            extensions["odcs"] = self.ext
        if extensions:
            native["extensions"] = extensions
        return native

    # -- dataset and fields ----------------------------------------------
    @staticmethod
    def _pick_object(objects: list[Any], name: Any) -> dict[str, Any] | None:
        for obj in objects:
            if isinstance(obj, dict) and name is not None and obj.get("name") == name:
                return obj
        return objects[0] if objects else None

    def _dataset(self, obj: dict[str, Any] | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        if obj is None:
            return {"name": self.doc.get("name") or self.doc.get("id")}, []
        obj = dict(obj)
        extra: dict[str, Any] = {}
        ds: dict[str, Any] = {"name": obj.pop("name")}
        self.obj_name = ds["name"]
        if "physicalName" in obj:
            ds["table"] = obj.pop("physicalName")
        physical = obj.pop("physicalType", "table")
        if physical != "table":
            extra["physicalType"] = physical
        if "description" in obj:
            ds["description"] = obj.pop("description")
        tags = obj.pop("tags", None)
        if tags:
            ds["tags"] = tags
        elif tags is not None:
            extra["tags"] = tags
        cps = _cp_list(obj.pop("customProperties", None))
        for key in ("classification", "namespace", "path", "format", "catalog"):
            found, value = _cp_get(cps, key)
            if found:
                ds[key] = value
        found, undeclared = _cp_get(cps, "undeclaredColumns")
        if found:
            self.undeclared = undeclared
        if cps:
            extra["customProperties"] = cps
        properties = obj.pop("properties", None) or []
        key_columns = _composite_key(properties)
        fields = [self._field(prop, prop.get("name"), f"{self.object_path}.properties.{index}",
                              prop.get("name") in key_columns)
                  for index, prop in enumerate(properties)]
        if key_columns:
            # one key over the column tuple: each column alone may repeat, (1, x) (1, y) is a valid key
            self.derived_rules.append({"type": "unique", "columns": key_columns, "name": _KEY_RULE,
                                       "dimension": "uniqueness"})
            self.ext["primaryKey"] = {"rule": _KEY_RULE, "columns": key_columns}
        for index, check in enumerate(obj.pop("quality", None) or []):
            self._check(check, "", f"{self.object_path}.quality.{index}")
        if "id" in obj:
            extra["id"] = obj.pop("id")
        extra.update(obj)  # businessName, relationships, authoritativeDefinitions, ...
        if extra:
            self.ext["schema"] = extra
        return ds, fields

    def _field(self, prop: dict[str, Any], path: str, where: str, in_key: bool = False) -> dict[str, Any]:
        prop = dict(prop)
        extra: dict[str, Any] = {}
        spec: dict[str, Any] = {"name": prop.pop("name")}
        cps = _cp_list(prop.pop("customProperties", None))
        if "id" in prop:
            spec["id"] = prop.pop("id")
        found, cp_id = _cp_get(cps, "id")
        if found:
            spec["id"] = cp_id
        logical = prop.pop("logicalType", None)
        physical = prop.pop("physicalType", None)
        # own checks before the children's: the exporter lists rules in that order too
        for index, check in enumerate(prop.pop("quality", None) or []):
            if _is_allowed_values_shorthand(check):
                if "allowed_values" not in spec and set(check) <= _SHORTHAND_KEYS:
                    spec["allowed_values"] = list(check["arguments"]["validValues"])
                else:  # named or described: the same row rule, carrying its name and description
                    leftover = {k: v for k, v in check.items() if k not in _SHORTHAND_KEYS}
                    self._add_rule({"type": "allowed_values", "column": path,
                                    "values": list(check["arguments"]["validValues"])}, leftover)
                continue
            self._check(check, path, f"{where}.quality.{index}")
        children = prop.pop("properties", None) or []
        child_specs = [self._field(child, f"{path}.{child.get('name')}", f"{where}.properties.{index}")
                       for index, child in enumerate(children)]
        spark_type = to_spark_type(physical)
        if spark_type is None and logical == "object" and child_specs:
            spark_type = "struct<" + ",".join(f"{c['name']}:{member_type(c.get('type', 'string'))}"
                                              for c in child_specs) + ">"
        elif spark_type is None and logical in ("object", "array"):
            spark_type = _nested_type({"logicalType": logical, "items": prop.get("items")}, where)
        spark_type = spark_type or spark_type_for(None, logical)
        spec["type"] = spark_type
        if physical is not None and physical != spark_type:
            extra["physicalType"] = physical
        if logical is not None and logical != logical_type(spark_type):
            extra["logicalType"] = logical
        for key, native_key in (("description", "description"), ("required", "required"), ("unique", "unique"),
                                ("primaryKey", "primary_key"), ("classification", "classification")):
            if key in prop:
                value = prop.pop(key)
                if value not in (None, False):
                    spec[native_key] = value
                elif value is False and key in ("required", "unique", "primaryKey"):
                    extra[key] = False  # written explicitly in the source; kept so export can repeat it
        if in_key and spec.pop("primary_key", False):
            # part of a composite key: not null here, unique only as the tuple (the key rule)
            extra["_compositeKey"] = {"addedRequired": not spec.get("required")}
            spec["required"] = True
        tags = prop.pop("tags", None)
        if tags:
            spec["tags"] = tags
        elif tags is not None:
            extra["tags"] = tags
        options = dict(prop.pop("logicalTypeOptions", None) or {})
        self._options(spec, options, logical, cps)
        if options:
            extra["logicalTypeOptions"] = options
        found, pii = _cp_get(cps, "pii")
        if found:
            spec["pii"] = pii  # the model reads it as a boolean (`"false"` is false) or refuses it
        found, masking = _cp_get(cps, "masking")
        if found:
            spec["masking"] = masking
        if child_specs:
            spec["fields"] = child_specs
        if cps:
            extra["customProperties"] = cps
        extra.update(prop)  # businessName, physicalName, partitioned, examples, relationships, ...
        if extra:
            self.prop_extra[path] = extra
        return spec

    @staticmethod
    def _options(spec: dict[str, Any], options: dict[str, Any], logical: Any, cps: list[dict[str, Any]]) -> None:
        """Move the logicalTypeOptions (and spilled customProperties) the model has fields for into `spec`."""
        bounded = logical in ("integer", "number", "date", "timestamp")  # dates: ISO text, parsed by the model
        for plain_key, excl_key, native, flag in (("minimum", "exclusiveMinimum", "minimum", "exclusive_minimum"),
                                                  ("maximum", "exclusiveMaximum", "maximum", "exclusive_maximum")):
            if not bounded:
                continue
            excl = options.get(excl_key)
            if isinstance(excl, bool):  # ODCS 3.0.x: a flag next to minimum / maximum
                options.pop(excl_key)
                if excl:
                    spec[flag] = True
                if plain_key in options:
                    spec[native] = options.pop(plain_key)
            elif excl is not None and plain_key not in options:
                spec[native] = options.pop(excl_key)
                spec[flag] = True
            elif plain_key in options:
                spec[native] = options.pop(plain_key)
        if logical == "string":
            for key, native in (("minLength", "min_length"), ("maxLength", "max_length"), ("pattern", "pattern")):
                if key in options:
                    spec[native] = options.pop(key)
            fmt = options.get("format")
            if isinstance(fmt, str) and fmt.lower() in _FORMAT_FROM_ODCS:
                options.pop("format")
                spec["format"] = _FORMAT_FROM_ODCS[fmt.lower()]
        if logical in ("date", "timestamp", "time") and isinstance(options.get("format"), str):
            spec["date_format"] = options.pop("format")
        for key, native in (("minimum", "minimum"), ("maximum", "maximum"), ("exclusiveMinimum", "exclusive_minimum"),
                            ("exclusiveMaximum", "exclusive_maximum"), ("minLength", "min_length"),
                            ("maxLength", "max_length"), ("pattern", "pattern"), ("format", "format"),
                            ("dateFormat", "date_format")):
            found, value = _cp_get(cps, key)
            if found:
                spec[native] = value

    # -- quality -----------------------------------------------------------
    def _check(self, check: Any, at: str, where: str) -> None:
        """Map one ODCS quality check found at a property path (or "" for the schema object); `where`: its node."""
        if not isinstance(check, dict):
            return
        self.check_path = where
        original = check
        check = dict(check)
        kind = check.get("type", "library")
        metric = check.get("metric")
        if metric is None and "rule" in check:  # ODCS 3.0.x: `rule` with its arguments beside it
            metric = _LEGACY_RULES.get(str(check["rule"]))
            if metric is not None:
                check.pop("rule")
                legacy = {k: check.pop(k) for k in ("validValues", "pattern", "missingValues", "properties")
                          if k in check}
                if legacy:
                    check["arguments"] = {**(check.get("arguments") or {}), **legacy}
        builder = None
        if kind == "library" and metric in _IMPORTERS:
            builder = _IMPORTERS[metric]
        elif kind == "sql":
            builder = _import_sql
        elif kind == "custom" and check.get("engine") in (ENGINE, "dqgov"):
            builder = _import_custom
        result = builder(self, check, at) if builder else None
        if result is None:  # text checks, other engines, shapes the model cannot express: kept verbatim
            self.raw_checks.append({"at": at, "check": original})
            return
        rule, leftover = result
        if rule is None:  # consumed by the service level (volume_sla)
            return
        self._add_rule(rule, leftover)

    def _add_rule(self, rule: dict[str, Any], leftover: dict[str, Any]) -> None:
        """Apply the common check fields (name, severity, dimension, ...) and record what is left over."""
        leftover = dict(leftover)
        cps = _cp_list(leftover.pop("customProperties", None))
        for key in ("name", "description"):
            if key in leftover:
                rule[key] = leftover.pop(key)
        severity = leftover.pop("severity", None)
        if severity is not None:
            rule["severity"] = _severity_of(severity)
            if severity != "warning":
                leftover["severity"] = severity  # the exporter writes only `warning`; keep e.g. `info`, `error`
        dimension = leftover.pop("dimension", None)
        if dimension in _DIM_FROM_ODCS:
            rule["dimension"] = _DIM_FROM_ODCS[dimension]
        elif dimension is not None:
            leftover["dimension"] = dimension
        for key in ("dimension", "action", "filter"):
            found, value = _cp_get(cps, key)
            if found:
                rule[key] = value
        if leftover.get("type") in ("sql", "custom"):
            leftover.pop("type")  # written by the exporter anyway; `type: library` is kept as written
        if cps:
            leftover["customProperties"] = cps
        parsed = _RULE_ADAPTER.validate_python(rule)
        default = parsed.default_name()
        name = rule.get("name")
        if leftover:
            name = name or default
            taken = {n for _, n in self.rules}
            base, count = name, 1
            while name in taken:
                count += 1
                name = f"{base}_{count}"
            rule["name"] = name
            self.quality_extra[name] = leftover
        elif name == default:
            rule.pop("name")  # the exporter writes the default name; the model leaves it implicit
        self.rules.append((rule, rule.get("name") or default))

    def _ordered_rules(self, order: Any) -> list[dict[str, Any]]:
        rules = [rule for rule, _ in self.rules]
        if isinstance(order, list) and sorted(order) == list(range(len(rules))):
            placed: list[Any] = [None] * len(rules)
            for rule, position in zip(rules, order):
                placed[position] = rule
            return placed
        return rules

    # -- SLA, team, roles -----------------------------------------------------
    def _sla(self, entries: list[Any], governance: dict[str, Any], cps: list[dict[str, Any]],
             obj: dict[str, Any] | None) -> dict[str, Any]:
        level: dict[str, Any] = {}
        extras: dict[str, Any] = {}
        others: list[Any] = []
        prefix = f"{obj.get('name')}." if obj else None
        default_element = self.doc.get("slaDefaultElement")
        for index, entry in enumerate(entries):
            entry = dict(entry)
            prop = str(entry.get("property", "")).lower()
            field = f"slaProperties.{index}"
            key = {"freshness": "freshness", "latency": "latency", "ly": "latency", "retention": "retention",
                   "re": "retention"}.get(prop)
            if key == "freshness" and key in extras:
                self._extra_freshness(entry, field, prefix, default_element)
                continue
            if key is None or key in extras:
                others.append(entry)
                continue
            default_unit = "m" if key == "freshness" else "d"
            unit = entry.get("unit")
            if key == "retention" and str(unit).lower() == "m":
                raise ContractError("unit 'm' is ambiguous for retention; use 'min' or 'mo'", field=f"{field}.unit")
            value = entry.get("value")
            try:
                text = _duration_text(value, unit, field, default_unit)
            except ContractError:
                if key == "freshness":
                    raise
                text = str(value)
                if unit is not None:
                    text = f"{value} {unit}"
            extra = {k: v for k, v in entry.items() if k not in ("property", "value", "unit")}
            if entry.get("property") != key:
                extra["property"] = entry["property"]
            if _duration_parts(text) != (value, unit):  # e.g. 3 y read as 1095d: export writes 3 y back
                extra["_source"] = {"value": value, "unit": unit, "as": text}
            if key == "freshness":
                fresh: dict[str, Any] = {"max_age": text}
                element = extra.pop("element", None)
                if not element and isinstance(default_element, str) and default_element:
                    element = default_element
                    extra["_element"] = "default"
                if not element:
                    # the age of the newest value of which column? Without one the SLA cannot be evaluated.
                    raise ContractError("freshness needs `element` (table.column), or a `slaDefaultElement`, to be "
                                        "evaluated", field=field)
                if element:
                    # `table.column`: the schema object's name, or any first segment, is the table
                    fresh["column"] = (element[len(prefix):] if prefix and element.startswith(prefix)
                                       else element.split(".", 1)[-1])
                found, when = _cp_get(cps, "freshnessTime")
                if found:
                    fresh["time"] = when
                level["freshness"] = fresh
            elif key == "latency":
                level["latency"] = text
            else:
                governance["retention"] = text
            extras[key] = extra
        kept = {k: v for k, v in extras.items() if v}
        if kept:
            self.ext["sla"] = kept
        if self.sla_rules:
            self.ext["slaRules"] = self.sla_rules
        if others:
            self.ext["otherSla"] = others
        return level

    def _extra_freshness(self, entry: dict[str, Any], field: str, prefix: str | None, default_element: Any) -> None:
        """A freshness SLA after the first: a freshness rule of its own (the service level holds one)."""
        text = _duration_text(entry.get("value"), entry.get("unit"), field, "m")
        element = entry.get("element") or (default_element if isinstance(default_element, str) else None)
        if not element:
            raise ContractError("freshness needs `element` (table.column), or a `slaDefaultElement`, to be "
                                "evaluated", field=field)
        column = element[len(prefix):] if prefix and element.startswith(prefix) else element.split(".", 1)[-1]
        name = f"freshness_sla_{len(self.sla_rules) + 2}"
        self.derived_rules.append({"type": "freshness", "column": column, "must_be": f"< {text}",
                                   "dimension": "timeliness", "name": name})
        self.sla_rules[name] = {"entry": entry, "column": column, "must_be": f"< {text}"}

    def _roles(self, team: Any, roles: Any, info: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        team_extra: dict[str, Any] = {}
        members: list[Any] = []
        if isinstance(team, list):  # ODCS 3.0.x: a bare list of members
            members = team
        elif isinstance(team, dict):
            team = dict(team)
            members = team.pop("members", None) or []
            if "name" in team:
                info["owner"] = team.pop("name")
            team_extra.update(team)
        member_extras: dict[str, Any] = {}
        other_members: list[Any] = []
        for member in members:
            member = dict(member)
            written = member.get("role")
            slot = role_slot(str(written or ""))
            if slot is None and isinstance(written, str) and written.strip():
                slot = written  # a role of its own, by its name as written: `Data Engineering`
            elif slot not in ("owner", "steward") or slot in out:
                slot = None  # a second owner, a consumer among the members: kept as written
            if slot is None or not member.get("username") or f"{slot}/{member['username']}" in member_extras:
                other_members.append(member)
                continue
            username = member.pop("username")
            party, cps = _party(username, _cp_list(member.pop("customProperties", None)))
            if slot in ("owner", "steward"):
                out[slot] = party
            else:
                out.setdefault(slot, []).append(party)
            original_role = member.pop("role")
            if original_role != slot:
                member["role"] = original_role  # e.g. "Owner": written back as it was
            if cps:
                member["customProperties"] = cps
            if member:
                member_extras[f"{slot}/{username}"] = member  # role/username: one person may hold two roles
        if member_extras:
            team_extra["memberExtras"] = member_extras
        if other_members:
            team_extra["otherMembers"] = other_members
        if team_extra:
            self.ext["team"] = team_extra
        consumers = []
        role_extras: dict[str, Any] = {}
        for entry in roles or []:
            entry = dict(entry)
            name = entry.pop("role")
            party, cps = _party(name, _cp_list(entry.pop("customProperties", None)))
            consumers.append(party)
            if entry.get("access") == "read":
                entry.pop("access")
            if cps:
                entry["customProperties"] = cps
            if entry:
                role_extras[name] = entry
        if consumers:
            out["consumers"] = consumers
        if role_extras:
            self.ext["roles"] = role_extras
        return out


def _nested_type(node: Mapping[str, Any], where: str) -> str:
    """The Spark type of an ODCS object or array node without a Spark physicalType, from its `properties` or
    `items`; ContractError (at `where`) when it names none, since a guessed type would convert the column."""
    spark_type = to_spark_type(node.get("physicalType"))
    if spark_type:
        return member_type(spark_type)  # inside its parent's type string
    logical = node.get("logicalType")
    if logical == "object":
        children = node.get("properties") or []
        if not children:
            raise ContractError("object with no `properties` and no Spark physicalType "
                                "(struct<...> or map<...>): the column's type is unknown", field=f"{where}.logicalType")
        members = [f"{child.get('name')}:{_nested_type(child, f'{where}.properties.{i}')}"
                   for i, child in enumerate(children)]
        return "struct<" + ",".join(members) + ">"
    if logical == "array":
        item = node.get("items")
        if not isinstance(item, Mapping):
            raise ContractError("array with no `items` and no Spark physicalType (array<...>): "
                                "the element type is unknown", field=f"{where}.logicalType")
        return f"array<{_nested_type(item, f'{where}.items')}>"
    return spark_type_for(None, logical)


def _party(name: str, cps: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    party: dict[str, Any] = {"name": name}
    for key in ("contact", "role"):
        found, value = _cp_get(cps, key)
        if found:
            party[key] = value
    return party, cps


_KEY_RULE = "primary_key"
_SHORTHAND_KEYS = frozenset({"metric", "type", "arguments", "mustBe"})
# what a check may carry besides its measure without changing what it measures
_DESCRIPTIVE_KEYS = frozenset({"name", "description", "dimension", "severity", "id", "tags", "businessImpact",
                               "authoritativeDefinitions", "customProperties"})
_THRESHOLD_PROPERTIES = frozenset({"thresholdText", "warnOnly", "warn"})


def _composite_key(properties: list[Any]) -> list[str]:
    """The columns of a primary key over 2+ properties, by primaryKeyPosition (then as listed); [] otherwise."""
    keyed = [(prop.get("primaryKeyPosition"), index, prop.get("name")) for index, prop in enumerate(properties)
             if isinstance(prop, Mapping) and prop.get("primaryKey") is True]
    if len(keyed) < 2:
        return []
    keyed.sort(key=lambda item: (item[0] if isinstance(item[0], int) else float("inf"), item[1]))
    return [str(name) for _, _, name in keyed]


def _is_allowed_values_shorthand(check: Any) -> bool:
    """The shape the exporter writes for `allowed_values` (mustBe 0 on validValues), descriptive keys allowed."""
    if not isinstance(check, Mapping) or set(check) - _SHORTHAND_KEYS - _DESCRIPTIVE_KEYS:
        return False
    if any(isinstance(cp, Mapping) and cp_key(cp.get("property")) in {cp_key(n) for n in _THRESHOLD_PROPERTIES}
           for cp in check.get("customProperties") or []):
        return False  # a threshold of its own: an invalid_count rule
    arguments = check.get("arguments")
    must_be = check.get("mustBe")
    return (check.get("metric") == "invalidValues" and check.get("type", "library") == "library"
            and isinstance(arguments, Mapping) and set(arguments) == {"validValues"}
            and isinstance(arguments["validValues"], list) and bool(arguments["validValues"])
            and not isinstance(must_be, bool) and must_be == 0)


_COMMON_KEYS = ("metric", "arguments", "unit", "query", "engine", "implementation")


def _metric_threshold(check: dict[str, Any], percent: bool,
                      where: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """warn / must_be from the check's operator and our customProperties; None when it has no operator."""
    found = _find_operator(check)
    if found is None:
        return None
    key, value = found
    cps = _cp_list(check.get("customProperties"))
    text = _threshold_text(key, value, percent, f"{where}.{key}")
    shown = _parsed_threshold(text, f"{where}.{key}")
    exact, original = _cp_get(cps, "thresholdText")
    if exact:
        # the exporter's own spelling (`<5`) of the operator's threshold; never a different threshold
        at = _cp_field(check, "thresholdText", where)
        written = _parsed_threshold(original, at)
        if _threshold_identity(written, percent) != _threshold_identity(shown, percent):
            raise ContractError(f"thresholdText {str(original)!r} is not the threshold `{key}` shows ({text}); "
                                "remove it or make the two agree", field=at)
        text = str(original)
    found_only, warn_only = _cp_get(cps, "warnOnly")
    if found_only and not isinstance(warn_only, bool):
        raise ContractError(f"warnOnly must be true or false, got {warn_only!r}",
                            field=_cp_field(check, "warnOnly", where))
    out: dict[str, Any] = {"warn": text} if warn_only else {"must_be": text}
    has_warn, warn = _cp_get(cps, "warn")
    if has_warn:
        at = _cp_field(check, "warn", where)
        if warn_only:  # the warn-only check's threshold is its operator's
            raise ContractError(f"`warn` replaces the threshold `{key}` shows ({text}) on a warnOnly check; "
                                "remove one of them", field=at)
        _parsed_threshold(warn, at)
        out["warn"] = warn
    return out, cps


def _parsed_threshold(text: Any, field: str) -> Any:
    """The threshold `text` means; ContractError on the document node it came from when it means none."""
    try:
        return parse_threshold(text)
    except ThresholdSyntaxError as exc:
        raise ContractError(exc.message, field=field) from None


def _threshold_identity(threshold: Any, percent: bool) -> tuple[Any, ...]:
    """What a threshold enforces: on a percent check a bare number is a percent."""
    unit = threshold.unit or ("percent" if percent else None)
    return threshold.operator, threshold.value, threshold.upper, unit


def _cp_field(check: Mapping[str, Any], name: str, where: str) -> str:
    """The document path of the value of the check's custom property `name`."""
    for index, cp in enumerate(check.get("customProperties") or []):
        if isinstance(cp, Mapping) and cp_key(cp.get("property")) == cp_key(name):
            return f"{where}.customProperties.{index}.value"
    return where


def _metric_unit_is_percent(check: Mapping[str, Any], where: str) -> bool:
    """Whether a library metric counts in percent (`percent`, `%`) or rows; ContractError for any other unit."""
    unit = check.get("unit", "rows")
    word = unit.strip().lower() if isinstance(unit, str) else None
    if word not in ("rows", "percent", "%"):
        raise ContractError(f"unknown unit {unit!r}; a library metric counts `rows` or `percent` (`%`)",
                            field=f"{where}.unit")
    return word in ("percent", "%")


def _leftover(check: dict[str, Any], cps: list[dict[str, Any]], used: tuple[str, ...]) -> dict[str, Any]:
    out = {k: v for k, v in check.items() if k not in used and k not in _OPERATOR_TEXT and k != "customProperties"}
    if cps:
        out["customProperties"] = cps
    return out


def _metric_rule(imp: _Importer, check: dict[str, Any], at: str, base: str,
                 extra_fields: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None,
                 multi: bool = False) -> tuple[dict[str, Any] | None, dict[str, Any]] | None:
    percent = _metric_unit_is_percent(check, imp.check_path)
    threshold = _metric_threshold(check, percent, imp.check_path)
    if threshold is None:
        return None
    values, cps = threshold
    rule: dict[str, Any] = {"type": f"{base}_{'percent' if percent else 'count'}", **values}
    arguments = dict(check.get("arguments") or {})
    if at:
        rule["column"] = at
    elif multi and isinstance(arguments.get("properties"), list) and arguments["properties"]:
        rule["columns"] = list(arguments.pop("properties"))
    else:
        return None
    if extra_fields is not None:
        more = extra_fields(arguments)
        if more is None:
            return None
        rule.update(more)
    elif arguments:
        return None
    return rule, _leftover(check, cps, _COMMON_KEYS)


def _import_null(imp: _Importer, check: dict[str, Any], at: str) -> Any:
    return _metric_rule(imp, check, at, "missing")


def _import_missing(imp: _Importer, check: dict[str, Any], at: str) -> Any:
    values = (check.get("arguments") or {}).get("missingValues")
    if values not in (None, [], [None]):
        return None  # the model counts nulls only; other missing markers stay as an ODCS check
    trimmed = {k: v for k, v in check.items() if k != "arguments"}
    return _metric_rule(imp, trimmed, at, "missing")


def _invalid_arguments(arguments: dict[str, Any]) -> dict[str, Any] | None:
    if set(arguments) == {"validValues"} and isinstance(arguments["validValues"], list):
        return {"valid_values": arguments.pop("validValues")}
    if set(arguments) == {"pattern"} and isinstance(arguments["pattern"], str):
        return {"valid_regex": arguments.pop("pattern")}
    return None


def _import_invalid(imp: _Importer, check: dict[str, Any], at: str) -> Any:
    return _metric_rule(imp, check, at, "invalid", _invalid_arguments)


def _import_duplicate(imp: _Importer, check: dict[str, Any], at: str) -> Any:
    return _metric_rule(imp, check, at, "duplicate", multi=True)


def _import_row_count(imp: _Importer, check: dict[str, Any], at: str) -> Any:
    if _metric_unit_is_percent(check, imp.check_path):
        return None  # rows as a percent of what: kept as an ODCS check
    threshold = _metric_threshold(check, False, imp.check_path)
    if threshold is None or check.get("arguments"):
        return None
    values, cps = threshold
    if check.get("name") == "volume_sla" and imp.volume is None and not cps:
        volume = _volume_of(check)
        if volume is not None and set(check) <= {"name", "dimension", "metric", "type", *_OPERATOR_TEXT}:
            imp.volume = volume
            return None, {}
    return {"type": "row_count", **values}, _leftover(check, cps, _COMMON_KEYS)


def _volume_of(check: dict[str, Any]) -> dict[str, Any] | None:
    if isinstance(check.get("mustBeBetween"), list):
        low, high = check["mustBeBetween"]
        return {"min_rows": low, "max_rows": high}
    if "mustBeGreaterOrEqualTo" in check:
        return {"min_rows": check["mustBeGreaterOrEqualTo"]}
    if "mustBeLessOrEqualTo" in check:
        return {"max_rows": check["mustBeLessOrEqualTo"]}
    return None


def _import_sql(imp: _Importer, check: dict[str, Any], at: str) -> Any:
    query = _PLACEHOLDER_OBJECT.sub("_validation_df", str(check.get("query", "")))
    if at:
        query = _PLACEHOLDER_COLUMN.sub(at, query)
    else:
        placeholder = _PLACEHOLDER_COLUMN.search(query)
        if placeholder:  # left as written it reaches Spark as a syntax error at run time
            raise ContractError(f"`{placeholder.group(0)}` names no column in a check on the schema object; move "
                                "the check to its property or write the column name", field=f"{imp.check_path}.query")
    found = _find_operator(check)
    if found is None:
        return None
    key, value = found
    if not (key == "mustBe" and value is True):
        # the model's sql rule returns one boolean: compare the ODCS query's value inside the query
        query = f"SELECT ({query.strip().rstrip(';')}) {_sql_condition(key, value)}"
    cps = _cp_list(check.get("customProperties"))
    rule: dict[str, Any] = {"type": "sql", "query": query}
    found_msg, message = _cp_get(cps, "errorMessage")
    if found_msg:
        rule["error_message"] = message
    return rule, _leftover(check, cps, _COMMON_KEYS)


def _sql_condition(key: str, value: Any) -> str:
    if key in ("mustBeBetween", "mustNotBeBetween"):
        word = "BETWEEN" if key == "mustBeBetween" else "NOT BETWEEN"
        return f"{word} {_sql_literal(value[0])} AND {_sql_literal(value[1])}"
    return f"{_OPERATOR_TEXT[key]} {_sql_literal(value)}"


def _sql_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return str(value)
    if value is None:
        return "NULL"
    return "'" + str(value).replace("'", "''") + "'"


def _import_custom(imp: _Importer, check: dict[str, Any], at: str) -> Any:
    implementation = check.get("implementation")
    if not isinstance(implementation, Mapping):
        return None
    return dict(implementation), _leftover(check, _cp_list(check.get("customProperties")), _COMMON_KEYS)


_IMPORTERS: dict[str, Callable[[_Importer, dict[str, Any], str], Any]] = {
    "nullValues": _import_null,
    "missingValues": _import_missing,
    "invalidValues": _import_invalid,
    "duplicateValues": _import_duplicate,
    "rowCount": _import_row_count,
}

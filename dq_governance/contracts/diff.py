"""Contract diff: classify every change between two contract versions with the directional rule table.

Each detector compares one aspect of two contracts and yields changes tagged with a rule id; the
class of each rule comes from `change_rules.yaml` (section 3.6 of the contracts notes), which a
project can override. Fields and other items are matched by `id` where both versions have one,
else by name. The overall class is the maximum; the version bump is checked as its own finding.
With a lineage store, every (potentially) incompatible change lists its downstream consumers.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterator

from dq_governance.contracts.model import Contract, FieldSpec, MaskingPolicy
from dq_governance.contracts.source import parse_text
from dq_governance.contracts.spark_types import _parse as _consume_type
from dq_governance.contracts.spark_types import StructMember, is_spark_type, struct_members
from dq_governance.contracts.thresholds import parse_duration, parse_threshold
from dq_governance.errors import ConfigError, DqGovernanceError
from dq_governance.masking.policies import KEYED_METHODS, field_spec, undeclared_spec

CLASSES = ("compatible", "potentially", "incompatible")
RANK = {name: index for index, name in enumerate(CLASSES)}
PROJECT_RULES = Path(".dqgov") / "change_rules.yaml"
CLASSIFICATION_RANK = {"public": 0, "internal": 1, "confidential": 2, "sensitive": 2, "restricted": 3, "secret": 4}
ON_FAILURE_RANK = {"skip": 0, "warn": 1, "quarantine": 2, "block_publication": 3, "fail": 3}


@dataclass
class Change:
    """A detected change before classification: rule id, what changed and (for fields) the old field path."""

    rule: str
    subject: str
    detail: str
    field: str | None = None


@dataclass
class Finding:
    """A classified change."""

    rule: str
    change_class: str
    subject: str
    detail: str
    field: str | None = None
    requires_approval: bool = False
    consumers: list[dict[str, Any]] | None = None
    #: why `consumers` is None although a lineage store was given (its dataset is not in the store)
    consumers_unknown: str | None = None


@dataclass
class VersionCheck:
    """Whether the version bump matches the overall class (MAJOR for incompatible, >= MINOR for potentially)."""

    old: str
    new: str
    bump: str
    required: str
    ok: bool
    change_class: str
    detail: str


@dataclass
class DiffReport:
    """All findings of one diff, the overall class and the version check."""

    old_name: str
    new_name: str
    findings: list[Finding] = field(default_factory=list)
    version: VersionCheck | None = None

    @property
    def overall(self) -> str:
        """The maximum class over all changes (compatible when nothing changed)."""
        return max((f.change_class for f in self.findings), key=RANK.__getitem__, default="compatible")

    def exit_code(self, fail_on: str | None) -> int:
        """1 when the overall class, or a failed version check's class, is at or above `fail_on`."""
        if fail_on is None:
            return 0
        worst = [self.overall] + ([self.version.change_class] if self.version and not self.version.ok else [])
        return 1 if any(RANK[c] >= RANK[fail_on] for c in worst) else 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"old": self.old_name, "new": self.new_name, "overall": self.overall,
                "findings": [_finding_dict(f) for f in self.findings],
                "version_check": asdict(self.version) if self.version else None}


def _finding_dict(finding: Finding) -> dict[str, Any]:
    """A finding as JSON; `consumers_unknown` only where it says why consumers are unknown (null)."""
    out = asdict(finding)
    if out["consumers_unknown"] is None:
        del out["consumers_unknown"]
    return out


# --------------------------------------------------------------------------- the rule table


def load_rules(path: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """The packaged table, overridden per rule id by `path` or, if present, `.dqgov/change_rules.yaml`."""
    text = resources.files("dq_governance.contracts").joinpath("change_rules.yaml").read_text(encoding="utf-8")
    table = _parse_rules(text, "change_rules.yaml (packaged)")
    override = Path(path) if path is not None else (PROJECT_RULES if PROJECT_RULES.is_file() else None)
    if override is not None:
        try:
            text = override.read_bytes().decode("utf-8-sig")
        except OSError as exc:
            raise ConfigError(f"{override}: cannot read change rules: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{override}: change rules are not UTF-8 text") from None
        for rule_id, spec in _parse_rules(text, str(override), known=table).items():
            table[rule_id] = {**table.get(rule_id, {}), **spec}
    return table


_RULES_FILE_KEYS = ("version", "rules")
_RULE_KEYS = ("class", "change", "requires_approval")


def _parse_rules(text: str, where: str, known: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """A rule table; an override (`known`: the packaged table) may only restate its ids and keys."""
    try:
        source = parse_text(text, where)
    except DqGovernanceError as exc:
        raise ConfigError(f"{exc} (change rules)") from None

    def refuse(path: tuple[Any, ...], message: str) -> ConfigError:
        return ConfigError(str(source.issue(path, message, at_key=True)))

    doc = source.data
    rules = doc.get("rules") if isinstance(doc, dict) else None
    if not isinstance(rules, dict):
        raise refuse(("rules",), "expected a mapping of rule id -> {class: ...}")
    for key in doc:
        if key not in _RULES_FILE_KEYS:
            raise refuse((key,), f"unknown key (expected {', '.join(_RULES_FILE_KEYS)})")
    for rule_id, spec in rules.items():
        if known is not None and str(rule_id) not in known:
            raise refuse(("rules", rule_id), "no such change rule (`dqgov diff` names each rule it applies)")
        if not isinstance(spec, dict):
            raise refuse(("rules", rule_id), f"expected a mapping such as {{class: {CLASSES[-1]}}}, got {spec!r}")
        for key in spec:
            if key not in _RULE_KEYS:
                raise refuse(("rules", rule_id, key), f"unknown key (expected {', '.join(_RULE_KEYS)})")
        if "class" in spec and spec["class"] not in CLASSES:
            raise refuse(("rules", rule_id, "class"), f"{spec['class']!r} is not one of {', '.join(CLASSES)}")
    return {str(k): dict(v) for k, v in rules.items()}


# --------------------------------------------------------------------------- types

_INTEGRAL = {"byte": 1, "tinyint": 1, "short": 2, "smallint": 2, "int": 3, "integer": 3, "long": 4, "bigint": 4}
_INTEGRAL_DIGITS = {1: 3, 2: 5, 3: 10, 4: 20}
_FRACTIONAL = {"float": 1, "real": 1, "double": 2}
_DECIMAL_RE = re.compile(r"^(?:decimal|numeric|dec)(?:\((\d+)(?:,(\d+))?\))?$")
_CHAR_RE = re.compile(r"^(varchar|char)\((\d+)\)$")


def _norm_type(text: str) -> str:
    return re.sub(r"\s+", "", text.strip().lower())


def _type_family(t: str) -> tuple[str, Any]:
    if t in _INTEGRAL:
        return "integral", _INTEGRAL[t]
    if t in _FRACTIONAL:
        return "fractional", _FRACTIONAL[t]
    match = _DECIMAL_RE.match(t)
    if match:
        return "decimal", (int(match.group(1) or 10), int(match.group(2) or 0))
    match = _CHAR_RE.match(t)
    if match:
        return "string", int(match.group(2))
    if t == "string":
        return "string", None
    if t in ("binary", "bytes"):
        return "binary", None
    if t in ("date", "timestamp", "timestamp_ntz", "timestamp_ltz"):
        return "temporal", "timestamp" if t == "timestamp_ltz" else t
    if t in ("boolean", "bool"):
        return "boolean", None
    for complex_type in ("array", "map", "struct"):
        if t.startswith(complex_type + "<"):
            return complex_type, t[len(complex_type) + 1:-1]
    return "other", t


def type_change(old: str, new: str) -> str | None:
    """The rule id of a change of one type old -> new (None when equal); `type_changes` compares struct members."""
    o, n = _norm_type(old), _norm_type(new)
    if o == n:
        return None
    (fo, po), (fn, pn) = _type_family(o), _type_family(n)
    if (fo == "array") != (fn == "array"):
        return "S8"
    if fo == fn == "array":
        return type_change(po, pn)
    if fo == fn and po == pn:  # aliases: int / integer, long / bigint, decimal / decimal(10,0)
        return None
    handler = _TYPE_RULES.get((fo, fn))
    if handler is not None:
        return handler(po, pn)
    if fo == fn:
        return "T6_unknown"
    if {fo, fn} == {"string", "binary"}:
        return "T4"
    return "T3"


def _take_type(text: str) -> tuple[str, str]:
    """(the type at the front of `text`, the rest); `text` is known to parse."""
    text = text.lstrip()
    rest = _consume_type(text)  # always a suffix of `text`
    return text[:len(text) - len(rest)].strip(), rest


def _split_type(text: str) -> tuple[str, list[Any]] | None:
    """One level of a complex type string: ("array", [element]), ("map", [key, value]) or ("struct", [StructMember]).

    None for a primitive type, or for text Spark's type grammar (as spark_types reads it) does not accept.
    """
    text = text.strip()
    if not is_spark_type(text):
        return None
    low = text.lower()
    if low.startswith("array<"):
        return "array", [_take_type(text[len("array<"):])[0]]
    if low.startswith("map<"):
        key, rest = _take_type(text[len("map<"):])
        return "map", [key, _take_type(rest[1:])[0]]  # rest starts with the comma
    members = struct_members(text)
    return None if members is None else ("struct", members)


def type_changes(path: str, old: str, new: str) -> Iterator[Change]:
    """The changes of field `path`'s type old -> new; inside a struct, map or array each member is compared.

    A struct member removed is S6, added S4 / S5 (NOT NULL), its nullability N1 / N2, its type as a field's
    type; findings name the member's path: `payload.b`, a map's `tags.key` / `tags.value`; an array's
    elements keep the array's path (as Spark addresses `items.b` in an array of structs).
    """
    if _norm_type(old) == _norm_type(new):
        return
    shape_old, shape_new = _split_type(old), _split_type(new)
    kind = shape_old[0] if shape_old and shape_new and shape_old[0] == shape_new[0] else None
    if kind == "array":
        element_old, element_new = shape_old[1][0], shape_new[1][0]  # type: ignore[index]
        inner_old, inner_new = _split_type(element_old), _split_type(element_new)
        if inner_old and inner_new and inner_old[0] == inner_new[0]:
            yield from type_changes(path, element_old, element_new)
            return
        kind = None  # an array of primitives: one finding on the array, as type_change classifies it
    if kind is None:
        rule = type_change(old, new)
        if rule:
            yield Change(rule, f"field {path}", _describe("type", old, new), path)
        return
    if kind == "map":
        for part, part_old, part_new in zip(("key", "value"), shape_old[1], shape_new[1]):  # type: ignore[index]
            yield from type_changes(f"{path}.{part}", part_old, part_new)
        return
    yield from _member_changes(path, shape_old[1], shape_new[1])  # type: ignore[index]


def _member_changes(path: str, old: list[StructMember], new: list[StructMember]) -> Iterator[Change]:
    """Struct members matched by name (case-insensitive, as Spark resolves them): removed, added, changed."""
    new_by_name = {m.name.lower(): m for m in new}
    old_names = {m.name.lower() for m in old}
    for member in old:
        if member.name.lower() not in new_by_name:
            yield Change("S6", f"field {path}.{member.name}", "field removed", f"{path}.{member.name}")
    for member in new:
        if member.name.lower() not in old_names:
            rule = "S5" if member.not_null else "S4"
            yield Change(rule, f"field {path}.{member.name}",
                         f"{'required' if rule == 'S5' else 'optional'} field added")
    for member in old:
        counterpart = new_by_name.get(member.name.lower())
        if counterpart is None:
            continue
        member_path = f"{path}.{member.name}"
        yield from type_changes(member_path, member.type, counterpart.type)
        if member.not_null != counterpart.not_null:
            yield Change("N1" if counterpart.not_null else "N2", f"field {member_path}",
                         _describe("required", member.not_null, counterpart.not_null), member_path)
    kept_old = [m.name.lower() for m in old if m.name.lower() in new_by_name]
    if kept_old != [m.name.lower() for m in new if m.name.lower() in old_names]:
        yield Change("S9", f"field {path}", "member order changed", path)


def _integral_to_fractional(po: int, pn: int) -> str:
    return "T1" if pn == 2 and po <= 3 else "T2"  # byte/short/int -> double is exact; long -> double is not


def _decimal_change(po: tuple[int, int], pn: tuple[int, int]) -> str:
    k1, k2 = pn[0] - po[0], pn[1] - po[1]
    return "T1" if k1 >= k2 >= 0 else "T2"


def _string_change(po: int | None, pn: int | None) -> str:
    if po is None:  # string -> varchar(n): a bound appears
        return "T6_narrowed"
    return "T5" if pn is None or pn > po else "T6_narrowed"


def _temporal_change(po: str, pn: str) -> str:
    if po == "date":
        return "T1" if pn == "timestamp_ntz" else "T8"
    if pn == "date":
        return "T2"
    return "T8"  # timestamp <-> timestamp_ntz: the same digits mean another instant


_TYPE_RULES: dict[tuple[str, str], Callable[[Any, Any], str]] = {
    ("integral", "integral"): lambda po, pn: "T1" if pn > po else "T2",
    ("fractional", "fractional"): lambda po, pn: "T1" if pn > po else "T2",
    ("integral", "fractional"): _integral_to_fractional,
    ("integral", "decimal"): lambda po, pn: "T1" if pn[0] - pn[1] >= _INTEGRAL_DIGITS[po] else "T2",
    ("decimal", "decimal"): _decimal_change,
    ("decimal", "integral"): lambda po, pn: "T2",
    ("decimal", "fractional"): lambda po, pn: "T2",
    ("fractional", "integral"): lambda po, pn: "T2",
    ("fractional", "decimal"): lambda po, pn: "T2",
    ("string", "string"): _string_change,
    ("temporal", "temporal"): _temporal_change,
}


# --------------------------------------------------------------------------- field comparators


def _bound(low_is_tight: bool) -> Callable[[Any, Any], str | None]:
    """A comparator for a lower (`low_is_tight=False`: min up tightens) or upper bound."""

    def compare(old: Any, new: Any) -> str | None:
        if old == new:
            return None
        if old is None:
            return "V1"
        if new is None:
            return "V3_bounds"
        tighter = new < old if low_is_tight else new > old
        return "V1" if tighter else "V2"

    return compare


def _flag(on: str, off: str) -> Callable[[Any, Any], str | None]:
    return lambda old, new: None if bool(old) == bool(new) else (on if new else off)


def _allowed_values(old: Any, new: Any) -> str | None:
    if old == new:
        return None
    if old is None:
        return "V1"
    if new is None:
        return "V3_enum"
    added = [v for v in new if v not in old]
    removed = [v for v in old if v not in new]
    if added and removed:
        return "V5"
    return "V2" if added else "V1" if removed else None


def _pattern(old: Any, new: Any) -> str | None:
    if old == new:
        return None
    return "V1" if old is None else "V3_pattern" if new is None else "V4"


def _format(old: Any, new: Any) -> str | None:
    if old == new:
        return None
    return "V1" if old is None else "V3_pattern" if new is None else "T7"


def _classification(old: Any, new: Any) -> str | None:
    if old == new:
        return None
    o, n = CLASSIFICATION_RANK.get(str(old).lower(), -1), CLASSIFICATION_RANK.get(str(new).lower(), -1)
    if new is None or (old is not None and n < o):
        return "G2"
    return "G1"


def _changed(rule: str) -> Callable[[Any, Any], str | None]:
    return lambda old, new: None if old == new else rule


#: FieldSpec attribute -> comparator(old value, new value) -> rule id or None; `type` goes through
#: `type_changes` (one finding per struct member) and `primary_key` is compared as the key's column set
FIELD_COMPARATORS: dict[str, Callable[[Any, Any], str | None]] = {
    "required": _flag("N1", "N2"),
    "unique": _flag("N3", "N4"),
    "allowed_values": _allowed_values,
    "minimum": _bound(low_is_tight=False),
    "maximum": _bound(low_is_tight=True),
    "exclusive_minimum": _flag("V1", "V2"),
    "exclusive_maximum": _flag("V1", "V2"),
    "min_length": _bound(low_is_tight=False),
    "max_length": _bound(low_is_tight=True),
    "pattern": _pattern,
    "format": _format,
    "date_format": _changed("T7"),
    "pii": _flag("G1", "G2"),
    "classification": _classification,
    "description": _changed("D1"),
    "tags": _changed("D1"),
}


def _describe(attr: str, old: Any, new: Any) -> str:
    return f"{attr}: {old!r} -> {new!r}"


# --------------------------------------------------------------------------- detectors


def _match(old: list[tuple[str, Any]], new: list[tuple[str, Any]],
           key_id: Callable[[Any], str | None]) -> tuple[list[tuple[str, Any, str, Any]], list, list]:
    """Pair items by id where both have one, else by name: (matched pairs, removed, added)."""
    new_by_id = {key_id(item): (name, item) for name, item in new if key_id(item)}
    new_by_name = {name: item for name, item in new}
    used: set[str] = set()
    pairs, removed = [], []
    for name, item in old:
        ident = key_id(item)
        if ident and ident in new_by_id:
            new_name, new_item = new_by_id[ident]
        elif name in new_by_name and not (key_id(new_by_name[name]) and ident and key_id(new_by_name[name]) != ident):
            new_name, new_item = name, new_by_name[name]
        else:
            removed.append((name, item))
            continue
        if new_name in used:
            removed.append((name, item))
            continue
        used.add(new_name)
        pairs.append((name, item, new_name, new_item))
    added = [(name, item) for name, item in new if name not in used]
    return pairs, removed, added


def _parent(path: str) -> str:
    return path.rsplit(".", 1)[0] if "." in path else ""


def detect_fields(old: Contract, new: Contract) -> Iterator[Change]:
    """Fields added, removed, renamed, moved, every attribute change of matched fields, the primary key."""
    # a struct's member can be declared twice, in its type string and in its nested `fields`: report it once,
    # and a member added as required by its `fields` entry (S5) is not also optional by its type string (S4)
    changes = list(_field_changes(old, new))
    required_added = {c.subject for c in changes if c.rule == "S5"}
    seen: set[tuple[str, str, str]] = set()
    for change in changes:
        if (change.rule, change.subject, change.detail) not in seen and not (
                change.rule == "S4" and change.subject in required_added):
            seen.add((change.rule, change.subject, change.detail))
            yield change


def _field_changes(old: Contract, new: Contract) -> Iterator[Change]:
    pairs, removed, added = _match(old.iter_fields(), new.iter_fields(), lambda f: f.id)
    removed_paths = {p for p, _ in removed}
    added_paths = {p for p, _ in added}
    for path, _ in removed:
        if _parent(path) not in removed_paths:  # a removed struct reports once, not once per child
            yield Change("S6", f"field {path}", "field removed", path)
    for path, spec in added:
        if _parent(path) not in added_paths:
            rule = "S5" if spec.required or spec.primary_key else "S4"
            yield Change(rule, f"field {path}", f"{'required' if rule == 'S5' else 'optional'} field added")
    old_policy, new_policy = old.masking, new.masking
    for path, spec, new_path, new_spec in pairs:
        if path != new_path:
            rule = "S8" if _parent(path) != _parent(new_path) else "S7"
            yield Change(rule, f"field {path}", f"{'moved' if rule == 'S8' else 'renamed'} to {new_path}", path)
        yield from type_changes(path, spec.type, new_spec.type)
        for attr, compare in FIELD_COMPARATORS.items():
            a, b = getattr(spec, attr), getattr(new_spec, attr)
            rule = compare(a, b)
            if rule:
                yield Change(rule, f"field {path}", _describe(attr, a, b), path)
        mask_old, mask_new = _effective_mask(spec, old_policy), _effective_mask(new_spec, new_policy)
        if mask_old != mask_new:
            yield Change("G3", f"field {path}", f"masking: {_mask_text(mask_old)} -> {_mask_text(mask_new)}", path)
    yield from _primary_key_changes(old, new, {path: new_path for path, _, new_path, _ in pairs})
    # order of the matched top-level fields, old order vs new order
    new_position = {f.name: i for i, f in enumerate(new.fields)}
    kept = [new_position[b] for a, _, b, _ in pairs if "." not in a and b in new_position]
    if kept != sorted(kept):
        yield Change("S9", "schema", "field order changed")


def _primary_key_changes(old: Contract, new: Contract, renamed: dict[str, str]) -> Iterator[Change]:
    """N5 when a key appears where there was none; N6 when an existing key's column set changes or goes."""
    old_key = [path for path, spec in old.iter_fields() if spec.primary_key]
    new_key = [path for path, spec in new.iter_fields() if spec.primary_key]
    # a key column renamed (matched by id) is the same column: S7 reports the rename
    if {renamed.get(path, path) for path in old_key} == set(new_key):
        return
    yield Change("N6" if old_key else "N5", "schema", _describe("primary_key", old_key, new_key))


def _effective_mask(spec: FieldSpec, policy: MaskingPolicy | None) -> dict[str, Any] | None:
    """The masking a field gets, as `dqgov check` applies it (a PII field no policy covers: hmac)."""
    chosen = field_spec(spec.masking, spec.classification, spec.pii, policy or MaskingPolicy())
    return chosen.model_dump(exclude_none=True) if chosen is not None and chosen.method != "none" else None


def _mask_text(mask: dict[str, Any] | None) -> str:
    if mask is None:
        return "none"
    params = ", ".join(f"{k}={v}" for k, v in mask.items() if k != "method")
    return f"{mask['method']}({params})" if params else mask["method"]


def _undeclared_policy(contract: Contract) -> str:
    """What happens to undeclared columns: the setting, or `keep` when no field is declared (all are published)."""
    return contract.schema_.undeclared_columns if contract.fields else "keep"


def _undeclared_text(contract: Contract) -> str:
    policy = _undeclared_policy(contract)
    return repr(policy) if contract.fields else f"{policy!r} (no field declared: every column is published)"


def _undeclared_mask(contract: Contract) -> dict[str, Any] | None:
    """The masking undeclared columns are published with (None: as read), as `dqgov check` and `mask` apply it."""
    spec = undeclared_spec(contract)
    return spec.model_dump(exclude_none=True) if spec is not None else None


def detect_undeclared_columns(old: Contract, new: Contract) -> Iterator[Change]:
    """schema.undeclared_columns: whether columns the contract does not declare reach consumers, and how masked."""
    a, b = _undeclared_policy(old), _undeclared_policy(new)
    published_a, published_b = a in ("keep", "mask"), b in ("keep", "mask")
    mask_a, mask_b = _undeclared_mask(old), _undeclared_mask(new)
    if published_a and not published_b:
        rule, effect = "S10_removed", "columns the contract does not declare are no longer published"
    elif published_b and not published_a:
        masked = f" masked with {_mask_text(mask_b)}" if mask_b else ""
        rule, effect = "S10_added", f"columns the contract does not declare are now published{masked}"
    elif published_a:
        if mask_a == mask_b:  # e.g. keep -> mask with `masking.pii: none`: the same values
            return
        rule, effect = "G3", f"undeclared columns' masking: {_mask_text(mask_a)} -> {_mask_text(mask_b)}"
    elif a == b:
        return
    elif b == "fail":  # drop <-> fail: consumers get the same columns; the derived rule's severity changes
        rule, effect = "Q1", "a run with undeclared columns now fails the gate and publishes nothing"
    else:
        rule, effect = "Q2", "undeclared columns are now left out and the run publishes"
    yield Change(rule, "schema.undeclared_columns",
                 f"undeclared_columns: {_undeclared_text(old)} -> {_undeclared_text(new)} ({effect})")


def detect_identity(old: Contract, new: Contract) -> Iterator[Change]:
    """Contract id and name, dataset identity and location, status, owners and documentation."""
    pairs = [
        ("X3", "contract", "id", old.contract.id, new.contract.id),
        ("X3", "contract", "name", old.contract.name, new.contract.name),
        ("S3", "dataset", "name", old.dataset.name, new.dataset.name),
        ("S3", "dataset", "namespace", old.dataset.namespace, new.dataset.namespace),
        ("X2", "dataset", "path", old.dataset.path, new.dataset.path),
        ("X2", "dataset", "table", old.dataset.table, new.dataset.table),
        ("X2", "dataset", "format", old.dataset.format, new.dataset.format),
        ("G4", "contract", "owner", old.contract.owner, new.contract.owner),
        ("G4", "contract", "steward", old.contract.steward, new.contract.steward),
        ("D1", "contract", "description", old.contract.description, new.contract.description),
        ("D1", "contract", "domain", old.contract.domain, new.contract.domain),
        ("D1", "dataset", "description", old.dataset.description, new.dataset.description),
        ("D1", "dataset", "tags", old.dataset.tags, new.dataset.tags),
        ("D1", "dataset", "catalog", old.dataset.catalog, new.dataset.catalog),
        ("D1", "contract", "extensions", _documentation_extensions(old), _documentation_extensions(new)),
    ]
    for rule, subject, attr, a, b in pairs:
        if a != b:
            if rule == "X3" and attr == "id" and (a is None or b is None):
                rule = "D1"  # an id given (or dropped) where the other side has none names no other contract
            yield Change(rule, subject, _describe(attr, a, b))
    rule = _classification(old.dataset.classification, new.dataset.classification)
    if rule:
        yield Change(rule, "dataset", _describe("classification", old.dataset.classification,
                                                new.dataset.classification))
    a, b = (old.contract.status or "").lower(), (new.contract.status or "").lower()
    if a != b:
        rule = {"deprecated": "L4_deprecated", "retired": "L4_retired"}.get(b, "D1")
        yield Change(rule, "contract", _describe("status", old.contract.status, new.contract.status))


#: ODCS content the model has no field for (kept in `extensions.odcs`) that `detect_odcs` classifies itself:
#: (a path into the extension, where `*` is every key of a mapping)
_ODCS_CLASSIFIED = (("schema", "relationships"), ("properties", "*", "relationships"),
                    ("properties", "*", "partitioned"), ("properties", "*", "partitionKeyPosition"),
                    ("document", "servers"), ("document", "support"), ("objects",), ("team",))


def _without(doc: Any, path: tuple[str, ...]) -> Any:
    """A copy of `doc` without what `path` names, and without a mapping that this leaves empty."""
    if not isinstance(doc, dict) or not path:
        return doc
    head, rest = path[0], path[1:]
    keys = list(doc) if head == "*" else [head]
    out = dict(doc)
    for key in keys:
        if key in out:
            if rest:
                out[key] = _without(out[key], rest)
                if out[key] == {} and doc[key] != {}:
                    del out[key]
            else:
                del out[key]
    return out


def _documentation_extensions(contract: Contract) -> dict[str, Any]:
    """The extensions less the ODCS content `detect_odcs` classifies: what is left is documentation (D1)."""
    ext = dict(contract.extensions)
    if isinstance(ext.get("odcs"), dict):
        odcs = ext["odcs"]
        for path in _ODCS_CLASSIFIED:
            odcs = _without(odcs, path)
        if odcs or not ext["odcs"]:
            ext["odcs"] = odcs
        else:
            del ext["odcs"]
    return ext


def _odcs_part(contract: Contract, *path: str) -> Any:
    part: Any = contract.extensions.get("odcs")
    for key in path:
        part = part.get(key) if isinstance(part, dict) else None
    return part


def _relationships(contract: Contract) -> dict[str, list[Any]]:
    """ODCS foreign keys by where they start (an object's `from`, or a property's path): the targets of each."""
    out: dict[str, list[Any]] = {}
    for rel in _odcs_part(contract, "schema", "relationships") or []:
        if isinstance(rel, dict):
            out.setdefault(f"schema from {rel.get('from')!r}", []).append((rel.get("to"), rel.get("type")))
    for path, extra in sorted((_odcs_part(contract, "properties") or {}).items()):
        rels = extra.get("relationships") if isinstance(extra, dict) else None
        for rel in rels or []:
            if isinstance(rel, dict):
                out.setdefault(f"property {path}", []).append((rel.get("to"), rel.get("type")))
    return out


def _by_name(items: Any, key: str) -> dict[str, Any]:
    return {str(item.get(key, index) if isinstance(item, dict) else index): item
            for index, item in enumerate(items or [])}


def detect_odcs(old: Contract, new: Contract) -> Iterator[Change]:
    """ODCS content kept as extensions: foreign keys, partitioning, servers, other schema objects, team, support."""
    rel_old, rel_new = _relationships(old), _relationships(new)
    for where in sorted(set(rel_old) | set(rel_new)):
        a, b = rel_old.get(where, []), rel_new.get(where, [])
        removed, added = [t for t in a if t not in b], [t for t in b if t not in a]
        # a key whose one target became another is retargeted; any other difference adds or removes keys
        if len(removed) == len(added) == 1:
            yield Change("N8_retargeted", "relationships", f"{where}: " + _describe("to", removed[0][0], added[0][0]))
            continue
        for target in removed:
            yield Change("N8_removed", "relationships", f"{where}: foreign key to {target[0]!r} removed")
        for target in added:
            yield Change("N7", "relationships", f"{where}: foreign key to {target[0]!r} added")
    props_old, props_new = _odcs_part(old, "properties") or {}, _odcs_part(new, "properties") or {}
    for path in sorted(set(props_old) | set(props_new)):
        a = {k: (props_old.get(path) or {}).get(k) for k in ("partitioned", "partitionKeyPosition")}
        b = {k: (props_new.get(path) or {}).get(k) for k in ("partitioned", "partitionKeyPosition")}
        if a != b:
            yield Change("N9", f"field {path}", _describe("partitioning", a, b))
    for rule_added, rule_removed, rule_changed, subject, items_old, items_new in (
            ("X1", "X2", "X2", "servers", _by_name(_odcs_part(old, "document", "servers"), "server"),
             _by_name(_odcs_part(new, "document", "servers"), "server")),
            ("S1", "S2", "S11", "schema objects", _by_name(_odcs_part(old, "objects"), "name"),
             _by_name(_odcs_part(new, "objects"), "name"))):
        for name in sorted(set(items_old) | set(items_new)):
            a, b = items_old.get(name), items_new.get(name)
            if b is None:
                yield Change(rule_removed, subject, f"{name!r} removed")
            elif a is None:
                yield Change(rule_added, subject, f"{name!r} added")
            elif a != b:
                yield Change(rule_changed, subject, f"{name!r} changed")
    for subject, path in (("team", ("team",)), ("support", ("document", "support"))):
        a, b = _odcs_part(old, *path), _odcs_part(new, *path)
        if a != b:
            yield Change("G4", subject, f"{subject} changed")


def detect_roles(old: Contract, new: Contract) -> Iterator[Change]:
    """Owner, steward and every other role's parties changed; consumers removed or added."""
    ro, rn = old.roles, new.roles
    for attr in ("owner", "steward"):
        a = getattr(ro, attr) if ro else None
        b = getattr(rn, attr) if rn else None
        if a != b:
            yield Change("G4", f"roles.{attr}", _describe(attr, a.name if a else None, b.name if b else None))
    other_old, other_new = (ro.model_extra or {}) if ro else {}, (rn.model_extra or {}) if rn else {}
    for role in sorted(set(other_old) | set(other_new)):
        a_parties, b_parties = other_old.get(role) or [], other_new.get(role) or []
        if a_parties != b_parties:
            names = ([p.name for p in a_parties] or None, [p.name for p in b_parties] or None)
            yield Change("G4" if b_parties else "G4_roles_removed", f"roles.{role}", _describe(role, *names))
    a_names = [c.name for c in (ro.consumers if ro else [])]
    b_names = [c.name for c in (rn.consumers if rn else [])]
    for name in a_names:
        if name not in b_names:
            yield Change("G4_roles_removed", "roles.consumers", f"consumer {name!r} removed")
    for name in b_names:
        if name not in a_names:
            yield Change("G4", "roles.consumers", f"consumer {name!r} added")


def detect_governance(old: Contract, new: Contract) -> Iterator[Change]:
    """Retention, legal basis and purpose; a masking key rotation."""
    go, gn = old.governance, new.governance
    a = go.retention if go else None
    b = gn.retention if gn else None
    if not _same_duration(a, b):
        if b is None or (a is not None and _seconds(b) < _seconds(a)):
            rule = "L3"
        else:
            rule = "L1"
        yield Change(rule, "governance", _describe("retention", a, b))
    for attr in ("legal_basis", "purpose"):
        a, b = (getattr(go, attr) if go else None), (getattr(gn, attr) if gn else None)
        if a != b:
            yield Change("G4", "governance", _describe(attr, a, b))
    masks = [_effective_mask(s, new.masking) for _, s in new.iter_fields()] + [_undeclared_mask(new)]
    if not any((mask or {}).get("method") in KEYED_METHODS for mask in masks):
        return
    policy_old, policy_new = old.masking or MaskingPolicy(), new.masking or MaskingPolicy()
    for attr in _KEY_SETTINGS:  # another key name or source is, as far as the contract can tell, another key
        key_old, key_new = getattr(policy_old, attr), getattr(policy_new, attr)
        if key_old != key_new:
            yield Change("G3", "masking", f"{attr}: {key_old!r} -> {key_new!r} (pseudonyms change)")


#: the masking policy's keys that say which secret keyed masks use
_KEY_SETTINGS = ("key_id", "key_env", "key_file")


def _seconds(text: str) -> float:
    try:
        return parse_duration(text)
    except DqGovernanceError:
        return float("nan")


def _same_duration(a: str | None, b: str | None) -> bool:
    """Equal texts, or two spellings of one duration (`2h` and `120m`)."""
    return a == b or (a is not None and b is not None and _seconds(a) == _seconds(b))


def detect_service_level(old: Contract, new: Contract) -> Iterator[Change]:
    """Freshness, volume and latency: tightened (L1) or loosened (L2)."""
    so, sn = old.service_level, new.service_level
    fo, fn = (so.freshness if so else None), (sn.freshness if sn else None)
    a, b = (fo.seconds if fo else None), (fn.seconds if fn else None)
    if a != b:
        rule = "L1" if b is not None and (a is None or b < a) else "L2"
        yield Change(rule, "service_level", _describe("freshness", fo.max_age if fo else None,
                                                      fn.max_age if fn else None))
    if fo and fn and (fo.column, fo.time) != (fn.column, fn.time):
        yield Change("Q3", "service_level", _describe("freshness column/time", (fo.column, fo.time),
                                                      (fn.column, fn.time)))
    vo, vn = (so.volume if so else None), (sn.volume if sn else None)
    for attr, low in (("min_rows", True), ("max_rows", False)):
        a, b = (getattr(vo, attr) if vo else None), (getattr(vn, attr) if vn else None)
        if a == b:
            continue
        tighter = b is not None and (a is None or (b > a if low else b < a))
        yield Change("L1" if tighter else "L2", "service_level", _describe(f"volume.{attr}", a, b))
    a, b = (so.latency if so else None), (sn.latency if sn else None)
    if not _same_duration(a, b):
        # a latency promised where there was none tightens, as a new freshness SLA does
        tighter = b is not None and (a is None or _seconds(b) < _seconds(a))
        yield Change("L1" if tighter else "L2", "service_level", _describe("latency", a, b))


def _rule_key(rule: Any) -> str:
    return rule.name or rule.default_name()


def detect_quality(old: Contract, new: Contract) -> Iterator[Change]:
    """Quality rules added, removed or changed (matched by name); gate ratio and on_failure."""
    qo, qn = old.quality, new.quality
    a, b = qo.minimum_valid_ratio, qn.minimum_valid_ratio
    if a != b:
        rule = "Q1" if b is not None and (a is None or b > a) else "Q2"
        yield Change(rule, "quality", _describe("minimum_valid_ratio", a, b))
    if qo.on_failure != qn.on_failure:
        ra, rb = ON_FAILURE_RANK[qo.on_failure], ON_FAILURE_RANK[qn.on_failure]
        rule = "Q1" if rb > ra else "Q2" if rb < ra else "Q3"
        yield Change(rule, "quality", _describe("on_failure", qo.on_failure, qn.on_failure))
    pairs, removed, added = _match(_named(qo.rules), _named(qn.rules), lambda r: None)
    for name, rule in removed:
        yield Change("N8_removed" if rule.type == "foreign_key" else "Q2", f"quality rule {name}", "rule removed")
    for name, rule in added:
        yield Change("N7" if rule.type == "foreign_key" else "Q1", f"quality rule {name}", "rule added")
    for name, a_rule, _, b_rule in pairs:
        yield from _rule_changes(name, a_rule, b_rule)


def _named(rules: list[Any]) -> list[tuple[str, Any]]:
    seen: dict[str, int] = {}
    out = []
    for rule in rules:
        key = _rule_key(rule)
        seen[key] = seen.get(key, 0) + 1
        out.append((key if seen[key] == 1 else f"{key}_{seen[key]}", rule))
    return out


def _rule_changes(name: str, a: Any, b: Any) -> Iterator[Change]:
    subject = f"quality rule {name}"
    if a.type != b.type:
        yield Change("Q3", subject, _describe("type", a.type, b.type))
        return
    da = a.model_dump(exclude={"name", "description", "dimension"})
    db = b.model_dump(exclude={"name", "description", "dimension"})
    if a.type == "foreign_key" and da.pop("reference") != db.pop("reference"):
        yield Change("N8_retargeted", subject, "reference changed")
    if da.pop("severity") != db.pop("severity"):
        yield Change("Q2" if b.severity == "warn" else "Q1", subject, _describe("severity", a.severity, b.severity))
    for key in ("must_be", "warn"):
        if key in da and da[key] != db.get(key):
            rule = _threshold_rule(da.pop(key), db.pop(key))
            if rule:
                yield Change(rule, subject, _describe(key, getattr(a, key), getattr(b, key)))
    for key in sorted(set(da) | set(db)):
        if da.get(key) != db.get(key):
            yield Change("Q3", subject, _describe(key, da.get(key), db.get(key)))


def _threshold_rule(old: str | None, new: str | None) -> str | None:
    """Q1 when a one-sided threshold tightens, Q2 when it loosens or goes, Q3 when the direction is unclear,
    None when both texts say the same."""
    if new is None:
        return "Q2"
    if old is None:
        return "Q1"
    try:
        a, b = parse_threshold(old), parse_threshold(new)
    except DqGovernanceError:
        return "Q3"
    upper_ops, lower_ops = ("<", "<="), (">", ">=")
    if (a.operator, a.value, a.upper, a.unit, a.exact) == (b.operator, b.value, b.upper, b.unit, b.exact):
        return None  # one threshold spelled two ways (`< 50%`, `<50%`)
    if a.operator == b.operator and a.unit == b.unit and a.operator in upper_ops + lower_ops:
        tighter = b.value < a.value if a.operator in upper_ops else b.value > a.value
        return "Q1" if tighter else "Q2"
    return "Q3"


#: every detector; each yields Changes, classified afterwards through the rule table
DETECTORS: tuple[Callable[[Contract, Contract], Iterator[Change]], ...] = (
    detect_identity, detect_fields, detect_undeclared_columns, detect_roles, detect_governance, detect_service_level,
    detect_quality, detect_odcs,
)


# --------------------------------------------------------------------------- versions

_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)")
_REQUIRED = {"incompatible": "major", "potentially": "minor", "compatible": "patch"}
_BUMP_RANK = {"downgrade": -1, "none": 0, "patch": 1, "minor": 2, "major": 3}


def version_bump(old: str, new: str) -> str:
    """major / minor / patch / none / downgrade between two semantic versions."""
    a = tuple(int(x) for x in _SEMVER.match(old).groups())  # type: ignore[union-attr]
    b = tuple(int(x) for x in _SEMVER.match(new).groups())  # type: ignore[union-attr]
    if b < a:
        return "downgrade"
    if b == a:
        return "none"
    return "major" if b[0] > a[0] else "minor" if b[1] > a[1] else "patch"


def check_version(old: Contract, new: Contract, overall: str, changed: bool, table: dict[str, dict]) -> VersionCheck:
    """Compare the bump with what the overall class requires (nothing when nothing changed)."""
    bump = version_bump(old.version, new.version)
    required = _REQUIRED[overall] if changed else "none"
    ok = bump != "downgrade" and _BUMP_RANK[bump] >= _BUMP_RANK[required]
    if ok and not changed:
        detail = f"no changes, no bump needed ({old.version} -> {new.version})"
    elif ok:
        detail = f"{old.version} -> {new.version} is a {bump.upper()} bump; {overall} changes need {required.upper()}"
    elif bump == "downgrade":
        detail = f"{old.version} -> {new.version} goes backwards"
    else:
        detail = (f"{overall} changes need a {required.upper()} bump (at least); "
                  f"{old.version} -> {new.version} is {bump.upper()}")
    return VersionCheck(old.version, new.version, bump, required, ok, table["VERSION"]["class"], detail)


# --------------------------------------------------------------------------- the diff


def diff_contracts(old: Contract, new: Contract, *, rules: dict[str, dict[str, Any]] | None = None,
                   old_name: str = "old", new_name: str = "new") -> DiffReport:
    """Classify every change between two contracts and check the version bump."""
    table = rules if rules is not None else load_rules()
    report = DiffReport(old_name, new_name)
    for detector in DETECTORS:
        for change in detector(old, new):
            spec = table.get(change.rule)
            if spec is None or "class" not in spec:
                raise ConfigError(f"change rules: no class for rule {change.rule!r}")
            report.findings.append(Finding(change.rule, spec["class"], change.subject, change.detail, change.field,
                                           bool(spec.get("requires_approval", False))))
    report.version = check_version(old, new, report.overall, bool(report.findings), table)
    return report


def attach_consumers(report: DiffReport, old: Contract, graph: Any) -> None:
    """For each (potentially) incompatible finding, list downstream consumers from the lineage store.

    When the store does not hold the contract's dataset, consumers stay None (unknown, not "none") with the reason.
    """
    from dq_governance.lineage.impact import Target, column_fields, impact

    dataset = graph.contract_dataset(old)  # the node `lineage ingest` attaches the contract to
    cache: dict[str | None, list[dict[str, Any]]] = {}
    for finding in report.findings:
        if RANK[finding.change_class] < RANK["potentially"]:
            continue
        if dataset is None:
            finding.consumers = None
            finding.consumers_unknown = f"dataset {old.dataset.name!r} is not in the lineage store"
            continue
        if not graph.has_lineage(dataset[0]):
            finding.consumers = None
            finding.consumers_unknown = (f"dataset {old.dataset.name!r} is in the lineage store through its "
                                         "contract only: no event names it yet")
            continue
        column = finding.field
        if column not in cache:
            # a nested field is read through its struct (and a struct through its fields): impact starts from all
            fields = column_fields(graph, dataset[0], column) if column else []
            target = Target(dataset[0], dataset[1], dataset[2], column if fields else None,
                            fields[0] if fields else None)
            result = impact(graph, target, "downstream")
            unknown_column = column is not None and not fields  # lineage has no such column: dataset level
            cache[column] = [{"namespace": h.namespace, "dataset": h.dataset, "column": h.column,
                              "owners": h.owners, "jobs": h.jobs, "coarse": h.coarse or unknown_column,
                              "distance": h.distance, "quality_status": h.quality_status} for h in result.hits]
        finding.consumers = cache[column]


# --------------------------------------------------------------------------- rendering


def render_table(report: DiffReport) -> str:
    """Findings as aligned text, consumers under each, then the version check and the overall class."""
    lines = [f"diff {report.old_name} -> {report.new_name}"]
    if not report.findings:
        lines.append("no changes")
    width = max([len(f.subject) for f in report.findings] + [7])
    for f in report.findings:
        flag = "  [governance approval required]" if f.requires_approval else ""
        lines.append(f"{f.change_class:<12}  {f.rule:<16}  {f.subject:<{width}}  {f.detail}{flag}")
        if f.consumers_unknown:
            lines.append(f"{'':14}consumers: unknown: {f.consumers_unknown}")
        if f.consumers is not None:
            if not f.consumers:
                lines.append(f"{'':14}consumers: none found in the lineage store")
            for c in f.consumers:
                where = f"{c['dataset']}.{c['column']}" if c["column"] else c["dataset"]
                coarse = " (coarse: job without column lineage)" if c["coarse"] else ""
                lines.append(f"{'':14}consumer {c['namespace']}:{where} via {' > '.join(c['jobs'])}; "
                             f"owners: {', '.join(c['owners']) or 'unknown'}{coarse}")
    if report.version:
        state = "ok" if report.version.ok else f"MISMATCH ({report.version.change_class})"
        lines.append(f"version: {state}: {report.version.detail}")
    lines.append(f"overall: {report.overall}")
    return "\n".join(lines) + "\n"

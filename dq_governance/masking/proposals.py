"""From scan findings to contract changes: lint warnings, a YAML patch, or an in-place edit.

Spark-free. The in-place edit works on the YAML text (positions from `yaml.compose`), so the
author's comments and layout survive; the result is re-validated before it is written.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml
from pydantic import ValidationError

from dq_governance.contracts.consistency import Problem
from dq_governance.contracts.model import Contract, FieldSpec
from dq_governance.contracts.spark_types import is_spark_type, logical_type
from dq_governance.errors import ContractError, SourceLocation


class FindingLike(Protocol):
    column: str
    pii_type: str
    confidence: float
    hit_rate: float | None
    non_null: int
    name_match: bool


#: pii_type -> (classification, masking) proposed for a detected column
PROPOSALS: dict[str, tuple[str, dict[str, Any]]] = {
    "BR_CPF": ("restricted", {"method": "hmac"}),
    "BR_CNPJ": ("confidential", {"method": "hmac"}),
    "EMAIL_ADDRESS": ("restricted", {"method": "hmac"}),
    "PHONE_NUMBER": ("restricted", {"method": "hmac"}),
    "CREDIT_CARD": ("restricted", {"method": "hmac"}),
    "IBAN_CODE": ("restricted", {"method": "hmac"}),
    "IP_ADDRESS": ("confidential", {"method": "hmac"}),
    "DATE_OF_BIRTH": ("confidential", {"method": "generalize", "granularity": "year"}),
    "ZIP_CODE": ("confidential", {"method": "generalize", "prefix_length": 5}),
    "PERSON": ("confidential", {"method": "redact"}),
    "LOCATION": ("confidential", {"method": "redact"}),
}


def name_words(name: str) -> list[str]:
    """A column name's words, lower-cased and unaccented: split at `_`, `-` and other separators, at camelCase
    (`customerEmail`, `CPFCliente`) and between letters and digits (`email2`)."""
    words: list[str] = []
    word = ""
    for i, ch in enumerate(name):
        if not ch.isalnum():
            words.append(word)
            word = ""
            continue
        if word:
            prev, after = word[-1], name[i + 1:i + 3]
            # an acronym ends before a capitalised word (`CPFCliente`), not before a short tail (`IPv4`, `CPFs`)
            if (prev.isdigit() != ch.isdigit() or (prev.islower() and ch.isupper())
                    or (prev.isupper() and ch.isupper() and len(after) == 2 and after.isalpha() and after.islower())):
                words.append(word)
                word = ""
        word += ch
    words.append(word)
    plain = (unicodedata.normalize("NFKD", w.lower()) for w in words if w)
    return ["".join(c for c in w if not unicodedata.combining(c)) for w in plain]


def name_has(pattern: str, name: str) -> bool:
    """True when `pattern` matches whole words of a column name, its words joined by `_` (`e_?mail` matches
    `e_mail`, `eMail` and `customer_email`; `tel` matches `tel_1`, not `hotel_id`)."""
    return re.search(rf"(?:^|_)(?:{pattern})(?:_|$)", "_".join(name_words(name))) is not None


#: formats whose values have several spellings: keyed masking (hmac, tokenize) hashes the spellings of one value
#: alike only when the field names its format (masking/methods.py normalises by it). format -> (the column-name
#: pattern the scanner also uses, matched on whole words by `name_has`; two spellings of one value for the warning)
NORMALISED_FORMATS: dict[str, tuple[str, tuple[str, str]]] = {
    "cpf": (r"cpfs?", ("529.982.247-25", "52998224725")),
    "cnpj": (r"cnpjs?", ("11.222.333/0001-81", "11222333000181")),
    "email": (r"e_?mails?", ("Ana@Example.com", "ana@example.com")),
    "phone": (r"tel|(tele|cell|smart)?phones?|telefones?|fones?|cel|celular(es)?|whats(app)?|mobile",
              ("(11) 98765-4321", "+55 11 98765-4321")),
}
#: detector entity -> the format it proposes for a column whose values match it
FORMAT_OF_TYPE: dict[str, str] = {"BR_CPF": "cpf", "BR_CNPJ": "cnpj", "EMAIL_ADDRESS": "email",
                                  "PHONE_NUMBER": "phone"}
#: share of sampled values that must match before scan-pii proposes the format (the rest then fail its rule)
FORMAT_MIN_HIT_RATE = 0.5


def format_for_name(name: str) -> str | None:
    """The normalised format a column name suggests (`nr_cpf` -> cpf, `e_mail` -> email), or None."""
    return next((fmt for fmt, (pattern, _) in NORMALISED_FORMATS.items() if name_has(pattern, name)), None)


def normalisation_problems(contract: Contract) -> list[Problem]:
    """Text fields masked with a keyed method but no `format`, whose name suggests CPF, CNPJ, e-mail or phone.

    Without the format, each spelling of one value gets its own pseudonym, so joins on the masked key break.
    Paths are model paths: ("schema", "fields", i, ...).
    """
    from dq_governance.masking.policies import KEYED_METHODS, masked_columns

    masked = masked_columns(contract)
    out: list[Problem] = []
    for model_path, dotted, spec in _indexed_fields(contract.schema_.fields, ("schema", "fields"), ""):
        mask = masked.get(dotted)
        if mask is None or mask.method not in KEYED_METHODS or spec.format is not None:
            continue
        fmt = format_for_name(spec.name)
        if fmt is None or logical_type(spec.type) != "string":
            continue
        one, other = NORMALISED_FORMATS[fmt][1]
        out.append(Problem(model_path, f"{dotted}: masked with {mask.method} but no `format`: `{one}` and `{other}` "
                                       f"would get different pseudonyms; add `format: {fmt}`"))
    return out


def _indexed_fields(fields: list[FieldSpec], prefix: tuple[Any, ...],
                    dotted: str) -> list[tuple[tuple[Any, ...], str, FieldSpec]]:
    out = []
    for index, spec in enumerate(fields):
        path = (*prefix, index)
        out.append((path, f"{dotted}{spec.name}", spec))
        out.extend(_indexed_fields(spec.fields or [], (*path, "fields"), f"{dotted}{spec.name}."))
    return out


@dataclass
class Proposal:
    """Changes for one column; `new_field` when the contract does not list the column at all.

    A struct field's proposal goes under its struct's entry (`path`); `struct_types` gives each struct along the
    path that the contract does not list its type.
    """

    column: str
    finding: FindingLike
    changes: dict[str, Any] = field(default_factory=dict)
    new_field: bool = False
    path: tuple[str, ...] = ()
    struct_types: tuple[str | None, ...] = ()

    def names(self) -> tuple[str, ...]:
        """The field's names from the top-level column down."""
        return self.path or (self.column,)


def evidence(finding: FindingLike) -> str:
    """One line of evidence: entity, confidence, hit rate, name match (never a value)."""
    parts = [f"{finding.pii_type}, confidence {finding.confidence:.2f}"]
    if finding.hit_rate is not None:
        parts.append(f"{finding.hit_rate:.1%} of {finding.non_null} sampled values match")
    if finding.name_match:
        parts.append("column name matches")
    return "; ".join(parts)


def _path_of(finding: FindingLike) -> tuple[str, ...]:
    return getattr(finding, "path", ()) or (finding.column,)


def _declared_chain(contract: Contract | None, path: tuple[str, ...]) -> list[FieldSpec]:
    """The contract's fields along `path`, from the top-level column down, as far as the contract lists them."""
    chain: list[FieldSpec] = []
    fields = contract.fields if contract is not None else []
    for name in path:
        spec = next((f for f in fields if f.name == name), None)
        if spec is None:
            break
        chain.append(spec)
        fields = spec.fields or []
    return chain


def propose(findings: list[FindingLike], contract: Contract | None = None,
            types: dict[str, str] | None = None) -> list[Proposal]:
    """The changes each finding asks of the contract; settings the author already made are kept.

    A column the contract declares PII, or already masks (its own `masking`, a `masking` policy, or
    `undeclared_columns: mask` for a column it does not list), keeps the masking it has: no `masking` is
    proposed, nor a `classification` that a `masking.by_classification` entry could turn into another mask.
    A struct field counts as declared PII, or masked, when its struct is. `types` (dotted name -> Spark SQL type,
    as the scan read them) gives each struct the contract does not list its type. Under `undeclared_columns: mask` a
    struct the contract does not list is masked whole: its PII fields propose `pii: true` for the struct (the same
    mask), not entries of their own that would leave its other fields unmasked.
    """
    from dq_governance.masking.policies import masked_columns, undeclared_spec

    masked = masked_columns(contract) if contract is not None else {}
    masks_undeclared = contract is not None and undeclared_spec(contract) is not None
    out: list[Proposal] = []
    for finding in findings:
        classification, masking = PROPOSALS[finding.pii_type]
        path = _path_of(finding)
        chain = _declared_chain(contract, path)
        if not chain and masks_undeclared and len(path) > 1:
            # the struct is masked whole as undeclared; declaring only this field would publish the others raw
            if all(p.names() != path[:1] for p in out):
                out.append(Proposal(path[0], finding, {"pii": True}, new_field=True, path=path[:1],
                                    struct_types=((types or {}).get(path[0]),)))
            continue
        spec = chain[-1] if len(chain) == len(path) else None
        declared_pii = any(s.pii for s in chain)
        prefixes = {".".join(path[:n]) for n in range(1, len(chain) + 1)}
        already_masked = bool(prefixes & set(masked)) or (not chain and masks_undeclared)
        changes: dict[str, Any] = {}
        if not declared_pii:
            changes["pii"] = True
        # the field's own `masking` outranks any classification policy, so a classification cannot change it
        own_mask = spec is not None and spec.masking is not None
        if (spec is None or spec.classification is None) and (own_mask or not (declared_pii or already_masked)):
            changes["classification"] = classification
        if not (own_mask or declared_pii or already_masked):
            changes["masking"] = masking
        fmt = _proposed_format(finding, spec)
        if fmt is not None:
            changes["format"] = fmt  # masking normalises by it; without it each spelling is its own pseudonym
        if changes:
            struct_types = tuple((types or {}).get(".".join(path[:k + 1])) if len(chain) <= k < len(path) - 1 else None
                                 for k in range(len(path)))
            out.append(Proposal(finding.column, finding, changes, new_field=contract is not None and spec is None,
                                path=path, struct_types=struct_types))
    return out


def _proposed_format(finding: FindingLike, spec: FieldSpec | None) -> str | None:
    """The format a finding's values show, for a text field (or a new one) that names none; else None."""
    fmt = FORMAT_OF_TYPE.get(finding.pii_type)
    if fmt is None or finding.hit_rate is None or finding.hit_rate < FORMAT_MIN_HIT_RATE:
        return None  # a name alone says nothing about the values' format
    if spec is not None and (spec.format is not None or logical_type(spec.type) != "string"):
        return None
    return fmt


def undeclared(findings: list[FindingLike], contract: Contract) -> list[FindingLike]:
    """Findings on columns the contract does not mark `pii: true` (missing from it, or pii false; a struct field
    is declared by its own `pii` or its struct's)."""
    return [f for f in findings if not any(s.pii for s in _declared_chain(contract, _path_of(f)))]


def _scalar(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()


def _render(key: str, value: Any) -> str:
    if key == "masking" and isinstance(value, dict) and set(value) == {"method"}:
        return f"{key}: {value['method']}"
    if isinstance(value, dict):
        inner = ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items())
        return f"{key}: {{ {inner} }}"
    return f"{key}: {_scalar(value)}"


@dataclass
class _Entry:
    """One `- name:` entry of a patch: a proposal's field, or a struct holding proposed fields."""

    proposal: Proposal | None = None
    struct_type: str | None = None
    children: dict[str, _Entry] = field(default_factory=dict)


def _entries(proposals: list[Proposal], depth: int = 0) -> dict[str, _Entry]:
    """The proposals as a tree of entries by name, from `depth` names down their paths."""
    root: dict[str, _Entry] = {}
    for prop in proposals:
        names, level = prop.names()[depth:], root
        for i, name in enumerate(names):
            entry = level.setdefault(name, _Entry())
            if i == len(names) - 1:
                entry.proposal = prop
            if depth + i < len(prop.struct_types) and prop.struct_types[depth + i]:
                entry.struct_type = prop.struct_types[depth + i]
            level = entry.children
    return root


def _entry_lines(entries: dict[str, _Entry], dash: int, comments: bool) -> list[str]:
    """YAML lines for `entries` as a block list whose dashes are at column `dash`."""
    pad, inner = " " * dash, " " * (dash + 2)
    lines: list[str] = []
    for name, entry in entries.items():
        prop = entry.proposal
        if comments and prop is not None:
            about = "" if prop.finding.column == prop.column else f"{prop.finding.column}: "  # a struct for its field
            new = " (column not in the contract)" if prop.new_field else ""
            lines.append(f"{pad}# {about}{evidence(prop.finding)}{new}")
        lines.append(f"{pad}- name: {_scalar(name)}")
        if entry.struct_type:
            lines.append(f"{inner}type: {_scalar(entry.struct_type)}")
        if prop is not None:
            lines.extend(f"{inner}{_render(k, v)}" for k, v in prop.changes.items())
        if entry.children:
            lines.append(f"{inner}fields:")
            lines.extend(_entry_lines(entry.children, dash + 4, comments))
    return lines


def patch_yaml(proposals: list[Proposal], target: str | None = None) -> str:
    """The proposals as a YAML merge patch keyed by field name (struct fields under their struct's `fields`),
    with the evidence as comments."""
    head = f"# dqgov scan-pii: proposed changes{f' to {target}' if target else ''} (merge by field name)"
    if not proposals:
        return head + "\n# no changes proposed\n"
    return "\n".join([head, "schema:", "  fields:", *_entry_lines(_entries(proposals), 4, True)]) + "\n"


# --------------------------------------------------------------------------- in-place edit


def _mapping_get(node: yaml.MappingNode, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return k, v
    return None


def _line_end(text: str, index: int) -> int:
    end = text.find("\n", index)
    return len(text) if end < 0 else end


def write_proposals(path: str | Path, proposals: list[Proposal]) -> str:
    """Edit the contract file in place (comments kept); returns the new text. Raises ContractError."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    root = yaml.compose(text)
    where = SourceLocation(str(path))
    fields_node = None
    if isinstance(root, yaml.MappingNode) and (schema := _mapping_get(root, "schema")):
        if isinstance(schema[1], yaml.MappingNode) and (found := _mapping_get(schema[1], "fields")):
            fields_node = found[1]
    if not isinstance(fields_node, yaml.SequenceNode) or fields_node.flow_style or not fields_node.value:
        raise ContractError("cannot edit: schema.fields is not a block list; apply the patch by hand", where)
    # (start, end, -depth, kind, replacement): inserts at one place land deepest first, an entry's own keys before
    # its `fields`, and both before the entries appended after it
    for struct_type in {t for prop in proposals for t in prop.struct_types if t and not is_spark_type(t)}:
        raise ContractError(f"the proposed edit would write the type {struct_type!r}, which the contract's type "
                            "syntax cannot read (a member name with a backtick); apply the patch by hand", where)
    edits: list[tuple[int, int, int, int, str]] = []
    groups: dict[int, tuple[yaml.Node, int, list[Proposal]]] = {}  # the list or entry new entries go under
    for prop in proposals:
        names, items = prop.names(), fields_node
        for depth, name in enumerate(names):
            item = _item_named(items, name)
            if item is None:  # appended to this list, its struct entries with it
                groups.setdefault(id(items), (items, depth, []))[2].append(prop)
                break
            where_item = SourceLocation(str(path), item.start_mark.line + 1)
            if item.flow_style:
                raise ContractError(f"cannot edit field {'.'.join(names[:depth + 1])!r}: it is written in flow "
                                    "style; apply the patch by hand", where_item)
            if depth == len(names) - 1:
                edits.extend(_key_edits(text, item, prop, depth))
                break
            sub = _mapping_get(item, "fields")
            if sub is None:  # the struct's entry gets a `fields` list
                groups.setdefault(id(item), (item, depth + 1, []))[2].append(prop)
                break
            if not isinstance(sub[1], yaml.SequenceNode) or sub[1].flow_style or not sub[1].value:
                raise ContractError(f"cannot edit field {'.'.join(names[:depth + 1])!r}: its `fields` is not a block "
                                    "list; apply the patch by hand", where_item)
            items = sub[1]
    for anchor, depth, props in groups.values():
        entries = _entries(props, depth)
        if isinstance(anchor, yaml.SequenceNode):
            last = anchor.value[-1]
            lines = _entry_lines(entries, max(last.start_mark.column - 2, 0), False)
            at, kind, level = _line_end(text, _last_index(last)), 2, depth
        else:
            indent = _mapping_get(anchor, "name")[0].start_mark.column  # type: ignore[index]
            lines = [f"{' ' * indent}fields:", *_entry_lines(entries, indent + 2, False)]
            at, kind, level = _line_end(text, _last_index(anchor)), 1, depth - 1
        edits.append((at, at, -level, kind, "".join(f"\n{line}" for line in lines)))
    for start, end, _depth, _kind, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    try:
        Contract.model_validate(yaml.safe_load(text))
    except ValidationError as exc:  # the first problem, as the model words it (no value of the data is in it)
        first = exc.errors()[0]
        at = ".".join(map(str, first["loc"]))
        raise ContractError(f"the proposed edit would make the contract invalid: {at + ': ' if at else ''}"
                            f"{first['msg']}; apply the patch by hand", where) from None
    except Exception as exc:  # noqa: BLE001 - any failure means the edit must not be written
        raise ContractError(f"the proposed edit would make the contract invalid ({exc.__class__.__name__})", where) from None
    path.write_text(text, encoding="utf-8")
    return text


def _item_named(items: yaml.SequenceNode, name: str) -> yaml.MappingNode | None:
    """The entry of a `fields` list with this name, or None."""
    for item in items.value:
        if isinstance(item, yaml.MappingNode) and (found := _mapping_get(item, "name")) and found[1].value == name:
            return item
    return None


def _key_edits(text: str, item: yaml.MappingNode, prop: Proposal, depth: int) -> list[tuple[int, int, int, int, str]]:
    """A listed field's changes: its keys' values replaced, missing keys added after its name."""
    name_key, name_value = _mapping_get(item, "name")  # type: ignore[misc]
    indent = " " * name_key.start_mark.column
    edits, inserts = [], []
    for key, value in prop.changes.items():
        existing = _mapping_get(item, key)
        if existing is not None:
            edits.append((existing[1].start_mark.index, existing[1].end_mark.index, -depth, 0,
                          _render(key, value).split(": ", 1)[1]))
        else:
            inserts.append(f"\n{indent}{_render(key, value)}")
    if inserts:
        at = _line_end(text, name_value.end_mark.index)
        edits.append((at, at, -depth, 0, "".join(inserts)))
    return edits


def _last_index(node: yaml.Node) -> int:
    """Index of the end of the last scalar inside a node (block nodes end at the next token)."""
    if isinstance(node, yaml.MappingNode) and node.value:
        return _last_index(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and node.value and not node.flow_style:
        return _last_index(node.value[-1])
    return node.end_mark.index

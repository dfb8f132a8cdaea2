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

from dq_governance.contracts.consistency import Problem
from dq_governance.contracts.model import Contract, FieldSpec
from dq_governance.contracts.spark_types import logical_type
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
    """Changes for one column; `new_field` when the contract does not list the column at all."""

    column: str
    finding: FindingLike
    changes: dict[str, Any] = field(default_factory=dict)
    new_field: bool = False


def evidence(finding: FindingLike) -> str:
    """One line of evidence: entity, confidence, hit rate, name match (never a value)."""
    parts = [f"{finding.pii_type}, confidence {finding.confidence:.2f}"]
    if finding.hit_rate is not None:
        parts.append(f"{finding.hit_rate:.1%} of {finding.non_null} sampled values match")
    if finding.name_match:
        parts.append("column name matches")
    return "; ".join(parts)


def propose(findings: list[FindingLike], contract: Contract | None = None) -> list[Proposal]:
    """The changes each finding asks of the contract; settings the author already made are kept.

    A column the contract declares PII, or already masks (its own `masking`, a `masking` policy, or
    `undeclared_columns: mask` for a column it does not list), keeps the masking it has: no `masking` is
    proposed, nor a `classification` that a `masking.by_classification` entry could turn into another mask.
    """
    from dq_governance.masking.policies import masked_columns, undeclared_spec

    masked = masked_columns(contract) if contract is not None else {}
    masks_undeclared = contract is not None and undeclared_spec(contract) is not None
    out = []
    for finding in findings:
        classification, masking = PROPOSALS[finding.pii_type]
        spec = contract.field(finding.column) if contract is not None else None
        declared_pii = spec is not None and spec.pii
        already_masked = finding.column in masked or (spec is None and masks_undeclared)
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
            out.append(Proposal(finding.column, finding, changes, new_field=contract is not None and spec is None))
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
    """Findings on columns the contract does not mark `pii: true` (missing from it, or pii false)."""
    out = []
    for finding in findings:
        spec = contract.field(finding.column)
        if spec is None or not spec.pii:
            out.append(finding)
    return out


def _scalar(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()


def _render(key: str, value: Any) -> str:
    if key == "masking" and isinstance(value, dict) and set(value) == {"method"}:
        return f"{key}: {value['method']}"
    if isinstance(value, dict):
        inner = ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items())
        return f"{key}: {{ {inner} }}"
    return f"{key}: {_scalar(value)}"


def patch_yaml(proposals: list[Proposal], target: str | None = None) -> str:
    """The proposals as a YAML merge patch keyed by field name, with the evidence as comments."""
    head = f"# dqgov scan-pii: proposed changes{f' to {target}' if target else ''} (merge by field name)"
    if not proposals:
        return head + "\n# no changes proposed\n"
    lines = [head, "schema:", "  fields:"]
    for prop in proposals:
        lines.append(f"    # {evidence(prop.finding)}{' (column not in the contract)' if prop.new_field else ''}")
        lines.append(f"    - name: {_scalar(prop.column)}")
        lines.extend(f"      {_render(k, v)}" for k, v in prop.changes.items())
    return "\n".join(lines) + "\n"


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
    by_name = {}
    for item in fields_node.value:
        if isinstance(item, yaml.MappingNode) and (name := _mapping_get(item, "name")):
            by_name[name[1].value] = item
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), applied back to front
    for prop in proposals:
        item = by_name.get(prop.column)
        if item is None:
            continue
        if item.flow_style:
            raise ContractError(
                f"cannot edit field {prop.column!r}: it is written in flow style; apply the patch by hand",
                SourceLocation(str(path), item.start_mark.line + 1),
            )
        name_key, name_value = _mapping_get(item, "name")  # type: ignore[misc]
        indent = " " * name_key.start_mark.column
        inserts = []
        for key, value in prop.changes.items():
            existing = _mapping_get(item, key)
            if existing is not None:
                edits.append((existing[1].start_mark.index, existing[1].end_mark.index, _render(key, value).split(": ", 1)[1]))
            else:
                inserts.append(f"\n{indent}{_render(key, value)}")
        if inserts:
            at = _line_end(text, name_value.end_mark.index)
            edits.append((at, at, "".join(inserts)))
    new_fields = [p for p in proposals if p.column not in by_name]
    if new_fields:
        last = fields_node.value[-1]
        indent = " " * last.start_mark.column
        dash = " " * max(last.start_mark.column - 2, 0)
        at = _line_end(text, _last_index(last))
        block = "".join(
            f"\n{dash}- name: {_scalar(p.column)}" + "".join(f"\n{indent}{_render(k, v)}" for k, v in p.changes.items())
            for p in new_fields
        )
        edits.append((at, at, block))
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + replacement + text[end:]
    try:
        Contract.model_validate(yaml.safe_load(text))
    except Exception as exc:  # noqa: BLE001 - any failure means the edit must not be written
        raise ContractError(f"the proposed edit would make the contract invalid ({exc.__class__.__name__})", where) from None
    path.write_text(text, encoding="utf-8")
    return text


def _last_index(node: yaml.Node) -> int:
    """Index of the end of the last scalar inside a node (block nodes end at the next token)."""
    if isinstance(node, yaml.MappingNode) and node.value:
        return _last_index(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and node.value and not node.flow_style:
        return _last_index(node.value[-1])
    return node.end_mark.index

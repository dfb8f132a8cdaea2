"""Which columns are masked and how: field `masking`, else policy by classification, else policy for PII.

Under `schema.undeclared_columns: mask`, the data columns the contract does not declare are masked too, with
the policy's PII default (`undeclared_masks`): a column nobody classified is treated as PII.
Spark-free: the lineage and catalog code read `masked_columns` to tag columns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from dq_governance.contracts.model import Contract, MaskingPolicy, MaskingSpec, undeclared_columns
from dq_governance.errors import ContractError, SourceLocation

#: a `pii: true` field that neither its own `masking` nor any policy covers is still masked:
#: an unmasked PII column must be an explicit `masking: none`
DEFAULT_PII_SPEC = MaskingSpec(method="hmac")
#: methods that need the secret key
KEYED_METHODS = frozenset({"hmac", "tokenize"})


def effective_policy(contract: Contract, project: MaskingPolicy | None = None) -> MaskingPolicy:
    """The contract's masking policy laid over a project policy (contract keys win)."""
    own = contract.masking
    if project is None:
        return own or MaskingPolicy()
    if own is None:
        return project
    data: dict[str, Any] = project.model_dump(exclude_unset=True)
    data.update(own.model_dump(exclude_unset=True))
    data["by_classification"] = {**project.model_dump()["by_classification"], **own.model_dump()["by_classification"]}
    return MaskingPolicy.model_validate(data)


def masked_columns(contract: Contract, policy: MaskingPolicy | None = None) -> dict[str, MaskingSpec]:
    """Dotted column path -> the effective masking spec; columns resolved to `none` are left out."""
    merged = effective_policy(contract, policy)
    out: dict[str, MaskingSpec] = {}
    for path, spec in contract.iter_fields():
        chosen = field_spec(spec.masking, spec.classification, spec.pii, merged)
        if chosen is not None and chosen.method != "none":
            out[path] = chosen
    # a masked struct already hides its children; masking them too would address dropped fields
    return {p: s for p, s in out.items() if not any(p.startswith(f"{q}.") for q in out if q != p)}


def undeclared_masks(
    contract: Contract, columns: list[str], policy: MaskingPolicy | None = None
) -> dict[str, MaskingSpec]:
    """Under `undeclared_columns: mask`: each undeclared column of `columns` -> the PII default (else hmac)."""
    spec = undeclared_spec(contract, policy)
    if spec is None:
        return {}
    return {name: spec for name in undeclared_columns(contract, columns)}


def undeclared_spec(contract: Contract, policy: MaskingPolicy | None = None) -> MaskingSpec | None:
    """The spec any undeclared column would be masked with (known before the data is read), else None."""
    if contract.schema_.undeclared_columns != "mask" or not contract.column_names():
        return None  # with no declared field, no column is undeclared (contracts.model.undeclared_columns)
    spec = effective_policy(contract, policy).pii or DEFAULT_PII_SPEC
    return None if spec.method == "none" else spec  # `none`: the contract's own decision, PII is not masked


def field_spec(
    own: MaskingSpec | None, classification: str | None, pii: bool, policy: MaskingPolicy
) -> MaskingSpec | None:
    """A field's masking: its own, else the policy's for its classification, else (PII) the policy's or hmac."""
    if own is not None:
        return own
    if classification is not None and classification in policy.by_classification:
        return policy.by_classification[classification]
    if pii:
        return policy.pii or DEFAULT_PII_SPEC
    return None


def needs_key(specs: dict[str, MaskingSpec]) -> bool:
    """True when any spec is keyed (hmac, tokenize)."""
    return any(spec.method in KEYED_METHODS for spec in specs.values())


def load_policy_file(path: str | Path) -> MaskingPolicy:
    """A project policy file: a YAML mapping with the contract's `masking:` keys (optionally under `masking:`)."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ContractError(f"cannot read masking policy: {exc.strerror}", SourceLocation(str(path))) from None
    except UnicodeDecodeError:
        raise ContractError("masking policy is not UTF-8 text", SourceLocation(str(path))) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ContractError(f"invalid YAML: {getattr(exc, 'problem', exc)}", SourceLocation(str(path), line)) from None
    if isinstance(doc, dict) and set(doc) == {"masking"}:
        doc = doc["masking"]
    try:
        return MaskingPolicy.model_validate(doc or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ContractError(first["msg"], SourceLocation(str(path)), field=where or None) from None

"""Write the contract model back as concise native YAML: defaults left out, sections in the authoring order."""

from __future__ import annotations

from typing import Any

import yaml

from dq_governance.contracts.model import Contract

SECTION_ORDER = ("contract", "dataset", "schema", "service_level", "quality", "roles", "governance", "masking",
                 "extensions")
_RULE_HEAD = ("type", "name", "column", "columns")
_RULE_TAIL = ("warn", "must_be", "severity", "action", "filter", "dimension", "description")


def contract_to_native(contract: Contract) -> dict[str, Any]:
    """The contract as a native document: only what differs from the defaults, shorthands where they exist."""
    dumped = contract.model_dump(mode="json", exclude_defaults=True, by_alias=True)
    doc = {key: dumped[key] for key in SECTION_ORDER if key in dumped}
    for spec in _walk_fields(doc.get("schema", {}).get("fields", [])):
        if isinstance(spec.get("masking"), dict) and set(spec["masking"]) == {"method"}:
            spec["masking"] = spec["masking"]["method"]
    quality = doc.get("quality")
    if quality and quality.get("rules"):
        quality["rules"] = [_rule_order(rule) for rule in quality["rules"]]
        doc["quality"] = {k: quality[k] for k in ("on_failure", "minimum_valid_ratio", "rules") if k in quality}
    level = doc.get("service_level") or {}
    fresh = level.get("freshness")
    if isinstance(fresh, dict) and set(fresh) == {"max_age"}:
        level["freshness"] = fresh["max_age"]  # `freshness: 60m` reads back as the same model
    roles = doc.get("roles") or {}
    for key in ("owner", "steward"):
        if isinstance(roles.get(key), dict) and set(roles[key]) == {"name"}:
            roles[key] = roles[key]["name"]
    for key in (contract.roles.other_roles if contract.roles else {}):
        parties = [p["name"] if set(p) == {"name"} else p for p in roles.get(key) or []]
        roles[key] = parties[0] if len(parties) == 1 else parties  # `engineering: team-x`, as authors write it
    masking = doc.get("masking") or {}
    for key, spec in list((masking.get("by_classification") or {}).items()):
        if isinstance(spec, dict) and set(spec) == {"method"}:
            masking["by_classification"][key] = spec["method"]
    if isinstance(masking.get("pii"), dict) and set(masking["pii"]) == {"method"}:
        masking["pii"] = masking["pii"]["method"]
    return doc


def to_yaml(data: Any) -> str:
    """Readable YAML: keys in the given order, no anchors, multi-line strings as blocks, UTF-8 kept."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120, default_flow_style=False)


def _walk_fields(fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for spec in fields:
        out.append(spec)
        out.extend(_walk_fields(spec.get("fields") or []))
    return out


def _rule_order(rule: dict[str, Any]) -> dict[str, Any]:
    head = [k for k in _RULE_HEAD if k in rule]
    tail = [k for k in _RULE_TAIL if k in rule]
    middle = [k for k in rule if k not in head and k not in tail]
    return {k: rule[k] for k in head + middle + tail}


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # the same list twice is written twice, never as &id001
        return True


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_representer)

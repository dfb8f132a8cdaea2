"""Offline validation of OpenLineage events: the event schema, then every facet against its `_schemaURL`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

HERE = Path(__file__).resolve().parent
SPEC = HERE / "fixtures" / "openlineage-spec"
CUSTOM = HERE.parent / "dq_governance" / "lineage" / "schemas"


def _registry() -> Registry:
    docs = [SPEC / "OpenLineage.json", *sorted((SPEC / "facets").glob("*.json")), *sorted(CUSTOM.glob("*.json"))]
    resources = []
    for path in docs:
        doc = json.loads(path.read_text())
        resources.append((doc["$id"], Resource.from_contents(doc)))
    return Registry().with_resources(resources)


REGISTRY = _registry()
EVENT_ID = json.loads((SPEC / "OpenLineage.json").read_text())["$id"]


def _validator(url: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": url}, registry=REGISTRY)


def iter_facets(event: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(where, key, facet) for every facet in a run event."""
    yield from (("run", k, v) for k, v in (event.get("run", {}).get("facets") or {}).items())
    yield from (("job", k, v) for k, v in (event.get("job", {}).get("facets") or {}).items())
    for side in ("inputs", "outputs"):
        for index, dataset in enumerate(event.get(side) or []):
            for group in ("facets", "inputFacets", "outputFacets"):
                for key, facet in (dataset.get(group) or {}).items():
                    yield f"{side}[{index}].{group}", key, facet


def validation_errors(event: dict[str, Any]) -> list[str]:
    """Every schema violation of the event and of each facet, as readable strings (empty when valid)."""
    errors = [f"event: {e.message} at {list(e.absolute_path)}"
              for e in _validator(f"{EVENT_ID}#/$defs/RunEvent").iter_errors(event)]
    for where, key, facet in iter_facets(event):
        url = facet.get("_schemaURL")
        try:
            REGISTRY.resolver().lookup(url)
        except Exception:
            errors.append(f"{where}.{key}: _schemaURL {url!r} is not a known schema")
            continue
        errors.extend(f"{where}.{key}: {e.message} at {list(e.absolute_path)}"
                      for e in _validator(url).iter_errors(facet))
    return errors

"""Schema drift: columns added, removed or retyped since the last run of the same pipeline.

A schema is a plain {column: Spark simpleString type} dict, stored in the report history as JSON
(`run_schema`), so comparing two runs needs no Spark.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class SchemaChange:
    """One difference between the previous and the current schema."""

    kind: str  # added | removed | type_changed
    column: str
    before: str | None
    after: str | None

    def describe(self) -> str:
        """One readable phrase, e.g. `column valor changed type decimal(12,2) -> string`."""
        if self.kind == "added":
            return f"column {self.column} added ({self.after})"
        if self.kind == "removed":
            return f"column {self.column} removed (was {self.before})"
        return f"column {self.column} changed type {self.before} -> {self.after}"


def schema_of(struct: Any) -> dict[str, str]:
    """{name: type} of a Spark StructType (top-level fields, in order)."""
    return {f.name: f.dataType.simpleString() for f in struct.fields}


def encode_schema(schema: Mapping[str, str] | None) -> str | None:
    """The JSON text stored in the history's `run_schema` column (order kept)."""
    return None if schema is None else json.dumps([[name, kind] for name, kind in schema.items()])


def decode_schema(text: str | None) -> dict[str, str] | None:
    """The inverse of encode_schema; None for a run recorded without a schema."""
    if not text:
        return None
    return {name: kind for name, kind in json.loads(text)}


def schema_drift(previous: Mapping[str, str], current: Mapping[str, str]) -> list[SchemaChange]:
    """Changes from `previous` to `current`: removals and type changes in previous order, then additions."""
    changes = []
    for name, before in previous.items():
        if name not in current:
            changes.append(SchemaChange("removed", name, before, None))
        elif current[name] != before:
            changes.append(SchemaChange("type_changed", name, before, current[name]))
    changes.extend(SchemaChange("added", name, None, after) for name, after in current.items() if name not in previous)
    return changes

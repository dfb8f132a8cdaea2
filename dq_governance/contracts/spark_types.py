"""Spark SQL type strings: recognise them and translate database / ODCS types into them (no Spark)."""

from __future__ import annotations

import re
from typing import Any
from dataclasses import dataclass

_SIMPLE = {
    "string", "boolean", "tinyint", "byte", "smallint", "short", "int", "integer", "bigint", "long",
    "float", "real", "double", "date", "timestamp", "timestamp_ntz", "timestamp_ltz", "binary", "variant",
    "void",
}  # fmt: skip
_DECIMAL_RE = re.compile(r"^(?:decimal|dec|numeric)(?:\(\s*\d+\s*(?:,\s*\d+\s*)?\))?$")
# Types a database or another tool writes, mapped to the Spark type that reads them without loss.
_ALIASES: dict[str, str] = {
    "text": "string", "clob": "string", "uuid": "string", "json": "string", "jsonb": "string", "xml": "string",
    "bool": "boolean", "int2": "smallint", "int4": "int", "int8": "bigint", "float4": "float", "float8": "double",
    "double precision": "double", "number": "decimal(38,10)", "datetime": "timestamp", "datetime2": "timestamp",
    "timestamptz": "timestamp", "timestamp with time zone": "timestamp",
    "timestamp without time zone": "timestamp_ntz", "bytea": "binary", "blob": "binary", "varbinary": "binary",
}  # fmt: skip
_STRINGISH_RE = re.compile(r"^(n?varchar|n?char|character varying|character|varchar2)(?:\s*\(\s*(\d+)\s*\))?$")
_NUMBER_RE = re.compile(r"^number\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$")
_LOGICAL_DEFAULTS = {
    "string": "string", "integer": "bigint", "number": "double", "boolean": "boolean", "date": "date",
    "timestamp": "timestamp", "time": "string",
}  # fmt: skip


def is_spark_type(text: str) -> bool:
    """True when `text` is a Spark SQL type string (primitive, decimal, array, map or struct)."""
    try:
        rest = _parse(text.strip())
    except ValueError:
        return False
    return rest == ""


def to_spark_type(physical: str | None) -> str | None:
    """A physical (database or Spark) type as a Spark type string, or None when not recognised."""
    if not physical:
        return None
    text = str(physical).strip()
    if is_spark_type(text) and not _STRINGISH_RE.match(text.lower()):
        return text
    low = re.sub(r"\s+", " ", text.lower())
    if low in _ALIASES:
        return _ALIASES[low]
    match = _STRINGISH_RE.match(low)
    if match:
        # a length limit stays one (the type rule checks it: char_limit); fixed width is char's alone
        kind, length = match.groups()
        if length is None:
            return "string"
        return f"{'char' if kind in ('char', 'nchar', 'character') else 'varchar'}({length})"
    match = _NUMBER_RE.match(low)
    if match:
        return f"decimal({match.group(1)},{match.group(2) or 0})"
    return None


def char_limit(type_text: str) -> int | None:
    """The length limit of a `varchar(n)` or `char(n)` type, or None: Spark reads both as string, losing n."""
    match = _CHAR_TYPE_RE.match(type_text)
    return int(match.group(1)) if match else None


def member_type(spark_type: str) -> str:
    """A field's type as a member of a struct, array or map type string: char(n) and varchar(n) are `string`
    there (a length is checked only as a field's own type; the nested field keeps it)."""
    return "string" if char_limit(spark_type) is not None else spark_type


_CHAR_TYPE_RE = re.compile(r"^\s*(?:var)?char\s*\(\s*(\d+)\s*\)\s*$", re.IGNORECASE)


def spark_type_for(physical: str | None, logical: str | None) -> str:
    """The Spark type for an ODCS property: its physicalType when recognised, else from its logicalType."""
    return to_spark_type(physical) or _LOGICAL_DEFAULTS.get(str(logical or "string"), "string")


def logical_type(spark_type: str) -> str | None:
    """The ODCS logicalType of a Spark type string (None for types ODCS has no name for)."""
    low = spark_type.strip().lower()
    head = re.split(r"[<(]", low, maxsplit=1)[0].strip()
    if head in ("string", "varchar", "char", "binary"):
        return "string"
    if head in ("tinyint", "byte", "smallint", "short", "int", "integer", "bigint", "long"):
        return "integer"
    if head in ("float", "real", "double", "decimal", "dec", "numeric"):
        return "number"
    if head == "boolean":
        return "boolean"
    if head == "date":
        return "date"
    if head.startswith("timestamp"):
        return "timestamp"
    if head == "array":
        return "array"
    if head in ("struct", "map"):
        return "object"
    return None


@dataclass(frozen=True)
class StructMember:
    """One member of a struct type string."""

    name: str
    type: str
    not_null: bool


def type_text(data_type: Any) -> str:
    """A Spark DataType as contract type text: its simpleString, with struct member names that are not plain
    identifiers backquoted (`struct<x.y:string>` is no type string; `struct<`x.y`:string>` is)."""
    fields = getattr(data_type, "fields", None)
    if fields is not None:
        return "struct<" + ",".join(f"{_member_text(f.name)}:{type_text(f.dataType)}" for f in fields) + ">"
    element = getattr(data_type, "elementType", None)
    if element is not None:
        return f"array<{type_text(element)}>"
    key = getattr(data_type, "keyType", None)
    if key is not None:
        return f"map<{type_text(key)},{type_text(data_type.valueType)}>"
    return data_type.simpleString()


def _member_text(name: str) -> str:
    # a name holding a backtick cannot be written (the text stays unreadable, and callers test is_spark_type)
    return name if _PLAIN_NAME_RE.match(name) or "`" in name else f"`{name}`"


_PLAIN_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def struct_members(text: str) -> list[StructMember] | None:
    """The members of a `struct<...>` type string, in order; None for another type or an unreadable one."""
    whole = text.strip()
    if not whole.lower().startswith("struct<") or not is_spark_type(whole):
        return None
    members: list[StructMember] = []
    rest = whole[len("struct<"):].lstrip()
    while not rest.startswith(">"):
        match = _MEMBER_RE.match(rest)
        assert match is not None  # is_spark_type parsed it
        after = rest[match.end():]
        rest = _parse(after)
        member_type = after[:len(after) - len(rest)].strip()
        not_null = rest.lower().startswith("not null")
        if not_null:
            rest = rest[len("not null"):].lstrip()
        members.append(StructMember(match.group(1).strip("`"), member_type, not_null))
        rest = rest[1:].lstrip() if rest.startswith(",") else rest
    return members


# --------------------------------------------------------------------------- a small recursive parser

_MEMBER_RE = re.compile(r"^(`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)\s*:?\s*")


def _parse(text: str) -> str:
    """Consume one type from the front of `text`; return the rest (raise ValueError when none)."""
    low = text.lower()
    for head, parser in (("array<", _parse_array), ("map<", _parse_map), ("struct<", _parse_struct)):
        if low.startswith(head):
            return parser(text[len(head):])
    match = re.match(r"^([a-z_]+(?:\s*\(\s*\d+\s*(?:,\s*\d+\s*)?\))?)", low)
    if not match:
        raise ValueError(text)
    word = match.group(1)
    base = word.split("(")[0].strip()
    if not (base in _SIMPLE and "(" not in word) and not _DECIMAL_RE.match(word) and not _STRINGISH_RE.match(word):
        raise ValueError(text)
    return text[match.end():].lstrip()


def _close(rest: str) -> str:
    rest = rest.lstrip()
    if not rest.startswith(">"):
        raise ValueError(rest)
    return rest[1:].lstrip()


def _parse_array(text: str) -> str:
    return _close(_parse(text.lstrip()))


def _parse_map(text: str) -> str:
    rest = _parse(text.lstrip())
    if not rest.startswith(","):
        raise ValueError(rest)
    return _close(_parse(rest[1:].lstrip()))


def _parse_struct(text: str) -> str:
    rest = text.lstrip()
    if rest.startswith(">"):
        return rest[1:].lstrip()
    while True:
        match = _MEMBER_RE.match(rest)
        if not match:
            raise ValueError(rest)
        rest = _parse(rest[match.end():])
        if rest.lower().startswith("not null"):
            rest = rest[len("not null"):].lstrip()
        if rest.startswith(","):
            rest = rest[1:].lstrip()
            continue
        return _close(rest)

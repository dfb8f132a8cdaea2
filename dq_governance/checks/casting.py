"""Type conformance: cast raw input columns (often strings from CSV/JSON) to the contract's types.

A value that does not cast becomes null in the typed column and is a violation of `<field>_type`;
a null or blank text value is not a type violation (`required` handles it).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DateType,
    MapType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from dq_governance.checks import compat
from dq_governance.checks.formats import parse_date, parse_timestamp
from dq_governance.errors import ContractError


@dataclass(frozen=True)
class Conversion:
    """How one raw column becomes its declared type."""

    typed: Column  # the value in the declared type (null when it does not convert)
    can_fail: bool  # False when every value converts (same type, or to string)
    text_source: bool  # the raw column is text, so a blank value counts as no value
    changes: bool = True  # False when the raw column already has the declared type

    def violation(self, raw: Column, typed: Column) -> Column | None:
        """True where a present raw value did not convert; `raw`/`typed` may be column references."""
        if not self.can_fail:
            return None
        present = raw.isNotNull() & (F.trim(raw) != F.lit("")) if self.text_source else raw.isNotNull()
        return present & typed.isNull()


def parse_type(type_text: str, where: str = "type") -> DataType:
    """The Spark DataType of a contract type string such as `long` or `decimal(12,2)`."""
    try:
        return compat.parse_type(type_text)
    except Exception as exc:  # pyspark raises several parse error classes
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ContractError(f"invalid Spark type {type_text!r}: {first}", field=where) from None


def same_type(left: DataType, right: DataType) -> bool:
    """Equal Spark types, ignoring nullability and field metadata."""
    return left.simpleString() == right.simpleString()


def convert(
    raw: str | Column, raw_type: DataType, declared: DataType, date_format: str | None = None
) -> Conversion:
    """The typed value of a raw column (SQL text such as a quoted name, or a Column), and whether it can fail."""
    if same_type(raw_type, declared):
        return Conversion(compat.column(raw), can_fail=False, text_source=False, changes=False)
    if isinstance(declared, StringType):
        return Conversion(compat.column(raw).cast("string"), can_fail=False, text_source=False)
    if not isinstance(raw_type, StringType):
        return Conversion(compat.try_cast(raw, declared), can_fail=True, text_source=False)
    if isinstance(declared, DateType):
        typed = parse_date(raw, date_format)
    elif isinstance(declared, (TimestampType, TimestampNTZType)):
        typed = parse_timestamp(raw, date_format).cast(declared)
    elif isinstance(declared, (ArrayType, MapType, StructType)):
        typed = F.from_json(compat.column(raw), declared, {"mode": "PERMISSIVE"})
    else:
        typed = compat.try_cast(raw, declared)
    return Conversion(typed, can_fail=True, text_source=True)

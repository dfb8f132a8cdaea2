"""Type conformance: cast raw input columns (often strings from CSV/JSON) to the contract's types.

A value that does not cast becomes null in the typed column and is a violation of `<field>_type`;
a null or blank text value is not a type violation (`required` handles it).

Structs convert field by field, matched by name (Spark's own cast pairs fields by position and would
relabel them); arrays and maps element by element, and a nested value that does not convert makes the
whole value null. A column whose type can never become the declared one (a struct declared `string`, a
date declared `int`) violates on every present value instead of failing the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Any, Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    FractionalType,
    IntegralType,
    MapType,
    NumericType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
)

from dq_governance.checks import compat
from dq_governance.checks.formats import TEMPORAL_TYPES, parse_date, parse_timestamp, parse_timestamp_ntz
from dq_governance.errors import ContractError
from dq_governance.identifiers import quote_identifier


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
        parsed = compat.parse_type(type_text)
    except Exception as exc:  # pyspark raises several parse error classes
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ContractError(f"invalid Spark type {type_text!r}: {first}", field=where) from None
    if _holds_char(parsed):  # its length would not be checked: a nested field of its own holds one
        raise ContractError(f"type {type_text!r}: char(n) and varchar(n) are checked only as a field's own type; "
                            "declare the member as a field (`fields`) with that type", field=where)
    return parsed


def _holds_char(data_type: DataType) -> bool:
    """Whether a char(n) or varchar(n) is anywhere inside the type (a struct's field, an element, a key, a value)."""
    if isinstance(data_type, (CharType, VarcharType)):
        return True
    if isinstance(data_type, StructType):
        return any(_holds_char(f.dataType) for f in data_type.fields)
    if isinstance(data_type, ArrayType):
        return _holds_char(data_type.elementType)
    if isinstance(data_type, MapType):
        return _holds_char(data_type.keyType) or _holds_char(data_type.valueType)
    return False


def too_long(typed: Column, limit: int) -> Column:
    """True where a text value is longer than `limit` characters, trailing spaces aside (as Spark's own
    char/varchar write check: a value of `limit` characters and padding fits)."""
    return F.length(F.rtrim(typed)) > F.lit(limit)


def same_type(left: DataType, right: DataType) -> bool:
    """Equal Spark types, ignoring nullability and field metadata."""
    return left.simpleString() == right.simpleString()


def convert(
    raw: str | Column, raw_type: DataType, declared: DataType, date_format: str | None = None,
    formats: Mapping[str, str] | None = None,
) -> Conversion:
    """The typed value of a raw column (SQL text such as a quoted name, or a Column), and whether it can fail;
    `formats`: the date formats of a struct's nested fields, by dotted path below the column."""
    if same_type(raw_type, declared):
        return Conversion(compat.column(raw), can_fail=False, text_source=False, changes=False)
    if never_converts(raw_type, declared):
        return _never(declared)
    if isinstance(raw_type, StringType):
        return Conversion(_from_text(raw, declared, date_format, formats), can_fail=True, text_source=True)
    if isinstance(declared, StringType):
        return Conversion(compat.column(raw).cast("string"), can_fail=False, text_source=False)
    nested = _NESTED.get(type(declared))
    if nested is not None:
        return nested(raw, raw_type, declared, formats or {})
    typed = compat.try_cast(raw, declared)
    if _drops_digits(raw_type, declared):
        # try_cast truncates 1.5 to the int 1 and rounds 1.2345 to decimal(10,2) 1.23: such a value does not convert
        typed = F.when(typed != compat.column(raw), F.lit(None)).otherwise(typed)  # compared in a type holding both
    elif isinstance(raw_type, DoubleType) and isinstance(declared, FloatType):
        # a double past the float's range casts to Infinity: it does not convert (an infinity stays one)
        typed = F.when(_infinite(typed) & ~_infinite(compat.column(raw)), F.lit(None)).otherwise(typed)
    return Conversion(typed, can_fail=True, text_source=False)


def comparable(raw: str, raw_type: DataType, declared: DataType) -> Column:
    """Another dataset's value (SQL text of its column) as compared with a column of type `declared`.

    Numbers stay as they are, and so do dates and timestamps: Spark compares two numbers in a type that holds
    both, and a date as the instant it starts. Anything else converts to `declared` only where the value
    converts exactly (null otherwise): try_cast would round 1.2345 to 1.23 and make it equal to a key it is not.
    """
    if (isinstance(raw_type, NumericType) and isinstance(declared, NumericType)) or (
            isinstance(raw_type, TEMPORAL_TYPES) and isinstance(declared, TEMPORAL_TYPES)):
        return compat.column(raw)
    return convert(raw, raw_type, declared).typed


def _drops_digits(raw_type: DataType, declared: DataType) -> bool:
    """A numeric conversion that would drop fractional digits: a fraction to an integer, a decimal to a smaller
    scale (a float or double to a decimal rounds to its scale, as Spark does: binary fractions have no digits)."""
    if isinstance(declared, IntegralType):
        return isinstance(raw_type, FractionalType) and not (isinstance(raw_type, DecimalType) and raw_type.scale == 0)
    return isinstance(raw_type, DecimalType) and isinstance(declared, DecimalType) and declared.scale < raw_type.scale


def never_converts(raw_type: DataType, declared: DataType) -> str | None:
    """Why no value of `raw_type` converts to `declared` (kinds Spark cannot cast between, a struct whose field
    names differ, or such a nested field, element, key or value), or None."""
    raw_kind, declared_kind = _kind(raw_type), _kind(declared)
    if None in (raw_kind, declared_kind) or "other" in (raw_kind, declared_kind) or raw_kind == "string":
        return None  # text parses; a type outside the table (variant, intervals) is Spark's to judge
    other_shape = raw_kind != declared_kind and (raw_kind in _COMPLEX or declared_kind in _COMPLEX)
    if other_shape or declared_kind in _NO_CAST.get(raw_kind, ()):
        return f"{raw_type.simpleString()} never converts to {declared.simpleString()}"
    return _nested_never(raw_type, declared)


def _nested_never(raw_type: DataType, declared: DataType) -> str | None:
    """The first struct field, element, key or value that never converts, named by where it is."""
    parts: list[tuple[str, DataType, DataType]] = []
    if isinstance(raw_type, StructType) and isinstance(declared, StructType):
        raw_names, declared_names = [f.name for f in raw_type.fields], [f.name for f in declared.fields]
        if sorted(n.lower() for n in raw_names) != sorted(n.lower() for n in declared_names):
            return (f"the struct's fields ({', '.join(raw_names)}) are not the declared ones "
                    f"({', '.join(declared_names)})")
        parts = [(f"field {target.name}", _source_field(raw_type, target.name).dataType, target.dataType)
                 for target in declared.fields]
    elif isinstance(raw_type, ArrayType) and isinstance(declared, ArrayType):
        parts = [("an element", raw_type.elementType, declared.elementType)]
    elif isinstance(raw_type, MapType) and isinstance(declared, MapType):
        parts = [("a key", raw_type.keyType, declared.keyType), ("a value", raw_type.valueType, declared.valueType)]
    for where, raw_part, declared_part in parts:
        reason = never_converts(raw_part, declared_part)
        if reason:
            return f"{where}: {reason}"
    return None


def _source_field(raw_type: StructType, name: str) -> Any:
    """The raw struct's field a declared field reads: the same name, else the same name in another case."""
    exact = {f.name: f for f in raw_type.fields}
    return exact.get(name) or {f.name.lower(): f for f in raw_type.fields}[name.lower()]


# kinds Spark's try_cast refuses to convert between (the same on 3.5 and 4.0; a test probes Spark for each pair)
_NO_CAST: dict[str, frozenset[str]] = {
    "boolean": frozenset({"date", "timestamp", "timestamp_ntz", "binary"}),
    "numeric": frozenset({"date", "timestamp_ntz", "binary"}),
    "date": frozenset({"boolean", "numeric", "binary"}),
    "timestamp": frozenset({"boolean", "binary"}),
    "timestamp_ntz": frozenset({"boolean", "numeric", "binary"}),
    "binary": frozenset({"boolean", "numeric", "date", "timestamp", "timestamp_ntz"}),
}  # fmt: skip (a struct, array or map converts only to its own kind)
_COMPLEX = ("struct", "array", "map")
_KINDS: tuple[tuple[type, str], ...] = (
    (StringType, "string"), (BooleanType, "boolean"), (NumericType, "numeric"), (DateType, "date"),
    (TimestampNTZType, "timestamp_ntz"), (TimestampType, "timestamp"), (BinaryType, "binary"),
    (StructType, "struct"), (ArrayType, "array"), (MapType, "map"),
)  # fmt: skip


def _kind(data_type: DataType) -> str | None:
    """The conversion family of a type; "other" for the rest (intervals, variant), None for null (void)."""
    if type(data_type).__name__ == "NullType":
        return None
    return next((kind for cls, kind in _KINDS if isinstance(data_type, cls)), "other")


def _never(declared: DataType) -> Conversion:
    """No value converts: the typed value is null, so every present value violates."""
    return Conversion(F.lit(None).cast(declared), can_fail=True, text_source=False)


def _from_text(raw: str | Column, declared: DataType, date_format: str | None,
               formats: Mapping[str, str] | None) -> Column:
    """A text value parsed as `declared` (null when it does not parse)."""
    if isinstance(declared, DateType):
        return parse_date(raw, date_format)
    if isinstance(declared, TimestampNTZType):
        return parse_timestamp_ntz(raw, date_format)
    if isinstance(declared, TimestampType):
        return parse_timestamp(raw, date_format)
    if isinstance(declared, (ArrayType, MapType, StructType)):
        return _from_json(compat.column(raw), declared, formats)
    if isinstance(declared, DecimalType):
        return _text_decimal(raw, declared)
    if isinstance(declared, (DoubleType, FloatType)):
        return _text_floating(raw, declared)
    return compat.try_cast(raw, declared)


#: the texts Spark reads as an infinity (Java's `Infinity`, and Spark's own `inf` forms), any case, signed or not
_INFINITY_TEXT = r"^\s*[+-]?[iI][nN][fF](?:[iI][nN][iI][tT][yY])?\s*$"


def _text_floating(raw: str | Column, declared: DataType) -> Column:
    """Text as a double or float; a number past the type's range does not convert.

    Java reads `1e309` as a double, and `1e39` as a float, to Infinity, so try_cast would publish a number that was
    never in the data. Only the text of an infinity (`Infinity`, `-inf`) converts to one.
    """
    text = compat.column(raw)
    typed = compat.try_cast(raw, declared)
    return F.when(_infinite(typed) & ~text.rlike(_INFINITY_TEXT), F.lit(None)).otherwise(typed)


def _infinite(value: Column) -> Column:
    # two comparisons, not abs(value) = Infinity: measured 1.0-1.05x the bare try_cast against 1.2-1.35x
    return (value == F.lit(float("inf"))) | (value == F.lit(float("-inf")))


def _text_decimal(raw: str | Column, declared: DecimalType) -> Column:
    """Text as decimal(p,s), null when its value has more fractional digits than s (try_cast would round "1.234"
    to 1.23): parsed with the same integer digits and the spare digits (to 18 in all below precision 18, else 38)
    as scale, and kept if s digits hold it unchanged; text longer than the wide scale can read, or in exponent
    form, has its fractional digits counted on the text itself."""
    text = compat.column(raw)
    plain = ~(text.contains("e") | text.contains("E"))
    # matched, not excluded: Java's BigDecimal also reads non-ASCII digits ("١.٢٣٤"), which no count here sees
    plain_within_scale = text.rlike(rf"^\s*[+-]?[0-9]*(?:\.[0-9]{{0,{declared.scale}}}0*)?\s*$")
    within_scale = F.when(plain, plain_within_scale).otherwise(_fraction_digits(text) <= declared.scale)
    if declared.precision == 38:  # no wider decimal
        return F.when(within_scale, compat.try_cast(raw, declared))
    whole = declared.precision - declared.scale
    # below 18 digits a decimal is a long, and a 38-digit parse (a BigDecimal) made the conversion 2.9 times
    # slower (benchmarks/bench_text_decimal.py): there the wide parse reads 18 digits in all
    wide_type = DecimalType(18, 18 - whole) if declared.precision < 18 else DecimalType(38, 38 - whole)
    # SQL text stays SQL text (one JVM call, any version or session kind); the wide type holds every value the
    # narrow one does, so comparing them never overflows (rounding 99.995 up to 100.00 in decimal(4,2) makes the
    # narrow value null, not an error)
    wide_sql = f"try_cast({raw} AS {wide_type.simpleString()})" if isinstance(raw, str) else None
    wide = F.expr(wide_sql) if wide_sql else compat.try_cast(raw, wide_type)
    narrow = compat.try_cast(wide_sql or wide, declared)
    # plain text has at most (its bytes - 1 - its integer digits) fractional digits: within the wide scale, the
    # wide parse read them all. The comparison stays the outer condition so Spark parses the text once (inside a
    # branch it parsed it three times: 3x).
    length = F.octet_length(text)
    read_whole = F.when(length <= wide_type.scale + 1, F.lit(True))
    if declared.precision < 18:
        # a value above 10^(k-1) has k integer digits at least, so text k bytes longer than the scale + 1 is read
        # whole when its value is; no byte is searched (a regex per row cost 3x, instr or log10 2x). Past the
        # array's end `get` is null: the digits are counted on the text.
        powers = F.array(*[F.lit(10 ** k) for k in range(whole)])
        read_whole = read_whole.otherwise(F.abs(wide.cast("long")) > F.get(powers, length - (wide_type.scale + 2)))
    read_whole = plain & read_whole
    return F.when(narrow == wide, F.when(read_whole, narrow).when(within_scale, narrow))


#: a decimal text as Spark's cast reads it (Java's BigDecimal after trimming): integer digits, fraction, exponent
_DECIMAL_TEXT = r"^\s*[+-]?([0-9]*)(?:[.]([0-9]*))?(?:[eE]([+-]?[0-9]{1,9}))?\s*$"


def _fraction_digits(text: Column) -> Column:
    """How many fractional digits a decimal text's value has (`"1.2300"` 2, `"15E-3"` 3, `"1.5E2"` 0), counted
    on the text so no parse can round them away; null when the text is not a plain or exponent decimal."""
    digits = F.concat(F.regexp_extract(text, _DECIMAL_TEXT, 1), F.regexp_extract(text, _DECIMAL_TEXT, 2))
    significant = F.regexp_replace(digits, "0+$", "")
    exponent_text = F.regexp_extract(text, _DECIMAL_TEXT, 3)
    exponent = F.when(exponent_text == "", F.lit(0)).otherwise(exponent_text.cast("int"))  # 9 digits: no overflow
    places = F.length(F.regexp_extract(text, _DECIMAL_TEXT, 2)) - (F.length(digits) - F.length(significant))
    counted = F.when(significant == "", F.lit(0)).otherwise(places - exponent)  # zero has none
    return F.when(text.rlike(_DECIMAL_TEXT), counted)


_CORRUPT = "dqgov_corrupt_record"  # no `__dq_` prefix: the manifest refuses text naming the engine's stage


def _from_json(raw: Column, declared: DataType, formats: Mapping[str, str] | None) -> Column:
    """JSON text as `declared`: parsed with every scalar read as text, then converted like any nested value, so
    `{"a": "x"}` for `struct<a:int>` is a violation instead of a silent null field; text that is not a JSON
    object (Spark's permissive parser gives a struct of nulls for it) is null."""
    text_type = as_text(declared)
    if not isinstance(text_type, StructType):
        return convert(F.from_json(raw, text_type, {"mode": "PERMISSIVE"}), text_type, declared).typed
    schema = StructType([*text_type.fields, StructField(_CORRUPT, StringType(), True)])
    parsed = F.from_json(raw, schema, {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT})
    return F.when(parsed.getField(_CORRUPT).isNotNull(), F.lit(None)).otherwise(
        convert(parsed, text_type, declared, formats=formats).typed)


def as_text(data_type: DataType) -> DataType:
    """`data_type` with every scalar as string (JSON keys are text too): how JSON text is read before converting."""
    if isinstance(data_type, StructType):
        return StructType([StructField(f.name, as_text(f.dataType), True) for f in data_type.fields])
    if isinstance(data_type, ArrayType):
        return ArrayType(as_text(data_type.elementType), True)
    if isinstance(data_type, MapType):
        return MapType(StringType(), as_text(data_type.valueType), True)
    return StringType()


def _guarded(raw: Column, value: Column, failures: list[Column]) -> Column:
    """`value`, null where the raw value is null or any nested part did not convert."""
    guarded = F.when(raw.isNull(), F.lit(None))
    if failures:
        guarded = guarded.when(reduce(lambda a, b: a | b, failures), F.lit(None))
    return guarded.otherwise(value)


def _failure(conversion: Conversion, raw: Column) -> Column | None:
    return conversion.violation(raw, conversion.typed) if conversion.can_fail else None


def _struct(raw: str | Column, raw_type: StructType, declared: StructType, formats: Mapping[str, str]) -> Conversion:
    """Field by field, by name, each with its date format; a field that does not convert nulls the struct."""
    parts: list[Column] = []
    failures: list[Column] = []
    for target in declared.fields:
        source = _source_field(raw_type, target.name)
        inner = f"{raw}.{quote_identifier(source.name)}" if isinstance(raw, str) else raw.getField(source.name)
        below = {path[len(target.name) + 1:]: fmt for path, fmt in formats.items()
                 if path.startswith(target.name + ".")}
        child = convert(inner, source.dataType, target.dataType, formats.get(target.name), below)
        parts.append(child.typed.alias(target.name))
        failure = _failure(child, compat.column(inner))
        if failure is not None:
            failures.append(failure)
    value = compat.column(raw)
    return Conversion(_guarded(value, F.struct(*parts), failures), can_fail=bool(failures), text_source=False)


def _elements(element_type: DataType, declared_element: DataType) -> Conversion:
    """How one element converts, judged on a stand-in (the real one is a lambda variable)."""
    return convert(F.lit(None).cast(element_type), element_type, declared_element)


def _each(element_type: DataType, declared_element: DataType) -> tuple[Any, Any]:
    """(typed, failed): one element, key or value (a lambda variable) converted, and whether it did not convert."""

    def typed(x: Column) -> Column:
        return convert(x, element_type, declared_element).typed

    def failed(x: Column) -> Column:
        return _failure(convert(x, element_type, declared_element), x)

    return typed, failed


def _array(raw: str | Column, raw_type: ArrayType, declared: ArrayType, _formats: Mapping[str, str]) -> Conversion:
    """Element by element (with ISO dates: a contract names no element's format); an element that does not
    convert nulls the array."""
    probe = _elements(raw_type.elementType, declared.elementType)
    value = compat.column(raw)
    typed, failed = _each(raw_type.elementType, declared.elementType)
    failures = [F.exists(value, failed)] if probe.can_fail else []
    return Conversion(_guarded(value, F.transform(value, typed), failures), can_fail=probe.can_fail,
                      text_source=False)


def _map(raw: str | Column, raw_type: MapType, declared: MapType, _formats: Mapping[str, str]) -> Conversion:
    """Keys and values one by one; one that does not convert nulls the map (before a null key could be built)."""
    value = compat.column(raw)
    converted = value
    failures: list[Column] = []
    keys_probe = _elements(raw_type.keyType, declared.keyType)
    if keys_probe.changes:
        typed_key, failed_key = _each(raw_type.keyType, declared.keyType)
        converted = F.transform_keys(converted, lambda k, _v: typed_key(k))
        keys = F.map_keys(value)
        if keys_probe.can_fail:
            failures.append(F.exists(keys, failed_key))
        # keys that become equal ('1' and '01' as int) would fail the whole pass on a duplicate map key
        failures.append(F.size(F.array_distinct(F.transform(keys, typed_key))) != F.size(keys))
    values_probe = _elements(raw_type.valueType, declared.valueType)
    if values_probe.changes:
        typed_value, failed_value = _each(raw_type.valueType, declared.valueType)
        converted = F.transform_values(converted, lambda _k, v: typed_value(v))
        if values_probe.can_fail:
            failures.append(F.exists(F.map_values(value), failed_value))
    return Conversion(_guarded(value, converted, failures), can_fail=bool(failures), text_source=False)


_NESTED: dict[type, Any] = {StructType: _struct, ArrayType: _array, MapType: _map}

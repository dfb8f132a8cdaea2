"""Profile a dataset in ONE Spark job and draft a native contract whose every suggestion states its evidence.

One `agg` over the input measures, per top-level column: present / null counts, distinct count (exact, or
HyperLogLog when the input is estimated above `APPROX_ABOVE_BYTES`), how many text values cast to long /
decimal / date / timestamp / boolean, numeric min / max / quantiles, string lengths, the dominant "shape"
(regex family: ASCII digits -> 9, Latin letters -> a / A, other digits / letters -> 0 / x, runs collapsed), the
distinct values of short strings, and hit counts of the format detectors (`checks.formats`, text columns) and
of the PII detectors (`masking.detect`, every column as text, as `dqgov scan-pii` scans them).

Suggestions (each written with a `# evidence` comment): the type (text where a value has a leading zero or a
format matches every value, as a number would drop the zeros); `required` where no value is missing;
`unique` where distinct = present = rows (integer / text columns); `allowed_values` for low-cardinality
text; `minimum` / `maximum` from the 1st / 99th percentile with a margin of 10% of their spread (floored
at 0 when no negative value was seen; not on unique identifiers, which grow); `format` where every value
matches a known format; `pattern` where every value has one shape (no 0 / x in it); `pii` / `classification` / `masking`
from the PII detectors. A column with any PII detector hit gets no suggestion or statistic that quotes its
values (allowed values, range, pattern, min / max, shape), not even in comments; the draft says why. Allowed
values, format and pattern are left out of a text column with leading or trailing spaces: the checks test the
value as written. Struct, array, map and binary columns are declared with their read type, unprofiled.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from dq_governance.checks import compat, formats
from dq_governance.contracts.spark_types import is_spark_type, type_text
from dq_governance.errors import InputDataError
from dq_governance.identifiers import quote_identifier
from dq_governance.masking import detect
from dq_governance.masking.proposals import PROPOSALS

QUANTILES = (0.01, 0.25, 0.5, 0.75, 0.99)
#: above this estimated input size distinct counts use HyperLogLog (rsd 2%) instead of exact counting
APPROX_ABOVE_BYTES = 256 * 1024 * 1024
#: at most this many distinct values (and at most half the present values) -> allowed_values
MAX_ALLOWED_VALUES = 12
#: only text values up to this length are collected as candidate allowed values
MAX_VALUE_LENGTH = 64
RANGE_MARGIN = 0.10
_PLAIN_NUMBER = r"^[+-]?[0-9]+(\.[0-9]+)?$"
_INTEGER = r"^[+-]?[0-9]+$"
#: a number written with a leading zero ("0123", "-007", "00.5"; not "0" or "0.5"): a numeric type drops it
_LEADING_ZERO = r"^[+-]?0[0-9]"
_ISO_DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
_ISO_TIMESTAMP = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?$"
#: formats the format rule can check, from the detectors plus uuid / url from the check engine
_FORMAT_CHECKS = {"uuid": formats.UUID_RE, "url": formats.URL_RE}
#: PII entity -> the contract `format` that checks it (entities without one get no format rule)
_FORMAT_OF_DETECTOR = {"BR_CPF": "cpf", "BR_CNPJ": "cnpj", "EMAIL_ADDRESS": "email", "PHONE_NUMBER": "phone",
                       "IP_ADDRESS": "ipv4"}
_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
#: types the profile does not measure (their fields are declared with the read type only)
_UNPROFILED = (T.StructType, T.ArrayType, T.MapType, T.BinaryType)


@dataclass
class ColumnProfile:
    """What the single pass measured for one column."""

    name: str
    source_type: str  # the Spark type as read
    rows: int
    present: int
    distinct: int
    distinct_exact: bool
    casts: dict[str, int] = field(default_factory=dict)  # long, decimal, date, timestamp, boolean
    scale: int = 0  # most digits after the decimal point
    int_digits: int = 0
    min: float | None = None
    max: float | None = None
    quantiles: dict[float, float] = field(default_factory=dict)
    min_length: int | None = None
    max_length: int | None = None
    shape: str | None = None
    shapes: int = 0
    values: list[str] | None = None
    first: str | None = None  # min / max as text for dates and timestamps
    last: str | None = None
    hits: dict[str, int] = field(default_factory=dict)  # detector / format -> matching values
    leading_zeros: int = 0  # text values with a leading zero ("0123")
    padded: int = 0  # text values with leading or trailing spaces (measured trimmed, checked as written)
    blank: int = 0  # text values that are empty or only spaces (measured as missing, checked as written)

    @property
    def nulls(self) -> int:
        """Rows with no value (null, or blank text)."""
        return self.rows - self.present

    @property
    def value_hits(self) -> dict[str, int]:
        """PII detector -> values it matched, for the detectors whose value evidence counts for this column."""
        named = detect.name_matches(self.name)
        return {d.pii_type: self.hits[d.pii_type] for d in detect.DETECTORS
                if self.hits.get(d.pii_type) and (not d.values_need_name or d.pii_type in named)}


@dataclass
class UnprofiledColumn:
    """A struct / array / map / binary column: declared in the draft with its read type, not measured."""

    name: str
    source_type: str  # the Spark type as read (as contract type text: spark_types.type_text)
    position: int  # its index among the input's columns

    @property
    def kind(self) -> str:
        """struct, array, map or binary."""
        return self.source_type.split("<", 1)[0]

    @property
    def expressible(self) -> bool:
        """Whether the contract's type syntax can state the read type (struct field names must be identifiers)."""
        return is_spark_type(self.source_type)


@dataclass
class Profile:
    """The profile of a dataset: its row count and one ColumnProfile per column."""

    rows: int
    columns: list[ColumnProfile]
    source: str
    profiled_at: datetime
    unprofiled: list[UnprofiledColumn] = field(default_factory=list)


def _q(name: str) -> Column:
    return F.col(quote_identifier(name))


def _shape(text: Column) -> Column:
    """The regex family of a value: runs of ASCII digits -> 9, Latin letters -> a / A, other digits -> 0, other
    letters (any script, with their marks) -> x; other characters kept, so no letter or digit of a value survives.
    """
    shape = F.regexp_replace(text, r"[0-9]+", "9")
    shape = F.regexp_replace(shape, r"[a-z\u00e0-\u00ff]+", "a")
    shape = F.regexp_replace(shape, r"[A-Z\u00c0-\u00de]+", "A")
    # 9, a and A are themselves a digit and letters: the classes below leave the families already made
    shape = F.regexp_replace(shape, r"[\p{N}&&[^9]]+", "0")
    return F.regexp_replace(shape, r"[\p{L}\p{M}&&[^aA]]+", "x")


def _estimated_bytes(df: DataFrame) -> int | None:
    """Spark's size estimate of the input (no job); None when the plan has none."""
    try:
        return int(str(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    except Exception:  # a plan without statistics: treat as small
        return None


def profile(df: DataFrame, *, source: str = "", approx_distinct: bool | None = None) -> Profile:
    """Measure every top-level atomic column of df in one Spark job (InputDataError when there is nothing to)."""
    where = source or "the input"
    if not df.schema.fields:
        raise InputDataError(f"{where}: no columns to profile")
    columns = [f for f in df.schema.fields if not isinstance(f.dataType, _UNPROFILED)]
    unprofiled = [UnprofiledColumn(f.name, type_text(f.dataType), i) for i, f in enumerate(df.schema.fields)
                  if isinstance(f.dataType, _UNPROFILED)]
    if approx_distinct is None:
        size = _estimated_bytes(df)
        approx_distinct = size is not None and size > APPROX_ABOVE_BYTES
    aggs: list[Column] = [F.count(F.lit(1)).alias("rows")]
    plans: list[tuple[T.StructField, dict[str, str]]] = []
    texts: list[Column] = []
    # every column's PII detector flags, built once over all of them (detect.value_hits), in a column of its own
    hits = _unused_name(df.columns, "__dqgov_pii_hits")
    for i, struct in enumerate(columns):
        keys: dict[str, str] = {}

        def add(key: str, column: Column, i: int = i, keys: dict[str, str] = keys) -> None:
            alias = f"c{i}_{key}"
            keys[key] = alias
            aggs.append(column.alias(alias))

        dtype = struct.dataType
        raw = _q(struct.name)
        is_text = isinstance(dtype, T.StringType)
        text = F.when(F.trim(raw) != "", F.trim(raw)) if is_text else raw.cast("string")
        add("present", F.count(text))
        # Exact distinct = size(collect_set): count_distinct would make Spark rewrite the whole agg through
        # Expand, giving every distinct value its own buffer of every other aggregate (quantile sketches
        # included), which is orders of magnitude slower. Identical collect_set expressions are computed once.
        values = F.collect_set(text if not approx_distinct else F.when(F.length(text) <= MAX_VALUE_LENGTH, text))
        add("distinct", F.approx_count_distinct(text, 0.02) if approx_distinct else F.size(values))
        if is_text:
            # `text` is null for blank values; the trimmed SQL text counts alike, as '' matches none of the regexes
            trimmed = f"trim({quote_identifier(struct.name)})"
            add("long", F.count_if(text.rlike(_INTEGER) & compat.try_cast(trimmed, "long").isNotNull()))
            add("decimal", F.count_if(text.rlike(_PLAIN_NUMBER)))
            add("date", F.count_if(text.rlike(_ISO_DATE) & formats.parse_date(text, "yyyy-MM-dd").isNotNull()))
            add("timestamp", F.count_if(text.rlike(_ISO_TIMESTAMP) & compat.try_cast(trimmed, "timestamp").isNotNull()))
            add("boolean", F.count_if(F.lower(text).isin("true", "false")))
            add("leading_zeros", F.count_if(text.rlike(_LEADING_ZERO)))
            add("padded", F.count_if(text.isNotNull() & (raw != F.trim(raw))))
            add("blank", F.count_if(raw.isNotNull() & text.isNull()))
            number = F.when(text.rlike(_PLAIN_NUMBER), compat.try_cast(trimmed, "double"))
            add("scale", F.max(F.length(F.regexp_extract(text, r"^[+-]?[0-9]+\.([0-9]+)$", 1))))
            add("int_digits", F.max(F.length(F.regexp_extract(text, r"^[+-]?([0-9]+)", 1))))
            add("min_length", F.min(F.length(text)))
            add("max_length", F.max(F.length(text)))
            shape = _shape(text)
            add("shapes", F.approx_count_distinct(shape, 0.02))
            add("shape", F.mode(shape))
            add("values", F.when(F.size(values) <= MAX_ALLOWED_VALUES, F.array_sort(values)))
            for name, pattern in _FORMAT_CHECKS.items():
                add(f"hit:{name}", F.count_if(text.rlike(pattern)))
        elif isinstance(dtype, T.NumericType):
            number = raw.cast("double")
        else:
            number = None
            if isinstance(dtype, (T.DateType, T.TimestampType, T.TimestampNTZType)):
                add("first", F.min(raw).cast("string"))
                add("last", F.max(raw).cast("string"))
        # Every column, as `dqgov scan-pii` scans them: a bigint CPF column is PII, and its min / max are CPFs.
        for det in detect.VALUE_DETECTORS:
            add(f"hit:{det.pii_type}", F.count_if(F.col(hits)[len(texts)][det.pii_type]))
        texts.append(text)
        if number is not None:
            add("min", F.min(number))
            add("max", F.max(number))
            add("quantiles", F.percentile_approx(number, list(QUANTILES), 10_000))
        plans.append((struct, keys))
    flagged = df.select("*", detect.value_hits(texts).alias(hits)) if texts else df
    row = flagged.agg(*aggs).collect()[0].asDict()  # THE pass
    rows = int(row["rows"])
    if rows == 0:
        raise InputDataError(f"{where}: no rows to profile")
    return Profile(rows, [_column(struct, keys, row, rows, not approx_distinct) for struct, keys in plans],
                   source, datetime.now(timezone.utc), unprofiled)


def _unused_name(names: list[str], base: str) -> str:
    """`base`, suffixed until no column of the input has that name (in any case)."""
    taken = {n.lower() for n in names}
    name, n = base, 0
    while name.lower() in taken:
        n += 1
        name = f"{base}_{n}"
    return name


def _column(struct: T.StructField, keys: dict[str, str], row: dict[str, Any], rows: int, exact: bool) -> ColumnProfile:
    got = {key: row[alias] for key, alias in keys.items()}
    quantiles = got.get("quantiles") or []
    return ColumnProfile(
        name=struct.name, source_type=type_text(struct.dataType), rows=rows, present=int(got["present"]),
        distinct=int(got["distinct"]), distinct_exact=exact,
        casts={k: int(got[k]) for k in ("long", "decimal", "date", "timestamp", "boolean") if k in got},
        scale=int(got.get("scale") or 0), int_digits=int(got.get("int_digits") or 0),
        min=got.get("min"), max=got.get("max"),
        quantiles={q: v for q, v in zip(QUANTILES, quantiles) if v is not None},
        min_length=got.get("min_length"), max_length=got.get("max_length"),
        shape=got.get("shape"), shapes=int(got.get("shapes") or 0), values=got.get("values"),
        first=got.get("first"), last=got.get("last"),
        hits={k.split(":", 1)[1]: int(v) for k, v in got.items() if k.startswith("hit:")},
        leading_zeros=int(got.get("leading_zeros") or 0), padded=int(got.get("padded") or 0),
        blank=int(got.get("blank") or 0),
    )


# --------------------------------------------------------------------------- suggestions


@dataclass
class Suggestion:
    """One key of a field with the evidence behind it."""

    key: str
    value: Any
    evidence: str


def infer_type(col: ColumnProfile, fmt: str | None = None) -> Suggestion:
    """The narrowest type every present value converts to without loss (text input); the read type otherwise.

    `fmt` is the format every value has (`suggest` finds it): a format is checked on the text, so it stays text.
    """
    n = col.present
    if col.source_type != "string":
        return Suggestion("type", col.source_type, f"read as {col.source_type}")
    if n == 0:
        return Suggestion("type", "string", "no values to infer from")
    if fmt is not None:
        return Suggestion("type", "string", f"all {n} values have the {fmt} format, which is checked on the text")
    casts = col.casts
    if casts.get("boolean") == n:
        return Suggestion("type", "boolean", f"all {n} values are true/false")
    numbers = "integers" if casts.get("long") == n else "plain numbers" if casts.get("decimal") == n else None
    if numbers and col.leading_zeros:
        return Suggestion("type", "string", f"all {n} values are {numbers}, but {col.leading_zeros} have a "
                          "leading zero that a number would drop")
    if casts.get("long") == n:
        return Suggestion("type", "long", f"all {n} values are integers")
    if casts.get("decimal") == n:
        precision = min(38, max(col.int_digits + col.scale + 4, 10))
        kind = f"decimal({precision},{col.scale})"
        return Suggestion("type", kind, f"all {n} values are plain numbers, at most {col.int_digits} integer and "
                          f"{col.scale} decimal digits (precision padded by 4)")
    if casts.get("date") == n:
        return Suggestion("type", "date", f"all {n} values parse as yyyy-MM-dd dates")
    if casts.get("timestamp") == n:
        return Suggestion("type", "timestamp", f"all {n} values parse as ISO timestamps")
    best = max(casts.items(), key=lambda kv: kv[1]) if casts else ("", 0)
    why = f"; the best candidate, {best[0]}, fits only {best[1]} of {n}" if best[1] else ""
    return Suggestion("type", "string", f"{n} values, no narrower type fits all{why}")


def pii_finding(col: ColumnProfile) -> tuple[str, float] | None:
    """(PII type, confidence) from the detectors' hit rates and the column name, or None."""
    if col.present == 0 and not detect.name_matches(col.name):
        return None
    # no present value: nothing was tested, so the name alone decides (detect.score)
    rates = {t: col.hits.get(t, 0) / col.present
             for t in (d.pii_type for d in detect.DETECTORS if d.values is not None)} if col.present else {}
    candidates = detect.score(col.name, rates)
    if candidates and candidates[0][1] >= detect.DEFAULT_MIN_CONFIDENCE:
        return candidates[0][0], candidates[0][1]
    return None


def suggest(col: ColumnProfile) -> list[Suggestion]:
    """Every suggestion for one column, in the contract's key order (`notes` says what was left out and why)."""
    pii = pii_finding(col)
    fmt = _format(col, pii)
    out = [infer_type(col, fmt.value if fmt else None)]
    kind = out[0].value
    n, rows = col.present, col.rows
    # any detector hit, flagged or not: the values may be personal data, so none is quoted (notes say so)
    withheld = pii is not None or bool(col.value_hits)
    # values were measured trimmed; allowed values, formats and patterns are checked on the value as written
    as_written = col.padded == 0 and col.blank == 0
    if rows and col.nulls == 0:
        out.append(Suggestion("required", True, f"0 missing values in {rows} rows"))
    integral = kind in ("long", "int", "bigint", "smallint", "tinyint", "string")
    distinct_word = "distinct" if col.distinct_exact else "distinct (approx.)"
    unique = bool(rows and integral and col.nulls == 0 and col.distinct == rows and rows > 1)
    if unique:
        out.append(Suggestion("unique", True, f"{col.distinct} {distinct_word} values in {rows} rows"))
    if (kind == "string" and not withheld and as_written and not unique and col.values is not None and n
            and len(col.values) == col.distinct and col.distinct <= MAX_ALLOWED_VALUES and col.distinct * 2 <= n):
        out.append(Suggestion("allowed_values", list(col.values),
                              f"{col.distinct} distinct values in {n}; every value seen repeats on average "
                              f"{n / col.distinct:.1f} times"))
    if kind not in ("string", "boolean", "date", "timestamp") and not unique and col.quantiles and not withheld:
        out.extend(_range(col))  # its evidence quotes values (min, max, p1, p99)
    if fmt is not None:
        if as_written:
            out.append(fmt)
    elif (kind == "string" and not any(s.key == "allowed_values" for s in out) and col.shapes == 1 and col.shape
          and n > 1 and not withheld and as_written and _shape_regex(col.shape) is not None):
        out.append(Suggestion("pattern", _shape_regex(col.shape), f"all {n} values have the shape {col.shape!r}"))
    if pii is not None:
        det = detect.DETECTOR_BY_TYPE[pii[0]]
        evidence = f"PII detector {pii[0]}, confidence {pii[1]:.2f}" + (
            f", {col.hits.get(pii[0], 0)} of {n} values match" if det.values is not None else ", from the column name")
        out.append(Suggestion("pii", True, evidence))
        classification, masking = PROPOSALS[pii[0]]
        out.append(Suggestion("classification", classification, f"what `dqgov scan-pii` proposes for {pii[0]}"))
        masking = masking["method"] if set(masking) == {"method"} else masking
        out.append(Suggestion("masking", masking, f"what `dqgov scan-pii` proposes for {pii[0]}"))
    return out


def notes(col: ColumnProfile) -> list[str]:
    """What `suggest` left out of one column and why (comment lines under its field)."""
    out = []
    hits = col.value_hits
    if hits:
        looks = ", ".join(f"{count} look like {kind}" for kind, count in hits.items())
        out.append(f"values withheld (no allowed values, range, pattern or value statistics): of {col.present} "
                   f"values, {looks}")
    if col.blank:
        out.append(f"{col.blank} values are empty or only spaces: no allowed_values, format or pattern is "
                   "suggested, as those checks count such a value as a violation")
    if col.padded:
        out.append(f"{col.padded} of {col.present} values have leading or trailing spaces: no allowed_values, "
                   "format or pattern is suggested, as those checks test the value as written")
    return out


def _format(col: ColumnProfile, pii: tuple[str, float] | None) -> Suggestion | None:
    """A format every present text value has (the detected PII entity's format first); the field then stays text."""
    n = col.present
    if not n or col.source_type != "string":
        return None  # a typed column is checked in its type: no format is judged on its text
    order = []
    if pii and _FORMAT_OF_DETECTOR.get(pii[0]):
        order.append((pii[0], _FORMAT_OF_DETECTOR[pii[0]]))
    order += [(k, v) for k, v in _FORMAT_OF_DETECTOR.items() if k != (pii[0] if pii else None)]
    order += [(name, name) for name in _FORMAT_CHECKS]
    for hit_key, fmt in order:
        if col.hits.get(hit_key) == n and not (fmt == "ipv4" and col.casts.get("long") == n):
            return Suggestion("format", fmt, f"all {n} values match the {fmt} check")
    return None


def _range(col: ColumnProfile) -> list[Suggestion]:
    low, high = col.quantiles.get(QUANTILES[0]), col.quantiles.get(QUANTILES[-1])
    if low is None or high is None:
        return []
    spread = high - low
    margin = RANGE_MARGIN * spread if spread else RANGE_MARGIN * abs(high) or 1.0
    lo, hi = low - margin, high + margin
    floored = col.min is not None and col.min >= 0 and lo < 0
    lo = max(lo, 0.0) if floored else lo
    digits = max(col.scale, 0)
    lo, hi = _round(lo, digits, math.floor), _round(hi, digits, math.ceil)
    evidence = (f"p1 {_n(low)}, p99 {_n(high)} (min {_n(col.min)}, max {_n(col.max)}); "
                f"margin 10% of the p1-p99 spread ({_n(margin)})")
    return [Suggestion("minimum", lo, evidence + ("; floored at 0: no negative value seen" if floored else "")),
            Suggestion("maximum", hi, evidence)]


def _round(value: float, digits: int, how: Any) -> float | int:
    scaled = how(value * 10 ** digits) / 10 ** digits
    return int(scaled) if digits == 0 else scaled


def _n(value: float | None) -> str:
    if value is None:
        return "none"
    return str(int(value)) if float(value).is_integer() else f"{value:.6g}"


def _shape_regex(shape: str) -> str | None:
    """An anchored Java regex for a shape: 9 -> [0-9]+, a -> [a-z]+, A -> [A-Z]+, others escaped.

    None for a shape with other digits or letters (0, x): the contract's regex is also compiled by Python's `re`,
    which has no Unicode classes (\\p{L}) to match them with.
    """
    if "0" in shape or "x" in shape:
        return None
    parts = {"9": "[0-9]+", "a": "[a-zà-ÿ]+", "A": "[A-ZÀ-Þ]+"}
    return "^" + "".join(parts.get(ch, re.escape(ch)) for ch in shape) + "$"


# --------------------------------------------------------------------------- the draft contract


def draft_contract(prof: Profile, *, name: str, path: str | None = None, fmt: str | None = None) -> str:
    """The draft native contract as YAML text, every suggestion followed by its evidence comment."""
    exact = all(c.distinct_exact for c in prof.columns)
    lines = [
        f"# Draft contract generated by `dqgov profile` from {prof.source or 'a DataFrame'}.",
        f"# {prof.rows} rows profiled in one Spark pass at {prof.profiled_at.strftime('%Y-%m-%dT%H:%M:%SZ')}; "
        f"distinct counts {'exact' if exact else 'approximate (HyperLogLog, 2% error)'}.",
        "# Every suggestion says what it is based on: review each one before relying on this contract.",
        "contract:",
        f"  name: {_y(name)}",
        '  version: "0.1.0"',
        "  status: draft",
        "dataset:",
        f"  name: {_y(name)}",
    ]
    if path:
        lines.append(f"  path: {_y(path)}")
    if fmt:
        lines.append(f"  format: {_y(fmt)}")
    lines += ["schema:", "  fields:"]
    for col in _in_input_order(prof):
        lines += _unprofiled_field(col) if isinstance(col, UnprofiledColumn) else _field(col)
    lines += ["quality:", "  on_failure: quarantine", "  rules:",
              "    - type: row_count",
              f"      must_be: \">= 1\"  # the profiled input had {prof.rows} rows; an empty load is an incident",
              "      dimension: completeness"]
    return "\n".join(line.translate(_ONE_LINE) for line in lines) + "\n"


#: line breaks YAML reads (a column name or a value quoted in a comment could end the comment and write YAML),
#: escaped as Python writes them; values are quoted by _y, which escapes them already
_ONE_LINE = str.maketrans({"\n": "\\n", "\r": "\\r", "\x85": "\\x85", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _in_input_order(prof: Profile) -> list[ColumnProfile | UnprofiledColumn]:
    """Profiled and unprofiled columns merged back into the input's column order."""
    profiled = iter(prof.columns)
    at = {col.position: col for col in prof.unprofiled}
    return [at[i] if i in at else next(profiled) for i in range(len(prof.columns) + len(prof.unprofiled))]


def _field(col: ColumnProfile) -> list[str]:
    suggestions = suggest(col)
    withheld = bool(col.value_hits) or any(s.key == "pii" for s in suggestions)
    lines = [f"    # {_stats(col, withheld)}", f"    - name: {_y(col.name)}"]
    lines += [f"      {s.key}: {_y(s.value)}  # {s.evidence}" for s in suggestions]
    return lines + [f"      # {note}" for note in notes(col)]


def _unprofiled_field(col: UnprofiledColumn) -> list[str]:
    """The field of a column the profile does not measure, declared so a check run from the draft keeps it."""
    if not col.expressible:
        return [f"    # {col.name}: not profiled ({col.kind}) and left out: the contract's type syntax cannot state its "
                f"read type {col.source_type}; a check run drops it as undeclared"]
    return [f"    - name: {_y(col.name)}", f"      type: {_y(col.source_type)}  # not profiled ({col.kind})"]


def _stats(col: ColumnProfile, withheld: bool) -> str:
    """The evidence line above a field; no raw values (nor their shapes) when the column's values are withheld."""
    parts = [f"{col.name}: {col.present} values, {col.nulls} missing, "
             f"{col.distinct} {'distinct' if col.distinct_exact else 'distinct (approx.)'}"]
    if col.min is not None and not withheld:
        quart = ", ".join(f"p{int(q * 100)} {_n(v)}" for q, v in col.quantiles.items())
        parts.append(f"min {_n(col.min)}, max {_n(col.max)}, {quart}")
    if col.first is not None and not withheld:
        parts.append(f"from {col.first} to {col.last}")
    if col.min_length is not None:
        parts.append(f"length {col.min_length}-{col.max_length}")
    if col.shape is not None and not withheld:  # the most common shape of a short value can be most of the value
        parts.append(f"{col.shapes} shape(s), most common {col.shape!r}")
    if col.hits:
        found = [f"{k} {v}" for k, v in col.hits.items() if v]
        if found:
            parts.append("detector hits: " + ", ".join(found))
    return "; ".join(parts)


def _y(value: Any) -> str:
    """A YAML scalar / flow sequence (JSON is valid YAML; plain words stay plain)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]*", value) and value.lower() not in (
            "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"):
        return value
    return json.dumps(value, ensure_ascii=False)

"""Masking methods as Spark Column builders, one function per method, chosen by a dispatch table.

Keyed methods get their HMAC-SHA-256 from a `Digest` (see `apply.py`): the JVM UDF of the extension jar
when it is loaded, else `sha2` over the RFC 2104 construction H(K^opad || H(K^ipad || m)) with the pads
as columns of a broadcast one-row relation. Spark 4.0 has no `hmac` function; either way no key byte is
a literal in a plan. Nulls stay null in every method; empty values after normalisation become null (an
`hmac('')` token would be one very frequent, meaningless pseudonym).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from dq_governance.checks import compat
from dq_governance.checks.formats import parse_timestamp
from dq_governance.contracts.model import FieldSpec, MaskingSpec
from dq_governance.errors import ConfigError
from dq_governance.identifiers import quote_identifier

DEFAULT_REDACT_TOKEN = "[REDACTED]"
DEFAULT_SHOW_LAST = 4
#: letters and digits of any script are the "classed" characters a mask hides; punctuation stays
CLASSED = r"[\p{L}\p{N}]"
NOT_CLASSED = r"[^\p{L}\p{N}]"
#: tokenize draws one digest byte per classed character, cycling over the 32 HMAC bytes
TOKEN_BYTES = 32


#: (raw column, field format, "hex" | "base64" | "token") -> the HMAC of the normalised value, or its
#: format-preserving token (see mask_tokenize); null for null / empty
Digest = Callable[[Column, "str | None", str], Column]


@dataclass(frozen=True)
class MaskContext:
    """What a method needs besides the column: its path, Spark type, contract field and keyed digest."""

    path: str
    dtype: T.DataType
    field: FieldSpec | None
    digest: Digest | None = None

    @property
    def format(self) -> str | None:
        """The field's declared `format` (cpf, cnpj, email, phone, ...), if any."""
        return self.field.format if self.field is not None else None


# --------------------------------------------------------------------------- normalisation


def _digits(col: Column) -> Column:
    return F.regexp_replace(col, r"[^0-9]", "")


def _phone(col: Column) -> Column:
    # canonical E.164 without '+': drop trunk zeros, add Brazil's 55 to a bare DDD + number
    digits = F.regexp_replace(_digits(col), r"^0+", "")
    return F.when(F.length(digits).isin(10, 11), F.concat(F.lit("55"), digits)).otherwise(digits)


NORMALISERS: dict[str | None, Callable[[Column], Column]] = {
    "email": lambda c: F.lower(F.trim(c)),
    "cpf": _digits,
    "cnpj": lambda c: F.regexp_replace(F.upper(c), r"[^0-9A-Z]", ""),
    "phone": _phone,
}


def normalise(col: Column, fmt: str | None) -> Column:
    """The canonical text a keyed method hashes: per `format`, else trimmed; empty -> null."""
    text = F.trim(col.cast("string"))
    value = NORMALISERS.get(fmt, lambda c: c)(text)
    return F.when(value != F.lit(""), value)


# --------------------------------------------------------------------------- keyed methods

#: the epoch as a TIMESTAMP_NTZ: adding microseconds to it involves no time zone
_EPOCH_NTZ = "1970-01-01 00:00:00"


def keyed_text(col: Column, dtype: T.DataType) -> Column:
    """The value a keyed method hashes: a TIMESTAMP as its UTC wall clock, whatever the session time zone.

    Its text equals `cast(col as string)` in a UTC session (pseudonyms made there stay valid); built from
    `unix_micros`, it has no DST gap or overlap to fall into. TIMESTAMP_NTZ and other types hash as they are.
    """
    if not isinstance(dtype, T.TimestampType):
        return col
    epoch = F.lit(_EPOCH_NTZ).cast("timestamp_ntz")
    # an NTZ epoch plus a day-time interval: no time zone anywhere (Spark 3.5 has no timestamp_add in Python)
    return (epoch + F.expr("INTERVAL '0.000001' SECOND") * F.unix_micros(col)).cast("string")


def hmac_hex(value: Column, ipad: Column, opad: Column) -> Column:
    """Hex HMAC-SHA-256 of a string column under the key whose pads are given as columns."""
    # a Spark string is already UTF-8: the cast copies its bytes (encode() re-encodes through Java)
    inner = F.sha2(F.concat(ipad, value.cast("binary")), 256)
    return F.sha2(F.concat(opad, F.unhex(inner)), 256)


def sha2_digest(ipad: Column, opad: Column) -> Digest:
    """The built-in Digest: normalise with Spark functions, then `hmac_hex` over the pad columns."""

    def digest(col: Column, fmt: str | None, encoding: str) -> Column:
        hexed = hmac_hex(normalise(col, fmt), ipad, opad)
        if encoding == "token":
            return spark_token(col, hexed)
        return F.base64(F.unhex(hexed)) if encoding == "base64" else hexed

    return digest


def _keyed(ctx: MaskContext) -> Digest:
    if ctx.digest is None:
        raise ConfigError(f"column {ctx.path}: keyed masking needs a masking key")
    return ctx.digest


def mask_hmac(col: Column, spec: MaskingSpec, ctx: MaskContext) -> Column:
    """Keyed HMAC-SHA-256 of the normalised value, hex (default) or base64."""
    return _keyed(ctx)(keyed_text(col, ctx.dtype), ctx.format, spec.encoding or "hex")


def _token_char(ch: Column, byte: Column) -> Column:
    """One letter or digit replaced by a digest byte in the same class (digit, upper, lower)."""
    value = F.ascii(byte)
    is_digit = (ch >= F.lit("0")) & (ch <= F.lit("9"))
    is_upper = (ch == F.upper(ch)) & (ch != F.lower(ch))
    return (
        F.when(is_digit, F.char(F.lit(48) + value % 10))
        .when(is_upper, F.char(F.lit(65) + value % 26))
        .otherwise(F.char(F.lit(97) + value % 26))
    )


def mask_tokenize(col: Column, spec: MaskingSpec, ctx: MaskContext) -> Column:
    """HMAC bytes reshaped to the original: digits stay digits, letters keep case, punctuation stays.

    The n-th letter or digit counted from the right takes digest byte n (mod 32), so `529.982.247-25`
    and `52998224725` (same normalised CPF), or a phone with and without `+55`, share their digits.
    """
    return _keyed(ctx)(keyed_text(col, ctx.dtype), ctx.format, "token")


def spark_token(col: Column, digest: Column) -> Column:
    """The tokenize reshaping in Spark functions, from the hex digest (the JVM UDF does it in one call).

    Per-row values enter the lambdas only as their input arrays, because Spark re-evaluates an outer
    expression that a lambda body references once per element. Lambdas still run interpreted: this is
    the slow path (benchmarks/bench_masking.py).
    """
    shape = F.trim(col.cast("string"))
    stripped = F.regexp_replace(shape, NOT_CLASSED, "")
    # split('', '') is [''], not []: a value without letters or digits keeps its punctuation only
    classed = F.when(F.length(stripped) > 0, F.split(stripped, "")).otherwise(F.array().cast("array<string>"))
    # the digest's bytes as latin-1 characters (ascii() of each is the byte), cycled and reversed so
    # that element j belongs to the j-th classed character from the left
    stream = F.split(F.decode(F.unhex(digest), "ISO-8859-1"), "")
    cycled = F.flatten(F.array_repeat(stream, F.ceil(F.size(classed) / F.lit(TOKEN_BYTES)).cast("int")))
    bytes_for = F.reverse(F.slice(cycled, 1, F.size(classed)))
    mapped = F.zip_with(classed, bytes_for, _token_char)
    gaps = F.split(shape, CLASSED, -1)  # the punctuation before, between and after the classed chars
    token = F.array_join(F.zip_with(gaps, mapped, lambda gap, ch: F.concat(gap, F.coalesce(ch, F.lit("")))), "")
    return F.when(digest.isNotNull(), token)  # nothing left to hash (e.g. '---' as a CPF): null, as for hmac


# --------------------------------------------------------------------------- unkeyed methods


def _hide_all(text: Column) -> Column:
    return F.regexp_replace(text, CLASSED, "*")


def mask_partial(col: Column, spec: MaskingSpec, ctx: MaskContext) -> Column:
    """Keep the last N characters (default 4) and punctuation; or, for e-mail, the domain only."""
    text = F.trim(col.cast("string"))
    if spec.domain_only or (ctx.format == "email" and spec.show_last is None):
        domain = F.lower(F.substring_index(text, "@", -1))
        return F.when(text.contains("@"), F.concat(F.lit("***@"), domain)).otherwise(_hide_all(text))
    keep = spec.show_last if spec.show_last is not None else DEFAULT_SHOW_LAST
    if keep == 0:
        return _hide_all(text)
    head = F.left(text, F.length(text) - F.lit(keep))
    # a value no longer than N would be shown whole, so it is hidden whole
    return F.when(F.length(text) > keep, F.concat(_hide_all(head), F.right(text, F.lit(keep)))).otherwise(
        _hide_all(text)
    )


def mask_redact(col: Column, spec: MaskingSpec, ctx: MaskContext) -> Column:
    """A fixed token in place of every non-null value."""
    return F.when(col.isNotNull(), F.lit(spec.token if spec.token is not None else DEFAULT_REDACT_TOKEN))


def mask_null(col: Column, spec: MaskingSpec, ctx: MaskContext) -> Column:
    """Null of the column's own type."""
    return F.lit(None).cast(ctx.dtype)


def mask_none(col: Column, spec: MaskingSpec, ctx: MaskContext) -> Column:
    """The value unchanged."""
    return col


def _is_temporal(ctx: MaskContext) -> bool:
    declared = (ctx.field.type if ctx.field else "") in ("date", "timestamp") or ctx.format in ("date", "timestamp")
    return isinstance(ctx.dtype, (T.DateType, T.TimestampType, T.TimestampNTZType)) or declared


def mask_generalize(col: Column, spec: MaskingSpec, ctx: MaskContext) -> Column:
    """Date -> year/month, number -> bucket lower bound, zip/CEP -> prefix; type kept where it can be."""
    if spec.prefix_length is not None:
        return F.left(F.regexp_replace(col.cast("string"), NOT_CLASSED, ""), F.lit(spec.prefix_length))
    if spec.bucket is not None:
        return _bucket(col, spec.bucket, ctx)
    if spec.granularity is not None or _is_temporal(ctx):
        return _truncate_date(col, spec.granularity or "year", ctx)
    raise ConfigError(f"column {ctx.path}: generalize needs `granularity`, `bucket` or `prefix_length`")


def _bucket(col: Column, size: float, ctx: MaskContext) -> Column:
    # size > 0: the contract model refuses any other bucket
    if isinstance(ctx.dtype, T.NumericType):
        return (F.floor(col / F.lit(size)) * F.lit(size)).cast(ctx.dtype)
    number = compat.try_cast(f"CAST({_sql_path(ctx.path)} AS STRING)", "double")
    low = F.floor(number / F.lit(size)) * F.lit(size)
    return (low.cast("long") if float(size).is_integer() else low).cast("string")


def _sql_path(path: str) -> str:
    """A dotted column path (`cliente.cep`) as SQL text, every part quoted."""
    return ".".join(quote_identifier(part) for part in path.split("."))


def _truncate_date(col: Column, unit: str, ctx: MaskContext) -> Column:
    if isinstance(ctx.dtype, T.DateType):
        return F.trunc(col, unit)
    if isinstance(ctx.dtype, (T.TimestampType, T.TimestampNTZType)):
        return F.date_trunc(unit, col)
    pattern = (ctx.field.date_format if ctx.field else None) or "yyyy-MM-dd"
    parsed = parse_timestamp(F.trim(col.cast("string")), pattern)  # a year the parser overflows on is null
    # unparseable text becomes null: echoing it back would leak the raw value
    return F.date_format(parsed, "yyyy" if unit == "year" else "yyyy-MM")


Method = Callable[[Column, MaskingSpec, MaskContext], Column]
METHODS: dict[str, Method] = {
    "hmac": mask_hmac,
    "tokenize": mask_tokenize,
    "partial": mask_partial,
    "redact": mask_redact,
    "null": mask_null,
    "generalize": mask_generalize,
    "none": mask_none,
}


def mask_column(col: Column, spec: MaskingSpec, ctx: MaskContext) -> Column:
    """The masked form of `col` under `spec` (nulls stay null)."""
    return METHODS[spec.method](col, spec, ctx)

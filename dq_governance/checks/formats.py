"""Value formats as Spark Column predicates: email, uuid, url, ipv4, date, timestamp, cpf, cnpj, phone.

Everything is a native Column expression (no Python UDF), so formats run inside the single check pass.
Each builder returns a boolean Column that is true for a valid value and null for a null value.
"""

from __future__ import annotations

import re
from typing import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, DateType, StringType, TimestampNTZType, TimestampType

from dq_governance.checks import compat
from dq_governance.checks.regex_text import rlike
from dq_governance.errors import ContractError

EMAIL_RE = (
    r"^[A-Za-z0-9._%+\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}$"
)
UUID_RE = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
URL_RE = r"^(?i)(https?|ftp)://[^\s/$.?#][^\s]*$"
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
IPV4_RE = rf"^{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}$"
# Brazil: optional +55, area code (DDD, two digits 1-9, parentheses optional), then a mobile
# (9 + 4 digits) or landline (2-5 + 3 digits) prefix and 4 digits; space, dot or dash separators.
PHONE_BR_RE = r"^(\+?55[\s.\-]?)?(\([1-9]{2}\)|[1-9]{2})[\s.\-]?(9[0-9]{4}|[2-5][0-9]{3})[\s.\-]?[0-9]{4}$"
CPF_RE = r"^[0-9]{3}\.?[0-9]{3}\.?[0-9]{3}-?[0-9]{2}$"
# CNPJ: 12 alphanumeric characters (the 2026 alphanumeric form; digits-only is a special case) + 2 check digits.
CNPJ_RE = r"^[0-9A-Z]{2}\.?[0-9A-Z]{3}\.?[0-9A-Z]{3}/?[0-9A-Z]{4}-?[0-9]{2}$"

DEFAULT_DATE_FORMAT = ISO_DATE_FORMAT = "yyyy-MM-dd"
DEFAULT_TIMESTAMP_FORMAT = "yyyy-MM-dd HH:mm:ss"


def _text(col: str | Column) -> Column:
    return compat.column(col).cast("string")


def parse_date(col: str | Column, date_format: str | None) -> Column:
    """A string column (SQL text or Column) parsed as a date with a Spark pattern (null when it does not parse)."""
    if date_format == ISO_DATE_FORMAT:
        return _parse_iso_date(col)
    if date_format:
        return _parse_date_pattern(compat.column(col), date_format)
    return compat.try_cast(col, "date")


def _parse_date_pattern(col: Column, date_format: str) -> Column:
    # pyspark 4.0 has no try_to_date: parse as a timestamp with the pattern, then truncate to a date.
    return F.to_date(_parse_pattern(col, date_format))


def _parse_pattern(col: Column, pattern: str, offset: str | None = None) -> Column:
    """try_to_timestamp with `pattern`, where text whose year could overflow the parser is null without parsing;
    with `offset` (`+00:00`), text and pattern carry that offset, so the session time zone plays no part.

    Spark's pattern parser turns a year past about ±290,000 into a long overflow (an ArithmeticException, which
    try_to_timestamp does not catch), so one such value aborted the whole pass, and inside a write governed by
    the session extension, the user's job. year_overflow_regex finds those years in the text.
    """
    overflow = year_overflow_regex(pattern)
    text, layout = (col, pattern) if offset is None else (F.concat(col, F.lit(f"|{offset}")), f"{pattern}'|'xxx")
    parsed = F.try_to_timestamp(text, F.lit(layout))
    return parsed if overflow is None else F.when(~col.rlike(overflow), parsed)


#: pattern letters whose text is digits, and the most digits a valid value takes (a year: five, see below)
_NUMERIC_WIDTH = {"D": 3, "d": 2, "M": 2, "L": 2, "Q": 2, "q": 2, "F": 1, "H": 2, "h": 2, "K": 2, "k": 2, "m": 2,
                  "s": 2}
#: letters whose text has no digit (from a count of 3 for M, L, Q, q: month and quarter names)
_TEXT_LETTERS = set("GEa")
#: zone and offset letters: their text may hold digits (+05:30, GMT+3)
_ZONE_LETTERS = set("VzOXxZ")
_PATTERN_TOKEN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|.", re.S)


def year_overflow_regex(pattern: str) -> str | None:
    """A Java regex that finds, in text for `pattern`, a year of six digits or more; None when none is needed.

    Years of up to five digits are left to the parser, whose answers are kept. A longer year is an invalid value:
    past ±290,000 the parser would overflow, and no real date has one. The year's digits are found from the
    pattern's layout: its digit fields, adjacent or apart, and where the year stands among them. A pattern
    whose layout hides the year (a second year field, a zone or an optional section before it, a sign among
    its literals beside a year that follows other digits) gets None: it is parsed as before, unguarded.
    """
    groups: list[list[tuple[str, int]]] = [[]]  # runs of adjacent digit fields
    before_year = ""  # the kinds of items before the year's group: "z" zone, "[" optional section
    year: tuple[int, int] | None = None  # (group, position in it)
    signs = zones = False
    for match in _PATTERN_TOKEN.finditer(pattern):
        token, letter = match.group(0), match.group(1)
        count = len(token)
        if letter in ("y", "u") and count != 2:
            if year is not None:
                return None
            year = (len(groups) - 1, len(groups[-1]))
            groups[-1].append((letter, count))
        elif letter and ((letter in _NUMERIC_WIDTH and (count < 3 or letter in "DdHhKkmsF")) or letter in "yuS"):
            groups[-1].append((letter, count))
        else:
            if letter in _ZONE_LETTERS:
                zones = True
                before_year += "z" if year is None else ""
            elif token in "[]" and year is None:
                before_year += "["
            elif letter and letter not in _TEXT_LETTERS and letter not in "MLQq":
                return None  # a letter Spark refuses or we do not know: leave the pattern to Spark
            signs = signs or (not letter and any(c in token for c in "+-"))
            if groups[-1]:
                groups.append([])
    if year is None:
        return None  # no year field: nothing here can overflow
    group, position = groups[year[0]], year[1]
    trailing = group[position + 1:]
    if any(not _fixed(letter, count) for letter, count in trailing):
        return None
    need = 6 + sum(count for _letter, count in trailing)  # the fewest digits an overflowing year's run has
    if position > 0:
        # After other digits (ddMMyyyy) a year of more than four digits needs its sign, which splits the run.
        if group[position][1] < 4 or signs or zones:
            return None
        return f"[0-9][+-][0-9]{{{need}}}"
    widest_other = max([sum(_widest(letter, count) for letter, count in g) for i, g in enumerate(groups)
                        if i != year[0]] + [6 if zones else 0])
    if widest_other < need:
        return f"[0-9]{{{need}}}"
    if before_year:
        return None
    # Another field's digits can be as long: count runs to reach the year's (a sign is not a digit).
    return f"^[^0-9]*+(?:[0-9]++[^0-9]++){{{year[0]}}}[0-9]{{{need}}}"


def _fixed(letter: str, count: int) -> bool:
    """A digit field of one width only, which adjacent fields parse at that width."""
    return (letter in "dMLHhKkms" and count == 2) or (letter == "D" and count == 3)


def _widest(letter: str, count: int) -> int:
    """The most digits a valid value of the field takes (a year, five)."""
    if letter in ("y", "u"):
        return 2 if count == 2 else 5
    if letter == "S":
        return count
    return max(count, _NUMERIC_WIDTH[letter])


#: the first and last years whose every day Spark's pattern parser turns into a timestamp without overflowing
MIN_PARSED_YEAR, MAX_PARSED_YEAR = -290307, 294246


def _parse_iso_date(sql: str | Column) -> Column:
    """`yyyy-MM-dd`: Spark's date cast where the text has that shape, the pattern parser for everything else.

    The same answer as the pattern alone (tests/test_checks_formats.py compares them on generated strings), at
    about half the cost: the pattern parser builds java.time objects and goes through the session time zone
    for every row (2M rows of bench_checks.py's dates: 0.27 s against 0.48 s). Text of 10 characters with
    dashes at 5 and 8 converts alike both ways but for one case: the cast trims trailing whitespace and
    stops at a "T", so "2024-01-5 " is a date to it; hence a day below 10 must be written "0d".
    """
    cast, col = compat.try_cast(sql, "date"), compat.column(sql)
    shaped = (F.length(col) == 10) & (F.locate("-", col, 5) == 5) & (F.locate("-", col, 8) == 8)
    two_digit_day = cast.isNull() | (F.dayofmonth(cast) >= 10) | (F.locate("0", col, 9) == 9)
    # Any other text reaches the pattern parser only if a signed or longer year could make it parse: `MM` and
    # `dd` take two digits each, so 10 characters are yyyy-MM-dd shaped or fail, and shaped text the cast does
    # not take fails too. The parser fails by throwing, about ten times the cost of a parse (2M rows of
    # "data-invalida": 2.8 s against 0.3 s for 2M dates), so text it can never accept is null at once. Years
    # outside MIN/MAX_PARSED_YEAR are null too: there Spark's parser overflows (an ArithmeticException, which
    # try_to_timestamp does not catch) and one such value would abort the whole pass.
    year_text = (f"substring({sql}, 1, length({sql}) - 6)" if isinstance(sql, str)
                 else col.substr(F.lit(1), F.length(col) - 6))
    year = compat.try_cast(year_text, "int")
    # two comparisons, not BETWEEN: Spark 4.0 rewrites BETWEEN into a common-expression node that the session
    # extension's compiled text cannot carry (checks/sql_text.py)
    long_year = ((F.length(col) >= 11) & (F.substring(col, -3, 1) == "-") & (F.substring(col, -6, 1) == "-")
                 & (year >= MIN_PARSED_YEAR) & (year <= MAX_PARSED_YEAR))
    parsed = F.to_date(F.try_to_timestamp(col, F.lit(ISO_DATE_FORMAT)))  # guarded by long_year, not by the regex
    return F.when(shaped & two_digit_day, cast).when(long_year, parsed)


def parse_timestamp(col: str | Column, date_format: str | None) -> Column:
    """A string column (SQL text or Column) parsed as a timestamp with a Spark pattern (null when it does not parse)."""
    if date_format:
        return _parse_pattern(compat.column(col), date_format)
    return compat.try_cast(col, "timestamp")


def parse_timestamp_ntz(col: str | Column, date_format: str | None) -> Column:
    """Text as timestamp_ntz: the wall-clock value as written, whatever the session time zone.

    Parsed as a timestamp, text moves with the session zone: `2024-03-10 02:30` falls in New York's spring
    gap and became 03:30. So text without a pattern takes Spark's own timestamp_ntz cast, and a pattern that
    names no zone is parsed at offset +00:00 (appended to text and pattern), whose instant counts the same
    microseconds from the epoch as the wall clock does (added to the ntz epoch, which has no zone to shift).
    """
    if not date_format:
        return compat.try_cast(col, "timestamp_ntz")
    if _ZONE_LETTERS & set(re.sub(r"'[^']*'", "", date_format)):  # the text says its zone: an instant
        return parse_timestamp(col, date_format).cast("timestamp_ntz")
    micros = F.unix_micros(_parse_pattern(compat.column(col), date_format, offset="+00:00"))
    days = F.floor(micros / F.lit(_MICROS_A_DAY))
    seconds = ((micros - days * F.lit(_MICROS_A_DAY)) / F.lit(1_000_000)).cast("decimal(18,6)")
    return F.lit("1970-01-01 00:00:00").cast("timestamp_ntz") + F.make_dt_interval(days.cast("int"), F.lit(0),
                                                                                    F.lit(0), seconds)


_MICROS_A_DAY = 86_400_000_000


def _digit(text: Column, position: int) -> Column:
    """The numeric value of the character at a 1-based position: ascii - 48 (also for CNPJ letters)."""
    return F.ascii(F.substring(text, position, 1)) - F.lit(48)


def _weighted_sum(text: Column, weights: list[int]) -> Column:
    total = F.lit(0)
    for position, weight in enumerate(weights, start=1):
        total = total + _digit(text, position) * F.lit(weight)
    return total


def _not_all_same(text: Column) -> Column:
    # 000.000.000-00 and the like pass the arithmetic but are not issued.
    return ~text.rlike(r"^(.)\1*$")


def cpf_valid(col: str | Column) -> Column:
    """CPF with or without punctuation, both check digits verified (mod 11)."""
    text = F.trim(_text(col))
    digits = F.regexp_replace(text, r"[.\-]", "")
    dv1 = (_weighted_sum(digits, list(range(10, 1, -1))) * 10) % 11 % 10
    dv2 = (_weighted_sum(digits, list(range(11, 1, -1))) * 10) % 11 % 10
    return (
        rlike(text, CPF_RE)
        & _not_all_same(digits)
        & (dv1 == _digit(digits, 10))
        & (dv2 == _digit(digits, 11))
    )


def _cnpj_dv(total: Column) -> Column:
    rest = total % 11
    return F.when(rest < 2, F.lit(0)).otherwise(F.lit(11) - rest)


def cnpj_valid(col: str | Column) -> Column:
    """CNPJ numeric or alphanumeric (char value = ascii - 48), punctuation optional, both check digits."""
    text = F.upper(F.trim(_text(col)))
    chars = F.regexp_replace(text, r"[./\-]", "")
    dv1 = _cnpj_dv(_weighted_sum(chars, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]))
    dv2 = _cnpj_dv(_weighted_sum(chars, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]))
    return (
        rlike(text, CNPJ_RE)
        & _not_all_same(chars)
        & (dv1 == _digit(chars, 13))
        & (dv2 == _digit(chars, 14))
    )


def _regex(pattern: str, trim: bool = False) -> Callable[[str | Column, str | None], Column]:
    def build(col: str | Column, _fmt: str | None) -> Column:
        text = F.trim(_text(col)) if trim else _text(col)
        return rlike(text, pattern)

    return build


def _date(col: str | Column, date_format: str | None) -> Column:
    return parse_date(col, date_format or DEFAULT_DATE_FORMAT).isNotNull()


def _timestamp(col: str | Column, date_format: str | None) -> Column:
    return parse_timestamp(col, date_format or DEFAULT_TIMESTAMP_FORMAT).isNotNull()


#: format name -> builder(col as SQL text or Column, date_format) -> boolean Column (true = valid)
FORMATS: dict[str, Callable[[str | Column, str | None], Column]] = {
    "email": _regex(EMAIL_RE),
    "uuid": _regex(UUID_RE),
    "url": _regex(URL_RE),
    "ipv4": _regex(IPV4_RE),
    "phone": _regex(PHONE_BR_RE, trim=True),
    "date": _date,
    "timestamp": _timestamp,
    "cpf": lambda col, _fmt: cpf_valid(col),
    "cnpj": lambda col, _fmt: cnpj_valid(col),
}

TEMPORAL_TYPES = (DateType, TimestampType, TimestampNTZType)


def is_valid(name: str, col: str | Column, date_format: str | None = None, dtype: DataType | None = None) -> Column:
    """True where the value (SQL text or Column) has the named format; null where the value is null."""
    builder = FORMATS.get(name)
    if builder is None:
        raise ContractError(f"unknown format {name!r}; known: {', '.join(sorted(FORMATS))}")
    sql, col = col, compat.column(col)
    if name in ("date", "timestamp") and isinstance(dtype, TEMPORAL_TYPES):
        return F.when(col.isNotNull(), F.lit(True))  # already a typed date/timestamp
    if dtype is not None and not isinstance(dtype, StringType) and name in ("date", "timestamp"):
        return col.cast("string").isNotNull()
    return F.when(col.isNotNull(), builder(sql, date_format))

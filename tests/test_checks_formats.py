"""Formats as Spark Columns: known valid / invalid values, CPF and CNPJ check digits (incl. alphanumeric)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark


def _check(spark, fmt, values, date_format=None):
    from pyspark.sql import functions as F

    from dq_governance.checks.formats import is_valid

    df = spark.createDataFrame([(v,) for v in values], "v string")
    rows = df.select("v", is_valid(fmt, F.col("v"), date_format).alias("ok")).collect()
    return {r["v"]: r["ok"] for r in rows}


def _cpf_reference(text: str) -> bool:
    """Plain-Python CPF check digits, to cross-check the Column expression."""
    digits = [int(c) for c in text if c.isdigit()]
    if len(digits) != 11 or len(set(digits)) == 1:
        return False
    for n in (9, 10):
        total = sum(d * w for d, w in zip(digits[:n], range(n + 1, 1, -1)))
        if total * 10 % 11 % 10 != digits[n]:
            return False
    return True


def _cnpj_reference(text: str) -> bool:
    chars = [c for c in text.upper() if c not in "./-"]
    if len(chars) != 14 or len(set(chars)) == 1:
        return False
    values = [ord(c) - 48 for c in chars]
    for n, weights in ((12, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]), (13, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])):
        rest = sum(v * w for v, w in zip(values[:n], weights)) % 11
        if (0 if rest < 2 else 11 - rest) != values[n]:
            return False
    return True


def test_cpf_check_digits(spark):
    values = ["529.982.247-25", "52998224725", "111.444.777-35", "390.533.447-05", "987.654.321-00",
              "123.456.789-00", "529.982.247-24", "000.000.000-00", "11111111111", "5299822472", "529-982-247.25",
              "abc.def.ghi-jk", None]
    got = _check(spark, "cpf", values)
    assert got == {
        "529.982.247-25": True, "52998224725": True, "111.444.777-35": True, "390.533.447-05": True,
        "987.654.321-00": True, "123.456.789-00": False, "529.982.247-24": False, "000.000.000-00": False,
        "11111111111": False, "5299822472": False, "529-982-247.25": False, "abc.def.ghi-jk": False, None: None,
    }
    for value in values[:9]:
        assert got[value] == _cpf_reference(value), value


def test_cnpj_numeric_and_alphanumeric(spark):
    values = ["11.222.333/0001-81", "11222333000181", "11.222.333/0001-82", "12.ABC.345/01DE-35",
              "12ABC34501DE35", "12abc34501de35", "12.ABC.345/01DE-36", "12.ABC.345/01DE-3A", "00000000000000",
              "1122233300018", None]
    got = _check(spark, "cnpj", values)
    assert got == {
        "11.222.333/0001-81": True, "11222333000181": True, "11.222.333/0001-82": False,
        "12.ABC.345/01DE-35": True, "12ABC34501DE35": True, "12abc34501de35": True,
        "12.ABC.345/01DE-36": False, "12.ABC.345/01DE-3A": False, "00000000000000": False,
        "1122233300018": False, None: None,
    }
    for value in values[:7]:
        assert got[value] == _cnpj_reference(value), value


def test_phone_brazil(spark):
    got = _check(spark, "phone", ["+55 11 98765-4321", "(21) 99876-5432", "11 3456-7890", "5511987654321",
                                  "(31) 3222-1100", "12345", "11 1234-5678", "(01) 98765-4321", "+1 415 555 0100"])
    assert [k for k, ok in got.items() if ok] == [
        "+55 11 98765-4321", "(21) 99876-5432", "11 3456-7890", "5511987654321", "(31) 3222-1100"]


@pytest.mark.parametrize(
    "fmt, good, bad",
    [
        ("email", ["ana@example.com", "a.b+c@sub.example.com.br"], ["davi@example", "no-at.example.com", "a@b@c.com"]),
        ("uuid", ["123e4567-e89b-12d3-a456-426614174000"], ["123e4567e89b12d3a456426614174000", "xyz"]),
        ("url", ["https://example.com/a?b=1", "http://x.io"], ["example.com", "https//x", "ftp:/x"]),
        ("ipv4", ["192.168.0.1", "0.0.0.0", "255.255.255.255"], ["256.1.1.1", "1.2.3", "1.2.3.4.5", "01a.1.1.1"]),
        ("date", ["2026-11-01", "2024-02-29"], ["2026-02-30", "data-invalida", "01/11/2026"]),
        ("timestamp", ["2026-11-20 10:00:00"], ["2026-11-20", "ontem", "2026-11-20 25:00:00"]),
    ],
)
def test_regex_and_parsed_formats(spark, fmt, good, bad):
    got = _check(spark, fmt, good + bad)
    assert {v for v, ok in got.items() if ok} == set(good)


def test_date_format_pattern(spark):
    got = _check(spark, "date", ["31/01/2026", "2026-01-31", "30/02/2026"], date_format="dd/MM/yyyy")
    assert got == {"31/01/2026": True, "2026-01-31": False, "30/02/2026": False}


def _iso_date_cases() -> list[str | None]:
    """Edge cases of yyyy-MM-dd, then generated text: random characters and date-shaped strings."""
    import random

    cases: list[str | None] = [
        "2024-02-29", "2023-02-29", "2026-04-31", "0000-01-01", "9999-12-31", "2024-13-01", "2024-00-10",
        "2024-01-00", "2024-01-5 ", " 2024-01-05", "2024-01-05 ", "2024-01-5T", "2024-01-0T", "2024-01-05T",
        "+2024-01-05", "-2024-01-05", "12024-01-05", "+12345-01-01", "2024-1-05", "2024-01-5", "2024/01/05",
        "2024-01-5\n", "2024-01-5\t", "2024-01-5\x00", "٢٠٢٤-01-05", "2024-01-0٥", "2024-01-05x", "", None,
        "data-invalida", "31/12/2024", "abcd-ef-gh", "2024-01-05Z", "x12345-01-01", "+0012345-01-01", "012345-01-01",
        "2024-001-05", "2024-01-005", "+294246-12-31", "+1-01-01", "-12345-01-01", "12345-1-01", "12345-01-1",
    ]
    rnd = random.Random(7)
    alphabet = "0123456789-+ T/:\t\n"
    cases += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12))) for _ in range(4000)]
    # five-digit years (where the pattern parser is still asked) with a random character here and there
    cases += ["".join(rnd.choice("0123456789") if rnd.random() < 0.9 else rnd.choice(alphabet + "ax")
                      for _ in range(5)) + f"-{rnd.randint(0, 13):02d}-{rnd.randint(0, 32):02d}"
              for _ in range(2000)]
    cases += [f"{rnd.randint(0, 9999):04d}-{rnd.randint(0, 13):02d}-{rnd.randint(0, 32):02d}" for _ in range(4000)]
    shape = "dddd-dd-dd"
    cases += ["".join(rnd.choice("0123456789") if ch == "d" else rnd.choice("--- T+\n") for ch in shape)
              for _ in range(4000)]
    return cases


@pytest.mark.parametrize("zone", ["UTC", "America/Sao_Paulo"])
def test_iso_date_fast_path_agrees_with_the_pattern_parser(spark, zone):
    """yyyy-MM-dd takes Spark's date cast where the text has that shape; every answer equals the pattern's."""
    from pyspark.sql import functions as F

    from dq_governance.checks.formats import ISO_DATE_FORMAT, parse_date

    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)  # the pattern parser goes through the session zone
    try:
        df = spark.createDataFrame([(v,) for v in _iso_date_cases()], "v string")
        both = df.select("v", parse_date(F.col("v"), "yyyy-MM-dd").alias("fast"),
                         F.to_date(F.try_to_timestamp("v", F.lit(ISO_DATE_FORMAT))).alias("pattern"))
        assert both.where(~F.equal_null("fast", "pattern")).limit(5).collect() == []
        # as text: year 0 exists in Spark's calendar, not in Python's
        parsed = {r["v"]: r["fast"] for r in both.select("v", F.col("fast").cast("string").alias("fast")).collect()}
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
    assert [parsed[v] for v in ("2024-02-29", "0000-01-01", "9999-12-31")] == ["2024-02-29", "0000-01-01", "9999-12-31"]
    assert [parsed[v] for v in ("2023-02-29", "2024-01-5 ", "2024-01-5T", " 2024-01-05", "2024-1-05", "")] \
        == [None] * 6
    assert sum(v is not None for v in parsed.values()) > 3000  # the generated dates do reach the fast path
    assert [parsed[v] for v in ("12024-01-05", "+12345-01-01", "+294246-12-31", "-2024-01-05", "data-invalida")] \
        == [None, "+12345-01-01", "+294246-12-31", "-2024-01-05", None]


def test_an_iso_date_past_the_parsers_range_is_invalid_not_an_aborted_pass(spark):
    # Spark's pattern parser overflows on these (ArithmeticException through try_to_timestamp): one such value
    # would abort the whole check
    values = ["+294247-01-01", "999999999-12-31", "-290308-12-31", "+12345-01-01", "2026-01-31"]
    got = _check(spark, "date", values, date_format="yyyy-MM-dd")
    assert got == {"+294247-01-01": False, "999999999-12-31": False, "-290308-12-31": False, "+12345-01-01": True,
                   "2026-01-31": True}


#: patterns whose year sits in each layout the overflow guard reads: apart, first or last of adjacent digit
#: fields, after a 6-digit fraction's run count, after text fields, single-letter (unsigned) years
GUARDED_PATTERNS = ["dd/MM/yyyy", "yyyy-MM-dd HH:mm:ss", "d/M/y", "yyyyMMdd", "ddMMyyyy", "yyyyMMddHHmmss",
                    "yyyy-MM-dd HH:mm:ss.SSSSSS", "d/M/yyyy HH:mm:ss.SSSSSS", "dd MMM yyyy HH:mm:ss",
                    "MM/dd/yyyy hh:mm a"]


def _pattern_cases(spark, pattern: str) -> list[str]:
    """Text for `pattern`: Spark's own rendering of instants from year -99999 to 99999 (years of five digits
    come signed), then each mutated: a character swapped for a digit, sign or separator, or one dropped."""
    import random

    from pyspark.sql import functions as F

    rnd = random.Random(pattern)
    seconds = [rnd.randint(-3_217_000_000_000, 3_093_000_000_000) if rnd.random() < 0.3
               else rnd.randint(-62_000_000_000, 253_000_000_000) for _ in range(1500)]
    texts = [r[0] for r in spark.createDataFrame([(s,) for s in seconds], "s long")
             .select(F.date_format(F.timestamp_seconds("s"), pattern)).collect()]
    mutated = []
    for text in texts:
        chars = list(text)
        at = rnd.randrange(len(chars))
        if rnd.random() < 0.2:
            del chars[at]
        else:
            chars[at] = rnd.choice("0123456789+-/: ")
        mutated.append("".join(chars))
    return texts + mutated + ["", "data-invalida", "31/02/2026", "2026-02-30 10:00:00"]


@pytest.mark.parametrize("pattern", GUARDED_PATTERNS)
def test_a_patterns_overflow_guard_keeps_every_answer_of_the_parser_for_years_up_to_five_digits(spark, pattern):
    """Where the guard lets text through, the answer is the parser's; it stops only years of six digits or more."""
    import re

    from pyspark.sql import functions as F

    from dq_governance.checks.formats import _parse_pattern, year_overflow_regex

    overflow = year_overflow_regex(pattern)
    assert overflow is not None, pattern
    cases = _pattern_cases(spark, pattern)
    passed = [text for text in cases if not re.search(overflow, text)]
    stopped = [text for text in cases if re.search(overflow, text)]
    # the raw parser over what the guard lets through: an overflow here (a year the guard missed) fails the test
    df = spark.createDataFrame([(v,) for v in passed], "v string")
    both = df.select("v", _parse_pattern(F.col("v"), pattern).alias("guarded"),
                     F.try_to_timestamp("v", F.lit(pattern)).alias("parser"))
    assert both.where(~F.equal_null("guarded", "parser")).limit(5).collect() == []
    assert both.where(F.col("parser").isNotNull()).count() > 1000  # the valid renderings do parse
    # what the guard stops has a year of six digits or more: none of Spark's renderings (years up to 99999)
    assert stopped and all(re.search(r"[0-9]{6}", text) for text in stopped)
    assert not set(stopped) & set(cases[:1500])


@pytest.mark.parametrize("pattern, text", [
    ("dd/MM/yyyy", "01/01/+999999"), ("dd/MM/yyyy", "01/01/-290308"), ("yyyy-MM-dd HH:mm:ss", "+999999-01-01 00:00:00"),
    ("d/M/y", "1/1/999999"), ("ddMMyyyy", "0101+999999"), ("yyyyMMdd", "+3000000101"),
    ("yyyy-MM-dd HH:mm:ss.SSSSSS", "-999999-01-01 00:00:00.000000"), ("d/M/yyyy HH:mm:ss.SSSSSS", "1/1/+999999 00:00:00.1"),
])
def test_a_year_the_pattern_parser_overflows_on_is_an_invalid_value_not_an_aborted_pass(spark, pattern, text):
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(text,), ("x",)], "v string")
    with pytest.raises(Exception, match="overflow"):  # what the parser alone does: the whole job fails
        df.select(F.try_to_timestamp("v", F.lit(pattern))).collect()
    assert _check(spark, "timestamp", [text, "x"], date_format=pattern) == {text: False, "x": False}
    assert _check(spark, "date", [text, "x"], date_format=pattern) == {text: False, "x": False}

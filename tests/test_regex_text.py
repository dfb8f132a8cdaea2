"""Regex classes spelled out for Java: the exact rewrite, what is left alone, and the same matches in Spark."""

from __future__ import annotations

import random
import re
import string

import pytest

from dq_governance.checks.formats import CNPJ_RE, EMAIL_RE, UUID_RE
from dq_governance.checks.regex_text import bitmap_classes

UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits


@pytest.mark.parametrize("pattern, spelled", [
    ("^[A-Za-z0-9._%+-]+$", "^[" + UPPER + LOWER + DIGITS + r"._%+\-]+$"),
    ("[-+0-9a]", r"[\-+" + DIGITS + "a]"),
    ("[^A-Fa-f]x[0-9a-c]", "[^ABCDEFabcdef]x[" + DIGITS + "abc]"),
    (r"\.[A-Z\-_]", r"\.[" + UPPER + r"\-_]"),
    ("[Y-b.]", r"[YZ\[\\\]\^_`ab.]"),  # a range across punctuation: each of its members escaped where it must be
    ("[a-cb-d]", "[abcd]"),  # members named twice once
    (r"\\[a-c1]", r"\\[abc1]"),  # an escaped backslash, then a class
    (r"\\c[a-c1]", r"\\c[abc1]"),  # an escaped backslash, a c, then a class
])
def test_a_plain_class_with_a_range_is_spelled_out_character_by_character(pattern, spelled):
    assert bitmap_classes(pattern) == spelled


@pytest.mark.parametrize("pattern", [
    "^[0-9]{3}$",            # one range alone: already one predicate
    "[abc._]",               # no range: already a bitmap
    r"\[A-Z0-9]",            # an escaped bracket: no class at all
    r"[\d_a-z]",             # \d is a class of its own
    r"[\p{Alpha}0-9]",
    r"[\x41-\x5A0-9]",
    "[a-z&&[^e]]",           # intersection
    "[a-z[0-9]]",            # union of nested classes
    "[a-z-9]",               # a - between a range and a character
    "[z-a0-9]",              # a reversed range is Java's own error, kept
    "(?i)[a-z0-9]",          # case-insensitive: left to Java
    "[a-z0-9](?x: # c\n)",   # comment mode anywhere
    r"\Q[a-z0-9]\E",         # quoted text
    r"\c[a-z0-9]",           # \c[ is the control character ESC: the text after it is no class
    "[]a-z]", "[a-z0-9 ]", "[a-zé0-9]", "[a-z0-9", "[",
])
def test_a_class_java_could_read_otherwise_leaves_the_pattern_exactly_as_written(pattern):
    assert bitmap_classes(pattern) == pattern


#: patterns whose Python `re` reading equals Java's, so `re.search` gives the known answer
EQUIVALENCE_PATTERNS = [
    EMAIL_RE, UUID_RE, CNPJ_RE,
    "^[A-Za-z0-9._%+-]+@example\\.com$",
    "^[-+]?[0-9A-F]+$", "^[^a-zA-Z0-9]+$", "[x-z0-2]{2}", "^[A-Z][a-z0-9_-]*$", "[Y-b.]",
]


def _corpus(rng: random.Random) -> list[str]:
    """Random text over every printable ASCII character and a few others, plus e-mails, UUIDs and CNPJs."""
    alphabet = string.printable.strip() + " éüÇ€\u212a"  # \u212a: the Kelvin sign, no case folding here
    out = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(3000)]
    word = lambda chars, n: "".join(rng.choice(chars) for _ in range(n))  # noqa: E731
    for _ in range(1000):
        local, host = word(LOWER + DIGITS + "._%+-", rng.randint(1, 9)), word(LOWER + DIGITS + "-", rng.randint(1, 6))
        out.append(f"{local}@{host}.{word(LOWER + '1', rng.randint(1, 3))}")
        out.append("-".join(word("0123456789abcdefABCDEFg", n) for n in (8, 4, 4, 4, 12)))
        parts = [word(DIGITS + UPPER[:3] + "a", n) for n in (2, 3, 3, 4)] + [word(DIGITS, 2)]
        out.append("".join(p + rng.choice(["", sep]) for p, sep in zip(parts, "../-")) + parts[-1])
        out.append(f"{word(LOWER + DIGITS + '._%+-', 5)}@example.com")
    return out


@pytest.mark.spark
def test_spelled_out_classes_match_exactly_the_strings_the_written_pattern_matches(spark):
    from pyspark.sql import functions as F

    corpus = _corpus(random.Random(20))
    df = spark.createDataFrame([(s,) for s in corpus], "v string")
    aggregates = []
    for i, pattern in enumerate(EQUIVALENCE_PATTERNS):
        spelled = bitmap_classes(pattern)
        assert spelled != pattern, pattern  # each one is rewritten, or this test proves nothing
        aggregates += [F.count_if(F.col("v").rlike(pattern)).alias(f"written{i}"),
                       F.count_if(F.col("v").rlike(spelled)).alias(f"spelled{i}"),
                       F.count_if(F.col("v").rlike(pattern) != F.col("v").rlike(spelled)).alias(f"differ{i}")]
    row = df.agg(*aggregates).first()
    for i, pattern in enumerate(EQUIVALENCE_PATTERNS):
        known = sum(1 for s in corpus if re.search(pattern, s))
        assert 0 < known < len(corpus), pattern  # the corpus has both answers for each pattern
        assert (row[f"written{i}"], row[f"spelled{i}"], row[f"differ{i}"]) == (known, known, 0), pattern


@pytest.mark.spark
def test_the_engine_and_the_manifest_run_the_spelled_out_pattern(spark):
    from dq_governance.checks.engine import evaluate
    from dq_governance.checks.sql_text import compile_contract
    from dq_governance.contracts.model import Contract

    c = Contract.model_validate({
        "contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"},
        "schema": {"fields": [{"name": "code", "type": "string"}]},
        "quality": {"rules": [{"type": "regex", "name": "code_shape", "column": "code", "pattern": "^[A-Z][0-9a-f]+$"}]},
    })
    df = spark.createDataFrame([("A1f",), ("a1f",), ("B",), ("C0-",), (None,), ("Z09",)], "code string")
    result = evaluate(df, c, mode="counts")
    try:
        assert {r.name: r.failed_count for r in result.rules}["code_shape"] == 3  # a1f, B, C0-; null is no failure
    finally:
        result.release()
    checks = compile_contract(spark, c)
    (rule,) = [r for r in checks["rules"] if r["name"] == "code_shape"]
    assert bitmap_classes("[0-9a-f]") in rule["violation"]["typed"]

"""Answers that do not depend on who asks: Spark 3.5 against 4.0, and the contract loader against Java's regex.

ANSI mode: dqgov's own sessions (the CLI's, `spark_session()`) run with `spark.sql.ansi.enabled=true`, Spark 4's
default, so on 3.5 an `expression` rule that cannot evaluate a row (`CAST('x' AS INT)`) fails the check there as
it does on 4.0, instead of passing the row as null; the contract's own casts stay try_cast (a value that does not
convert is counted invalid, the check goes on); a session the caller already runs keeps its own mode.
Run on Spark 3.5 too (the Makefile's TESTS_35): there the CLI tests are the ones that failed before.

Regexes (`pattern`, `regex` rules, `valid_regex`) are Java's, as Spark's RLIKE compiles them: the loader checks
them with Python's re on a Python spelling of Java's own syntax, and agrees with `java.util.regex.Pattern`.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap

import pytest
import yaml

from dq_governance.cli import main
from dq_governance.contracts.model import Contract
from enforce_helpers import DQGOV, _env

# --------------------------------------------------------------------------- ANSI mode of dqgov's sessions

CSV = "id,qty,code\n1,5,7\n2,abc,8\n3,2,x\n"


def _cli_contract(tmp_path, rules):
    data = tmp_path / "rows.csv"
    data.write_text(CSV)
    doc = {
        "contract": {"name": "ansi", "version": "1.0.0", "owner": "team:x"},
        "dataset": {"name": "ansi", "path": str(data), "format": "csv"},
        "schema": {"fields": [{"name": "id", "type": "long", "required": True}, {"name": "qty", "type": "int"},
                              {"name": "code", "type": "string"}]},
        "quality": {"on_failure": "quarantine", "rules": rules},
    }
    path = tmp_path / "ansi.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path, data


def _check(tmp_path, contract):
    return subprocess.run([str(DQGOV), "check", str(contract), "--metrics-only", "--report", str(tmp_path / "report"),
                           "--lineage", "none", "--no-listener", "--json"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("dqgov:")]


def test_sessions_turn_ansi_on_unless_the_caller_chose_or_the_session_runs():
    """A new dqgov session: ANSI on (3.5 defaults to off); the caller's conf wins; a running session is left alone."""
    from dq_governance.lineage.spark import _with_driver_defaults

    assert _with_driver_defaults({})["spark.sql.ansi.enabled"] == "true"
    assert _with_driver_defaults({"spark.sql.ansi.enabled": "false"})["spark.sql.ansi.enabled"] == "false"
    assert "spark.sql.ansi.enabled" not in _with_driver_defaults({}, new_session=False)


@pytest.mark.spark
def test_cli_check_fails_on_an_expression_rule_that_raises_under_ansi(tmp_path):
    """`CAST(code AS INT) > 0` over code 'x': exit 2 and one error line on 3.5 as on 4.0 (3.5 passed it, exit 0)."""
    contract, data = _cli_contract(tmp_path, [{"type": "expression", "name": "code_positive",
                                               "expression": "CAST(code AS INT) > 0"}])
    proc = _check(tmp_path, contract)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stdout == ""
    [line] = _error_lines(proc.stderr)
    assert line.startswith(f"dqgov: error: checking {data} failed: ")


@pytest.mark.spark
def test_cli_check_still_counts_values_the_contract_cannot_cast_under_ansi_regression_guard(tmp_path):
    """qty 'abc' against `int`: try_cast gives null, the row is invalid and the check goes on (no ANSI abort)."""
    contract, _ = _cli_contract(tmp_path, [])
    proc = _check(tmp_path, contract)
    assert proc.returncode == 0, proc.stderr[-2000:]  # no minimum_valid_ratio: quarantine, and the run passes
    summary = json.loads(proc.stdout)
    assert (summary["total_rows"], summary["valid_rows"], summary["invalid_rows"]) == (3, 2, 1)
    assert {r["name"]: r["failed_count"] for r in summary["rules"]}["qty_type"] == 1


@pytest.mark.spark
def test_spark_session_turns_ansi_on_in_its_own_session_and_keeps_a_running_ones(tmp_path):
    """spark_session(): a session it starts has ANSI on; a session the user started with it off keeps it off."""
    script = textwrap.dedent("""
        from pyspark.sql import SparkSession
        from dq_governance.lineage.spark import spark_session

        own = spark_session("ansi-own", listener=False, master="local[1]", **{"spark.ui.enabled": "false"})
        print("own", own.conf.get("spark.sql.ansi.enabled"))
        own.stop()
        user = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                .config("spark.sql.ansi.enabled", "false").getOrCreate())
        print("user", spark_session("ansi-user", listener=False).conf.get("spark.sql.ansi.enabled"))
        user.stop()
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["own true", "user false"]


# --------------------------------------------------------------------------- Java regex syntax

NAME_PATTERN = r"^\p{Lu}\p{L}+$"


def _pattern_contract(pattern: str) -> dict:
    return {
        "contract": {"name": "people", "version": "1.0.0", "owner": "team:x"},
        "dataset": {"name": "people", "path": "people.csv", "format": "csv"},
        "schema": {"fields": [{"name": "id", "type": "long"},
                              {"name": "name", "type": "string", "pattern": pattern}]},
    }


def test_a_unicode_property_pattern_loads_and_lints_clean(tmp_path, capsys, monkeypatch):
    """README: a class with \\p{...} is Java's and left as written; the loader refused it (bad escape \\p)."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "people.yaml"
    path.write_text(yaml.safe_dump(_pattern_contract(NAME_PATTERN), sort_keys=False))
    assert Contract.model_validate(_pattern_contract(NAME_PATTERN)).field("name").pattern == NAME_PATTERN
    assert main(["lint", str(path)]) == 0
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "dqgov lint: 1 file checked, 0 errors, 0 warnings\n")


@pytest.mark.spark
def test_a_unicode_property_pattern_counts_the_values_it_fails_in_spark(spark):
    """Two of four names fail `^\\p{Lu}\\p{L}+$`: `ana` (lower-case first) and `O'Neil` (an apostrophe)."""
    import dq_governance

    df = spark.createDataFrame([(1, "Ana"), (2, "Élodie"), (3, "ana"), (4, "O'Neil")], "id long, name string")
    result = dq_governance.check(df, Contract.model_validate(_pattern_contract(NAME_PATTERN)), outputs=False)
    try:
        [rule] = [r for r in result.rules if r.type == "regex"]
        assert (rule.column, rule.failed_count, result.invalid_rows) == ("name", 2, 2)
    finally:
        result.release()


#: Java syntax, each valid in java.util.regex.Pattern, that Python's re refuses; possessive quantifiers, atomic
#: groups, `&&` and `\b{g}` compile in Python 3.11's re too (regression guards there, failures on 3.10)
JAVA_ONLY = [
    r"^\p{Lu}\p{L}+$", r"\P{InGreek}\p{IsLatin}\pL\p{sc=Cyrillic}\p{gc=Nd}\p{javaLowerCase}\p{Alpha}",
    r"[\p{L}&&[^\p{Lu}]]+", r"[a-z&&[^aeiou]]", r"a++b*+c?+d{1,2}+", r"(?>a+)b", r"\Qa.b[c\E+", r"[\Q-]\E]",
    r"\h+\H\v\V\R\X", r"\e\cA\x{1F600}\0101\z\G", r"(?<year>\d{4})-\k<year>", r"(a)\2", r"(?<=a|bc)x",
    r"a(?i)b(?-i)c", r"(?U)\w+", r"\b{g}", r"[\w-z]", r"a*{2}", r"{2}", r"^*",
]
#: refused by Java, and by the loader with this message. Python's re took the first five and refused the next five
#: in its own words; it refused the last three as they are (regression guards: message and position kept)
REFUSED = [
    ("(?P<n>a)", "unknown inline modifier at position 2"),
    ("a{", "illegal repetition at position 1"),
    ("[&&]", "bad class syntax at position 0"),
    (r"\0", "illegal octal escape sequence at position 0"),
    (r"[\b]", "illegal/unsupported escape sequence at position 1"),
    (r"\p{Foo}", "unknown character property name {Foo} at position 0"),
    (r"\p{L", "unclosed character family at position 0"),
    (r"\k<n>(?<n>a)", "named capturing group <n> does not exist at position 0"),
    ("a+++", "dangling meta character '+' at position 3"),
    ("x{2,1}", "illegal repetition range at position 1"),
    ("^SKU-[0-9{4}$", "unterminated character set at position 5"),
    (r"ab\y", "bad escape \\y at position 2"),
    ("a(b", "missing ), unterminated subpattern at position 1"),
]


@pytest.mark.parametrize("pattern", JAVA_ONLY)
def test_java_only_syntax_loads(pattern):
    assert Contract.model_validate(_pattern_contract(pattern)).field("name").pattern == pattern


@pytest.mark.parametrize(("pattern", "message"), REFUSED)
def test_patterns_java_refuses_are_refused_with_the_position_in_the_pattern(pattern, message):
    with pytest.raises(ValueError) as caught:
        Contract.model_validate(_pattern_contract(pattern))
    assert f"invalid regex {pattern!r}: {message}" in str(caught.value)


#: pieces of Java regexes, valid and not, that random patterns are made of
_PIECES = ["a", "z", "0", ".", "^", "$", "|", "(", ")", "(?:", "(?=", "(?<=", "(?<!", "(?>", "(?i)", "(?-i)",
           "(?<n>", "\\k<n>", "\\1", "[", "]", "[^", "-", "&&", "*", "+", "?", "{2}", "{1,3}", "{", "}", "*+", "?+",
           "\\p{L}", "\\P{Lu}", "\\pL", "\\p{IsLatin}", "\\p{Foo}", "\\d", "\\w", "\\h", "\\R", "\\b", "\\z",
           "\\e", "\\cA", "\\0", "\\012", "\\x41", "\\x{1F600}", "\\Q", "\\E", "\\.", "\\-", "\\]", "\\y", "é", "#"]


def _java_compiles(jvm, pattern: str) -> bool:
    try:
        jvm.java.util.regex.Pattern.compile(pattern)
        return True
    except Exception:  # py4j's Py4JJavaError around PatternSyntaxException
        return False


def _loads(pattern: str) -> bool:
    try:
        Contract.model_validate(_pattern_contract(pattern))
        return True
    except ValueError:
        return False


@pytest.mark.spark
def test_the_loader_agrees_with_javas_pattern_on_every_listed_and_random_pattern(spark):
    """java.util.regex.Pattern.compile in the session's JVM decides; Python's re alone disagreed on a quarter."""
    jvm = spark.sparkContext._jvm
    rnd = random.Random(35)
    randoms = ["".join(rnd.choice(_PIECES) for _ in range(rnd.randint(1, 8))) for _ in range(600)]
    patterns = JAVA_ONLY + [p for p, _ in REFUSED] + randoms
    disagree = [(p, _java_compiles(jvm, p)) for p in patterns if _java_compiles(jvm, p) != _loads(p)]
    assert disagree == []
    assert sum(_java_compiles(jvm, p) for p in randoms) == 180  # both verdicts are well represented

"""Every rule type in the registry on small data with a known answer."""

from __future__ import annotations

import math
import statistics

import pytest

from dq_governance.contracts.model import DERIVED_RULE_TYPES, RULE_TYPES, Contract

pytestmark = pytest.mark.spark


def contract(fields, rules=(), **quality):
    return Contract.model_validate({
        "contract": {"name": "t", "version": "1.0.0"},
        "dataset": {"name": "t"},
        "schema": {"fields": fields},
        "quality": {"rules": list(rules), **quality},
    })


def run(spark, rows, schema, fields, rules, mode="split", **kw):
    from dq_governance.checks.engine import evaluate

    result = evaluate(spark.createDataFrame(rows, schema), contract(fields, rules), mode=mode, **kw)
    result.release()
    return result


def test_registry_covers_every_rule_type():
    from dq_governance.checks.registry import DEFAULT_DIMENSIONS, REGISTRY

    assert set(REGISTRY) == set(RULE_TYPES) | set(DERIVED_RULE_TYPES)
    assert set(DEFAULT_DIMENSIONS) == set(RULE_TYPES) | set(DERIVED_RULE_TYPES)


def test_not_null_any_column(spark):
    r = run(spark, [(1, "x"), (None, "y"), (3, None), (None, None)], "a long, b string",
            [{"name": "a", "type": "long"}, {"name": "b"}], [{"type": "not_null", "columns": ["a", "b"]}])
    assert r.rule("a_b_not_null").failed_count == 3 and r.valid_rows == 1


def test_unique_single_nulls_never_collide(spark):
    r = run(spark, [(1,), (2,), (2,), (3,), (None,), (None,)], "id long", [{"name": "id", "type": "long"}],
            [{"type": "unique", "column": "id"}])
    assert r.rule("id_unique").failed_count == 2 and r.valid_rows == 4


def test_unique_composite(spark):
    rows = [(1, 1), (1, 1), (1, 2), (None, 1), (None, 1), (2, None), (2, None)]
    r = run(spark, rows, "a long, b long", [{"name": "a", "type": "long"}, {"name": "b", "type": "long"}],
            [{"type": "unique", "columns": ["a", "b"]}])
    assert r.rule("a_b_unique").failed_count == 2


def test_unique_keys_compare_as_spark_groups_them(spark):
    # -0.0 and 0.0 are one key, and so are two NaNs (Spark normalizes floating keys for grouping and windows)
    rows = [(0.0,), (-0.0,), (float("nan"),), (float("nan"),), (1.5,), (None,), (None,)]
    r = run(spark, rows, "v double", [{"name": "v", "type": "double"}], [{"type": "unique", "column": "v"}])
    assert r.rule("v_unique").failed_count == 4 and r.valid_rows == 3


def test_unique_key_held_by_most_rows(spark):
    # 5,000 rows on one key: past the 4,096 rows a window holds in plain memory by default
    # (spark.sql.windowExec.buffer.in.memory.threshold), where it moves the group to a sorter that can spill
    from dq_governance.checks.engine import evaluate

    df = spark.range(5_100).selectExpr("IF(id < 5000, 7, id) AS k", "CAST(id AS STRING) AS s")
    r = evaluate(df, contract([{"name": "k", "type": "long"}, {"name": "s"}],
                              [{"type": "unique", "column": "k"}, {"type": "unique", "columns": ["k", "s"]}]))
    try:
        assert r.rule("k_unique").failed_count == 5_000 and r.rule("k_s_unique").failed_count == 0
        assert (r.valid_rows, r.valid_df.count(), r.quarantine_df.count()) == (100, 100, 5_000)
    finally:
        r.release()  # a failure here must not leave cached rows for the next test's persistence checks


@pytest.mark.parametrize("rule, expected", [
    ({"type": "range", "column": "v", "min": 0, "max": 10}, 2),
    ({"type": "range", "column": "v", "min": 0, "max": 10, "min_exclusive": True}, 3),
    ({"type": "range", "column": "v", "max": 10, "max_exclusive": True}, 2),
])
def test_range(spark, rule, expected):
    r = run(spark, [(-1.0,), (0.0,), (5.0,), (10.0,), (11.0,), (None,)], "v double",
            [{"name": "v", "type": "double"}], [rule])
    assert r.rule("v_range").failed_count == expected


def test_date_range_fails_exactly_the_rows_outside_it(spark):
    from dq_governance.checks.engine import evaluate
    from dq_governance.contracts.load import load_contract

    c = load_contract("""
contract: {name: t, version: 1.0.0}
dataset: {name: t}
schema:
  fields:
    - {name: id, type: long}
    - {name: day, type: date, minimum: "2024-01-01", maximum: 2024-12-31}
    - {name: at, type: timestamp, maximum: "2024-07-01T00:00:00", exclusive_maximum: true}
quality:
  rules:
    - {type: range, column: at, min: 2024-06-01}
""")
    rows = [
        ("1", "2024-01-01", "2024-06-30 23:59:59"),  # every bound inclusive where it may be
        ("2", "2023-12-31", "2024-07-01 00:00:00"),  # day too early; at on its exclusive maximum
        ("3", "2024-12-31", "2024-05-31 23:59:59"),  # at before 2024-06-01 (a date bound: its midnight)
        ("4", "2025-01-01", None),  # day too late; a null never violates
        ("5", "not-a-date", "soon"),  # does not convert: the type rules' business, not the range's
    ]
    df = spark.createDataFrame(rows, "id string, day string, at string")
    result = evaluate(df, c)
    try:
        counts = {r.name: (r.failed_count, r.expected) for r in result.rules if r.type in ("range", "type")}
        assert counts == {
            "id_type": (0, "type long"), "day_type": (1, "type date"),
            "day_range": (2, ">= 2024-01-01 and <= 2024-12-31"), "at_type": (1, "type timestamp"),
            "at_range": (1, "< 2024-07-01T00:00:00"), "at_range_2": (1, ">= 2024-06-01"),
        }
        errors = {r["id"]: r["_dq_errors"] for r in result.annotated_df.collect()}
        assert errors == {"1": [], "2": ["day_range", "at_range"], "3": ["at_range_2"], "4": ["day_range"],
                          "5": ["day_type", "at_type"]}
        assert (result.valid_rows, result.invalid_rows) == (1, 4)
    finally:
        result.release()


def test_regex_allowed_values_length(spark):
    rows = [("SKU-0001", "A", "ab"), ("SKU-12", "B", "abc"), ("x", "C", "abcdef"), (None, None, None)]
    r = run(spark, rows, "p string, s string, n string", [{"name": "p"}, {"name": "s"}, {"name": "n"}], [
        {"type": "regex", "column": "p", "pattern": "^SKU-[0-9]{4}$"},
        {"type": "allowed_values", "column": "s", "values": ["A", "B"]},
        {"type": "length", "column": "n", "min": 3, "max": 5},
    ])
    assert (r.rule("p_regex").failed_count, r.rule("s_allowed_values").failed_count,
            r.rule("n_length").failed_count) == (2, 1, 2)


def test_allowed_values_numeric_column(spark):
    r = run(spark, [("1",), ("2",), ("3",), ("x",)], "v string", [{"name": "v", "type": "int"}],
            [{"type": "allowed_values", "column": "v", "values": [1, 2]}])
    # "x" is a type violation only; 3 is outside the list.
    assert (r.rule("v_allowed_values").failed_count, r.rule("v_type").failed_count) == (1, 1)


def test_format_rule(spark):
    r = run(spark, [("ana@example.com",), ("davi@example",), (None,)], "e string",
            [{"name": "e", "format": "email"}], [])
    assert r.rule("e_format").failed_count == 1


def test_type_conformance_from_text(spark):
    rows = [("1", "2026-01-31"), ("abc", "2026-02-30"), ("", "31/01/2026"), (None, ""), (" 7 ", None), ("9x", "2026-12-01")]
    r = run(spark, rows, "n string, d string",
            [{"name": "n", "type": "long"}, {"name": "d", "type": "date", "date_format": "yyyy-MM-dd"}], [])
    assert r.rule("n_type").failed_count == 2  # abc, 9x; blank and null are not type violations
    assert r.rule("d_type").failed_count == 2  # 2026-02-30, 31/01/2026
    assert r.rule("n_type").expected == "type long"


def test_type_rule_same_type_cannot_fail(spark):
    r = run(spark, [(1,), (None,)], "n long", [{"name": "n", "type": "long", "required": True}], [])
    assert r.rule("n_type").failed_count == 0 and r.rule("n_not_null").failed_count == 1


def test_expression_false_violates_null_does_not(spark):
    r = run(spark, [(1, 2), (3, 2), (None, 1)], "a long, b long",
            [{"name": "a", "type": "long"}, {"name": "b", "type": "long"}],
            [{"type": "expression", "name": "a_lt_b", "expression": "a < b"}])
    assert r.rule("a_lt_b").failed_count == 1 and r.rule("a_lt_b").content == "a < b"


def test_foreign_key(spark, tmp_path):
    ref = tmp_path / "ref.csv"
    ref.write_text("id,name\n1,a\n2,b\n3,c\n3,c\n")
    r = run(spark, [("1",), ("2",), ("4",), (None,), ("5",), ("2",)], "k string", [{"name": "k", "type": "long"}],
            [{"type": "foreign_key", "column": "k", "reference": {"path": str(ref), "format": "csv", "column": "id"}}])
    assert r.rule("k_foreign_key").failed_count == 2 and r.total_rows == 6  # the join never multiplies rows


def test_row_count(spark):
    r = run(spark, [(1,), (2,), (3,)], "a long", [{"name": "a", "type": "long"}], [
        {"type": "row_count", "name": "rc_ok", "min": 1},
        {"type": "row_count", "name": "rc_bad", "must_be": ">= 5"},
        {"type": "row_count", "name": "rc_max", "max": 2},
    ])
    assert (r.rule("rc_ok").passed, r.rule("rc_ok").metric_value) == (True, 3.0)
    assert (r.rule("rc_bad").passed, r.rule("rc_bad").status) == (False, "failed")
    assert not r.rule("rc_max").passed and "above max 2" in r.rule("rc_max").message
    assert not r.gate.passed  # failed error dataset rules block


def test_missing_invalid_duplicate_metrics(spark):
    rows = [(1, "A", "x"), (1, "C", "y"), (2, "D", None), (None, None, "z")]
    r = run(spark, rows, "k long, s string, m string",
            [{"name": "k", "type": "long"}, {"name": "s"}, {"name": "m"}], [
                {"type": "missing_count", "column": "m", "must_be": "= 0"},
                {"type": "missing_percent", "column": "m", "must_be": "< 30%"},
                {"type": "invalid_count", "column": "s", "valid_values": ["A", "B"], "must_be": "<= 1"},
                {"type": "invalid_percent", "column": "s", "valid_regex": "^[AB]$", "must_be": "<= 50%"},
                {"type": "duplicate_count", "column": "k", "must_be": "= 0", "severity": "warn"},
                {"type": "duplicate_percent", "column": "k", "must_be": "< 60%", "warn": "= 0"},
            ])
    mc, mp = r.rule("m_missing_count"), r.rule("m_missing_percent")
    assert (mc.failed_count, mc.metric_value, mc.passed) == (1, 1.0, False)
    assert (mp.failed_count, mp.metric_value, mp.passed) == (1, 25.0, True)
    ic, ip = r.rule("s_invalid_count"), r.rule("s_invalid_percent")
    assert (ic.failed_count, ic.metric_value, ic.passed) == (2, 2.0, False)
    assert (ip.failed_count, ip.metric_value, ip.passed) == (2, 50.0, True)
    dc, dp = r.rule("k_duplicate_count"), r.rule("k_duplicate_percent")
    assert (dc.failed_count, dc.passed, dc.status) == (2, False, "warned")  # severity warn
    assert (dp.metric_value, dp.passed, dp.status) == (50.0, True, "warned")
    # offending rows of error-severity metric rules are invalid: rows 1-2 (dup k), 2-3 (invalid s), 3 (missing m);
    # row 4 has null k and s, which are neither duplicates nor invalid values.
    assert r.valid_rows == 1


def test_aggregates(spark):
    rows = [(1.0,), (2.0,), (3.0,), (4.0,), (None,)]
    r = run(spark, rows, "v double", [{"name": "v", "type": "double"}], [
        {"type": "avg", "column": "v", "must_be": "between 2 and 3"},
        {"type": "sum", "column": "v", "must_be": "> 10"},
        {"type": "min", "column": "v", "must_be": ">= 1"},
        {"type": "max", "column": "v", "must_be": "< 4", "severity": "warn"},
        {"type": "stddev", "column": "v", "must_be": "< 2", "warn": "< 1"},
    ])
    assert (r.rule("v_avg").metric_value, r.rule("v_avg").status) == (2.5, "passed")
    assert (r.rule("v_sum").metric_value, r.rule("v_sum").status) == (10.0, "failed")
    assert (r.rule("v_min").metric_value, r.rule("v_min").status) == (1.0, "passed")
    assert (r.rule("v_max").metric_value, r.rule("v_max").status) == (4.0, "warned")
    std = r.rule("v_stddev")
    assert std.metric_value == pytest.approx(statistics.stdev([1, 2, 3, 4])) and std.status == "warned"


def test_filter_restricts_rules(spark):
    rows = [("X", None, 5.0), ("Y", None, -1.0), ("X", 1, -2.0), ("X", 2, 1.0)]
    r = run(spark, rows, "kind string, a long, v double",
            [{"name": "kind"}, {"name": "a", "type": "long"}, {"name": "v", "type": "double"}], [
                {"type": "not_null", "column": "a", "filter": "kind = 'X'"},
                {"type": "range", "column": "v", "min": 0, "filter": "kind = 'X'"},
                {"type": "row_count", "name": "x_rows", "filter": "kind = 'X'", "must_be": "= 3"},
                {"type": "avg", "column": "v", "filter": "kind = 'X'", "must_be": "> 1"},
            ])
    assert (r.rule("a_not_null").failed_count, r.rule("v_range").failed_count) == (1, 1)
    assert r.rule("x_rows").metric_value == 3.0 and r.rule("x_rows").passed
    assert r.rule("v_avg").metric_value == pytest.approx(4 / 3)


def test_freshness(spark):
    from pyspark.sql import functions as F

    from dq_governance.checks.engine import evaluate

    df = spark.range(1).select((F.current_timestamp() - F.expr("INTERVAL 2 HOURS")).alias("ts"))
    c = contract([{"name": "ts", "type": "timestamp"}], [
        {"type": "freshness", "name": "fresh_day", "column": "ts", "must_be": "< 1d"},
        {"type": "freshness", "name": "fresh_hour", "column": "ts", "must_be": "< 1h"},
    ])
    r = evaluate(df, c, mode="counts")
    day, hour = r.rule("fresh_day"), r.rule("fresh_hour")
    assert day.passed and not hour.passed
    assert 7190 <= day.metric_value <= 7300  # seconds since the newest value (wall clock moves while running)


def test_schema_rule(spark):
    r = run(spark, [(1, "a")], "a long, b string", [{"name": "a", "type": "long"}], [
        {"type": "schema", "name": "s_ok", "required_columns": ["a"], "column_types": {"a": "bigint", "b": "string"}},
        {"type": "schema", "name": "s_bad", "required_columns": ["a", "zz"], "column_types": {"b": "int"}},
    ])
    assert r.rule("s_ok").passed
    bad = r.rule("s_bad")
    assert (bad.passed, bad.metric_value) == (False, 2.0)
    assert bad.message == "missing column zz; column b is string, expected int"


@pytest.mark.parametrize("mode", ["split", "counts"])
def test_sql_rule_over_validation_df(spark, mode):
    rows = [(1, 2), (3, 2)]
    r = run(spark, rows, "a long, b long", [{"name": "a", "type": "long"}, {"name": "b", "type": "long"}], [
        {"type": "sql", "name": "ends_after_start", "query": "SELECT COUNT(*) = 0 FROM _validation_df WHERE b < a",
         "error_message": "Contracts ending before they start"},
        {"type": "sql", "name": "has_rows", "query": "SELECT COUNT(*) = 2 FROM _validation_df"},
    ], mode=mode)
    bad = r.rule("ends_after_start")
    assert (bad.passed, bad.message, bad.metric_value) == (False, "Contracts ending before they start", 0.0)
    assert r.rule("has_rows").passed


def test_reconcile(spark, tmp_path):
    source = tmp_path / "src.csv"
    source.write_text("id,amount\n1,10.00\n2,20.00\n3,30.01\n")
    ok = {"type": "reconcile", "name": "rec_ok", "source": {"path": str(source)}, "sum_columns": ["amount"],
          "tolerance": 0.02}
    strict = {"type": "reconcile", "name": "rec_strict", "source": {"path": str(source)}, "sum_columns": ["amount"]}
    r = run(spark, [("1", "10.00"), ("2", "20.00"), ("3", "30.00")], "id string, amount string",
            [{"name": "id", "type": "long"}, {"name": "amount", "type": "decimal(12,2)"}], [ok, strict])
    assert r.rule("rec_ok").passed and r.rule("rec_ok").metric_value == pytest.approx(0.01)
    assert not r.rule("rec_strict").passed and "sum(amount) differs from source by 0.01" in r.rule("rec_strict").message
    r2 = run(spark, [("1", "10.00"), ("2", "20.00")], "id string, amount string",
             [{"name": "id", "type": "long"}, {"name": "amount", "type": "decimal(12,2)"}], [ok])
    assert not r2.rule("rec_ok").passed and "row count 2 differs from source 3" in r2.rule("rec_ok").message


@pytest.mark.parametrize("mode", ["split", "counts"])
def test_sums_past_float_precision_are_judged_exactly(spark, tmp_path, mode):
    """A cent on a 17-digit decimal sum, or one on a long past 2^53, is lost as a float: compared exactly."""
    source = tmp_path / "src.csv"
    source.write_text("id,amount,units\n1,12345678901234567.80,9007199254740990\n2,0.08,2\n")
    fields = [{"name": "id", "type": "long"}, {"name": "amount", "type": "decimal(20,2)"},
              {"name": "units", "type": "long"}]
    rules = [
        {"type": "reconcile", "name": "rec", "source": {"path": str(source)}, "sum_columns": ["amount", "units"]},
        {"type": "reconcile", "name": "rec_cent", "source": {"path": str(source)}, "sum_columns": ["amount"],
         "tolerance": 0.01},
        {"type": "sum", "name": "amount_sum", "column": "amount", "must_be": "<= 12345678901234567.88"},
        {"type": "max", "name": "units_max", "column": "units", "must_be": "between 0 and 9007199254740990"},
        {"type": "sum", "name": "units_sum", "column": "units", "warn": "= 9007199254740992"},
    ]
    r = run(spark, [("1", "12345678901234567.80", "9007199254740991"), ("2", "0.09", "2")],
            "id string, amount string, units string", fields, rules, mode=mode)
    rec, cent = r.rule("rec"), r.rule("rec_cent")
    assert (rec.passed, rec.metric_value, rec.message) == (
        False, 1.0, "sum(amount) differs from source by 0.01 (tolerance 0); sum(units) differs from source by 1 "
                    "(tolerance 0)")
    assert (cent.passed, cent.message) == (True, "matches source")
    assert (r.rule("amount_sum").passed, r.rule("amount_sum").message) == (
        False, "sum(amount) 12345678901234567.89 fails must_be <= 12345678901234567.88")
    assert (r.rule("units_max").passed, r.rule("units_max").message) == (
        False, "max(units) 9007199254740991 fails must_be between 0 and 9007199254740990")
    assert (r.rule("units_sum").status, r.rule("units_sum").message) == (
        "warned", "sum(units) 9007199254740993 outside warn = 9007199254740992")


@pytest.mark.parametrize("mode", ["split", "counts"])
def test_a_float_column_and_a_mixed_list_compare_as_written(spark, mode):
    """A float holds 1.1 as 1.100000023841858, which broke `maximum: 1.1` beside a double; a list mixing 1 and
    "2.50" compared every value as text, where 1 never equals "1.00"."""
    from decimal import Decimal

    fields = [{"name": "f", "type": "float", "allowed_values": [1.1, 2], "maximum": 1.1},
              {"name": "tiny", "type": "float", "minimum": 1e-50},
              {"name": "d", "type": "decimal(10,2)", "allowed_values": [1, "2.50"]}]
    rows = [(1.1, 0.0, Decimal("1.00")), (2.0, 1e-30, Decimal("2.50")), ("1.1", "1e-30", Decimal("3.00"))]
    r = run(spark, [tuple(str(v) for v in row) for row in rows], "f string, tiny string, d string", fields, [],
            mode=mode)
    assert {name: r.rule(name).failed_count for name in ("f_allowed_values", "f_range", "tiny_range",
                                                          "d_allowed_values")} == {
        "f_allowed_values": 0, "f_range": 1, "tiny_range": 1, "d_allowed_values": 1}  # 0.0 is below 1e-50


def test_primary_key_on_two_fields_is_one_key_over_the_tuple(spark):
    """Each field was its own unique key: (1, x) (1, y) (2, x) failed all three rows, unlike the same contract in ODCS."""
    fields = [{"name": "a", "type": "int", "primary_key": True}, {"name": "b", "type": "string", "primary_key": True},
              {"name": "c", "type": "int", "primary_key": False, "unique": True}]
    assert [(r.name, r.type, r.target_columns) for r in contract(fields).check_rules() if r.type != "type"] == [
        ("a_not_null", "not_null", ["a"]), ("b_not_null", "not_null", ["b"]), ("c_unique", "unique", ["c"]),
        ("primary_key", "unique", ["a", "b"]), ("undeclared_columns", "undeclared_columns", [])]
    r = run(spark, [(1, "x", 1), (1, "y", 2), (2, "x", 3), (2, "x", 4), (3, None, 5)], "a int, b string, c int",
            fields, [])
    assert (r.rule("primary_key").failed_count, r.rule("b_not_null").failed_count, r.valid_rows) == (2, 1, 2)


@pytest.mark.parametrize(("reference", "reference_type"), [
    ([("1.2345",), ("2.0000",)], "decimal(12,4)"),
    ([(1.234,), (2.0,)], "double"),
    ([("1.234",), ("2",)], "string"),
    ([("1.23E0",), ("2.00",), ("x",), ("",)], "string"),
])
def test_foreign_keys_match_only_reference_values_as_written(spark, reference, reference_type):
    """A reference 1.2345 (or 1.234) is not the key 1.23: try_cast to the key's type rounded it into a match."""
    from decimal import Decimal

    view = "dqgov_test_ref_exact"
    rows = [(Decimal(v) if reference_type.startswith("decimal") else v,) for (v,) in reference]
    spark.createDataFrame(rows, f"id {reference_type}").createOrReplaceTempView(view)
    fk = {"type": "foreign_key", "column": "k", "reference": {"table": view, "column": "id"}}
    r = run(spark, [("1.23",), ("2.00",), ("2",), (None,)], "k string", [{"name": "k", "type": "decimal(10,2)"}], [fk])
    expected_failed = 0 if reference[0][0] == "1.23E0" else 1
    assert (r.rule("k_foreign_key").failed_count, r.valid_rows, r.total_rows) == (expected_failed, 4 - expected_failed, 4)
    spark.createDataFrame([(1.5,), (2.0,)], "id double").createOrReplaceTempView(view)
    r = run(spark, [(1,), (2,)], "k long", [{"name": "k", "type": "long"}], [fk])
    assert (r.rule("k_foreign_key").failed_count, r.valid_rows) == (1, 1)  # 1 is not 1.5 (try_cast truncated it)
    spark.catalog.dropTempView(view)


@pytest.mark.parametrize("mode", ["split", "counts"])
def test_reconcile_sums_each_source_in_its_own_type(spark, tmp_path, mode):
    """A source's values are summed as written: cast to the checked column's type they rounded (1.0040 to 1.00),
    or, past its range or as text that does not convert, dropped out of the source's sum."""
    from decimal import Decimal

    spark.createDataFrame([(Decimal("1.0040"), 1), (Decimal("1.0040"), 3000000000)], "amount decimal(12,4), units long") \
        .createOrReplaceTempView("dqgov_test_rec_source")
    text = tmp_path / "src.csv"
    text.write_text("amount,units\n1.004,1\n1.00,x\n")
    exact = tmp_path / "exact.csv"
    exact.write_text("amount,units\n1.0,1\n1.00E0,\n")
    rules = [
        {"type": "reconcile", "name": "rec_typed", "source": {"table": "dqgov_test_rec_source"},
         "sum_columns": ["amount", "units"]},
        {"type": "reconcile", "name": "rec_text", "source": {"path": str(text)}, "sum_columns": ["amount", "units"]},
        {"type": "reconcile", "name": "rec_exact", "source": {"path": str(exact)}, "sum_columns": ["amount", "units"]},
    ]
    r = run(spark, [("1.00", 1), ("1.00", 0)], "amount string, units int",
            [{"name": "amount", "type": "decimal(10,2)"}, {"name": "units", "type": "int"}], rules, mode=mode)
    typed, text_rule, exact_rule = r.rule("rec_typed"), r.rule("rec_text"), r.rule("rec_exact")
    assert (typed.passed, typed.metric_value, typed.message) == (
        False, 3000000000.0, "sum(amount) differs from source by 0.008 (tolerance 0); sum(units) differs from source "
                             "by 3000000000 (tolerance 0)")
    assert (text_rule.passed, text_rule.message) == (
        False, "1 source value(s) in amount do not convert exactly to decimal(10,2): the source sum is not measured; "
               "1 source value(s) in units do not convert exactly to int: the source sum is not measured")
    assert (exact_rule.passed, exact_rule.message) == (True, "matches source")
    spark.catalog.dropTempView("dqgov_test_rec_source")


@pytest.mark.parametrize("mode", ["split", "counts"])
def test_fractional_bounds_compare_in_a_decimal_or_integer_columns_type(spark, mode):
    """Spark compares a decimal or long with a double as doubles: 1234567890123456.51 is not above .5 there."""
    fields = [{"name": "amount", "type": "decimal(20,2)"}, {"name": "units", "type": "long"},
              {"name": "ratio", "type": "double"}]
    rules = [{"type": "range", "name": "amount_max", "column": "amount", "max": 1234567890123456.5},
             {"type": "range", "name": "units_max", "column": "units", "max": 9007199254740992.0},
             {"type": "allowed_values", "name": "amount_listed", "column": "amount", "values": [1234567890123456.5]},
             {"type": "allowed_values", "name": "units_listed", "column": "units", "values": [9007199254740992.0, 0.5]},
             {"type": "range", "name": "ratio_range", "column": "ratio", "min": 0.1, "max": 0.3}]
    rows = [("1234567890123456.51", "9007199254740993", "0.1"), ("1234567890123456.50", "9007199254740992", "0.3")]
    r = run(spark, rows, "amount string, units string, ratio string", fields, rules, mode=mode)
    # row 1 only; doubles compare as doubles (0.1 and 0.3 are within their own bounds)
    assert {n: r.rule(n).failed_count for n in ("amount_max", "units_max", "amount_listed", "units_listed",
                                                "ratio_range")} == {
        "amount_max": 1, "units_max": 1, "amount_listed": 1, "units_listed": 1, "ratio_range": 0}
    if mode == "split":
        assert r.valid_rows == 1


def test_an_integer_bound_past_a_long_compares_exactly_instead_of_failing_the_run(spark):
    """`dqgov profile` drafts such bounds for a decimal(23,0) column; Spark has no integer literal past a long."""
    fields = [{"name": "big", "type": "decimal(25,0)"}]
    rules = [{"type": "range", "name": "big_max", "column": "big", "max": 10**20},
             {"type": "range", "name": "big_min", "column": "big", "min": -(10**20)},
             {"type": "allowed_values", "name": "big_listed", "column": "big", "values": [10**20 + 1, 7]},
             {"type": "range", "name": "huge_max", "column": "big", "max": 10**40}]  # past a decimal too: a double
    rows = [(str(10**20 + 1),), (str(10**20),), (str(-(10**20) - 1),), ("7",)]
    r = run(spark, rows, "big string", fields, rules)
    assert {n: r.rule(n).failed_count for n in ("big_max", "big_min", "big_listed", "huge_max")} == {
        "big_max": 1, "big_min": 1, "big_listed": 2, "huge_max": 0}


def test_volume_without_and_with_history(spark):
    fields = [{"name": "a", "type": "long"}]
    rows = [(i,) for i in range(10)]
    rule = {"type": "volume", "name": "vol", "min_history": 3}
    skipped = run(spark, rows, "a long", fields, [rule]).rule("vol")
    assert (skipped.status, skipped.passed, skipped.message) == ("skipped", True, "skipped: no history (0 of 3 runs needed)")
    steady = run(spark, rows, "a long", fields, [rule], volume_history=[9, 10, 11, 10]).rule("vol")
    assert steady.passed and steady.metric_value == 10.0
    drop = run(spark, rows, "a long", fields, [rule], volume_history=[100, 102, 98, 101]).rule("vol")
    assert not drop.passed and drop.status == "failed"
    assert math.isclose(float(drop.message.split("robust z ")[1].rstrip(")")), 0.6745 * (100.5 - 10) / 1.0, rel_tol=1e-3)  # median 100.5, MAD 1


PII_ROWS = [(1, "52998224725", "ana.souza@example.com", "CRIADO"), (2, "11144477735", "bia@exemplo.com.br", "PAGO"),
            (3, "39053344705", "caio@example.org", "PAGO"), (4, None, "duda@example.com", "CANCELADO")]
PII_SCHEMA = "id long, cpf string, contato string, status string"


def test_pii_undeclared_flags_columns_not_marked_pii(spark):
    fields = [{"name": "id", "type": "long"}, {"name": "cpf", "pii": True}, {"name": "contato"}, {"name": "status"}]
    r = run(spark, PII_ROWS, PII_SCHEMA, fields, [{"type": "pii_undeclared"}])
    rule = r.rule("pii_undeclared")
    assert (rule.passed, rule.status, rule.metric_value, rule.failed_count) == (False, "failed", 1.0, None)
    assert rule.message.startswith(
        "1 column(s) look like PII but are not declared pii: true: contato (EMAIL_ADDRESS, confidence 1.00")
    assert "100.0% of 4 sampled values match" in rule.message
    assert "example" not in rule.message  # evidence is rates, never a value
    assert rule.dimension == "consistency" and r.valid_rows == 4  # a dataset rule: no row is invalid
    assert r.gate.publish is False and "pii_undeclared" in "; ".join(r.gate.reasons)


def test_pii_undeclared_passes_when_declared_or_ignored(spark):
    declared = [{"name": "id", "type": "long"}, {"name": "cpf", "pii": True}, {"name": "contato", "pii": True},
                {"name": "status"}]
    r = run(spark, PII_ROWS, PII_SCHEMA, declared, [{"type": "pii_undeclared"}])
    assert (r.rule("pii_undeclared").passed, r.rule("pii_undeclared").metric_value) == (True, 0.0)
    assert r.rule("pii_undeclared").message == "no undeclared PII in 4 sampled row(s)"
    loose = [{"name": "id", "type": "long"}, {"name": "cpf"}, {"name": "contato"}, {"name": "status"}]
    r = run(spark, PII_ROWS, PII_SCHEMA, loose, [{"type": "pii_undeclared", "ignore": ["CONTATO"], "severity": "warn"}])
    rule = r.rule("pii_undeclared")
    assert (rule.status, rule.metric_value) == ("warned", 1.0) and rule.message.endswith("column name matches)")
    assert "cpf (BR_CPF, confidence 1.00; 100.0% of 3 sampled" in rule.message and r.gate.publish is True


NESTED_ROWS = [(1, ("ana.souza@example.com", "52998224725")), (2, ("bia@exemplo.com.br", "11144477735")),
               (3, ("caio@example.org", None)), (4, None)]
NESTED_SCHEMA = "id long, cliente struct<contato:string,cpf:string>"


def test_pii_undeclared_reads_the_fields_of_structs(spark):
    """`cliente.contato` holds e-mails and `cliente.cpf` CPFs: a contract declaring the struct without them misses
    both; declaring the struct pii (or its fields) passes."""
    struct = {"name": "cliente", "type": "struct<contato:string,cpf:string>"}
    r = run(spark, NESTED_ROWS, NESTED_SCHEMA, [{"name": "id", "type": "long"}, struct], [{"type": "pii_undeclared"}])
    rule = r.rule("pii_undeclared")
    assert (rule.passed, rule.metric_value) == (False, 2.0)
    assert rule.message.startswith("2 column(s) look like PII but are not declared pii: true: cliente.contato "
                                   "(EMAIL_ADDRESS, confidence 1.00; 100.0% of 3 sampled values match); "
                                   "cliente.cpf (BR_CPF, confidence 1.00; 100.0% of 2 sampled values match")
    for declared in ({**struct, "pii": True},
                     {**struct, "fields": [{"name": "contato", "pii": True}, {"name": "cpf", "pii": True}]}):
        r = run(spark, NESTED_ROWS, NESTED_SCHEMA, [{"name": "id", "type": "long"}, declared],
                [{"type": "pii_undeclared"}])
        assert (r.rule("pii_undeclared").passed, r.rule("pii_undeclared").metric_value) == (True, 0.0)
    # `ignore` takes a field by its dotted name, or a struct with all its fields
    for ignore, left in ((["cliente.CPF"], 1.0), (["CLIENTE"], 0.0)):
        rule = {"type": "pii_undeclared", "ignore": ignore}
        r = run(spark, NESTED_ROWS, NESTED_SCHEMA, [{"name": "id", "type": "long"}, struct], [rule])
        assert r.rule("pii_undeclared").metric_value == left, ignore


def test_the_shorthands_of_a_structs_fields_are_rules_on_their_paths(spark):
    """A struct's `fields` take the same shorthands as top-level fields: rules on the dotted path, a missing struct
    making its fields missing (row 4); a type rule only where the field declares a type."""
    fields = [{"name": "id", "type": "long"}, {"name": "cliente", "type": "struct<contato:string,cpf:string>",
              "fields": [{"name": "contato", "required": True, "format": "email", "max_length": 16},
                         {"name": "cpf", "type": "long", "format": "cpf", "unique": True}]}]
    r = run(spark, NESTED_ROWS, NESTED_SCHEMA, fields, [])
    assert [x.name for x in r.rules] == [
        "id_type", "cliente_type", "cliente.contato_not_null", "cliente.contato_length", "cliente.contato_format",
        "cliente.cpf_type", "cliente.cpf_unique", "cliente.cpf_format", "undeclared_columns"]
    assert {x.name: x.failed_count for x in r.rules if x.failed_count} == {
        "cliente.contato_not_null": 1, "cliente.contato_length": 2}
    assert r.valid_rows == 1 and r.total_rows == 4


def test_foreign_key_and_reconcile_against_tables(spark):
    """References and reconcile sources named as tables (temp views here; catalog tables resolve the same way)."""
    spark.createDataFrame([(1, "a", 10.0), (2, "b", 20.0), (3, "c", 30.0)], "id long, name string, amount double") \
        .createOrReplaceTempView("dqgov_test_ref_customers")
    fk = {"type": "foreign_key", "column": "k", "reference": {"table": "dqgov_test_ref_customers", "column": "id"}}
    rec = {"type": "reconcile", "source": {"table": "dqgov_test_ref_customers"}, "sum_columns": ["amount"]}
    r = run(spark, [("1", 10.0), ("2", 20.0), ("9", 30.0)], "k string, amount double",
            [{"name": "k", "type": "long"}, {"name": "amount", "type": "double"}], [fk, rec])
    assert r.rule("k_foreign_key").failed_count == 1 and r.valid_rows == 2
    assert (r.rule("reconcile").passed, r.rule("reconcile").metric_value) == (True, 0.0)
    from dq_governance.errors import InputDataError

    missing = {"type": "foreign_key", "column": "k", "reference": {"table": "dqgov_no_such_table", "column": "id"}}
    with pytest.raises(InputDataError, match="cannot read reference dqgov_no_such_table"):
        run(spark, [("1", 1.0)], "k string, amount double", [{"name": "k", "type": "long"}], [missing])

"""Type conformance of complex and incompatible columns: structs convert by field name, nested values one by
one, and a column whose type can never become the declared one violates on every present row instead of being
relabelled, stringified or failing the plan."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

import dq_governance as dq
from dq_governance.contracts.model import Contract

pytestmark = pytest.mark.spark

ROWS = """select * from values
 (1, named_struct('first', 'Ana', 'last', 'Lima'), named_struct('n', '7'), array('1', 'x'), map('1', '2'),
  array(1, 2), date'2024-01-31'),
 (2, named_struct('first', 'Rui', 'last', 'Dias'), named_struct('n', 'q'), array('3', ' '), map('a', '4'),
  array(3), date'2024-02-29'),
 (3, null, named_struct('n', null), array(cast(null as string)), map('5', cast(null as string)),
  null, null)
 as t(id, person, boxed, texts, text_map, numbers, day)"""


def contract(column: str, data_type: str) -> Contract:
    return Contract.model_validate({
        "contract": {"name": "t", "version": "1.0.0"},
        "dataset": {"name": "t"},
        "schema": {"undeclared_columns": "drop",
                   "fields": [{"name": "id", "type": "int"}, {"name": column, "type": data_type}]},
    })


def checked(spark, column: str, data_type: str):
    result = dq.check(spark.sql(ROWS), contract(column, data_type))
    rule = next(r for r in result.summary()["rules"] if r["name"] == f"{column}_type")
    valid = {row["id"]: row[column] for row in result.valid_df.collect()}
    quarantined = sorted(row["id"] for row in result.quarantine_df.collect())
    assert result.valid_rows + result.invalid_rows == result.total_rows == 3
    result.release()
    return rule, valid, quarantined


def test_struct_fields_are_matched_by_name_not_position(spark):
    # Spark's cast pairs struct fields by position: declared (last, first) would swap the names' values
    rule, valid, quarantined = checked(spark, "person", "struct<last:string,first:string>")
    assert rule["failed_count"] == 0 and quarantined == []
    assert valid[1].asDict() == {"last": "Lima", "first": "Ana"}
    assert valid[2].asDict() == {"last": "Dias", "first": "Rui"}
    assert valid[3] is None


def test_struct_with_other_field_names_violates_on_every_present_row(spark):
    rule, valid, quarantined = checked(spark, "person", "struct<given:string,family:string>")
    assert rule["failed_count"] == 2 and quarantined == [1, 2]
    assert rule["expected"] == ("type struct<given:string,family:string>; the struct's fields (first, last) "
                                "are not the declared ones (given, family)")
    assert valid == {3: None}


def test_nested_text_field_that_does_not_parse_nulls_and_flags_its_struct(spark):
    rule, valid, quarantined = checked(spark, "boxed", "struct<n:int>")
    assert rule["failed_count"] == 1 and quarantined == [2]
    assert valid[1].asDict() == {"n": 7} and valid[3].asDict() == {"n": None}


def test_array_elements_convert_one_by_one_and_a_blank_element_is_no_value(spark):
    rule, valid, quarantined = checked(spark, "texts", "array<int>")
    assert rule["failed_count"] == 1 and quarantined == [1]
    assert valid == {2: [3, None], 3: [None]}


def test_map_keys_and_values_convert_and_a_bad_key_flags_the_row(spark):
    rule, valid, quarantined = checked(spark, "text_map", "map<int,int>")
    assert rule["failed_count"] == 1 and quarantined == [2]
    assert valid == {1: {1: 2}, 3: {5: None}}


def test_map_keys_that_become_equal_flag_the_row_instead_of_failing_the_pass(spark):
    frame = spark.sql("select 1 as id, map('1', 'a', '01', 'b') as m union all select 2, map('2', 'c')")
    result = dq.check(frame, contract("m", "map<int,string>"))
    try:
        assert {r.name: r.failed_count for r in result.rules}["m_type"] == 1
        assert [(row["id"], row["m"]) for row in result.valid_df.collect()] == [(2, {2: "c"})]
    finally:
        result.release()


def test_json_text_struct_flags_a_field_that_does_not_convert_and_text_that_is_no_object(spark):
    # Spark's from_json into struct<a:int> nulls "x" and 7.5 quietly, and reads `not json` as a struct of nulls
    frame = spark.sql("""select * from values (1, '{"a": "x", "d": "2024-01-01"}'), (2, '{"a": 5, "d": "nope"}'),
        (3, 'not json'), (4, '{"a": 7.5}'), (5, '{"a": "6", "d": "2024-02-29"}'), (6, '{}'), (7, ' '), (8, null)
        as t(id, s)""")
    result = dq.check(frame, contract("s", "struct<a:int,d:date>"))
    try:
        assert {r.name: r.failed_count for r in result.rules}["s_type"] == 4
        valid = {row["id"]: row["s"] for row in result.valid_df.collect()}
        assert valid[5].asDict() == {"a": 6, "d": date(2024, 2, 29)} and valid[6].asDict() == {"a": None, "d": None}
        assert valid[7] is None and valid[8] is None and sorted(valid) == [5, 6, 7, 8]
    finally:
        result.release()


def test_json_text_array_and_map_convert_their_elements(spark):
    frame = spark.sql("""select * from values (1, '[1, "x"]', '{"k": true}'), (2, '[1, 2]', '{"k": "7"}'),
        (3, '[1.5]', 'nope') as t(id, a, m)""")
    doc = Contract.model_validate({
        "contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"},
        "schema": {"fields": [{"name": "id", "type": "int"}, {"name": "a", "type": "array<int>"},
                              {"name": "m", "type": "map<string,int>"}]}})
    result = dq.check(frame, doc)
    try:
        counts = {r.name: r.failed_count for r in result.rules}
        assert (counts["a_type"], counts["m_type"]) == (2, 2)
        assert [(row["id"], row["a"], row["m"]) for row in result.valid_df.collect()] == [(2, [1, 2], {"k": 7})]
    finally:
        result.release()


@pytest.mark.parametrize(("column", "data_type", "reason"), [
    ("person", "string", "struct<first:string,last:string> never converts to string"),  # not its display text
    ("numbers", "array<date>", "an element: int never converts to date"),
    ("day", "int", "date never converts to int"),  # Spark's analyser would fail the whole run
])
def test_a_type_that_never_converts_violates_on_every_present_row_and_says_why(spark, column, data_type, reason):
    rule, valid, quarantined = checked(spark, column, data_type)
    assert rule["failed_count"] == 2 and quarantined == [1, 2]
    assert rule["expected"] == f"type {data_type}; {reason}"
    assert valid == {3: None}


def test_a_struct_field_that_never_converts_is_named_by_both_rules(spark):
    frame = spark.sql("select 1 as id, named_struct('d', date'2024-01-31') as c union all select 2, null")
    doc = Contract.model_validate({
        "contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"},
        "schema": {"fields": [{"name": "id", "type": "int"},
                              {"name": "c", "type": "struct<d:int>", "fields": [{"name": "d", "type": "int"}]}]}})
    result = dq.check(frame, doc)
    try:
        rules = {r.name: (r.failed_count, r.expected) for r in result.rules}
        assert rules["c_type"] == (1, "type struct<d:int>; field d: date never converts to int")
        assert rules["c.d_type"] == (1, "type int; date never converts to int")
    finally:
        result.release()


def test_compatible_nested_widening_passes(spark):
    rule, valid, quarantined = checked(spark, "numbers", "array<bigint>")
    assert rule["failed_count"] == 0 and quarantined == []
    assert valid == {1: [1, 2], 2: [3], 3: None}


def test_a_number_that_would_lose_fractional_digits_does_not_convert(spark):
    # try_cast truncates 1.5 to 1 and rounds 1.2345 to 1.23 without a word
    frame = spark.sql("""select * from values (1, 1.5d, 1.2345bd, cast('NaN' as double)),
        (2, 2.0d, 1.2300bd, 3.0d), (3, null, null, null) as t(id, d, dec, n)""")
    doc = Contract.model_validate({
        "contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"},
        "schema": {"fields": [{"name": "id", "type": "int"}, {"name": "d", "type": "int"},
                              {"name": "dec", "type": "decimal(10,2)"}, {"name": "n", "type": "bigint"}]}})
    result = dq.check(frame, doc)
    try:
        counts = {r.name: r.failed_count for r in result.rules}
        assert (counts["d_type"], counts["dec_type"], counts["n_type"]) == (1, 1, 1)
        rows = [(r["id"], r["d"], r["dec"], r["n"]) for r in result.valid_df.orderBy("id").collect()]
        assert rows == [(2, 2, Decimal("1.23"), 3), (3, None, None, None)]
    finally:
        result.release()


@pytest.mark.parametrize(("data_type", "failing", "valid"), [
    # row 10's 18th fractional digit and row 11's exponent are past the scale however the text is read
    ("decimal(12,2)", [1, 3, 7, 9, 10, 11], {2: "1.23", 4: "100.00", 8: "-0.50", 12: "15.00", 13: "0.00"}),
    ("decimal(20,2)", [1, 3, 7, 10, 11], {2: "1.23", 4: "100.00", 8: "-0.50", 9: "12345678901.50", 12: "15.00",
                                          13: "0.00"}),
    ("decimal(38,2)", [1, 3, 7, 10, 11], {2: "1.23", 4: "100.00", 8: "-0.50", 9: "12345678901.50", 12: "15.00",
                                          13: "0.00"}),  # no wider decimal
    ("decimal(4,2)", [1, 3, 4, 7, 9, 10, 11], {2: "1.23", 8: "-0.50", 12: "15.00", 13: "0.00"}),
    ("decimal(10,0)", [1, 2, 3, 7, 8, 9, 10, 11], {4: "100", 12: "15", 13: "0"}),
])
def test_decimal_text_with_more_fractional_digits_than_the_scale_does_not_convert(spark, data_type, failing, valid):
    frame = spark.sql("""select * from values (1, '1.234'), (2, '1.2300'), (3, ' 99.995 '), (4, '1e2'), (5, ''),
        (6, null), (7, 'x'), (8, '-0.5'), (9, '12345678901.5'), (10, '1.230000000000000001'),
        (11, '15E-3'), (12, '1.5E1'), (13, '0E-10') as t(id, v)""")
    result = dq.check(frame, contract("v", data_type))
    try:
        assert {r.name: r.failed_count for r in result.rules}["v_type"] == len(failing)
        assert sorted(r["id"] for r in result.quarantine_df.collect()) == failing
        kept = {r["id"]: r["v"] for r in result.valid_df.collect()}
        assert kept == {**{k: Decimal(v) for k, v in valid.items()}, 5: None, 6: None}
    finally:
        result.release()


@pytest.mark.parametrize(("data_type", "values", "failed", "kept"), [
    # decimal(12,2) parses text wide as decimal(18,8): a text longer than that is read whole only when its
    # integer digits account for the extra bytes; else its digits are counted (rows 2 and 3 round to 10.00 and
    # 1000000.00000000 in the wide parse). Spark reads Arabic-Indic digits too (row 7), and rounded them.
    ("decimal(12,2)", """(1, '12345678.50'), (2, '9.9999999999'), (3, '1000000.000000001'), (4, '1234567.891'),
        (5, '-12345678.5000000000'), (6, '0000000001.25'), (7, '١٢٣٤٥٦٧٨.٥٠٠٠٠٠٠٠٠١')""",
     4, {1: Decimal("12345678.50"), 5: Decimal("-12345678.50"), 6: Decimal("1.25")}),
    # digits other than 0-9 are not counted, so such text is a violation wherever the check counts digits (all
    # of precision 38), even row 2's exact 1.23, rather than taken on trust: try_cast gives 1.23 for all three
    ("decimal(38,2)", "(1, '١.٢٣٤'), (2, '١.٢٣'), (3, '١.٢٣٠E٠')", 3, {}),
    # Java reads 1e309 to Infinity and 1e-400 to 0.0; only the former changes what the value is. An infinity's
    # own text converts, in Java's spelling and Spark's (inf), any case, signed, padded.
    ("double", """(1, '1e309'), (2, '-1E400'), (3, 'Infinity'), (4, ' -inf '), (5, '+INFINITY'), (6, 'NaN'),
        (7, '1.7976931348623157e308'), (8, '1e-400'), (9, 'infinite')""",
     3, {3: float("inf"), 4: float("-inf"), 5: float("inf"), 6: float("nan"), 7: 1.7976931348623157e308, 8: 0.0}),
    ("float", "(1, '1e39'), (2, '3.4028235e38'), (3, 'Inf'), (4, '1e308')",
     2, {2: 3.4028234663852886e38, 3: float("inf")}),
])
def test_text_converts_only_to_the_number_it_writes(spark, data_type, values, failed, kept):
    result = dq.check(spark.sql(f"select * from values {values} as t(id, v)"), contract("v", data_type))
    try:
        assert {r.name: r.failed_count for r in result.rules}["v_type"] == failed
        # compared as reprs: NaN equals no NaN, and a decimal's repr holds its scale
        valid = {r["id"]: repr(r["v"]) for r in result.valid_df.collect()}
        assert valid == {k: repr(v) for k, v in kept.items()}
    finally:
        result.release()


@pytest.mark.parametrize(("data_type", "values", "failed", "kept"), [
    # Spark reads varchar(n) and char(n) as string, which dropped n: an 11-character value passed varchar(10).
    # Characters, not bytes (row 6); trailing spaces past n fit, as in Spark's own write check (row 3).
    ("varchar(3)", "(1, 'abc'), (2, 'abcd'), (3, 'ab     '), (4, ''), (5, null), (6, 'ção'), (7, ' abc')",
     2, {1: "'abc'", 3: "'ab     '", 4: "''", 5: "None", 6: "'ção'"}),
    ("CHAR(2)", "(1, 12), (2, 123), (3, -1)", 1, {1: "'12'", 3: "'-1'"}),  # a number is judged as its text
])
def test_a_char_or_varchar_type_holds_values_up_to_its_length(spark, data_type, values, failed, kept):
    result = dq.check(spark.sql(f"select * from values {values} as t(id, v)"), contract("v", data_type))
    try:
        assert {r.name: r.failed_count for r in result.rules}["v_type"] == failed
        assert {r["id"]: repr(r["v"]) for r in result.valid_df.collect()} == kept
    finally:
        result.release()


def test_nested_text_past_a_doubles_range_does_not_convert(spark):
    for data_type, values in [("array<double>", "(1, array('1e309', '1')), (2, array('2', 'inf'))"),
                              ("struct<x:double>", "(1, named_struct('x', '1e309')), (2, named_struct('x', 'inf'))")]:
        result = dq.check(spark.sql(f"select * from values {values} as t(id, v)"), contract("v", data_type))
        try:
            assert {r.name: r.failed_count for r in result.rules}["v_type"] == 1
            assert [r["id"] for r in result.valid_df.collect()] == [2]
        finally:
            result.release()


def test_a_double_past_a_floats_range_does_not_convert(spark):
    frame = spark.sql("select * from values (1, 1e39d), (2, cast('-Infinity' as double)), (3, 1.5d), (4, 1e-50d) "
                      "as t(id, v)")
    result = dq.check(frame, contract("v", "float"))
    try:
        assert {r.name: r.failed_count for r in result.rules}["v_type"] == 1  # row 1: try_cast gives Infinity
        assert {r["id"]: r["v"] for r in result.valid_df.collect()} == {2: float("-inf"), 3: 1.5, 4: 0.0}
    finally:
        result.release()


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "America/Sao_Paulo"])
def test_text_declared_timestamp_ntz_keeps_its_wall_clock_in_any_session_zone(spark, zone):
    """Parsed as a timestamp and cast back, 02:30 in New York's spring gap (2024-03-10) became 03:30, and
    00:30 in Sao Paulo's (2018-11-04) 01:30: a value that was never in the data, published green."""
    from datetime import datetime

    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    frame = spark.sql("select * from values (1, '2024-03-10 02:30:00', '10/03/2024 02:30'), "
                      "(2, '2018-11-04 00:30:00', '04/11/2018 00:30'), (3, '2024-02-30 01:00:00', '30/02/2024 01:00'), "
                      "(4, '2024-03-10T02:30:00', 'x') as t(id, plain, patterned)")
    checked = Contract.model_validate({
        "contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"},
        "schema": {"fields": [{"name": "id", "type": "int"}, {"name": "plain", "type": "timestamp_ntz"},
                              {"name": "patterned", "type": "timestamp_ntz", "date_format": "dd/MM/yyyy HH:mm"}]}})
    try:
        result = dq.check(frame, checked)
        rows = {r["id"]: (r["plain"], r["patterned"]) for r in result.valid_df.collect()}
        assert {r.name: r.failed_count for r in result.rules if r.type == "type"} == {
            "id_type": 0, "plain_type": 1, "patterned_type": 2}
        assert rows == {1: (datetime(2024, 3, 10, 2, 30), datetime(2024, 3, 10, 2, 30)),
                        2: (datetime(2018, 11, 4, 0, 30), datetime(2018, 11, 4, 0, 30))}
        result.release()
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


def test_a_double_declared_decimal_rounds_to_the_scale(spark):
    frame = spark.sql("select * from values (1, 1.005d), (2, 0.1d + 0.2d) as t(id, v)")
    result = dq.check(frame, contract("v", "decimal(10,2)"))
    try:
        assert {r.name: r.failed_count for r in result.rules}["v_type"] == 0
        assert [r["v"] for r in result.valid_df.orderBy("id").collect()] == [Decimal("1.01"), Decimal("0.30")]
    finally:
        result.release()


@pytest.mark.parametrize(("date_format", "failing", "valid_id"), [(None, [1, 2], 3), ("dd/MM/yyyy", [2, 3], 1)])
def test_a_struct_fields_date_format_parses_it_and_its_type_rule_reads_the_raw_value(
        spark, date_format, failing, valid_id):
    frame = spark.sql("""select * from values (1, named_struct('d', '31/01/2024')), (2, named_struct('d', 'xx')),
        (3, named_struct('d', '2024-01-31')) as t(id, c)""")
    nested = {"name": "d", "type": "date"} | ({"date_format": date_format} if date_format else {})
    doc = Contract.model_validate({
        "contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"},
        "schema": {"fields": [{"name": "id", "type": "int"},
                              {"name": "c", "type": "struct<d:date>", "fields": [nested]}]}})
    for source in (frame, frame.selectExpr("id", "to_json(c) as c")):  # a struct, and the same as JSON text
        result = dq.check(source, doc)
        try:
            counts = {r.name: r.failed_count for r in result.rules}
            assert (counts["c_type"], counts["c.d_type"]) == (2, 2)
            assert sorted(r["id"] for r in result.quarantine_df.collect()) == failing
            assert [(r["id"], r["c"].asDict()) for r in result.valid_df.collect()] == [
                (valid_id, {"d": date(2024, 1, 31)})]
        finally:
            result.release()


ATOMIC = ["boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "decimal(10,2)", "date",
          "timestamp", "timestamp_ntz", "binary", "string"]


def test_never_converts_table_agrees_with_spark_for_every_atomic_pair(spark):
    from dq_governance.checks.casting import never_converts, parse_type

    frame = spark.sql("select " + ", ".join(f"cast(null as {t}) as c{i}" for i, t in enumerate(ATOMIC)))
    disagreements = []
    for i, source in enumerate(ATOMIC):
        for target in ATOMIC:
            try:
                frame.selectExpr(f"try_cast(c{i} as {target})").schema
                spark_converts = True
            except Exception:
                spark_converts = False
            ours = never_converts(parse_type(source), parse_type(target)) is None
            if ours != spark_converts:
                disagreements.append((source, target, spark_converts))
    assert disagreements == []

"""The engine on inputs that once made it answer for other rows or other columns than it was given: columns named
like its own working columns, a nondeterministic input read twice, a percent of no rows, two rules given one
name, and a struct's field beside a top-level column named like its dotted path."""

from __future__ import annotations

import random

import pytest
import yaml
from pyspark.sql import functions as F

import dq_governance
from dq_governance.contracts.lint import lint_path
from dq_governance.contracts.model import Contract
from dq_governance.errors import InputDataError
from dq_governance.masking import apply_masks

pytestmark = pytest.mark.spark


def _contract(fields: list[dict], rules: list[dict] | None = None, undeclared: str = "drop", **quality) -> Contract:
    return Contract.model_validate({
        "contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"},
        "schema": {"fields": fields, "undeclared_columns": undeclared}, "quality": {"rules": rules or [], **quality}})


@pytest.mark.parametrize("column", ["__dq_v0", "__dq_raw0", "__dq_valid", "__dqgov_mask_ipad"])
def test_an_input_column_named_like_a_working_column_is_refused_in_one_line(spark, column):
    contract = _contract([{"name": "id", "type": "long", "unique": True}, {"name": "x", "type": "string"}],
                         [{"type": "allowed_values", "column": "x", "values": ["a"]}], undeclared="keep")
    df = spark.createDataFrame([(1, "a", 5), (2, "zz", 6)], f"id long, x string, {column} int")
    message = (f"input column(s) {column} start with `__dq`, which dq-governance keeps for the columns it adds while "
               "it works; rename them")
    with pytest.raises(InputDataError) as raised:
        dq_governance.check(df, contract)
    assert str(raised.value) == message
    with pytest.raises(InputDataError) as raised:
        apply_masks(df, contract)
    assert str(raised.value) == message


def _persisted(spark) -> set[int]:
    """The ids of the RDDs Spark keeps (other tests' caches included: the suite shares one session)."""
    return set(spark.sparkContext._jsc.getPersistentRDDs().keys())


def test_a_unique_rule_on_a_nondeterministic_input_judges_the_rows_it_publishes(spark):
    coin = F.udf(lambda i: random.randint(0, 1), "long").asNondeterministic()
    before = _persisted(spark)
    df = spark.range(0, 40).withColumn("k", (F.col("id") / 2).cast("long") + coin("id") * 1000)
    contract = _contract([{"name": "id", "type": "long"}, {"name": "k", "type": "long", "unique": True}])
    result = dq_governance.check(df, contract)
    try:
        valid = [r["k"] for r in result.valid_df.collect()]
        quarantined = [r["k"] for r in result.quarantine_df.collect()]
        keys = valid + quarantined
        duplicated = {k for k in keys if keys.count(k) > 1}
        assert len(keys) == 40 and result.total_rows == 40
        assert not duplicated & set(valid)  # no published row shares its key
        assert set(quarantined) == duplicated  # every quarantined row's key is duplicated among these rows
        assert result.rule("k_unique").failed_count == len(quarantined)
    finally:
        result.release()
    assert _persisted(spark) == before  # the kept input went with the result


def test_a_nondeterministic_input_leaves_nothing_cached_after_a_metrics_only_check(spark):
    half = F.udf(lambda i: i // 2 if i < 10 else i, "long").asNondeterministic()  # marked so, its answer known
    before = _persisted(spark)
    df = spark.range(0, 20).withColumn("k", half("id"))
    contract = _contract([{"name": "id", "type": "long"}, {"name": "k", "type": "long", "unique": True}])
    result = dq_governance.check(df, contract, outputs=False)
    assert (result.total_rows, result.rule("k_unique").failed_count) == (20, 10)
    assert _persisted(spark) == before


@pytest.mark.parametrize("rule", [
    {"type": "missing_percent", "column": "x", "must_be": "< 5%", "filter": "id > 100"},
    {"type": "invalid_count", "column": "x", "valid_values": [1.0], "must_be": "< 5%", "filter": "id > 100"},
])
def test_a_percent_of_no_rows_in_scope_is_skipped_not_failed(spark, rule):
    contract = _contract([{"name": "id", "type": "long"}, {"name": "x", "type": "double"}], [rule])
    result = dq_governance.check(spark.createDataFrame([(1, 1.0), (2, 1.0)], "id long, x double"), contract,
                                 outputs=False)
    [judged] = [r for r in result.rules if r.type == rule["type"]]
    assert (judged.status, judged.failed_count, judged.message) == ("skipped", 0, "skipped: no rows in scope")
    assert result.gate.passed and result.gate.reasons == []


def test_a_generated_rule_name_never_takes_a_name_written_by_hand(spark):
    contract = _contract([{"name": "x", "type": "double", "required": True}], [
        {"type": "range", "column": "x", "min": 0, "name": "x_not_null_2", "action": "drop"},
        {"type": "not_null", "column": "x"}], on_failure="quarantine")
    assert [(r.name, r.type) for r in contract.rules()] == [
        ("x_type", "type"), ("x_not_null", "not_null"), ("x_not_null_2", "range"), ("x_not_null_3", "not_null")]
    result = dq_governance.check(spark.createDataFrame([(1.0,), (-1.0,)], "x double"), contract)
    try:
        rows = result.quarantine_df.select("x", "_dq_errors").collect()
        assert [(r["x"], r["_dq_errors"]) for r in rows] == [(-1.0, ["x_not_null_2"])]
        assert result.rule("x_not_null_2").type == "range" and result.rule("x_not_null_3").failed_count == 0
    finally:
        result.release()


STRUCT_AND_DOTTED = [{"name": "a", "type": "struct<b:string>", "fields": [{"name": "b", "type": "string"}]},
                     {"name": "a.b", "type": "string"}]


def test_a_nested_path_that_is_also_a_top_level_name_is_refused_at_its_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"},
                                    "schema": {"fields": STRUCT_AND_DOTTED}}, sort_keys=False))
    [problem] = lint_path(path)
    assert (problem.line, problem.field, problem.severity) == (11, "schema.fields[0].fields[0].name", "error")
    assert problem.message == "`a.b` names both field 'b' of struct `a` and the top-level field `a.b`; rename one"
    with pytest.raises(ValueError, match=r"names both field 'b' of struct `a`"):
        _contract(STRUCT_AND_DOTTED)
    with pytest.raises(ValueError, match=r"nested field name 'x.y' holds a dot"):
        _contract([{"name": "s", "type": "struct<`x.y`:string>", "fields": [{"name": "x.y", "type": "string"}]}])


def test_a_structs_field_is_checked_and_masked_not_the_column_named_like_its_path(spark):
    df = spark.createDataFrame([(("secret1@x.com", 1), None), (("secret2@x.com", 2), "public2"),
                                (("secret3@x.com", 3), "public3")], "a struct<b:string,n:long>, `a.b` string")
    contract = _contract([{"name": "a", "type": "struct<b:string,n:long>", "fields": [
        {"name": "b", "type": "string", "required": True, "pii": True, "masking": "redact"},
        {"name": "n", "type": "long", "maximum": 1}]}], undeclared="keep")
    result = dq_governance.check(df, contract, outputs=False)
    assert {r.name: r.failed_count for r in result.rules if r.type in ("not_null", "range")} == {
        "a.b_not_null": 0, "a.n_range": 2}
    masked = apply_masks(df, contract).collect()
    assert [(r["a"]["b"], r["a.b"]) for r in masked] == [
        ("[REDACTED]", None), ("[REDACTED]", "public2"), ("[REDACTED]", "public3")]


@pytest.mark.parametrize("name", ["e mail", "ação", "o'brien", "we`ird"])
def test_a_masked_struct_field_with_an_awkward_name_is_masked(spark, name):
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField("s", T.StructType([T.StructField(name, T.StringType())]))])
    df = spark.createDataFrame([(("raw-value",),)], schema)
    member = "`" + name.replace("`", "``") + "`"
    contract = _contract([{"name": "s", "type": f"struct<{member}:string>",
                           "fields": [{"name": name, "type": "string", "masking": "redact"}]}])
    assert apply_masks(df, contract).collect()[0]["s"][name] == "[REDACTED]"
    result = dq_governance.check(df, contract, outputs=False)
    assert result.total_rows == 1 and all(r.status == "passed" for r in result.rules)


@pytest.mark.parametrize("name", ["a.b", "b`q"])
def test_a_run_that_keeps_failing_rows_publishes_columns_with_dots_and_backquotes(spark, tmp_path, name):
    df = spark.createDataFrame([("1",), ("2",), ("x",)], "`%s` string" % name.replace("`", "``"))
    contract = _contract([{"name": name, "type": "long"}], on_failure="warn")
    result = dq_governance.run(df, contract, target=str(tmp_path / "out"))
    assert result.published and (result.valid_rows, result.invalid_rows) == (2, 1)
    published = spark.read.parquet(str(tmp_path / "out")).collect()
    assert sorted((r[name] for r in published), key=str) == [1, 2, None]  # "x" is no long: null, as typed

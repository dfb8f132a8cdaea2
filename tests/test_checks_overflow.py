"""Sums of integral and decimal columns that overflow: never wrapped, never aborting the check, alike on Spark 3.5
and 4.0 and with ANSI mode on or off (the sum rule, reconcile, and the per-column metrics of every check)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from openlineage.client.serde import Serde

from dq_governance.contracts.model import Contract

pytestmark = pytest.mark.spark

LONG_MAX = 9223372036854775807
#: the largest decimal(38,2): two of them overflow the decimal(38,2) Spark sums them in
DECIMAL_MAX = Decimal("9" * 36 + ".99")


@pytest.fixture(params=["true", "false"], ids=["ansi", "no-ansi"])
def ansi(request, spark):
    """The shared session with spark.sql.ansi.enabled set to the parameter, restored afterwards."""
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", request.param)
    yield spark
    spark.conf.set("spark.sql.ansi.enabled", before)


def contract(fields, rules):
    return Contract.model_validate({
        "contract": {"name": "overflow", "version": "1.0.0"},
        "dataset": {"name": "overflow"},
        "schema": {"fields": fields},
        "quality": {"rules": rules},
    })


def run(spark, rows, schema, fields, rules):
    from dq_governance.checks.engine import evaluate

    checked = contract(fields, rules)
    result = evaluate(spark.createDataFrame(rows, schema), checked, mode="counts")
    result.release()
    return checked, result


def test_sum_rule_that_overflows_fails_in_one_line(ansi):
    rules = [{"type": "sum", "name": "big_sum", "column": "big", "must_be": "<= 100"},
             {"type": "sum", "name": "dec_sum", "column": "dec", "must_be": "<= 100"}]
    _, result = run(ansi, [(LONG_MAX, DECIMAL_MAX), (LONG_MAX, DECIMAL_MAX), (2, Decimal("1.00"))],
                    "big long, dec decimal(38,2)",
                    [{"name": "big", "type": "long"}, {"name": "dec", "type": "decimal(38,2)"}], rules)
    outcomes = {r.name: (r.passed, r.status, r.metric_value, r.message) for r in result.rules if r.type == "sum"}
    assert outcomes == {
        "big_sum": (False, "failed", None, "sum(big) overflowed: the sum of 3 value(s) does not fit in bigint"),
        "dec_sum": (False, "failed", None, "sum(dec) overflowed: the sum of 3 value(s) does not fit in decimal(38,2)"),
    }


def test_avg_rule_of_decimals_that_overflow_fails_in_one_line_and_of_longs_does_not(ansi):
    """Spark averages decimals through a decimal sum (it overflowed: null, or aborted the pass under ANSI);
    longs through a double, which cannot overflow."""
    rules = [{"type": "avg", "name": "big_avg", "column": "big", "must_be": ">= 0"},
             {"type": "avg", "name": "dec_avg", "column": "dec", "must_be": ">= 0"},
             {"type": "avg", "name": "small_avg", "column": "small", "must_be": "<= 2"}]
    _, result = run(ansi, [(LONG_MAX, DECIMAL_MAX, Decimal("1.50")), (LONG_MAX, DECIMAL_MAX, Decimal("2.50"))],
                    "big long, dec decimal(38,2), small decimal(5,2)",
                    [{"name": "big", "type": "long"}, {"name": "dec", "type": "decimal(38,2)"},
                     {"name": "small", "type": "decimal(5,2)"}], rules)
    outcomes = {r.name: (r.passed, r.status, r.metric_value, r.message) for r in result.rules if r.type == "avg"}
    assert outcomes["dec_avg"] == (
        False, "failed", None, "avg(dec) overflowed: the sum of 2 value(s) does not fit in decimal(38,2)")
    assert outcomes["big_avg"][:3] == (True, "passed", float(LONG_MAX))
    assert outcomes["small_avg"][:3] == (True, "passed", 2.0)


def test_sum_rule_without_values_is_still_skipped(ansi):
    """Regression guard (passes on the old code too): no values is not an overflow."""
    rule = {"type": "sum", "name": "big_sum", "column": "big", "must_be": "<= 100"}
    _, result = run(ansi, [(None,), (None,)], "big long", [{"name": "big", "type": "long"}], [rule])
    outcome = result.rule("big_sum")
    assert (outcome.passed, outcome.status, outcome.metric_value, outcome.message) == (
        True, "skipped", None, "skipped: no values in big")


def test_column_metrics_of_ids_near_the_long_maximum(ansi):
    """No rule sums: the check's own column metrics must neither abort nor wrap, and keep min / max exact."""
    from dq_governance.lineage.facets import metrics_facet

    checked, result = run(ansi, [(LONG_MAX, 1.5), (LONG_MAX - 1, 2.5)], "id long, amount double",
                          [{"name": "id", "type": "long"}, {"name": "amount", "type": "double"}],
                          [{"type": "row_count", "must_be": ">= 1"}])
    ids = result.column_metrics["id"]
    assert (ids.count, ids.min, ids.max, ids.sum) == (2, LONG_MAX - 1, LONG_MAX, None)
    amounts = result.column_metrics["amount"]
    assert (amounts.min, amounts.max, amounts.sum) == (1.5, 2.5, 4.0)  # floating point: plain sum
    facet = Serde.to_dict(metrics_facet(checked, result))
    assert facet["columnMetrics"]["id"] == {"nullCount": 0, "count": 2, "min": LONG_MAX - 1, "max": LONG_MAX}


def test_reconcile_names_the_side_whose_sum_overflowed(ansi):
    ansi.createDataFrame([(1, LONG_MAX), (2, LONG_MAX)], "a long, b long").createOrReplaceTempView(
        "dqgov_test_overflow_source")
    rule = {"type": "reconcile", "name": "rec", "source": {"table": "dqgov_test_overflow_source"},
            "sum_columns": ["a", "b"]}
    _, result = run(ansi, [(LONG_MAX, 1), (LONG_MAX, 2)], "a long, b long",
                    [{"name": "a", "type": "long"}, {"name": "b", "type": "long"}], [rule])
    outcome = result.rule("rec")
    assert (outcome.passed, outcome.status, outcome.message) == (
        False, "failed", "sum(a) overflowed: the sum of 2 value(s) does not fit in bigint; "
                         "source sum(b) overflowed: the sum of 2 value(s) does not fit in bigint")

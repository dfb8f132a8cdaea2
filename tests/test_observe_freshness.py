"""Freshness with a fixed clock: data age, event vs ingestion time, warn and must_be."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from dq_governance.observe.freshness import data_age, human_age

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


def test_data_age_and_its_wording():
    newest = datetime(2026, 11, 29, 9, 0, tzinfo=timezone.utc).timestamp()
    assert data_age(newest, T0) == 3 * 3600
    assert data_age(newest + 6 * 3600, T0) == 0.0  # an event in the future is age 0, never negative
    assert [human_age(s) for s in (0, 12, 250, 3 * 3600 + 300, 2 * 86400 + 3 * 3600 + 59)] == [
        "0s", "12s", "4m 10s", "3h 5m", "2d 3h"]


def _contract(time_kind, **thresholds):
    from dq_governance.contracts.model import Contract

    return Contract.model_validate({
        "contract": {"name": "fresh", "version": "1.0.0"}, "dataset": {"name": "fresh"},
        "schema": {"fields": [{"name": "id", "type": "long"}, {"name": "ts", "type": "timestamp"}]},
        "quality": {"rules": [{"type": "freshness", "name": "fresh", "column": "ts", "time": time_kind, **thresholds}]},
    })


@pytest.mark.spark
def test_freshness_rule_on_a_fixed_clock(spark):
    from dq_governance.checks.engine import evaluate

    df = spark.createDataFrame([(1, "2026-11-29 08:00:00"), (2, "2026-11-29 09:00:00")], "id long, ts string")
    event = _contract("event", must_be="< 4h", warn="< 2h")

    def at(contract, hour, minute=0):
        return evaluate(df, contract, mode="counts", now=T0.replace(hour=hour, minute=minute)).rule("fresh")

    fresh = at(event, 10, 30)
    assert (fresh.passed, fresh.status, fresh.metric_value) == (True, "passed", 5400.0)
    assert fresh.message.startswith("data age 1h 30m (newest event time in ts: 2026-11-29T09:00:00Z); ")
    late = at(event, 12)
    assert (late.passed, late.status, late.metric_value) == (True, "warned", 10800.0)  # warn never blocks
    stale = at(event, 14)
    assert (stale.passed, stale.status, stale.metric_value) == (False, "failed", 18000.0)
    assert "age seconds 18000 fails must_be < 4h" in stale.message
    ingestion = evaluate(df, _contract("ingestion", must_be="< 1d"), mode="counts", now=T0).rule("fresh")
    assert ingestion.passed and ingestion.message.startswith(
        "data age 3h (newest ingestion time in ts: 2026-11-29T09:00:00Z)")


@pytest.mark.spark
def test_service_level_freshness_on_the_seed_contract(spark, repo):
    from dq_governance.checks.engine import evaluate
    from dq_governance.cli.inputs import read_frame as _read
    from dq_governance.contracts.load import load_contract

    from dq_governance.contracts.model import ServiceLevel

    # The seed says 60 minutes on no column (a lint error now); here it is measured on data_pedido.
    contract = load_contract(repo / "contracts" / "orders.yaml")
    contract = contract.model_copy(update={"service_level": ServiceLevel.model_validate(
        {"freshness_minutes": 60, "freshness_column": "data_pedido"})})
    df = _read(spark, "csv", str(repo / "examples" / "data" / "orders.csv"))
    rule = evaluate(df, contract, mode="counts", now=datetime(2026, 11, 5, 0, 45, tzinfo=timezone.utc)).rule("freshness_sla")
    # newest valid date 2026-11-05 (midnight UTC); "data-invalida" does not count
    assert (rule.passed, rule.metric_value, rule.threshold) == (True, 2700.0, "must_be < 60m")
    day_later = evaluate(df, contract, mode="counts", now=datetime(2026, 11, 6, tzinfo=timezone.utc)).rule("freshness_sla")
    assert (day_later.passed, day_later.status, day_later.metric_value) == (False, "failed", 86400.0)
    assert day_later.message.startswith("data age 1d (newest event time in data_pedido: 2026-11-05T00:00:00Z)")


@pytest.mark.spark
def test_the_same_wall_clock_digits_give_the_same_age_as_text_ntz_and_timestamp(spark):
    """Under a non-UTC session zone a timestamp_ntz column is read in that zone, as text and timestamp are."""
    from dq_governance.checks.engine import evaluate
    from dq_governance.contracts.model import Contract

    kinds = {"ts_s": "string", "ts_ntz": "timestamp_ntz", "ts": "timestamp"}
    contract = Contract.model_validate({
        "contract": {"name": "fresh", "version": "1.0.0"}, "dataset": {"name": "fresh"},
        "schema": {"fields": [{"name": "id", "type": "long"}, *({"name": c, "type": t} for c, t in kinds.items())]},
        "quality": {"rules": [{"type": "freshness", "name": f"fresh_{c}", "column": c, "must_be": "< 4h"}
                              for c in kinds]},
    })
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/Sao_Paulo")  # UTC-3, no DST in 2026
    try:
        # typed literals take the session zone when the query is analysed, so the frame is built inside
        df = spark.sql(
            "select * from values "
            "(1L, '2026-01-01 08:00:00', timestamp_ntz'2026-01-01 08:00:00', timestamp'2026-01-01 08:00:00'), "
            "(2L, '2026-01-01 10:00:00', timestamp_ntz'2026-01-01 10:00:00', timestamp'2026-01-01 10:00:00') "
            "as t(id, ts_s, ts_ntz, ts)")
        result = evaluate(df, contract, mode="counts", now=datetime(2026, 1, 1, 14, 30, tzinfo=timezone.utc))
        outcomes = {c: result.rule(f"fresh_{c}") for c in kinds}
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
    # 10:00 in Sao Paulo is 13:00Z, 1h 30m before the clock (as UTC digits it would be 4h 30m)
    for column, rule in outcomes.items():
        assert (rule.passed, rule.status, rule.metric_value) == (True, "passed", 5400.0), column
        assert rule.message == (f"data age 1h 30m (newest event time in {column}: 2026-01-01T13:00:00Z); "
                                "age seconds 5400 meets must_be < 4h"), column

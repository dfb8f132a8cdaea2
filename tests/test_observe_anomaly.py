"""Volume anomalies on a synthetic history: stable volumes, one 100x drop, a slow drift, a step change."""

from __future__ import annotations

import math

import pytest

from dq_governance.observe.anomaly import flag_series, robust_z, volume_anomaly

BASE = 10_000_000
NOISE = [((i * 37) % 9 - 4) * 0.005 for i in range(100)]  # a fixed wobble of -2% .. +2%
STABLE = [round(BASE * (1 + NOISE[i])) for i in range(30)]


def flagged(series, **kw):
    return [i for i, verdict in enumerate(flag_series(series, **kw)) if verdict.anomalous]


def test_stable_volumes_flag_nothing_and_the_first_runs_lack_history():
    verdicts = flag_series(STABLE)
    assert flagged(STABLE) == []
    assert [i for i, v in enumerate(verdicts) if v.skipped] == [0, 1, 2, 3, 4]  # min_history 5
    assert max(v.score for v in verdicts[5:]) == pytest.approx(2.0235, abs=1e-4)


def test_one_100x_drop_flags_exactly_that_run():
    series = STABLE[:20] + [BASE // 100] + STABLE[21:]
    assert flagged(series) == [20]
    drop = flag_series(series)[20]
    # window = runs 0..19, wobble (i % 9 - 4) * 0.5%: median -0.25% -> 9,975,000; MAD 1.25% -> 125,000
    assert (drop.median, drop.mad) == (9_975_000.0, 125_000.0)
    assert drop.score == pytest.approx(0.6745 * 9_875_000 / 125_000)
    assert drop.problems == ["row count 100000 is off the median 9975000 (robust z 53.2855)"]
    # the run after the drop is judged against a window holding the outlier: median and MAD ignore it
    assert not flag_series(series)[21].anomalous


def test_slow_drift_moves_the_median_along_and_is_not_flagged():
    drift = STABLE + [round(BASE * 1.005 ** (k + 1) * (1 + NOISE[30 + k])) for k in range(40)]
    assert drift[-1] / BASE == pytest.approx(1.005 ** 40 * 1.01)  # +23% over 40 runs
    assert flagged(drift) == []
    # against a frozen baseline (the stable runs), the same last run is an anomaly: the window is what adapts
    assert volume_anomaly(drift[-1], STABLE).anomalous


def test_step_change_is_flagged_until_it_dominates_the_window():
    step = STABLE[:20] + [round(BASE * 1.3)] * 15
    assert flagged(step) == [20, 21, 22, 23, 24, 25, 26, 27, 28, 29]  # then 11 of 20 runs are the new level


def test_sensitivity_minimum_history_and_window():
    series = [100, 102, 98, 101, 99, 100, 120]
    assert flagged(series) == [6]  # z = 0.6745 * 20 / 1 = 13.5
    assert flagged(series, sensitivity=20) == []
    assert flagged(series, min_history=7) == []
    short = volume_anomaly(120, [100, 102], min_history=5)
    assert short.skipped and not short.anomalous and short.score is None
    assert volume_anomaly(50, [10, 10, 10, 10, 10, 1000, 1000], history_runs=2, min_history=2).median == 1000


def test_explicit_range_applies_without_history():
    low = volume_anomaly(3, [], min_rows=10, max_rows=100)
    assert not low.skipped and low.problems == ["row count 3 is below the expected minimum 10"]
    high = volume_anomaly(500, [], max_rows=100)
    assert high.problems == ["row count 500 is above the expected maximum 100"]
    assert not volume_anomaly(50, [], min_rows=10, max_rows=100).anomalous


def test_constant_history_uses_a_spread_floor():
    median, mad, z = robust_z(1002, [1000] * 10)
    assert (median, mad) == (1000.0, 0.0)
    assert z == pytest.approx(0.6745 * 2 / 5)  # floor: 0.5% of the median
    assert math.isinf(robust_z(1, [0] * 5)[2])


@pytest.mark.spark
def test_volume_rule_in_the_engine_takes_the_service_level_range(spark):
    from dq_governance.checks.engine import evaluate
    from dq_governance.contracts.model import Contract

    contract = Contract.model_validate({
        "contract": {"name": "vol", "version": "1.0.0"}, "dataset": {"name": "vol"},
        "schema": {"fields": [{"name": "a", "type": "long"}]},
        "service_level": {"volume": {"min_rows": 5}},
        "quality": {"rules": [{"type": "volume", "name": "vol", "min_history": 3}]},
    })
    rule = [r for r in contract.rules() if r.name == "vol"][0]
    assert (rule.min_rows, rule.max_rows) == (5, None)
    df = spark.createDataFrame([(1,), (2,)], "a long")
    result = evaluate(df, contract, mode="counts", volume_history=[])
    vol = result.rule("vol")
    assert (vol.passed, vol.status, vol.metric_value) == (False, "failed", 2.0)
    assert vol.message == "row count 2 is below the expected minimum 5"
    still_low = evaluate(df, contract, mode="counts", volume_history=[2, 2, 2]).rule("vol")
    assert not still_low.passed  # the range applies with history too
    six = spark.createDataFrame([(i,) for i in range(6)], "a long")
    ok = evaluate(six, contract, mode="counts", volume_history=[6, 6, 6]).rule("vol")
    assert (ok.passed, ok.status, ok.message) == (True, "passed", "row count 6")
    off = evaluate(six, contract, mode="counts", volume_history=[600, 610, 590]).rule("vol")
    assert (off.passed, off.message) == (False, "row count 6 is off the median 600 (robust z 40.0653)")  # 0.6745 * 594 / 10

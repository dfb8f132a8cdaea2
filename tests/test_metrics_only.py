"""`check(outputs=False)` / `run(outputs=False)`: the counts pass, with every result and no rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dq_governance
from dq_governance.contracts.load import load_contract
from dq_governance.errors import ConfigError
from dq_governance.lineage import facets as F
from dq_governance.publish.report import read_history
from lineage_schema import validation_errors

REPO = Path(__file__).resolve().parent.parent
ORDERS = str(REPO / "examples" / "data" / "orders.csv")
SALES = str(REPO / "examples" / "data" / "sales.csv")
pytestmark = pytest.mark.spark


@pytest.fixture(autouse=True)
def masking_key(monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", "metrics-only-test-key-0123456789")


@pytest.fixture(scope="module")
def orders(spark):
    return spark.read.option("header", True).csv(ORDERS), load_contract(str(REPO / "contracts" / "orders.yaml"))


def _counts(result):
    return {rule.name: (rule.status, rule.failed_count, rule.metric_value) for rule in result.rules}


def test_metrics_only_gives_the_splits_results_without_rows(orders):
    df, contract = orders
    split = dq_governance.check(df, contract)
    measured = dq_governance.check(df, contract, outputs=False)
    try:
        assert (measured.total_rows, measured.valid_rows, measured.invalid_rows) == (7, 1, 6)
        assert _counts(measured) == _counts(split)
        assert measured.column_metrics == split.column_metrics
        assert (measured.gate.publish, measured.gate.reasons) == (False, split.gate.reasons)
        assert measured.gate.reasons == ["valid ratio 0.1429 is below minimum_valid_ratio 0.99"]
        assert (measured.valid_df, measured.quarantine_df, measured.annotated_df) == (None, None, None)
        assert measured.cached == [] and measured.split_storage is None
        assert (measured.row_outputs, split.row_outputs) == ("none", "split")
        assert measured.summary()["row_outputs"] == "none"
    finally:
        split.release()


def test_metrics_only_run_writes_the_report_and_events_and_no_rows(spark, orders, tmp_path):
    df, contract = orders
    events, report = tmp_path / "events.jsonl", str(tmp_path / "report")
    result = dq_governance.run(df, contract, report=report, lineage=f"file:{events}", source=ORDERS,
                               run_id="0c7e3f5e-4b1d-4c53-9a8e-000000000001", outputs=False)
    assert (result.total_rows, result.valid_rows, result.invalid_rows, result.published) == (7, 1, 6, False)
    assert result.outputs == []
    rows = read_history(report, spark=spark).collect()
    assert len(rows) == len(result.rules)
    assert {(r["row_outputs"], r["published"], r["total_rows"], r["valid_rows"]) for r in rows} == {("none", False, 7, 1)}
    assert {r["check_name"]: r["failed_count"] for r in rows} == {r.name: r.failed_count for r in result.rules}
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["eventType"] for e in lines] == ["START", "FAIL"]  # the gate blocks: reported, nothing written
    facet = lines[1]["inputs"][0]["facets"][F.CONTRACT_FACET_KEY]
    assert (facet["row_outputs"], facet["valid_rows"], facet["invalid_rows"]) == ("none", 1, 6)
    assert lines[1]["outputs"] == []
    assert all(validation_errors(e) == [] for e in lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.jsonl", "report"]


def test_metrics_only_run_of_a_passing_contract_completes(spark, tmp_path):
    df = spark.read.option("header", True).csv(SALES)
    events = tmp_path / "events.jsonl"
    result = dq_governance.run(df, REPO / "contracts" / "sales.yaml", report=str(tmp_path / "report"),
                               lineage=f"file:{events}", source=SALES, outputs=False)
    assert (result.total_rows, result.valid_rows, result.invalid_rows) == (6, 3, 3)
    assert result.gate.publish and not result.published
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["eventType"] for e in lines] == ["START", "COMPLETE"]
    assert lines[1]["inputs"][0]["facets"][F.CONTRACT_FACET_KEY]["row_outputs"] == "none"


@pytest.mark.parametrize("output, needed", [({"target": "t"}, "target"), ({"quarantine": "q"}, "quarantine"),
                                            ({"failed_sample": 5}, "failed_sample")])
def test_metrics_only_refuses_what_needs_rows(orders, tmp_path, output, needed):
    df, contract = orders
    with pytest.raises(ConfigError, match=f"^outputs=False keeps no rows, so it cannot take {needed};"):
        dq_governance.run(df, contract, outputs=False, **output)

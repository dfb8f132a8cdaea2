"""Schema drift between runs, and volume + drift as ordinary rules through `run` and the report history."""

from __future__ import annotations

import pytest

from dq_governance.observe.drift import SchemaChange, decode_schema, encode_schema, schema_drift


def test_drift_lists_removed_retyped_then_added_columns():
    before = {"id": "bigint", "valor": "decimal(12,2)", "old": "string"}
    after = {"id": "bigint", "valor": "string", "canal": "string"}
    changes = schema_drift(before, after)
    assert changes == [SchemaChange("type_changed", "valor", "decimal(12,2)", "string"),
                       SchemaChange("removed", "old", "string", None),
                       SchemaChange("added", "canal", None, "string")]
    assert [c.describe() for c in changes] == [
        "column valor changed type decimal(12,2) -> string", "column old removed (was string)",
        "column canal added (string)"]
    assert schema_drift(before, dict(before)) == []


def test_schema_round_trips_through_the_history_text():
    schema = {"b": "int", "a": "struct<x:int>"}
    assert encode_schema(schema) == '[["b", "int"], ["a", "struct<x:int>"]]'
    assert decode_schema(encode_schema(schema)) == schema and list(decode_schema(encode_schema(schema))) == ["b", "a"]
    assert decode_schema(None) is None and encode_schema(None) is None


CONTRACT = {
    "contract": {"name": "events", "version": "1.0.0"}, "dataset": {"name": "events"},
    "schema": {"fields": [{"name": "id", "type": "long", "required": True}]},
    "quality": {"on_failure": "quarantine", "rules": [
        {"type": "volume", "name": "volume", "min_history": 2},
        {"type": "schema_drift", "name": "drift", "severity": "warn"},
    ]},
}


@pytest.mark.spark
def test_volume_and_drift_through_run_and_the_report_history(spark, tmp_path):
    from dq_governance.api import run
    from dq_governance.contracts.model import Contract
    from dq_governance.observe.history import read_history_rows, runs

    contract = Contract.model_validate(CONTRACT)
    report = str(tmp_path / "report")
    ten = spark.createDataFrame([(i,) for i in range(10)], "id long")
    wider = spark.createDataFrame([(i, "web") for i in range(10)], "id long, canal string")
    inputs = [ten, ten, wider, ten.limit(1)]
    results = []
    for i, df in enumerate(inputs):
        results.append(run(df, contract, report=report, run_id=f"00000000-0000-0000-0000-00000000000{i}"))
    vol = [(r.rule("volume").status, r.rule("volume").message) for r in results]
    assert vol == [
        ("skipped", "skipped: no history (0 of 2 runs needed)"),
        ("skipped", "skipped: no history (1 of 2 runs needed)"),
        ("passed", "row count 10"),
        ("failed", "row count 1 is off the median 10 (robust z 121.41)"),  # MAD 0: spread floor 0.5% of 10
    ]
    drift = [(r.rule("drift").status, r.rule("drift").metric_value, r.rule("drift").message) for r in results]
    assert drift == [
        ("skipped", None, "skipped: no earlier run with a recorded schema"),
        ("passed", 0.0, "schema changes 0"),
        ("warned", 1.0, "column canal added (string) (schema changed)"),
        ("warned", 1.0, "column canal removed (was string) (schema changed)"),
    ]
    assert results[3].status == "failed" and not results[3].gate.passed  # the volume rule is an error rule
    history = runs(read_history_rows(report))
    assert [(h.total_rows, h.gate_passed) for h in history] == [(10, True), (10, True), (10, True), (1, False)]
    assert history[2].schema == {"id": "bigint", "canal": "string"}
    # a re-run of the same run id replaces its rows: the history still has 4 runs and 4 x 5 rows (4 rules and the
    # derived undeclared_columns row)
    run(ten, contract, report=report, run_id="00000000-0000-0000-0000-000000000001")
    assert len(read_history_rows(report)) == 4 * 5
    from dq_governance.observe.indicators import indicators

    found = {i.key: i for i in indicators(runs(read_history_rows(report)))}
    # judged: run 3, run 4 and the re-run of run 2 (which now has 3 earlier runs); run 1 had no history
    assert (found["volume_anomaly"].numerator, found["volume_anomaly"].denominator) == (1, 3)
    assert (found["schema_compatibility"].numerator, found["schema_compatibility"].denominator) == (1, 3)
    assert (found["quality_gate_failures"].numerator, found["quality_gate_failures"].denominator) == (1, 4)

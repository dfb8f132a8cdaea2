"""The report history read as it was written: name-typed partitions, URI histories, per-rule volume history."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from _observe_history import _rule, _run_row, history_rows, write_history
from dq_governance.cli import main
from dq_governance.errors import InputDataError
from dq_governance.observe.history import previous_schema, read_history_rows, runs
from dq_governance.observe.indicators import indicators, volume_flags

SHARED_IDS = [f"00000000-0000-0000-0000-00000000000{i}" for i in range(1, 7)]


def _digits_only_history(root):
    """The orders runs of the fixed history under pipeline `2024` with run ids `1` .. `6`."""
    rows = [dict(r, pipeline="2024", run_id=r["run_id"].removeprefix("orders-run-"))
            for r in history_rows() if r["pipeline"] == "orders"]
    return write_history(root, rows)


def test_digit_only_pipeline_and_run_ids_are_read_as_text(tmp_path):
    root = _digits_only_history(tmp_path / "report")
    rows = read_history_rows(root, pipeline="2024")
    assert len(rows) == 6 * 5
    assert {(type(r["pipeline"]), r["pipeline"]) for r in rows} == {(str, "2024")}
    assert [(r.pipeline, r.run_id) for r in runs(rows)] == [("2024", str(i)) for i in range(1, 7)]
    assert previous_schema(root, pipeline="2024", exclude_run_id="6") == {"pedido_id": "string", "status": "string"}
    assert previous_schema(root, pipeline="2025") is None


def test_report_cli_on_a_digit_only_pipeline(tmp_path, capsys):
    root = _digits_only_history(tmp_path / "report")
    out = tmp_path / "report.html"
    assert main(["report", "--history", str(root), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {out}: 6 run(s), 1 pipeline(s)"
    assert "1 pipeline(s): 2024" in out.read_text()
    assert main(["report", "--history", str(root), "--pipeline", "2024", "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {out}: 6 run(s), 1 pipeline(s)"


def test_an_unreadable_history_file_is_one_input_error(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = _digits_only_history(tmp_path / "report")
    odd = root / "pipeline=2024" / "run_id=9"
    odd.mkdir()
    pq.write_table(pa.table({"check_name": ["x"], "total_rows": ["many"]}), odd / "part-0.parquet")
    with pytest.raises(InputDataError) as caught:
        read_history_rows(root)
    assert str(caught.value) == f"{root}: cannot read the report history: Unable to merge: Field total_rows has " \
                                "incompatible types: int64 vs string"
    assert main(["report", "--history", str(root), "-o", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err.strip() == f"dqgov: error: {caught.value}"


def _shared_run_id_history():
    """orders and customers checked by one orchestrator with the same six run ids; orders' last run is a volume
    anomaly (its volume rule failed), customers has no volume rule and a steady 10 rows."""
    rows = []
    for i, run_id in enumerate(SHARED_IDS):
        at = datetime(2026, 11, i + 1, 6, tzinfo=timezone.utc)
        total = 10 if i == 5 else 100
        vol = _rule("volume", "volume", "dataset", "completeness", "failed" if i == 5 else "skipped", None,
                    float(total))
        rows.append(_run_row("orders", run_id, at, total, total, True, {"id": "string"}, vol))
        ok = _rule("id_not_null", "not_null", "row", "completeness", "passed", 0, 0.0)
        rows.append(_run_row("customers", run_id, at.replace(minute=5), 10, 10, True, {"id": "string"}, ok))
    return rows


def test_volume_flags_are_per_pipeline_and_run_id(tmp_path):
    summaries = runs(read_history_rows(write_history(tmp_path / "report", _shared_run_id_history())))
    flags = volume_flags(summaries)
    assert len(flags) == 12
    assert [flags[("orders", run_id, "orders")] for run_id in SHARED_IDS] == [None] * 5 + [True]
    assert [flags[("customers", run_id, "customers")] for run_id in SHARED_IDS] == [None] * 5 + [False]
    found = {i.key: i for i in indicators(summaries)}["volume_anomaly"]
    assert (found.latest, found.overall, found.numerator, found.denominator) == (0.5, 0.5, 1.0, 2.0)


def test_two_contracts_of_one_pipeline_under_one_run_id_are_two_runs(tmp_path):
    # an orchestrator's run id shared by a pipeline's contracts: each contract's rows are a run of their own
    rows = []
    for contract, total, valid in (("orders", 100, 90), ("ledger", 10, 4)):
        row = _run_row("nightly", "dag-1", datetime(2026, 1, 1, tzinfo=timezone.utc), total, valid, valid == 90,
                       {"id": "string"}, _rule("id_not_null", "not_null", "row", "completeness", "passed", 0, 0.0))
        row["contract"] = contract
        rows.append(row)
    summaries = runs(read_history_rows(write_history(tmp_path / "report", rows)))
    assert sorted((r.key, r.total_rows, r.valid_rows, r.gate_passed) for r in summaries) == [
        (("nightly", "dag-1", "ledger"), 10, 4, False), (("nightly", "dag-1", "orders"), 100, 90, True)]


# -- through Spark: what a `dqgov check` run reads before its rules ------------------------------------------

DRIFT = {
    "contract": {"name": "events", "version": "1.0.0"}, "dataset": {"name": "events"},
    "schema": {"fields": [{"name": "id", "type": "long", "required": True}]},
    "quality": {"rules": [{"type": "schema_drift", "name": "drift"}]},
}


@pytest.mark.spark
def test_schema_drift_on_a_uri_history_and_on_a_digit_only_pipeline(spark, tmp_path):
    from dq_governance.api import run
    from dq_governance.contracts.model import Contract

    contract = Contract.model_validate(DRIFT)
    narrow = spark.createDataFrame([(1,), (2,)], "id long")
    wider = spark.createDataFrame([(1, "web"), (2, "app")], "id long, canal string")
    uri = f"file:{tmp_path / 'uri'}"
    first = run(narrow, contract, report=uri, run_id="run-1")
    second = run(wider, contract, report=uri, run_id="run-2")
    assert (first.rule("drift").status, first.rule("drift").message) == (
        "skipped", "skipped: no earlier run with a recorded schema")
    drift = second.rule("drift")
    assert (drift.status, drift.metric_value, drift.message) == (
        "failed", 1.0, "column canal added (string) (schema changed)")
    back = runs(read_history_rows(uri, spark=spark))  # a URI: read through Spark, instants in UTC
    assert [(r.pipeline, r.run_id, r.validated_at.tzinfo) for r in back] == [
        ("events", "run-1", timezone.utc), ("events", "run-2", timezone.utc)]

    plain = str(tmp_path / "plain")
    run(narrow, contract, report=plain, run_id="1", pipeline="2024")
    again = run(narrow, contract, report=plain, run_id="2", pipeline="2024").rule("drift")
    assert (again.status, again.metric_value, again.message) == ("passed", 0.0, "schema changes 0")


VOLUME = {
    "contract": {"name": "vol", "version": "1.0.0"}, "dataset": {"name": "vol"},
    "schema": {"fields": [{"name": "id", "type": "long"}, {"name": "v", "type": "string"}]},
    "quality": {"rules": [
        {"type": "volume", "name": "volume_a", "filter": "v = 'a'", "history_runs": 3, "min_history": 1},
        {"type": "volume", "name": "volume_all", "history_runs": 1, "min_history": 1},
    ]},
}


@pytest.mark.spark
def test_a_filtered_volume_rule_is_judged_against_its_own_counts(spark, tmp_path):
    from dq_governance.api import run
    from dq_governance.contracts.model import Contract
    from dq_governance.observe.history import volume_history

    contract = Contract.model_validate(VOLUME)
    half = spark.createDataFrame([(1, "a"), (2, "a"), (3, "b"), (4, "b")], "id long, v string")
    all_a = spark.createDataFrame([(1, "a"), (2, "a"), (3, "a"), (4, "a")], "id long, v string")
    report = str(tmp_path / "report")
    results = [run(df, contract, report=report, run_id=f"run-{i}", pipeline="vol")
               for i, df in enumerate([half, half, all_a], start=1)]
    seen = [[(r.rule(name).status, r.rule(name).metric_value, r.rule(name).message)
             for name in ("volume_a", "volume_all")] for r in results]
    assert seen == [
        [("skipped", 2.0, "skipped: no history (0 of 1 runs needed)"),
         ("skipped", 4.0, "skipped: no history (0 of 1 runs needed)")],
        # the same input again: 2 rows match the filter, as in run 1 (not its 4 rows in all)
        [("passed", 2.0, "row count 2"), ("passed", 4.0, "row count 4")],
        # the filter's count doubles while the input's stays: only the filtered rule sees it
        [("failed", 4.0, "row count 4 is off the median 2 (robust z 134.9)"), ("passed", 4.0, "row count 4")],
    ]
    # a re-run of run-3 is judged against the runs before it, `history_runs` of them (the own id left out first)
    assert volume_history(spark, contract, report, "parquet", "vol", "run-3") == {
        "volume_a": [2, 2], "volume_all": [4]}
    assert volume_history(spark, contract, str(tmp_path / "none"), "parquet", "vol", "run-1") == {
        "volume_a": [], "volume_all": []}


@pytest.mark.spark
def test_a_history_spark_cannot_read_is_one_input_error(spark, tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(InputDataError) as caught:
        read_history_rows(f"file:{missing}", spark=spark)
    message = str(caught.value)
    assert message.startswith(f"file:{missing}: cannot read the report history as parquet: [PATH_NOT_FOUND] ")
    assert "\n" not in message
    with pytest.raises(InputDataError) as caught:
        read_history_rows(missing, format="delta", spark=spark)  # no Delta jars here, or no such path: one line
    assert str(caught.value).startswith(f"{missing}: cannot read the report history as delta: ")
    assert "\n" not in str(caught.value)
    assert previous_schema(f"file:{missing}", pipeline="p", spark=spark) is None  # no history yet: no drift


def test_a_history_begun_by_an_older_release_keeps_the_columns_later_runs_wrote(tmp_path):
    """A pyarrow dataset takes its schema from one file: the first run's, written before quality_score,
    gate_passed and run_schema existed, hid them for every run, and schema_drift then found no earlier schema."""
    import pyarrow.parquet as pq

    root = write_history(tmp_path / "report", [r for r in history_rows() if r["pipeline"] == "orders"])
    added = ("quality_score", "gate_passed", "run_schema", "row_outputs")
    first = root / "pipeline=orders" / "run_id=orders-run-1" / "part-0.parquet"
    pq.write_table(pq.read_table(first).drop_columns(list(added)), first)  # as an older release wrote it
    orders = runs(read_history_rows(root, pipeline="orders"))
    assert [(r.run_id, r.quality_score, r.gate_passed) for r in orders[:2]] == [
        ("orders-run-1", None, None), ("orders-run-2", 0.98, False)]
    assert previous_schema(root, pipeline="orders", exclude_run_id="orders-run-6") == {
        "pedido_id": "string", "status": "string"}

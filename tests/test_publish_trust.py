"""What a run may trust of its outputs: one pipeline per run id in a quarantine, one attempt per run's outputs,
and no merge on a key its masks collapse.

The Delta cases run in a process of their own (this file run as a script: a Delta session needs its jars).
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

import _publish_fixtures as fx
import dq_governance
from dq_governance import pipeline
from dq_governance.contracts.model import Contract
from dq_governance.errors import ConfigError, GateFailedError
from dq_governance.publish import policy
from dq_governance.publish.report import read_history

AIRFLOW_RUN = "scheduled__2026-01-01T00:00:00+00:00"  # every task of a DAG run gets it


def _items(minimum_valid_ratio: float | None = None) -> Contract:
    quality: dict = {"on_failure": "quarantine"}
    if minimum_valid_ratio is not None:
        quality["minimum_valid_ratio"] = minimum_valid_ratio
    return Contract.model_validate({
        "contract": {"name": "items", "version": "1.0.0"}, "dataset": {"name": "items"},
        "schema": {"fields": [{"name": "id", "type": "long", "required": True}, {"name": "v", "type": "long"}]},
        "quality": quality,
    })


def _people(method: dict | str | None = None, **extra) -> Contract:
    email: dict = {"name": "email", "type": "string", "pii": True}
    if method is not None:
        email["masking"] = method
    return Contract.model_validate({
        "contract": {"name": "people", "version": "1.0.0"}, "dataset": {"name": "people"},
        "schema": {"fields": [email, {"name": "v", "type": "long"}]}, **extra,
    })


def _frame(spark, rows):
    return spark.createDataFrame(rows, "id long, v long")


def _quarantine(spark, path):
    return sorted((r["_dq_pipeline"], r["_dq_run_id"], r["v"], r["_dq_disposition"])
                  for r in spark.read.parquet(str(path)).collect())


def _values(spark, path):
    return sorted(r["v"] for r in spark.read.parquet(str(path)).collect())


# --------------------------------------------------------------------------- merge keys and masks


@pytest.mark.parametrize("masking", [
    "null", "redact", {"method": "partial", "show_last": 2}, {"method": "generalize", "prefix_length": 3}])
def test_a_merge_key_masked_by_a_collapsing_method_is_refused(masking):
    method = masking if isinstance(masking, str) else masking["method"]
    with pytest.raises(ConfigError) as caught:
        policy.refuse_masked_merge_keys(_people(masking), ["email"])
    assert str(caught.value) == (
        f"merge key email is masked with {method}, which can give distinct keys one value, so a MERGE would match "
        "the wrong rows or none; merge on another key, or mask email with hmac or tokenize")


def test_keyed_pseudonyms_other_keys_and_nested_fields():
    for keyed in ("hmac", "tokenize"):  # distinct keys stay distinct
        assert policy.refuse_masked_merge_keys(_people(keyed), ["email"]) is None
    assert policy.refuse_masked_merge_keys(_people("redact"), ["v"]) is None  # the masked column is no key
    # a policy default counts like the field's own masking (`pii: true` without `masking` takes `masking.pii`)
    with pytest.raises(ConfigError, match="^merge key EMAIL is masked with redact, "):
        policy.refuse_masked_merge_keys(_people(None, masking={"pii": {"method": "redact"}}), ["EMAIL"])
    nested = Contract.model_validate({
        "contract": {"name": "n", "version": "1.0.0"}, "dataset": {"name": "n"},
        "schema": {"fields": [{"name": "client", "type": "struct<cpf:string,name:string>", "fields": [
            {"name": "cpf", "type": "string", "pii": True, "masking": "null"}, {"name": "name", "type": "string"}]}]},
    })
    with pytest.raises(ConfigError) as caught:
        policy.refuse_masked_merge_keys(nested, ["client"])
    assert str(caught.value) == (
        "merge key client (its field client.cpf) is masked with null, which can give distinct keys one value, so a "
        "MERGE would match the wrong rows or none; merge on another key, or mask client.cpf with hmac or tokenize")


@pytest.mark.spark
def test_a_masked_merge_key_is_refused_before_any_spark_work(spark, tmp_path, monkeypatch):
    def no_check(*args, **kwargs):
        raise AssertionError("the check pass ran")

    monkeypatch.setattr(pipeline, "measure", no_check)
    df = spark.createDataFrame([("a@x.com", 1), ("b@x.com", 2)], "email string, v long")
    events = tmp_path / "events.jsonl"
    with pytest.raises(ConfigError, match="^merge key email is masked with redact, "):
        dq_governance.run(df, _people("redact"), target=str(tmp_path / "t"), quarantine=str(tmp_path / "q"),
                          format="delta", mode="merge", merge_keys=["email"], run_id="m1", lineage=f"file:{events}")
    assert list(tmp_path.iterdir()) == []  # no output, no staging, no lineage event
    monkeypatch.undo()
    # unmasked (mask=False) the key is the key as read: not refused for its mask (this session has no Delta)
    with pytest.raises(ConfigError, match="Delta needs delta-spark and a session with"):
        dq_governance.run(df, _people("redact"), target=str(tmp_path / "t"), format="delta", mode="merge",
                          merge_keys=["email"], run_id="m1", mask=False, lineage=None)


@pytest.mark.spark
@pytest.mark.parametrize("emails,reason", [
    # hmac maps a blank value to null: the null-key guard counts the keys as they would be published
    (["a@x.com", "   "], "merge keys (email) are null in 1 row(s); a Delta MERGE matches no null key, so every retry "
                         "of the run would insert those rows again"),
    # distinct as read (the unique guard passes), one once hmac trims them: blocked, not left to Delta's error
    (["a@x.com", " a@x.com", "b@x.com"], "merge keys (email) collide once masked: 2 row(s) share a masked key with "
     "another row (hmac and tokenize hash the trimmed value, normalised per `format`); a Delta MERGE would fail with "
     "'multiple source rows matched'"),
])
def test_merge_keys_as_their_keyed_mask_publishes_them_block_the_run(spark, tmp_path, monkeypatch, emails, reason):
    monkeypatch.setenv("DQGOV_MASKING_KEY", "trust-test-masking-key-0123456789abcdef")
    df = spark.createDataFrame([(email, i) for i, email in enumerate(emails)], "email string, v long")
    with pytest.raises(GateFailedError) as caught:
        dq_governance.run(df, _people("hmac"), target=str(tmp_path / "t"), format="delta", mode="merge",
                          merge_keys=["email"], run_id="m2", lineage=None)
    result = caught.value.result
    assert result.gate.reasons == [reason]
    assert (result.published, result.outputs) == (False, [])
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- one pipeline per run id


@pytest.mark.spark
def test_another_pipelines_run_id_in_the_quarantine_is_refused(spark, tmp_path):
    q, contract = tmp_path / "quarantine", _items()
    p1_rows = [(1, 10), (None, 11), (None, 12)]
    dq_governance.run(_frame(spark, p1_rows), contract, target=str(tmp_path / "a"), quarantine=str(q),
                      mode="append", pipeline="p1", run_id=AIRFLOW_RUN)
    assert _quarantine(spark, q) == [("p1", AIRFLOW_RUN, 11, "quarantined"), ("p1", AIRFLOW_RUN, 12, "quarantined")]
    # a file no parquet reader can read, in another run's partition: the check reads this run's partition only
    (q / "_dq_run_id=other").mkdir()
    (q / "_dq_run_id=other" / "part-0.parquet").write_bytes(b"not parquet")
    before = fx.tree(q)
    events = tmp_path / "events.jsonl"
    with pytest.raises(ConfigError) as caught:
        dq_governance.run(_frame(spark, [(5, 50), (None, 51)]), contract, target=str(tmp_path / "b"),
                          quarantine=str(q), mode="append", pipeline="p2", run_id=AIRFLOW_RUN, lineage=f"file:{events}")
    assert str(caught.value) == (
        f"quarantine {q}: run id {AIRFLOW_RUN} already holds rows of pipeline p1, which this run of p2 would delete; "
        "give each pipeline its own run id or quarantine")
    assert fx.tree(q) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "quarantine"]  # no target, staging or event
    (q / "_dq_run_id=other" / "part-0.parquet").unlink()

    # a retry of p1's run is p1's own; p2 under a run id of its own shares the quarantine
    dq_governance.run(_frame(spark, p1_rows), contract, target=str(tmp_path / "a"), quarantine=str(q),
                      mode="append", pipeline="p1", run_id=AIRFLOW_RUN)
    dq_governance.run(_frame(spark, [(5, 50), (None, 51)]), contract, target=str(tmp_path / "b"), quarantine=str(q),
                      mode="append", pipeline="p2", run_id=f"{AIRFLOW_RUN}-p2")
    assert _quarantine(spark, q) == [
        ("p1", AIRFLOW_RUN, 11, "quarantined"), ("p1", AIRFLOW_RUN, 12, "quarantined"),
        ("p2", f"{AIRFLOW_RUN}-p2", 51, "quarantined")]
    assert (_values(spark, tmp_path / "a"), _values(spark, tmp_path / "b")) == ([10], [50])


# --------------------------------------------------------------------------- one attempt per run's outputs


@pytest.mark.spark
def test_a_blocked_retry_keeps_the_outputs_of_the_published_attempt(spark, tmp_path, caplog):
    t, q, contract = tmp_path / "t", tmp_path / "q", _items(minimum_valid_ratio=0.5)
    outs = {"target": str(t), "quarantine": str(q), "mode": "append", "lineage": None}
    passes = [(1, 10), (2, 20), (None, 30)]  # 2 of 3 valid: published
    blocked = [(None, 40), (None, 50), (3, 60)]  # 1 of 3 valid: blocked

    first = dq_governance.run(_frame(spark, passes), contract, run_id="r", **outs)
    assert first.published and {o["kind"]: o["rows"] for o in first.outputs} == {"target": 2, "quarantine": 1}
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="dq_governance.pipeline"), pytest.raises(GateFailedError) as caught:
        dq_governance.run(_frame(spark, blocked), contract, run_id="r", **outs)
    assert caught.value.result.outputs == []  # the retry wrote nothing
    assert [r.getMessage() for r in caplog.records if "evidence" in r.getMessage()] == [
        f"items: run r already published; this blocked attempt's evidence was not written to {q} (the run keeps "
        "its published attempt's rows there)"]
    assert _values(spark, t) == [10, 20]
    assert _quarantine(spark, q) == [("items", "r", 30, "quarantined")]  # both outputs: the first attempt's

    # a run not published yet: each blocked attempt replaces the last one's evidence, a published one replaces it
    with pytest.raises(GateFailedError):
        dq_governance.run(_frame(spark, blocked), contract, run_id="s", **outs)
    with pytest.raises(GateFailedError):
        dq_governance.run(_frame(spark, [(None, 70), (None, 80), (4, 90)]), contract, run_id="s", **outs)
    assert [row[2:] for row in _quarantine(spark, q) if row[1] == "s"] == [(70, "blocked"), (80, "blocked")]
    assert _values(spark, t) == [10, 20]
    dq_governance.run(_frame(spark, [(5, 15), (6, 25), (None, 35)]), contract, run_id="s", **outs)
    with pytest.raises(GateFailedError):
        dq_governance.run(_frame(spark, blocked), contract, run_id="s", **outs)
    assert _values(spark, t) == [10, 15, 20, 25]
    assert _quarantine(spark, q) == [("items", "r", 30, "quarantined"), ("items", "s", 35, "quarantined")]


def _history(spark, report):
    return sorted((r["run_id"], r["check_name"], r["failed_count"], r["published"])
                  for r in read_history(str(report), spark=spark).collect())


@pytest.mark.spark
def test_a_blocked_retry_keeps_the_report_rows_of_the_published_attempt(spark, tmp_path, caplog):
    t, q, report, contract = tmp_path / "t", tmp_path / "q", tmp_path / "report", _items(minimum_valid_ratio=0.5)
    outs = {"target": str(t), "quarantine": str(q), "mode": "append", "report": str(report), "lineage": None}
    clean = [(1, 10), (2, 20)]  # published, nothing quarantined: only the report knows
    blocked = [(None, 40), (None, 50), (3, 60)]

    assert dq_governance.run(_frame(spark, clean), contract, run_id="r", **outs).published
    published, quarantine_files = _history(spark, report), fx.tree(q)
    assert published == [("r", "id_not_null", 0, True), ("r", "id_type", 0, True),
                         ("r", "undeclared_columns", None, True), ("r", "v_type", 0, True)]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="dq_governance.pipeline"), pytest.raises(GateFailedError):
        dq_governance.run(_frame(spark, blocked), contract, run_id="r", **outs)
    assert [r.getMessage() for r in caplog.records if "already published" in r.getMessage()] == [
        f"items: run r already published; this blocked attempt's evidence was not written to {q} (the run keeps "
        "its published attempt's rows there)",
        f"items: run r already published; this attempt's report rows were not written to {report} (the run keeps "
        "its published attempt's rows there)"]
    assert _history(spark, report) == published  # the history still says what the target holds
    assert _values(spark, t) == [10, 20]
    assert fx.tree(q) == quarantine_files  # no blocked evidence beside a published run

    # a run never published: the blocked attempt's rows are its history and its evidence
    with pytest.raises(GateFailedError):
        dq_governance.run(_frame(spark, blocked), contract, run_id="s", **outs)
    assert [row for row in _history(spark, report) if row[0] == "s"] == [
        ("s", "id_not_null", 2, False), ("s", "id_type", 0, False), ("s", "undeclared_columns", None, False),
        ("s", "v_type", 0, False)]
    assert _quarantine(spark, q) == [("items", "s", 40, "blocked"), ("items", "s", 50, "blocked")]


# --------------------------------------------------------------------------- Delta, in a process of its own


@pytest.mark.spark
@pytest.mark.integration
def test_delta_quarantine(repo, tmp_path):
    pytest.importorskip("delta")
    proc = subprocess.run([sys.executable, __file__, str(tmp_path)], capture_output=True, text=True, timeout=900,
                          cwd=str(repo))
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    seen = json.loads(lines[-1][len("RESULT "):])
    assert seen["shared_error"] == (
        f"quarantine {tmp_path}/q: run id {AIRFLOW_RUN} already holds rows of pipeline p1, which this run of p2 "
        "would delete; give each pipeline its own run id or quarantine")
    assert seen["shared_version_unchanged"] is True and seen["shared_b_exists"] is False
    assert seen["after_blocked_retry"] == {
        "target": [10, 20], "quarantine": [["p1", AIRFLOW_RUN, 11, "quarantined"],
                                           ["p1", AIRFLOW_RUN, 12, "quarantined"]]}
    assert seen["blocked_twice"] == [["items", "s", 70, "blocked"], ["items", "s", 80, "blocked"]]
    assert seen["report_after_blocked_retry"] == [["c", "id_not_null", 0, True], ["c", "id_type", 0, True],
                                                  ["c", "undeclared_columns", None, True], ["c", "v_type", 0, True]]
    assert seen["quarantine_c"] == []


def _delta_job(work: str) -> dict:
    """The Delta cases, on a Delta session: a shared quarantine refused, a blocked retry leaving both outputs."""
    from pyspark.sql import SparkSession

    from dq_governance.cli.inputs import delta_conf

    builder = SparkSession.builder.master("local[1]").appName("dqgov-trust-delta")
    settings = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                "spark.sql.shuffle.partitions": "1", "spark.sql.ansi.enabled": "true", **delta_conf(),
                "spark.databricks.delta.snapshotPartitions": "1"}  # Delta's default, 50 tasks per snapshot, is slow
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    q, contract, out = f"{work}/q", _items(minimum_valid_ratio=0.5), {}
    delta = {"quarantine": q, "format": "delta", "quarantine_format": "delta", "mode": "append", "lineage": None}

    def rows(path, *cols):
        return sorted([r[c] for c in cols] for r in spark.read.format("delta").load(path).collect())

    def version():
        return spark.sql(f"DESCRIBE HISTORY delta.`{q}` LIMIT 1").first()["version"]

    p1 = _frame(spark, [(1, 10), (2, 20), (None, 11), (None, 12)])
    dq_governance.run(p1, contract, target=f"{work}/a", pipeline="p1", run_id=AIRFLOW_RUN, **delta)
    before = version()
    try:
        dq_governance.run(_frame(spark, [(5, 50), (None, 51)]), contract, target=f"{work}/b", pipeline="p2",
                          run_id=AIRFLOW_RUN, **delta)
    except ConfigError as exc:
        out["shared_error"] = str(exc)
    out["shared_version_unchanged"] = version() == before
    out["shared_b_exists"] = Path(f"{work}/b").exists()
    try:  # p1 retried, blocked: its target and quarantine stay the published attempt's
        dq_governance.run(_frame(spark, [(None, 40), (None, 50), (3, 60)]), contract, target=f"{work}/a",
                          pipeline="p1", run_id=AIRFLOW_RUN, **delta)
    except GateFailedError:
        pass
    out["after_blocked_retry"] = {"target": sorted(v for [v] in rows(f"{work}/a", "v")),
                                  "quarantine": rows(q, "_dq_pipeline", "_dq_run_id", "v", "_dq_disposition")}
    for blocked in ([(None, 40), (None, 50), (3, 60)], [(None, 70), (None, 80), (4, 90)]):
        try:
            dq_governance.run(_frame(spark, blocked), contract, target=f"{work}/s", run_id="s", **delta)
        except GateFailedError:
            pass
    out["blocked_twice"] = [r for r in rows(q, "_dq_pipeline", "_dq_run_id", "v", "_dq_disposition") if r[1] == "s"]
    # nothing quarantined by the published attempt: the Delta report history alone knows it published
    report = {"report": f"{work}/report", "report_format": "delta"}
    dq_governance.run(_frame(spark, [(1, 10), (2, 20)]), contract, target=f"{work}/c", run_id="c", **delta, **report)
    try:
        dq_governance.run(_frame(spark, [(None, 40), (None, 50), (3, 60)]), contract, target=f"{work}/c",
                          run_id="c", **delta, **report)
    except GateFailedError:
        pass
    out["report_after_blocked_retry"] = rows(f"{work}/report", "run_id", "check_name", "failed_count", "published")
    out["quarantine_c"] = [r for r in rows(q, "_dq_run_id", "v") if r[0] == "c"]
    spark.stop()
    return out


if __name__ == "__main__":
    print("RESULT " + json.dumps(_delta_job(sys.argv[1]), sort_keys=True))

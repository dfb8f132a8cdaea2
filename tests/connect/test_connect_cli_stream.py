"""`dqgov check --remote`, `dqgov mask`, a sync dry run, the decorators and check_stream on Spark Connect.

Run: DQGOV_CONNECT=1 .venv/bin/python -m pytest -q tests/connect
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dq_governance
from _stream_batches import BATCHES, HEADER, SCHEMA
from connect_server import clean_env
from dq_governance.cli import main
from dq_governance.contracts.load import load_contract
from dq_governance.errors import GateFailedError
from lineage_schema import validation_errors

REPO = Path(__file__).resolve().parent.parent.parent
DATA = REPO / "examples" / "data"
KEY = "connect-cli-masking-key-77c0e1d2"

pytestmark = pytest.mark.spark


@pytest.fixture(autouse=True)
def masking_key(monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)


def dqgov(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`dqgov ARGS` in a fresh process (a CLI-owned remote session must not stop the suite's one)."""
    env = clean_env({"DQGOV_MASKING_KEY": KEY})
    env.pop("DQGOV_DATAHUB_URL", None)
    return subprocess.run([sys.executable, "-c", "from dq_governance.cli import main; main()", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)


def test_dqgov_check_remote_and_a_sync_dry_run(spark, connect_server, tmp_path):
    run_id = "3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a9f"
    proc = dqgov("check", str(REPO / "contracts" / "orders.yaml"), "--input", str(DATA / "orders.csv"),
                 "--output", str(tmp_path / "valid"), "--quarantine", str(tmp_path / "quarantine"),
                 "--report", str(tmp_path / "report"), "--lineage", f"file:{tmp_path / 'events.jsonl'}",
                 "--run-id", run_id, "--json", "--remote", connect_server.url,
                 "--sync", "datahub", "--sync-out", str(tmp_path / "catalog"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (summary["total_rows"], summary["valid_rows"], summary["invalid_rows"]) == (7, 1, 6)
    assert summary["published"] is False and [o["kind"] for o in summary["outputs"]] == ["quarantine"]
    assert not (tmp_path / "valid").exists()
    assert spark.read.parquet(str(tmp_path / "quarantine")).count() == 6
    sent = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines() if x.strip()]
    assert [e["eventType"] for e in sent] == ["START", "FAIL"] and all(validation_errors(e) == [] for e in sent)
    requests = [json.loads(p.read_text()) for p in sorted((tmp_path / "catalog").glob("*.json"))]
    proposals = [r["body"]["proposal"] for r in requests if "proposal" in (r["body"] or {})]
    runs = [json.loads(p["aspect"]["value"]) for p in proposals if p["aspectName"] == "assertionRunEvent"]
    assert len(runs) == 16 and {e["runId"] for e in runs} == {run_id}  # as on a classic session (test_check_cli)
    assert "Traceback" not in proc.stderr and KEY not in proc.stderr


def test_dqgov_check_remote_refusals_are_one_line(connect_server, tmp_path):
    proc = dqgov("check", str(REPO / "contracts" / "orders.yaml"), "--input", str(DATA / "orders.csv"),
                 "--output", str(tmp_path / "valid"), "--mode", "append", "--remote", connect_server.url,
                 "--lineage", "none", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"dqgov: error: output {tmp_path / 'valid'}: append to a plain parquet path needs a classic Spark session "
        "(Spark Connect has no driver JVM); use format delta (an idempotent append) or mode replace_partitions"]
    unreachable = dqgov("check", str(REPO / "contracts" / "orders.yaml"), "--input", str(DATA / "orders.csv"),
                        "--remote", "sc://127.0.0.1:1", "--lineage", "none", cwd=tmp_path)
    assert unreachable.returncode == 2 and len(unreachable.stderr.strip().splitlines()) == 1
    assert unreachable.stderr.startswith("dqgov: error: --remote sc://127.0.0.1:1: cannot reach the Spark Connect")
    assert not (tmp_path / "valid").exists() and not (tmp_path / "out").exists()


def test_dqgov_mask_on_the_active_connect_session(spark, tmp_path, capsys):
    out = tmp_path / "masked"
    # without --overwrite the write mode is "error" (the Connect client has no "errorifexists")
    code = main(["mask", str(REPO / "contracts" / "customers.yaml"), "--input", str(DATA / "customers.csv"),
                 "--output", str(out), "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == 7 and summary["masked"]["cpf"] == "hmac"
    with open(DATA / "customers.csv") as handle:
        import csv

        raw = {r["cliente_id"]: r["cpf"] for r in csv.DictReader(handle)}
    masked = {r["cliente_id"]: r["cpf"] for r in spark.read.parquet(str(out)).collect()}
    assert masked == {c: hmac.new(KEY.encode(), re.sub(r"\D", "", v).encode(), hashlib.sha256).hexdigest()
                      for c, v in raw.items()}


def test_escaped_connect_errors_are_one_line_exit_2(spark, capsys):
    """A raw PySpark error from a Connect session (here: sparkContext, which Connect lacks) becomes one line."""
    from dq_governance.cli.app import cli

    @cli.command("connect-probe", hidden=True)
    def probe() -> None:
        spark.sparkContext  # noqa: B018 - raises PySparkNotImplementedError / AttributeError on Connect

    try:
        assert main(["connect-probe"]) == 2
    finally:
        cli.commands.pop("connect-probe")
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dqgov: error: not available on this Spark session: ")


def test_metrics_only_writes_report_and_lineage_but_no_outputs(connect_server, tmp_path):
    proc = dqgov("check", str(REPO / "contracts" / "orders.yaml"), "--input", str(DATA / "orders.csv"),
                 "--report", str(tmp_path / "report"), "--lineage", f"file:{tmp_path / 'events.jsonl'}",
                 "--metrics-only", "--json", "--remote", connect_server.url, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (summary["total_rows"], summary["valid_rows"]) == (7, 1) and summary["outputs"] == []
    assert (tmp_path / "report").is_dir() and (tmp_path / "events.jsonl").is_file()
    assert not (tmp_path / "out").exists()


def test_decorators_on_connect(spark):
    @dq_governance.expect_or_drop("has_customer", "cliente_id IS NOT NULL")
    @dq_governance.expect("valid_amount", "CAST(valor AS DOUBLE) >= 0")
    def orders():
        return spark.read.option("header", True).csv(str(DATA / "orders.csv"))

    rows = orders().collect()
    assert sorted(r["pedido_id"] for r in rows) == ["1", "2", "2", "4", "5", "6"]
    warned = {r.name: r.failed_count for r in orders.last_result.rules}
    assert (warned["has_customer"], warned["valid_amount"]) == (1, 1)

    @dq_governance.contract(str(REPO / "contracts" / "orders.yaml"))
    def seed():
        return spark.read.option("header", True).csv(str(DATA / "orders.csv"))

    with pytest.raises(GateFailedError):
        seed()
    assert (seed.last_result.total_rows, seed.last_result.valid_rows) == (7, 1)




def test_check_stream_per_batch_results_come_from_durable_storage(spark, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for i, lines in enumerate(BATCHES):
        path = folder / f"part-{i}.csv"
        path.write_text(HEADER + "\n".join(lines) + "\n")
        os.utime(path, (1_700_000_000 + i * 100, 1_700_000_000 + i * 100))
    seed = load_contract(REPO / "contracts" / "orders.yaml")
    seed.quality.on_failure = "quarantine"
    seed.quality.minimum_valid_ratio = None
    out = tmp_path / "out"
    events = tmp_path / "events.jsonl"
    stream = (spark.readStream.schema(SCHEMA).option("header", True).option("maxFilesPerTrigger", 1)
              .csv(str(folder)))
    handle = dq_governance.check_stream(
        stream, seed, target=str(out / "valid"), quarantine=str(out / "quarantine"), report=str(out / "report"),
        checkpoint=str(out / "checkpoint"), key_table=str(out / "keys"), lineage=f"file:{events}", mask=False,
        trigger={"availableNow": True})
    handle.await_termination(600)
    # the batches ran in the server's Python worker: the client reads their entries back
    assert handle.recorded == []
    assert [(b["batch_id"], b["total_rows"], b["valid_rows"], b["invalid_rows"]) for b in handle.batches] == [
        (0, 3, 1, 2), (1, 3, 1, 2), (2, 3, 2, 1)]
    valid = sorted((int(r["pedido_id"]), int(r["_dq_batch_id"])) for r in
                   spark.read.parquet(str(out / "valid")).collect())
    assert valid == [(1, 0), (7, 1), (8, 2), (9, 2)]
    assert spark.read.parquet(str(out / "quarantine")).count() == 5
    # a replay of a committed batch is skipped, recorded durably too
    replay = spark.read.schema(SCHEMA).option("header", True).csv(str(folder / "part-1.csv"))
    handle.process_batch(replay, 1)
    assert handle.batches[-1] == {"batch_id": 1, "skipped": True}
    handle.stop()
    sent = [json.loads(x) for x in events.read_text().splitlines() if x.strip()]
    assert [(e["eventType"], e["run"]["facets"].get("dqgov_microBatch", {}).get("batchId")) for e in sent] == [
        ("RUNNING", 0), ("RUNNING", 1), ("RUNNING", 2), ("COMPLETE", None)]
    # the dqgov_microBatch facet's schema is docs/facets/MicroBatchRunFacet.json, which lineage_schema's
    # registry does not load: checked against that file's required keys, as tests/test_streaming.py does
    assert all([x for x in validation_errors(e) if not x.startswith("run.dqgov_microBatch:")] == [] for e in sent)
    schema = json.loads((REPO / "docs" / "facets" / "MicroBatchRunFacet.json").read_text())
    facet = sent[2]["run"]["facets"]["dqgov_microBatch"]
    assert set(schema["required"]) <= set(facet) and (facet["totalRows"], facet["validRows"]) == (3, 2)


def test_check_stream_blocked_batch_stops_the_query_on_connect(spark, tmp_path):
    """The server's worker raises on a blocked batch: the query fails uncommitted and stop() emits FAIL."""

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "part-0.csv").write_text(HEADER + "\n".join(BATCHES[0]) + "\n")
    seed = load_contract(REPO / "contracts" / "orders.yaml")
    seed.quality.on_failure = "fail"
    seed.quality.minimum_valid_ratio = None
    out = tmp_path / "out"
    events = tmp_path / "events.jsonl"
    stream = spark.readStream.schema(SCHEMA).option("header", True).csv(str(folder))
    handle = dq_governance.check_stream(
        stream, seed, target=str(out / "valid"), quarantine=str(out / "quarantine"),
        checkpoint=str(out / "checkpoint"), lineage=f"file:{events}", mask=False, trigger={"availableNow": True})
    with pytest.raises(GateFailedError, match="micro-batch 0 blocked by the quality gate"):
        handle.await_termination(600)
    handle.stop()
    assert [(b["batch_id"], b["valid_rows"], b["published"]) for b in handle.batches] == [(0, 1, False)]
    assert not (out / "valid").exists() and not (out / "quarantine").exists()
    assert not (out / "checkpoint" / "commits" / "0").exists()
    sent = [json.loads(x) for x in events.read_text().splitlines() if x.strip()]
    assert [e["eventType"] for e in sent] == ["RUNNING", "FAIL"]
    assert "micro-batch 0 blocked by the quality gate" in sent[1]["run"]["facets"]["errorMessage"]["message"]

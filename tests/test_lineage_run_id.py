"""The OpenLineage runId of a run whose run id is not a UUID (Airflow's `scheduled__…`): a documented uuid5 of
pipeline and run id, the same for every attempt, with the run id itself in the run's `tags` facet."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path

import pytest

from dq_governance.api import run
from dq_governance.cli import main
from dq_governance.contracts.load import load_contract
from dq_governance.lineage import emit as E
from dq_governance.lineage.graph import LineageGraph
from lineage_schema import validation_errors

REPO = Path(__file__).resolve().parent.parent
SALES_CSV = str(REPO / "examples" / "data" / "sales.csv")
SALES = str(REPO / "contracts" / "sales.yaml")
AIRFLOW_RUN_ID = "scheduled__2026-01-01T00:00:00+00:00"
#: the namespace as documented (README, emit.RUN_ID_NAMESPACE), written out: a changed constant must fail here
DOCUMENTED_NAMESPACE = uuid.UUID("5875cc1a-1356-486e-ad3a-892693080c43")


def expected_run_id(pipeline: str, run_id: str) -> str:
    """uuid5(namespace, pipeline + newline + run id), computed here, independently of emit.py."""
    return str(uuid.uuid5(DOCUMENTED_NAMESPACE, f"{pipeline}\n{run_id}"))


def read_events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def run_tags(event: dict) -> list[dict]:
    """Our tags of the run (the OpenLineage client adds its own, `openlineage_client_version`)."""
    return [tag for tag in event["run"]["facets"]["tags"]["tags"] if tag.get("source") == "DQGOV"]


@pytest.fixture()
def clean_env(monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", "run-id-test-masking-key")
    for name in ("OPENLINEAGE_PARENT_ID", "OPENLINEAGE_ROOT_PARENT_ID", "OPENLINEAGE_API_KEY",
                 "OPENLINEAGE_NAMESPACE"):
        monkeypatch.delenv(name, raising=False)


def test_a_uuid_run_id_is_the_openlineage_run_id_as_is(clean_env, tmp_path):
    """runId == run id is a regression guard (the old code passed it too); the run id in `tags` is new."""
    run_id = "6f1c9a8e-2b1d-4c53-9a0e-1f2d3c4b5a69"
    path = tmp_path / "events.jsonl"
    emitter = E.build_emitter(f"file:{path}", load_contract(SALES), run_id=run_id, pipeline="sales-daily")
    emitter.start()
    (event,) = read_events(path)
    assert event["run"]["runId"] == run_id
    assert run_tags(event) == [{"key": "run_id", "value": run_id, "source": "DQGOV"}]
    assert E.openlineage_run_id("sales-daily", run_id.upper()) == run_id  # a UUID in any spelling: canonical


@pytest.mark.spark
def test_a_non_uuid_run_id_emits_start_and_complete_under_its_uuid5_and_a_retry_reuses_it(spark, clean_env, tmp_path):
    df = spark.read.option("header", True).csv(SALES_CSV)
    path = tmp_path / "events.jsonl"
    outs = {"target": str(tmp_path / "target"), "quarantine": str(tmp_path / "quarantine"),
            "lineage": f"file:{path}", "lineage_strict": True, "run_id": AIRFLOW_RUN_ID, "pipeline": "sales-daily"}
    first = run(df, SALES, **outs)
    assert (first.run_id, first.published, first.status) == (AIRFLOW_RUN_ID, True, "warned")
    expected = expected_run_id("sales-daily", AIRFLOW_RUN_ID)
    events = read_events(path)
    assert [(e["eventType"], e["run"]["runId"]) for e in events] == [("START", expected), ("COMPLETE", expected)]
    assert all(run_tags(e) == [{"key": "run_id", "value": AIRFLOW_RUN_ID, "source": "DQGOV"}] for e in events)
    assert all(validation_errors(e) == [] for e in events)

    run(df, SALES, **outs)  # the retry: the same pipeline and run id
    events = read_events(path)
    assert [(e["eventType"], e["run"]["runId"]) for e in events] == [
        ("START", expected), ("COMPLETE", expected), ("START", expected), ("COMPLETE", expected)]

    # the lineage store keys runs by runId: both attempts are one run
    with LineageGraph(tmp_path / "lineage.db") as graph:
        graph.ingest_file(path)
        assert graph.run(expected)["state"] == "COMPLETE"
    with sqlite3.connect(tmp_path / "lineage.db") as db:
        assert db.execute("SELECT run_id FROM runs").fetchall() == [(expected,)]


@pytest.mark.spark
def test_dqgov_check_takes_a_non_uuid_run_id_as_run_does(spark, clean_env, tmp_path, capsys):
    events = tmp_path / "events.jsonl"
    code = main(["check", SALES, "--input", SALES_CSV, "--output", str(tmp_path / "valid"),
                 "--quarantine", str(tmp_path / "quarantine"), "--report", str(tmp_path / "report"),
                 "--lineage", f"file:{events}", "--run-id", AIRFLOW_RUN_ID, "--pipeline", "sales-daily", "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert (code, summary["run_id"]) == (0, AIRFLOW_RUN_ID)
    expected = expected_run_id("sales-daily", AIRFLOW_RUN_ID)
    assert [(e["eventType"], e["run"]["runId"]) for e in read_events(events)
            if e["job"]["name"].endswith(".contract_check")] == [("START", expected), ("COMPLETE", expected)]
    assert sorted(r["_dq_run_id"] for r in spark.read.parquet(str(tmp_path / "quarantine"))
                  .select("_dq_run_id").distinct().collect()) == [AIRFLOW_RUN_ID]


def test_dqgov_check_refuses_an_invalid_run_id_in_one_line(clean_env, tmp_path, capsys):
    code = main(["check", SALES, "--input", SALES_CSV, "--output", str(tmp_path / "valid"),
                 "--run-id", "../escape"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err == ("dqgov: error: --run-id: run id '../escape': use 1-128 characters, letters and digits "
                            "first, then also . _ : + @ - (it names the run's staging directory and its quarantine "
                            "and report partitions)\n")
    assert not (tmp_path / "valid").exists()


@pytest.mark.parametrize("key", ["RUN_ID", "Run_Id"])
def test_a_user_run_tag_named_run_id_is_refused_before_it_replaces_ours(monkeypatch, key):
    """The OpenLineage client lets a user run tag replace an integration's tag of the same key, case-blind."""
    monkeypatch.setenv(f"OPENLINEAGE__TAGS__RUN__{key}", "mine")
    with pytest.raises(Exception, match=r"^OpenLineage run tag 'run_id': dq-governance sets it to the run id; "
                                        r"name your tag otherwise$") as raised:
        E.build_emitter("console", load_contract(SALES), run_id=AIRFLOW_RUN_ID, pipeline="sales")
    assert type(raised.value).__name__ == "ConfigError"
    monkeypatch.delenv(f"OPENLINEAGE__TAGS__RUN__{key}")
    monkeypatch.setenv("OPENLINEAGE__TAGS__RUN__TEAM", "sales")  # any other tag is the user's to add
    assert E.build_emitter("console", load_contract(SALES), run_id=AIRFLOW_RUN_ID, pipeline="sales") is not None

"""The real OpenLineage Spark listener and our check-run events in one file transport, linked.

Runs tests/listener_job.py in a subprocess (its own JVM with the listener on spark.extraListeners).
Set DQGOV_RECORD_FIXTURES=1 to refresh tests/fixtures/listener_events.jsonl from the recorded run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dq_governance.lineage import facets as F
from dq_governance.lineage.spark import find_listener_jar
from lineage_schema import validation_errors

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "listener_events.jsonl"
CSV = str(REPO / "examples" / "data" / "orders.csv")
MASKING_KEY = "it-masking-key-5b2d0e"  # made up; asserted absent from every event

pytestmark = [pytest.mark.spark, pytest.mark.integration]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    if find_listener_jar() is None:
        pytest.fail("OpenLineage Spark listener jar missing: run `make listener-jar`")
    work = tmp_path_factory.mktemp("listener")
    events = work / "lineage.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE")}
    env["DQGOV_MASKING_KEY"] = MASKING_KEY
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests"), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "listener_job.py"), str(events), str(work)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    lines = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    if os.environ.get("DQGOV_RECORD_FIXTURES") == "1":
        shutil.copyfile(events, FIXTURE)
    return summary, lines, events.read_text()


def ours(lines):
    return [e for e in lines if e["producer"] == F.PRODUCER]


def listeners(lines):
    return [e for e in lines if "/integration/spark" in e["producer"]]


def test_listener_application_run_is_ours(recorded):
    summary, lines, _ = recorded
    app_id = summary["application_run_id"]
    app_events = [e for e in listeners(lines) if e["run"]["runId"] == app_id]
    assert {e["eventType"] for e in app_events} == {"START", "COMPLETE"}
    assert {(e["job"]["namespace"], e["job"]["name"]) for e in app_events} == {("dqgov", "dqgov_listener_it")}
    # every Spark action of the application hangs under it
    actions = [e for e in listeners(lines) if e["run"]["runId"] != app_id]
    assert actions and all(e["run"]["facets"]["parent"]["run"]["runId"] == app_id for e in actions)


def test_our_complete_and_fail_events_have_the_application_as_parent(recorded):
    summary, lines, _ = recorded
    app_id = summary["application_run_id"]
    by_run = {}
    for event in ours(lines):
        by_run.setdefault(event["run"]["runId"], []).append(event["eventType"])
    assert by_run == {summary["complete_run_id"]: ["START", "COMPLETE"], summary["fail_run_id"]: ["START", "FAIL"]}
    for event in ours(lines):
        parent = event["run"]["facets"]["parent"]
        assert parent["run"]["runId"] == app_id
        assert (parent["job"]["namespace"], parent["job"]["name"]) == ("dqgov", "dqgov_listener_it")
    assert summary["complete_published"] is True and summary["fail_published"] is False


def test_both_sides_name_the_input_dataset_the_same(recorded):
    _, lines, _ = recorded
    spark_inputs = {(d["namespace"], d["name"]) for e in listeners(lines) for d in e.get("inputs", [])}
    our_inputs = {(d["namespace"], d["name"]) for e in ours(lines) for d in e["inputs"]}
    assert our_inputs == {("file", CSV)}
    assert ("file", CSV) in spark_inputs


def test_listener_sees_the_input_behind_the_published_outputs(recorded):
    """The valid and quarantine writes still trace back to the CSV (the split keeps rows in the cache here)."""
    summary, lines, _ = recorded
    work = summary["work"]
    writes = {}
    for event in listeners(lines):
        if event["eventType"] != "COMPLETE":
            continue
        for output in event.get("outputs") or []:
            if output["name"] in (f"{work}/target", f"{work}/quarantine"):
                writes.setdefault(output["name"], set()).update(d["name"] for d in event.get("inputs") or [])
    assert writes == {f"{work}/target": {CSV}, f"{work}/quarantine": {CSV}}


def test_listener_column_lineage_of_the_valid_output_is_column_to_column(recorded):
    """With a listener, `auto` keeps the split one cache column per field, so each published column comes
    from its own input column only (through the packed struct every column would come from all six)."""
    summary, lines, _ = recorded
    target = f"{summary['work']}/target"
    lineage = [(o.get("facets") or {}).get("columnLineage") for e in listeners(lines)
               for o in e.get("outputs") or [] if o["name"] == target]
    fields = [spec for facet in lineage if facet for spec in facet["fields"].items()]
    assert {name for name, _spec in fields} == {"pedido_id", "cliente_id", "status", "valor", "data_pedido", "email"}
    for name, spec in fields:
        assert {(i["name"], i["field"]) for i in spec["inputFields"]} == {(CSV, name)}, name


def test_our_complete_event_carries_the_seed_lab_facets(recorded):
    summary, lines, _ = recorded
    [complete] = [e for e in ours(lines) if e["eventType"] == "COMPLETE"]
    dataset = complete["inputs"][0]
    assertions = {a["name"]: a for a in dataset["inputFacets"]["dataQualityAssertions"]["assertions"]}
    unique = assertions["pedido_id_unique"]
    assert (unique["assertion"], unique["column"], unique["success"], unique["actual"]) == (
        "unique", "pedido_id", False, "2")
    assert {n: a["actual"] for n, a in assertions.items() if not a["success"]} == {
        "cliente_id_not_null": "1", "status_allowed_values": "1", "valor_range": "1", "data_pedido_type": "1",
        "pedido_id_unique": "2"}
    assert dataset["inputFacets"]["dataQualityMetrics"]["rowCount"] == 7
    contract = dataset["facets"][F.CONTRACT_FACET_KEY]
    assert (contract["name"], contract["version"], contract["valid_rows"], contract["invalid_rows"]) == (
        "orders", "1.0.0", 1, 6)
    assert contract["quality_score"] == pytest.approx(1 / 7)
    assert contract["enforcement"] == "advisory"
    assert [o["name"] for o in dataset["facets"]["ownership"]["owners"]] == ["team:sales-data-team", "user:maria.silva"]
    tags = {(t["key"], t["value"], t.get("field")) for t in dataset["facets"]["tags"]["tags"]}
    assert {("pii", "true", "email"), ("classification", "restricted", "email")} <= tags
    rows = {o["outputFacets"]["outputStatistics"]["rowCount"] for o in complete["outputs"]}
    assert rows == {1, 6}
    [fail] = [e for e in ours(lines) if e["eventType"] == "FAIL"]
    assert "quality gate blocked publication" in fail["run"]["facets"]["errorMessage"]["message"]
    assert fail["inputs"][0]["facets"][F.CONTRACT_FACET_KEY]["enforcement"] == "blocking"


def test_our_events_validate_and_hold_no_pii_or_key(recorded):
    _, lines, text = recorded
    for event in ours(lines):
        assert validation_errors(event) == []
    assert MASKING_KEY not in text
    for raw in ("ana@example.com", "bruno@example.com", "fabio@example.com"):
        assert raw not in json.dumps(ours(lines))


def test_dqgov_check_cli_links_listener_orchestrator_and_our_events(tmp_path):
    """`dqgov check` with an orchestrator parent: app run -> parent orchestrator; our run -> app, root orchestrator."""
    import uuid

    if find_listener_jar() is None:
        pytest.fail("OpenLineage Spark listener jar missing: run `make listener-jar`")
    events = tmp_path / "events.jsonl"
    orchestrator = str(uuid.uuid4())
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE")}
    env["DQGOV_MASKING_KEY"] = MASKING_KEY
    args = ["check", "contracts/orders.yaml", "--input", CSV, "--output", str(tmp_path / "valid"),
            "--quarantine", str(tmp_path / "quarantine"), "--report", str(tmp_path / "report"),
            "--lineage", f"file:{events}", "--parent-run-id", orchestrator, "--parent-job", "airflow/orders_dag.check",
            "--json"]
    code = f"import sys; from dq_governance.cli import main; sys.exit(main({args!r}))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1, proc.stderr[-4000:]  # the seed gate blocks
    lines = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    [app_start] = [e for e in listeners(lines) if e["eventType"] == "START" and e["job"]["name"] == "dqgov_check_orders"]
    app_parent = app_start["run"]["facets"]["parent"]
    assert (app_parent["run"]["runId"], app_parent["job"]["namespace"], app_parent["job"]["name"]) == (
        orchestrator, "airflow", "orders_dag.check")
    ours_ = ours(lines)
    assert [e["eventType"] for e in ours_] == ["START", "FAIL"]
    for event in ours_:
        parent = event["run"]["facets"]["parent"]
        assert parent["run"]["runId"] == app_start["run"]["runId"]
        assert parent["root"]["run"]["runId"] == orchestrator
        assert validation_errors(event) == []
    assert ("file", CSV) in {(d["namespace"], d["name"]) for e in listeners(lines) for d in e.get("inputs", [])}
    assert json.loads(proc.stdout.strip().splitlines()[-1])["invalid_rows"] == 6

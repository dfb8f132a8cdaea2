"""The lineage store: ingest rules (idempotent, out-of-order, malformed events) and facets kept per dataset."""

from __future__ import annotations

import json
import logging
import sqlite3

import pytest
from graph_events import NS, column_lineage, ds, facet, fixture_events, owners, run_event

from dq_governance.cli import main
from dq_governance.lineage.graph import LineageGraph, parse_time


@pytest.fixture()
def graph(tmp_path):
    with LineageGraph(tmp_path / "lineage.db") as g:
        yield g


def write_jsonl(path, events):
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def test_store_is_sqlite_in_wal_mode(tmp_path):
    LineageGraph(tmp_path / "x" / "l.db").close()
    con = sqlite3.connect(tmp_path / "x" / "l.db")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_fixture_counts(graph):
    stats = graph.ingest_events((f"e{i}", e) for i, e in enumerate(fixture_events()))
    assert (stats.read, stats.stored, stats.duplicates, stats.skipped) == (10, 10, 0, 0)
    counts = graph.counts()
    # 10 datasets: raw, stg a/b, mart, report, export, customer_analytics, cyc a/b/c
    assert counts["datasets"] == 10
    assert counts["jobs"] == 10
    # field edges: stage_a 2, stage_b 2, join 3, report 1, export 1, loops 3
    assert counts["field_edges"] == 12
    assert counts["dataset_deps"] == 1  # raw.orders.status filters stg.orders_b as a whole
    assert counts["io"] == 20


def test_ingest_is_idempotent(graph, tmp_path):
    path = write_jsonl(tmp_path / "events.jsonl", fixture_events())
    first = graph.ingest_file(path)
    before = graph.counts()
    second = graph.ingest_file(path)
    assert (first.stored, second.stored, second.duplicates) == (10, 0, 10)
    assert graph.counts() == before


def test_out_of_order_complete_before_start(graph):
    run_id = "0190f0aa-0000-7000-8000-000000000001"
    start = run_event("j", [ds("in")], [ds("out")], event_type="START", run_id=run_id, time="2026-11-01T10:00:00Z")
    complete = run_event("j", [ds("in")], [ds("out")], event_type="COMPLETE", run_id=run_id,
                         time="2026-11-01T10:05:00.123456789Z")
    graph.ingest_events([("c", complete), ("s", start)])
    run = graph.run(run_id)
    assert run["state"] == "COMPLETE"
    assert run["start_time"] == parse_time("2026-11-01T10:00:00Z")
    assert run["end_time"] == pytest.approx(parse_time("2026-11-01T10:05:00.123456Z"))
    # an OTHER event after the fact never changes the state
    other = run_event("j", [], [], event_type="OTHER", run_id=run_id, time="2026-11-01T11:00:00Z")
    graph.ingest_event(other)
    assert graph.run(run_id)["state"] == "COMPLETE"


def test_fail_after_running_in_either_order(graph):
    run_id = "0190f0aa-0000-7000-8000-000000000002"
    running = run_event("j", [], [], event_type="RUNNING", run_id=run_id, time="2026-11-01T10:01:00Z")
    fail = run_event("j", [], [], event_type="FAIL", run_id=run_id, time="2026-11-01T10:02:00Z")
    graph.ingest_events([("f", fail), ("r", running)])
    assert graph.run(run_id)["state"] == "FAIL"


def test_malformed_events_are_skipped_counted_and_logged(graph, tmp_path, caplog):
    good = fixture_events()[:2]
    no_job_name = run_event("x", [], [])
    del no_job_name["job"]["name"]
    bad_input = run_event("y", [{"namespace": NS}], [])
    bad_time = run_event("z", [], [])
    bad_time["eventTime"] = "yesterday"
    bad_lineage = run_event("w", [], [ds("o", {"columnLineage": {"fields": {"a": {"inputFields": [{"name": "t"}]}}}})])
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([
        json.dumps(good[0]), "{not json", json.dumps(no_job_name), "", json.dumps(bad_input), json.dumps(bad_time),
        json.dumps(bad_lineage), "[1, 2]", json.dumps(good[1]),
    ]) + "\n")
    with caplog.at_level(logging.WARNING, logger="dq_governance.lineage.graph"):
        stats = graph.ingest_file(path)
    assert (stats.read, stats.stored, stats.skipped) == (8, 2, 6)
    assert stats.errors == [
        f"{path}:2: invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        f"{path}:3: job.name: missing or not a non-empty string",
        f"{path}:5: inputs[0].name: missing or not a non-empty string",
        f"{path}:6: eventTime: not ISO-8601: 'yesterday'",
        f"{path}:7: outputs[0].facets.columnLineage.fields.a.inputFields[0].namespace: missing or not a non-empty string",
        f"{path}:8: event: not a JSON object",
    ]
    assert stats.reasons["invalid JSON"] == 1
    assert len([r for r in caplog.records if "skipped lineage event" in r.getMessage()]) == 6
    assert graph.counts()["jobs"] == 2  # the two good events still landed


def test_latest_facets_win_by_event_time_not_arrival(graph):
    new = run_event("j", [], [ds("d", {"ownership": owners("team:new")})], time="2026-11-02T00:00:00Z")
    old = run_event("j", [], [ds("d", {"ownership": owners("team:old")})], time="2026-11-01T00:00:00Z")
    graph.ingest_events([("new", new), ("old", old)])
    dataset_id = graph.find_datasets("d")[0][0]
    assert graph.dataset(dataset_id)["owners"] == ["team:new"]


def test_quality_contract_tags_and_pii_per_dataset(graph):
    graph.ingest_events((f"e{i}", e) for i, e in enumerate(fixture_events()))
    raw = graph.dataset(graph.find_datasets("raw.orders")[0][0])
    assert raw["owners"] == ["team:sales-data-team"]
    assert raw["quality_status"] == "failed"  # from the dqgov_dataContract facet
    assert raw["contract"] == {"name": "orders", "version": "1.0.0", "standard": "native", "status": "failed"}
    assert raw["tags"] == [{"key": "classification", "value": "internal"}]
    fields = {f["name"]: f for f in graph.fields_of(raw["id"])}
    assert sorted(fields) == ["cliente_id", "email", "id", "status", "valor"]
    assert [n for n, f in fields.items() if f["pii"]] == ["email"]
    analytics = graph.dataset(graph.find_datasets("analytics.customer_analytics")[0][0])
    assert analytics["quality_status"] == "passed"  # from dataQualityAssertions input facet


def test_quality_status_from_assertions_warn_and_fail(graph):
    def check(name, assertions, time):
        return run_event("check", [ds(name, inputFacets={"dataQualityAssertions": facet(
            "DataQualityAssertionsDatasetFacet", "1-1-0", assertions=assertions)})], [], time=time)

    graph.ingest_events([
        ("w", check("warned_ds", [{"assertion": "x", "success": False, "severity": "warn"},
                                  {"assertion": "y", "success": True}], "2026-11-01T00:00:00Z")),
        ("f", check("failed_ds", [{"assertion": "x", "success": False, "severity": "warn"},
                                  {"assertion": "y", "success": False}], "2026-11-01T00:00:00Z")),
    ])
    statuses = {n: graph.dataset(graph.find_datasets(n)[0][0])["quality_status"] for n in ("warned_ds", "failed_ds")}
    assert statuses == {"warned_ds": "warned", "failed_ds": "failed"}


def test_column_edges_keep_type_and_subtype(graph):
    graph.ingest_events((f"e{i}", e) for i, e in enumerate(fixture_events()))
    raw_id = graph.find_datasets("raw.orders")[0][0]
    valor = graph.find_field(raw_id, "valor")
    [(dst, dst_ds, job, kind, sub)] = graph.field_out(valor)
    assert graph.dataset(dst_ds)["name"] == "stg.orders_b"
    assert graph.field(dst)[1] == "valor_total"
    assert graph.job(job)["name"] == "j_stage_b"
    assert (kind, sub) == ("DIRECT", "AGGREGATION")
    status = graph.find_field(raw_id, "status")
    [(dst_ds, job, kind, sub)] = graph.dataset_deps_out(status)
    assert (graph.dataset(dst_ds)["name"], kind, sub) == ("stg.orders_b", "INDIRECT", "FILTER")


def test_dataset_event_and_json_list_file(graph, tmp_path):
    dataset_event = {"eventTime": "2026-11-01T00:00:00Z", "producer": "p", "schemaURL": "s",
                     "dataset": ds("standalone", {"ownership": owners("team:x")})}
    path = tmp_path / "events.json"
    path.write_text(json.dumps([dataset_event, fixture_events()[0]]))
    stats = graph.ingest_file(path)
    assert stats.stored == 2
    assert graph.dataset(graph.find_datasets("standalone")[0][0])["owners"] == ["team:x"]


def test_job_without_column_lineage_is_marked(graph):
    graph.ingest_events((f"e{i}", e) for i, e in enumerate(fixture_events()))
    mart = graph.find_datasets("mart.orders_joined")[0][0]
    rows = {(graph.job(j)["name"], graph.dataset(o)["name"], bool(c)) for j, o, c in graph.downstream_jobs(mart)}
    assert rows == {("j_report", "report.revenue", True), ("j_customer", "analytics.customer_analytics", False)}


def test_cli_ingest_events_and_contract(tmp_path, capsys, repo):
    events = write_jsonl(tmp_path / "e.jsonl", [
        run_event("build_customer_analytics", [ds("curated.orders")], [ds("customer_analytics", {
            "columnLineage": column_lineage({"cliente_id": [("curated.orders", "cliente_id", "DIRECT", "IDENTITY")]}),
        })])])
    (tmp_path / "bad.jsonl").write_text("nope\n")
    db = tmp_path / "state" / "lineage.db"
    code = main(["lineage", "ingest", str(events), str(tmp_path / "bad.jsonl"), str(repo / "contracts/orders.yaml"),
                 "--db", str(db)])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.strip() == (f"ingested 2 event(s) into {db}: 1 stored, 0 duplicate(s), 1 skipped; "
                           "1 contract(s) attached")
    assert f"bad.jsonl:1: invalid JSON" in err
    with LineageGraph(db) as g:
        orders = g.dataset(g.find_datasets("curated.orders", "file")[0][0])
        assert orders["owners"] == ["sales-data-team", "maria.silva"]
        assert orders["contract"]["name"] == "orders" and orders["contract"]["version"] == "1.0.0"
        assert [f["name"] for f in g.fields_of(orders["id"]) if f["pii"]] == ["email"]


def test_cli_ingest_missing_file_is_a_clean_error(tmp_path, capsys):
    code = main(["lineage", "ingest", str(tmp_path / "nope.jsonl"), "--db", str(tmp_path / "l.db")])
    assert code == 2
    assert "nope.jsonl: cannot read lineage file" in capsys.readouterr().err


def test_unknown_contract_status_is_not_a_quality_status(graph):
    event = run_event("j", [], [ds("d", {"dqgov_dataContract": {"name": "x", "status": "<b>green</b>"}})])
    graph.ingest_event(event)
    assert graph.dataset(graph.find_datasets("d")[0][0])["quality_status"] is None


def test_odd_facet_shapes_never_stop_the_ingest(graph):
    odd = run_event("odd", [ds("in", {"ownership": ["team:x"], "tags": "pii", "schema": {"fields": {"a": 1}},
                                      "documentation": "text"}, inputFacets={"dataQualityAssertions": []})],
                    [ds("out", {"columnLineage": column_lineage({"a": [("in", "a", "DIRECT", "IDENTITY")]})})],
                    job_facets={"ownership": "user:y"})
    odd["run"]["facets"] = {"parent": "not-an-object"}
    stats = graph.ingest_events([("odd", odd), ("next", fixture_events()[0])])
    assert (stats.stored, stats.skipped) == (2, 0)
    in_id = graph.find_datasets("in")[0][0]
    assert graph.dataset(in_id)["owners"] == [] and graph.dataset(in_id)["quality_status"] is None
    assert [f["name"] for f in graph.fields_of(in_id)] == ["a"]  # from the column lineage


def test_two_writers_at_once(tmp_path):
    import threading

    path = tmp_path / "shared.db"
    LineageGraph(path).close()
    batches = [[(f"a{i}", run_event(f"a{i}", [ds("src")], [ds(f"a{i}")])) for i in range(300)],
               [(f"b{i}", run_event(f"b{i}", [ds("src")], [ds(f"b{i}")])) for i in range(300)]]
    results = []

    def write(events):
        with LineageGraph(path) as g:
            results.append(g.ingest_events(events, batch=50).stored)

    threads = [threading.Thread(target=write, args=(b,)) for b in batches]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == [300, 300]
    with LineageGraph(path) as g:
        assert g.counts()["datasets"] == 601 and g.counts()["io"] == 1200

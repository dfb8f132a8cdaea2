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
    bad_run_id = run_event("v", [], [])
    bad_run_id["run"]["runId"] = "spark-app-0001"  # the spec's runId is a UUID
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([
        json.dumps(good[0]), "{not json", json.dumps(no_job_name), "", json.dumps(bad_input), json.dumps(bad_time),
        json.dumps(bad_lineage), "[1, 2]", json.dumps(bad_run_id), json.dumps(good[1]),
    ]) + "\n")
    with caplog.at_level(logging.DEBUG, logger="dq_governance.lineage.graph"):
        stats = graph.ingest_file(path)
    assert (stats.read, stats.stored, stats.skipped) == (9, 2, 7)
    assert stats.errors == [
        f"{path}:2: invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        f"{path}:3: job.name: missing or not a non-empty string",
        f"{path}:5: inputs[0].name: missing or not a non-empty string",
        f"{path}:6: eventTime: not ISO-8601: 'yesterday'",
        f"{path}:7: outputs[0].facets.columnLineage.fields.a.inputFields[0].namespace: missing or not a non-empty string",
        f"{path}:8: event: not a JSON object",
        f"{path}:9: run.runId: 'spark-app-0001' is not a UUID",
    ]
    assert stats.reasons["invalid JSON"] == 1
    assert len([r for r in caplog.records if "skipped lineage event" in r.getMessage()]) == 7
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
    assert out.splitlines() == [
        f"ingested 2 event(s) into {db}: 1 stored, 0 duplicate(s), 1 skipped; 1 contract(s) attached",
        f"  {repo / 'contracts/orders.yaml'}: contract orders 1.0.0 -> file:curated.orders"]  # the event's node
    # each skipped line once: the store logs it at debug only, the command prints it
    assert err.splitlines() == [
        f"skipped {tmp_path / 'bad.jsonl'}:1: invalid JSON: Expecting value: line 1 column 1 (char 0)"]
    with LineageGraph(db) as g:
        orders = g.dataset(g.find_datasets("curated.orders", "file")[0][0])
        assert orders["owners"] == ["sales-data-team", "maria.silva"]
        assert orders["contract"]["name"] == "orders" and orders["contract"]["version"] == "1.0.0"
        assert [f["name"] for f in g.fields_of(orders["id"]) if f["pii"]] == ["email"]


def test_cli_ingest_prints_the_first_hundred_skips_and_counts_the_rest(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nope\n" * 100 + "[1]\n" * 3)
    assert main(["lineage", "ingest", str(bad), "--db", str(tmp_path / "l.db")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[:100] == [f"skipped {bad}:{n}: invalid JSON: Expecting value: line 1 column 1 (char 0)"
                         for n in range(1, 101)]
    assert err[100:] == ["skipped 3 more; all 103 by reason: invalid JSON 100, event 3"]


def test_a_line_with_a_lone_surrogate_or_deep_nesting_is_skipped_and_the_rest_stored(tmp_path):
    good = fixture_events()[:2]
    lone = json.dumps({**fixture_events()[2], "job": {**fixture_events()[2]["job"], "name": "job\ud800"}})
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join([json.dumps(good[0]), lone, "[" * 5000 + "]" * 5000, json.dumps(good[1])]) + "\n")
    with LineageGraph(tmp_path / "l.db") as graph:
        stats = graph.ingest_file(path)
    assert (stats.read, stats.stored, stats.skipped) == (4, 2, 2)
    assert stats.errors == [
        f"{path}:2: string: holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which is not text",
        f"{path}:3: invalid JSON: nested too deeply"]


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


# --------------------------------------------------------------------------- the bulk path
# JSONL lines are hashed as read and checked against the store one chunk at a time (an IN query), parsed
# only when new; rows are written per transaction with multi-row INSERTs; runs are upserts in arrival order;
# new fields are numbered in memory; id caches are two bounded generations. These tests pin each of those.

import math  # noqa: E402
import random  # noqa: E402

import dq_governance.lineage.graph as graph_module  # noqa: E402
from dq_governance.errors import InputDataError  # noqa: E402
from dq_governance.lineage.graph import MalformedEvent, _parse_line  # noqa: E402
from graph_events import schema  # noqa: E402


def chain_events(count):
    """d0 -> d1 -> ... -> d<count>: x <- prev.x, y <- prev.y (and y <- d<i//2>.x once that is not prev)."""
    events = []
    for i in range(1, count + 1):
        lineage = {"x": [(f"d{i - 1}", "x", "DIRECT", "IDENTITY")], "y": [(f"d{i - 1}", "y", "DIRECT", "IDENTITY")]}
        if i // 2 != i - 1:
            lineage["y"].append((f"d{i // 2}", "x", "INDIRECT", "JOIN"))
        events.append(run_event(f"j{i}", [ds(f"d{i - 1}")], [ds(f"d{i}", {
            "schema": schema("x", "y"), "columnLineage": column_lineage(lineage)})]))
    return events


def natural_edges(g):
    """Every column edge by names, not ids."""
    return sorted(g.db.execute(
        "SELECT sd.name, s.name, dd.name, d.name, j.name, e.type, e.subtype FROM field_edges e "
        "JOIN fields s ON s.id = e.src JOIN datasets sd ON sd.id = s.dataset_id "
        "JOIN fields d ON d.id = e.dst JOIN datasets dd ON dd.id = d.dataset_id JOIN jobs j ON j.id = e.job_id"))


def table_dump(g):
    """Every row of every table (ids included): two ingests in the same order must agree on all of it."""
    tables = ("datasets", "fields", "jobs", "runs", "io", "field_edges", "dataset_deps", "column_lineage", "events")
    return {t: sorted(map(tuple, g.db.execute(f"SELECT * FROM {t}"))) for t in tables}


def test_bulk_file_duplicates_within_and_across_chunks_and_transactions(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_module, "_BATCH", 100)  # chunks of 100, one transaction each
    events = chain_events(600)
    # event 0 again right after itself (same chunk), 50 events again 500 lines later (other transactions)
    lines = [events[0], events[0], *events[1:], *events[:50]]
    path = write_jsonl(tmp_path / "dups.jsonl", lines)
    with LineageGraph(tmp_path / "l.db") as g:
        first = g.ingest_file(path)
        counts = g.counts()
        again = g.ingest_file(path)
        assert (first.read, first.stored, first.duplicates, first.skipped) == (651, 600, 51, 0)
        assert (again.read, again.stored, again.duplicates) == (651, 0, 651)
        assert g.counts() == counts
        # 601 datasets x 2 fields; 2 edges per event plus the d<i//2>.x input from event 3 on
        assert (counts["datasets"], counts["fields"], counts["jobs"], counts["events"]) == (601, 1202, 600, 600)
        assert (counts["field_edges"], counts["io"]) == (1200 + 598, 1200)


def test_runs_out_of_order_in_one_bulk_statement(tmp_path):
    """150 runs, their events shuffled into one transaction (multi-row upserts): each run ends as the rules say."""
    events = []
    for k in range(150):
        run_id = f"00000000-0000-4000-8000-{k:012d}"

        def ev(kind, minute, k=k, run_id=run_id):
            return run_event(f"job{k}", [], [], event_type=kind, run_id=run_id, time=f"2026-11-01T10:{minute:02d}:00Z")

        events += [ev("START", 0), ev("RUNNING", 1), ev("OTHER", 30)]
        if k % 3 == 0:
            events.append(ev("COMPLETE", 5))
        elif k % 3 == 1:
            events.append(ev("FAIL", 5))
        if k % 5 == 0:
            events.append(ev("ABORT", 7))
    random.Random(5).shuffle(events)
    for order, name in ((events, "a"), (events[::-1], "b")):
        path = write_jsonl(tmp_path / f"{name}.jsonl", order)
        with LineageGraph(tmp_path / f"{name}.db") as g:
            assert g.ingest_file(path).stored == len(events)
            for k in range(150):
                run = g.run(f"00000000-0000-4000-8000-{k:012d}")
                state = "ABORT" if k % 5 == 0 else ("COMPLETE", "FAIL", "RUNNING")[k % 3]
                minute = {"ABORT": 7, "COMPLETE": 5, "FAIL": 5, "RUNNING": 1}[state]
                end = 7 if k % 5 == 0 else (5 if k % 3 < 2 else None)
                assert run["state"] == state, k
                assert run["start_time"] == parse_time("2026-11-01T10:00:00Z")
                assert run["end_time"] == (None if end is None else parse_time(f"2026-11-01T10:{end:02d}:00Z"))
                assert g.db.execute("SELECT state_time FROM runs WHERE run_id = ?", (run["run_id"],)).fetchone()[0] \
                    == parse_time(f"2026-11-01T10:{minute:02d}:00Z")


def test_new_fields_then_tags_and_retype_in_one_transaction(graph):
    tags = facet("TagsDatasetFacet", tags=[{"key": "pii", "value": "true", "field": "a"}])
    retyped = facet("SchemaDatasetFacet", "1-2-0", fields=[{"name": "a", "type": "int"}, {"name": "c", "type": "string"}])
    stats = graph.ingest_events([
        ("1", run_event("j1", [], [ds("t", {"schema": schema("a", "b")})])),
        ("2", run_event("j2", [], [ds("t", {"tags": tags})])),
        ("3", run_event("j3", [], [ds("t", {"schema": retyped})])),
    ])
    assert stats.stored == 3
    fields = graph.fields_of(graph.find_datasets("t")[0][0])
    assert [(f["name"], f["type"], f["pii"]) for f in fields] == [
        ("a", "int", True), ("b", "string", False), ("c", "string", False)]


def test_bounded_id_caches_give_the_same_graph(tmp_path, monkeypatch):
    path = write_jsonl(tmp_path / "chain.jsonl", chain_events(300))
    with LineageGraph(tmp_path / "unbounded.db") as g:
        g.ingest_file(path)
        expected, counts = natural_edges(g), g.counts()
    monkeypatch.setattr(graph_module, "_CACHE_LIMIT", 8)
    monkeypatch.setattr(graph_module, "_BATCH", 50)
    with LineageGraph(tmp_path / "bounded.db") as g:
        assert g.ingest_file(path).stored == 300
        assert natural_edges(g) == expected and g.counts() == counts
        assert (counts["fields"], counts["field_edges"]) == (602, 600 + 298)
        # a transaction adds at most 50 events x 5 look-ups to the young generation before it rotates
        assert len(g._field_ids) <= 8 + 250 and len(g._field_ids_old) <= 8 + 250
        assert len(g._dataset_ids) + len(g._dataset_ids_old) <= 2 * (8 + 150)


def test_fast_parser_gives_identical_results(tmp_path, monkeypatch):
    # what json.loads accepts and a strict parser may not: NaN, integers past 64 bits
    odd = _parse_line(b'{"a": NaN, "b": 123456789012345678901234567890, "c": "\\u00e9"}')
    assert math.isnan(odd["a"]) and odd["b"] == 123456789012345678901234567890 and odd["c"] == "\u00e9"
    with pytest.raises(MalformedEvent, match=r"^invalid JSON: Expecting property name enclosed in double quotes"):
        _parse_line(b"{not json")
    events = fixture_events() + chain_events(20)
    text = "".join(json.dumps(e) + "\n" for e in events) + "{bad\n"
    (tmp_path / "e.jsonl").write_text(text)
    dumps = []
    for name, fast in (("fast", graph_module._fast_loads), ("stdlib", None)):
        monkeypatch.setattr(graph_module, "_fast_loads", fast)
        with LineageGraph(tmp_path / f"{name}.db") as g:
            stats = g.ingest_file(tmp_path / "e.jsonl")
            assert (stats.stored, stats.skipped) == (30, 1)
            dumps.append(table_dump(g))
    assert dumps[0] == dumps[1]


def test_schema_of_a_known_dataset_from_a_new_connection(tmp_path):
    """Fields stored earlier (schema and column lineage) are found in the store, not created twice."""
    db = tmp_path / "l.db"
    with LineageGraph(db) as g:
        g.ingest_event(run_event("j1", [ds("src")], [ds("t", {"schema": schema("a", "b"), "columnLineage": column_lineage(
            {"a": [("src", "k", "DIRECT", "IDENTITY")]})})]))
    retyped = facet("SchemaDatasetFacet", "1-2-0", fields=[
        {"name": "a", "type": "int"}, {"name": "b", "type": "string"}, {"name": "c", "type": "string"}])
    with LineageGraph(db) as g:  # empty id caches: every field is looked up
        g.ingest_event(run_event("j2", [], [ds("t", {"schema": retyped})]))
        g.ingest_event(run_event("j3", [], [ds("src", {"schema": schema("k", "m")})]))
        assert [(f["name"], f["type"]) for f in g.fields_of(g.find_datasets("t")[0][0])] == [
            ("a", "int"), ("b", "string"), ("c", "string")]
        assert [(f["name"], f["type"]) for f in g.fields_of(g.find_datasets("src")[0][0])] == [
            ("k", "string"), ("m", "string")]
        assert g.counts()["fields"] == 5 and g.counts()["field_edges"] == 1


@pytest.mark.parametrize("text, same_as", [
    ("2026-11-01T10:05:00.9999999Z", "2026-11-01T10:05:00.999999+00:00"),  # digits past 6 are cut, not rounded
    ("2026-11-01T10:05:00.1z", "2026-11-01T10:05:00.100Z"),
    (" 2026-11-01T10:05:00Z ", "2026-11-01T10:05:00"),  # no offset = UTC
    ("2026-11-01T12:05:00.5+02:00", "2026-11-01T10:05:00.500000000Z"),
])
def test_event_time_shapes(text, same_as):
    assert parse_time(text) == parse_time(same_as)
    assert parse_time("2026-11-01T10:05:00Z") == 1793527500.0


# --------------------------------------------------------------------------- the parallel path
# A large JSONL file is parsed, validated and planned in a second process that streams plans over a pipe to
# the writer. It must store exactly what the serial path stores, and count and report skips the same way.

def mixed_lines():
    """Every kind of line the ingest meets: facets (owners, tags with PII, contract, quality, dataset-wide
    lineage), a chain with column lineage, runs whose START/RUNNING/COMPLETE/FAIL arrive shuffled, duplicates
    near and far, malformed lines and blank ones."""
    events = fixture_events() + chain_events(120)
    for k in range(40):
        run_id = f"00000000-0000-4000-8000-{k:012d}"
        for kind, minute in (("START", 0), ("RUNNING", 1), ("COMPLETE" if k % 2 else "FAIL", 5), ("OTHER", 9)):
            events.append(run_event(f"r{k}", [ds(f"d{k}")], [ds(f"r{k}")], event_type=kind, run_id=run_id,
                                    time=f"2026-11-01T10:{minute:02d}:00Z"))
    random.Random(11).shuffle(events)
    lines = [json.dumps(e) for e in events]
    bad_time = dict(events[3], eventTime="yesterday")
    bad_lineage = run_event("w", [], [ds("o", {"columnLineage": {"fields": {"a": {"inputFields": [{"name": "t"}]}}}})])
    lines[10:10] = ["{not json", "", json.dumps(bad_time), lines[10], "[1, 2]", "   "]  # a duplicate next door
    lines[200:200] = [json.dumps(bad_lineage), *lines[20:40]]  # duplicates in later chunks and transactions
    return "\n".join(lines) + "\n"


def ingest_both_ways(tmp_path, text, *, before=None):
    """The same file ingested serially and in parallel into two stores (seeded alike with `before`)."""
    path = tmp_path / "mixed.jsonl"
    path.write_text(text)
    results = {}
    for mode, parallel in (("serial", False), ("parallel", True)):
        with LineageGraph(tmp_path / f"{mode}.db") as g:
            if before is not None:
                g.ingest_events(before)
            results[mode] = (g.ingest_file(path, parallel=parallel), table_dump(g), g.counts())
    return path, results


def test_parallel_ingest_stores_exactly_what_the_serial_one_does(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_module, "_IN_CHUNK", 40)  # many frames from the parser ...
    monkeypatch.setattr(graph_module, "_BATCH", 120)  # ... and many transactions
    path, results = ingest_both_ways(tmp_path, mixed_lines())
    (serial, serial_rows, counts), (parallel, parallel_rows, _) = results["serial"], results["parallel"]
    assert parallel_rows == serial_rows  # every row of every table, ids included
    assert parallel.as_dict() == serial.as_dict()
    # 10 + 120 + 160 distinct events; 21 duplicate lines; 4 malformed; 2 blank lines not counted
    assert (parallel.read, parallel.stored, parallel.duplicates, parallel.skipped) == (315, 290, 21, 4)
    assert parallel.errors == [
        f"{path}:11: invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        f"{path}:13: eventTime: not ISO-8601: 'yesterday'",
        f"{path}:15: event: not a JSON object",
        f"{path}:201: outputs[0].facets.columnLineage.fields.a.inputFields[0].namespace: "
        "missing or not a non-empty string",
    ]
    assert (counts["events"], counts["field_edges"], counts["runs"]) == (290, 12 + 240 + 118, 10 + 120 + 40)
    with LineageGraph(tmp_path / "parallel.db") as g:
        for k in range(40):  # START/RUNNING/terminal/OTHER shuffled: the terminal state wins
            assert g.run(f"00000000-0000-4000-8000-{k:012d}")["state"] == ("COMPLETE" if k % 2 else "FAIL")
        raw = g.dataset(g.find_datasets("raw.orders")[0][0])
        assert raw["owners"] == ["team:sales-data-team"] and raw["quality_status"] == "failed"
        assert [f["name"] for f in g.fields_of(raw["id"]) if f["pii"]] == ["email"]
        again = g.ingest_file(path, parallel=True)
        assert (again.read, again.stored, again.duplicates, again.skipped) == (315, 0, 311, 4)
        assert table_dump(g) == parallel_rows


def test_parallel_ingest_into_a_store_that_has_data(tmp_path, monkeypatch):
    """Ids and fields already stored (from an earlier ingest) are found, not created again, on both paths."""
    monkeypatch.setattr(graph_module, "_IN_CHUNK", 25)
    events = chain_events(80)
    before = [(f"b{i}", e) for i, e in enumerate(events[:30] + fixture_events()[:4])]
    text = "".join(json.dumps(e) + "\n" for e in events)
    _, results = ingest_both_ways(tmp_path, text, before=before)
    assert results["parallel"][1] == results["serial"][1]
    stats = results["parallel"][0]
    assert (stats.read, stats.stored, stats.duplicates) == (80, 80, 0)  # dict events hash differently from lines
    assert results["parallel"][2]["datasets"] == 81 + 5  # d0..d80; raw, stg a/b, mart, report from the fixture


def test_large_files_take_the_parallel_path(tmp_path, monkeypatch, capsys):
    calls = []
    real = LineageGraph._ingest_parallel

    def counted(self, path):
        calls.append(path)
        return real(self, path)

    monkeypatch.setattr(LineageGraph, "_ingest_parallel", counted)
    path = write_jsonl(tmp_path / "e.jsonl", fixture_events())
    with LineageGraph(tmp_path / "small.db") as g:
        assert g.ingest_file(path).stored == 10
    assert calls == []  # a small file: serial, no second process
    monkeypatch.setattr(graph_module, "_PARALLEL_MIN_BYTES", path.stat().st_size)
    (tmp_path / "bad.jsonl").write_text("nope\n" * 10_000)
    db = tmp_path / "cli.db"
    assert main(["lineage", "ingest", str(path), str(tmp_path / "bad.jsonl"), "--db", str(db)]) == 0
    out, err = capsys.readouterr()
    assert calls == [path, tmp_path / "bad.jsonl"]
    assert out.strip() == f"ingested 10010 event(s) into {db}: 10 stored, 0 duplicate(s), 10000 skipped"
    assert err.count("invalid JSON: Expecting value") == 100  # the first 100 reasons are kept
    assert err.splitlines()[-1] == "skipped 9900 more; all 10000 by reason: invalid JSON 10000"
    with LineageGraph(db) as g, LineageGraph(tmp_path / "small.db") as serial:
        assert table_dump(g) == table_dump(serial)


def test_parallel_parser_failure_is_one_clean_error_and_stores_nothing(tmp_path):
    with LineageGraph(tmp_path / "l.db") as g:
        g.ingest_event(fixture_events()[0])
        before = table_dump(g)
        with pytest.raises(InputDataError, match=r"gone\.jsonl: lineage parser failed: FileNotFoundError"):
            g._ingest_parallel(tmp_path / "gone.jsonl")  # the file vanished after ingest_file opened it
        assert table_dump(g) == before
        # the store still works; a line hashes apart from the same event given as a dict, so all 10 are new
        assert g.ingest_file(write_jsonl(tmp_path / "ok.jsonl", fixture_events()), parallel=True).stored == 10

"""Impact analysis on the fixed event set (graph_events.py): known answers up and down, dataset and column level."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from graph_events import column_lineage, ds, fixture_events, run_event

from dq_governance.cli import main
from dq_governance.errors import InputDataError
from dq_governance.lineage.graph import LineageGraph
from dq_governance.lineage.impact import impact, resolve_target



@pytest.fixture()
def db(tmp_path) -> Path:
    path = tmp_path / "lineage.db"
    with LineageGraph(path) as g:
        g.ingest_events((f"e{i}", e) for i, e in enumerate(fixture_events()))
    return path


@pytest.fixture()
def graph(db):
    with LineageGraph(db) as g:
        yield g


def hits(graph, target, direction="downstream", depth=None, namespace=None):
    """{(direction, dataset, column): (distance, coarse)} of a query."""
    result = impact(graph, resolve_target(graph, target, namespace), direction, depth)
    return {(h.direction, h.dataset, h.column): (h.distance, h.coarse) for h in result.hits}


# -- the diamond ----------------------------------------------------------------------------


def test_diamond_dataset_downstream(graph):
    assert hits(graph, "raw.orders") == {
        ("downstream", "stg.orders_a", None): (1, False),
        ("downstream", "stg.orders_b", None): (1, False),
        ("downstream", "mart.orders_joined", None): (2, False),  # reached through both arms, listed once
        ("downstream", "report.revenue", None): (3, False),
        ("downstream", "analytics.customer_analytics", None): (3, False),
        ("downstream", "export.revenue_feed", None): (4, False),
    }


def test_diamond_column_downstream_reaches_the_join_once(graph):
    assert hits(graph, "raw.orders.cliente_id") == {
        ("downstream", "stg.orders_a", "cliente_id"): (1, False),
        ("downstream", "stg.orders_b", "cliente_id"): (1, False),
        ("downstream", "mart.orders_joined", "cliente_id"): (2, False),
        # j_customer has no column lineage: dataset level, marked coarse
        ("downstream", "analytics.customer_analytics", None): (3, True),
    }


def test_diamond_column_upstream(graph):
    assert hits(graph, "mart.orders_joined.cliente_id", "upstream") == {
        ("upstream", "stg.orders_a", "cliente_id"): (1, False),
        ("upstream", "stg.orders_b", "cliente_id"): (1, False),
        ("upstream", "raw.orders", "cliente_id"): (2, False),
        ("upstream", "raw.orders", "status"): (2, False),  # j_stage_b filters on it: every output column depends on it
    }


def test_diamond_dataset_upstream(graph):
    assert hits(graph, "mart.orders_joined", "upstream") == {
        ("upstream", "stg.orders_a", None): (1, False),
        ("upstream", "stg.orders_b", None): (1, False),
        ("upstream", "raw.orders", None): (2, False),
    }


def test_column_not_read_by_anyone_reaches_only_coarse_consumers(graph):
    # raw.orders.email feeds no column; every job reading raw.orders has column lineage -> nothing
    assert hits(graph, "raw.orders.email") == {}


def test_filter_column_reaches_whole_dataset(graph):
    # raw.orders.status filters stg.orders_b (INDIRECT/FILTER in the facet's `dataset` list)
    assert hits(graph, "raw.orders.status", depth=2) == {
        ("downstream", "stg.orders_b", None): (1, False),
        ("downstream", "mart.orders_joined", None): (2, False),
    }
    result = impact(graph, resolve_target(graph, "raw.orders.status"), "downstream", 1)
    assert result.hits[0].transformation == "INDIRECT/FILTER"


# -- multi-hop column path --------------------------------------------------------------------


def test_multi_hop_column_path(graph):
    result = impact(graph, resolve_target(graph, "raw.orders.valor"), "downstream")
    by_label = {h.label: h for h in result.hits}
    assert list(by_label) == ["stg.orders_b.valor_total", "mart.orders_joined.valor_total", "report.revenue.total",
                              "analytics.customer_analytics", "export.revenue_feed.amount"]
    feed = by_label["export.revenue_feed.amount"]
    assert feed.distance == 4 and not feed.coarse
    assert feed.path == [
        {"node": "raw.orders.valor"},
        {"job": "spark:j_stage_b", "transformation": "DIRECT/AGGREGATION"},
        {"node": "stg.orders_b.valor_total"},
        {"job": "spark:j_join", "transformation": "DIRECT/IDENTITY"},
        {"node": "mart.orders_joined.valor_total"},
        {"job": "spark:j_report", "transformation": "DIRECT/AGGREGATION"},
        {"node": "report.revenue.total"},
        {"job": "spark:j_export", "transformation": "DIRECT/IDENTITY"},
        {"node": "export.revenue_feed.amount"},
    ]
    assert feed.jobs == ["spark:j_stage_b", "spark:j_join", "spark:j_report", "spark:j_export"]


def test_depth_caps_the_walk(graph):
    assert hits(graph, "raw.orders.valor", depth=2) == {
        ("downstream", "stg.orders_b", "valor_total"): (1, False),
        ("downstream", "mart.orders_joined", "valor_total"): (2, False),
    }
    assert hits(graph, "raw.orders.valor", depth=0) == {}


def test_multi_hop_upstream_from_the_end(graph):
    assert hits(graph, "export.revenue_feed.amount", "upstream") == {
        ("upstream", "report.revenue", "total"): (1, False),
        ("upstream", "mart.orders_joined", "valor_total"): (2, False),
        ("upstream", "stg.orders_b", "valor_total"): (3, False),
        ("upstream", "raw.orders", "valor"): (4, False),
        ("upstream", "raw.orders", "status"): (4, False),  # the filter of j_stage_b
    }


# -- job without column lineage -----------------------------------------------------------------


def test_job_without_column_lineage_falls_back_coarse_upstream(graph):
    assert hits(graph, "analytics.customer_analytics.cliente_id", "upstream") == {
        ("upstream", "mart.orders_joined", None): (1, True),
        ("upstream", "stg.orders_a", None): (2, True),
        ("upstream", "stg.orders_b", None): (2, True),
        ("upstream", "raw.orders", None): (3, True),
    }


def test_owners_contracts_and_quality_of_hits(graph):
    result = impact(graph, resolve_target(graph, "raw.orders.cliente_id"), "downstream")
    analytics = [h for h in result.hits if h.dataset == "analytics.customer_analytics"][0]
    assert analytics.owners == ["team:marketing-analytics", "user:ana"]  # dataset owner, then job owner on path
    assert analytics.quality_status == "passed"
    assert result.owners == ["team:finance-analytics", "team:marketing-analytics", "user:ana"]
    up = impact(graph, resolve_target(graph, "stg.orders_a.id"), "upstream")
    [raw] = up.hits
    assert (raw.dataset, raw.column, raw.quality_status) == ("raw.orders", "id", "failed")
    assert up.contracts == [{"dataset": "raw.orders", "name": "orders", "version": "1.0.0", "standard": "native",
                             "status": "failed"}]


# -- the cycle ----------------------------------------------------------------------------------


def test_cycle_column_both_directions(graph):
    assert hits(graph, "cyc.a.x", "both") == {
        ("downstream", "cyc.b", "x"): (1, False),
        ("downstream", "cyc.c", "x"): (2, False),
        ("upstream", "cyc.b", "x"): (1, False),
    }


def test_cycle_dataset_level(graph):
    assert hits(graph, "cyc.b") == {("downstream", "cyc.a", None): (1, False), ("downstream", "cyc.c", None): (1, False)}
    assert hits(graph, "cyc.c", "upstream") == {("upstream", "cyc.b", None): (1, False),
                                                 ("upstream", "cyc.a", None): (2, False)}


# -- name resolution ----------------------------------------------------------------------------


@pytest.fixture()
def dotted(tmp_path):
    with LineageGraph(tmp_path / "d.db") as g:
        g.ingest_events([
            ("1", run_event("a", [ds("db.orders", {"schema": {"fields": [{"name": "id"}, {"name": "archive"}]}})],
                            [ds("db.orders.archive", {"schema": {"fields": [{"name": "id"}]}, "columnLineage":
                                column_lineage({"id": [("db.orders", "id", "DIRECT", "IDENTITY")]})})])),
            ("2", run_event("b", [], [{"namespace": "s3://other", "name": "db.orders", "facets": {}}])),
        ])
        yield g


def test_longest_dataset_name_wins(dotted):
    target = resolve_target(dotted, "db.orders.archive.id", "file")
    assert (target.name, target.column) == ("db.orders.archive", "id")
    target = resolve_target(dotted, "db.orders.archive")
    assert (target.name, target.column) == ("db.orders.archive", None)
    target = resolve_target(dotted, "db.orders.id", "file")
    assert (target.name, target.column) == ("db.orders", "id")


def test_ambiguous_name_needs_namespace(dotted):
    with pytest.raises(InputDataError, match=r"exists in several namespaces \(file, s3://other\); pass --namespace"):
        resolve_target(dotted, "db.orders.id")
    with pytest.raises(InputDataError, match="has no known column 'nope'"):
        resolve_target(dotted, "db.orders.nope", "file")
    with pytest.raises(InputDataError, match="no dataset in the lineage store matches 'zzz.a'"):
        resolve_target(dotted, "zzz.a")


# -- formats and the CLI --------------------------------------------------------------------------


def test_cli_json(db, capsys):
    assert main(["impact", "raw.orders.cliente_id", "--db", str(db), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["target"] == {"namespace": "file", "dataset": "raw.orders", "column": "cliente_id"}
    assert data["datasets"] == ["stg.orders_a", "stg.orders_b", "mart.orders_joined", "analytics.customer_analytics"]
    assert [h["coarse"] for h in data["hits"]] == [False, False, False, True]


def test_cli_table(db, capsys):
    assert main(["impact", "raw.orders.valor", "--db", str(db), "--depth", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "impact of file:raw.orders.valor (downstream, depth <= 1)"
    assert out[2].split() == ["downstream", "1", "file:stg.orders_b", "valor_total", "unknown", "column", "-",
                              "spark:j_stage_b"]
    assert out[-2] == "owners to notify: none known"


def test_cli_mermaid_and_dot(db, capsys):
    assert main(["impact", "raw.orders.cliente_id", "--db", str(db), "--format", "mermaid"]) == 0
    mermaid = capsys.readouterr().out
    assert mermaid.startswith("flowchart LR\n")
    assert '  n0["raw.orders.cliente_id"]:::failed' in mermaid
    assert '  n3 -.->|"j_customer"| n4' in mermaid  # the coarse edge is dotted
    assert mermaid.count("-->") == 4  # both diamond arms into the join
    assert main(["impact", "raw.orders.cliente_id", "--db", str(db), "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.count(" -> ") == 5
    assert 'n3 -> n4 [label="j_customer", style=dashed];' in dot


def test_cli_errors_are_one_line(tmp_path, db, capsys):
    assert main(["impact", "raw.orders", "--db", str(tmp_path / "missing.db")]) == 2
    assert "lineage store not found" in capsys.readouterr().err
    assert main(["impact", "nothing.here", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "dqgov: error: no dataset in the lineage store matches 'nothing.here'"


# -- the html page in a real browser --------------------------------------------------------------


@pytest.mark.integration
def test_html_page_renders_expected_nodes_in_headless_chromium(db, tmp_path, chromium):
    out = tmp_path / "impact.html"
    assert main(["impact", "mart.orders_joined", "--db", str(db), "--direction", "both", "--format", "html",
                 "-o", str(out)]) == 0
    page = out.read_text()
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing fetched: offline
    expected = 1 + 3 + 3  # target + 3 upstream + 3 downstream (report, customer_analytics, export)
    proc = chromium(tmp_path / "profile", "--dump-dom", out.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    body = re.search(r"<body[^>]*>", proc.stdout).group(0)
    assert f'data-expected-nodes="{expected}"' in body
    assert f'data-rendered-nodes="{expected}"' in body  # laid out by the browser with a non-empty box
    assert proc.stdout.count('data-status="failed"') == 1  # raw.orders
    assert proc.stdout.count('data-status="passed"') == 1  # customer_analytics


@pytest.mark.integration
def test_html_marks_pii_columns_in_chromium(db, tmp_path, chromium):
    with LineageGraph(db) as g:
        g.ingest_event(run_event("j_mail", [ds("raw.orders")], [ds("crm.mailing", {
            "columnLineage": column_lineage({"email": [("raw.orders", "email", "DIRECT", "IDENTITY")]}),
            "tags": {"tags": [{"key": "pii", "value": "true", "field": "email"}]}})]))
    out = tmp_path / "pii.html"
    assert main(["impact", "raw.orders.email", "--db", str(db), "--format", "html", "-o", str(out)]) == 0
    proc = chromium(tmp_path / "p", "--dump-dom", out.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert 'data-rendered-nodes="2"' in proc.stdout
    assert proc.stdout.count('class="node target pii"') == 1 and proc.stdout.count('class="node pii"') == 1
    assert proc.stdout.count('class="pii-badge"') == 2

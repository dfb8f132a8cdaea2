"""`dqgov report`: indicators, the HTML page and its charts, in Python and in headless Chromium."""

from __future__ import annotations

import re
import struct
import subprocess
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path

import pytest

from _observe_history import write_history
from dq_governance.cli import main
from dq_governance.observe.history import read_history_rows, runs
from dq_governance.observe.indicators import indicators
from dq_governance.observe.report_html import never_failing, render_report



@pytest.fixture()
def history(tmp_path):
    return write_history(tmp_path / "report")


class _Marks(HTMLParser):
    """Collects elements carrying data-* attributes, by tag."""

    def __init__(self):
        super().__init__()
        self.elements: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if any(k.startswith("data-") for k in attrs) or "id" in attrs:
            self.elements.append((tag, attrs))


def marks(html: str) -> list[tuple[str, dict]]:
    parser = _Marks()
    parser.feed(html)
    return parser.elements


def test_history_is_read_without_spark_and_folded_into_runs(history):
    rows = read_history_rows(history)
    assert len(rows) == 6 * 5 + 2
    summaries = runs(rows)
    assert [r.run_id for r in summaries] == [
        "orders-run-1", "orders-run-2", "orders-run-3", "orders-run-4", "orders-run-5", "customers-run-1",
        "orders-run-6", "customers-run-2"]
    assert summaries[-2].schema == {"pedido_id": "string", "status": "string"}
    assert summaries[-1].schema == {"id": "string", "email": "string"} and summaries[-1].gate_passed is True
    assert [r.run_id for r in runs(read_history_rows(history, pipeline="customers"))] == [
        "customers-run-1", "customers-run-2"]


def test_indicators_have_exact_values_for_the_fixed_history(history):
    found = {i.key: i for i in indicators(runs(read_history_rows(history, pipeline="orders")))}
    assert (found["valid_record_ratio"].numerator, found["valid_record_ratio"].denominator) == (542, 550)
    assert found["valid_record_ratio"].latest == 1.0
    assert (found["null_rate"].numerator, found["null_rate"].denominator, found["null_rate"].latest) == (0, 550, 0.0)
    assert (found["duplicate_rate"].numerator, found["duplicate_rate"].denominator) == (4, 550)
    assert found["freshness"].latest == 7200.0 and found["freshness"].show(7200.0) == "2h"
    assert (found["freshness"].numerator, found["freshness"].denominator) == (5, 6)
    assert found["schema_compatibility"].overall is None  # no schema rule in this pipeline: n/a, not 0
    assert (found["volume_anomaly"].numerator, found["volume_anomaly"].denominator) == (1, 1)  # runs 1-5 skipped
    assert (found["quality_gate_failures"].numerator, found["quality_gate_failures"].denominator) == (4, 6)
    assert (found["contract_violations"].numerator, found["contract_violations"].denominator) == (6, 25)
    assert found["contract_violations"].latest == pytest.approx(2 / 5)
    every = {i.key: i for i in indicators(runs(read_history_rows(history)))}
    assert (every["schema_compatibility"].numerator, every["schema_compatibility"].denominator) == (0, 1)
    assert all(i.definition and i.denominator_text for i in every.values())


def test_never_failing_rules():
    assert never_failing(runs(_rows_for("orders"))) == [("orders", "orders", "pedido_id_not_null", 6)]


def _rows_for(pipeline):
    from _observe_history import history_rows

    return [r for r in history_rows() if r["pipeline"] == pipeline]


def test_page_has_the_charts_tables_and_values(history):
    page = render_report(runs(read_history_rows(history, pipeline="orders")), source=str(history), pipeline="orders",
                         generated_at=datetime(2026, 11, 7, tzinfo=timezone.utc))
    assert "<script" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    elements = marks(page)
    ids = {a["id"] for _t, a in elements if "id" in a}
    assert {"chart-failure-rate", "chart-failed-count", "chart-valid-ratio", "chart-never-fail", "indicators"} <= ids
    points = [(a["data-series"], a["data-x"], a["data-value"]) for t, a in elements if t == "circle"]
    failed = [v for s, _x, v in points if s == "orders"][:6]
    assert failed == ["3", "2", "0", "3", "0", "0"]  # failed_count trend
    ratios = [v for s, _x, v in points if s == "orders"][6:]
    assert ratios == ["0.970000", "0.980000", "1", "0.970000", "1", "1"]  # valid-record ratio
    cells = {(a["data-rule"], a["data-run"]): a["data-rate"] for t, a in elements if a.get("class") == "cell"}
    assert cells[("pedido_id_unique", "orders-run-1")] == "0.020000"
    assert cells[("status_allowed_values", "orders-run-4")] == "0.030000"
    assert cells[("freshness_sla", "orders-run-6")] == "1" and cells[("volume", "orders-run-2")] == "n/a"
    assert [a["data-rule"] for t, a in elements if a.get("class") == "bar"] == ["pedido_id_not_null"]
    latest = {a["data-rule"]: a["data-status"] for t, a in elements if t == "tr" and "data-status" in a}
    assert latest == {"pedido_id_not_null": "passed", "pedido_id_unique": "passed",
                      "status_allowed_values": "passed", "freshness_sla": "failed", "volume": "failed"}
    indicator_rows = {a["data-indicator"]: a for t, a in elements if "data-indicator" in a}
    assert len(indicator_rows) == 8 and indicator_rows["quality_gate_failures"]["data-overall"] == "0.666667"


def test_cli_writes_the_page_and_rejects_a_missing_history(history, tmp_path, capsys):
    out = tmp_path / "r" / "report.html"
    assert main(["report", "--history", str(history), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {out}: 8 run(s), 2 pipeline(s)"
    assert out.read_text().count('class="latest"') == 2  # the latest run of each pipeline
    assert main(["report", "--history", str(tmp_path / "nope"), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dqgov: error: ") and "nope: no report history here" in err
    assert main(["report", "--history", str(history), "--pipeline", "ghost", "-o", str(out)]) == 2
    assert "no runs in the report history for pipeline ghost" in capsys.readouterr().err


def test_an_output_inside_the_history_is_refused_and_a_url_s_secrets_never_shown(history, tmp_path, capsys):
    # the page written into the history made every later read of it fail, `dqgov report` and the engine's alike
    assert main(["report", "--history", str(history), "-o", str(history / "index.html")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"dqgov: error: -o {history / 'index.html'} is inside --history {history} ({history / 'index.html'}): "
        "writing it would replace or break the report history being read; write it somewhere else")
    assert not (history / "index.html").exists()
    assert main(["report", "--history", "https://user:s3cr3t@example.com/rep?sig=SIG", "-o",
                 str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "https://example.com/rep" in err and not {"s3cr3t", "SIG", "user"} & set(re.findall(r"\w+", err))
    page = render_report(runs(read_history_rows(history)), source="s3://key:secret@bucket/h?token=abc")
    assert "bucket/h" in page and "secret" not in page and "abc" not in page


def test_report_command_never_imports_spark(history, tmp_path):
    import sys

    code = ("import sys; from dq_governance.cli import main; "
            f"rc = main(['report', '--history', {str(history)!r}, '-o', {str(tmp_path / 'x.html')!r}]); "
            "print(rc, 'pyspark' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "0 False", proc.stderr[-2000:]


@pytest.mark.spark
def test_history_written_by_the_engine_writer_reads_back_without_spark(spark, tmp_path):
    from _observe_history import history_rows
    from dq_governance.publish.report import write_report

    rows = [r for r in history_rows() if r["run_id"] in ("orders-run-6", "customers-run-2")]
    for run_id in ("orders-run-6", "customers-run-2"):
        write_report(spark, [r for r in rows if r["run_id"] == run_id], str(tmp_path / "h"))
    back = runs(read_history_rows(tmp_path / "h"))
    assert [(r.run_id, r.total_rows, r.valid_rows, r.gate_passed) for r in back] == [
        ("orders-run-6", 50, 50, False), ("customers-run-2", 10, 10, True)]
    assert back[1].schema == {"id": "string", "email": "string"}
    assert back[0].validated_at == datetime(2026, 11, 6, 6, 0, tzinfo=timezone.utc)
    assert [r["check_name"] for r in back[0].rules] == [
        "pedido_id_not_null", "pedido_id_unique", "status_allowed_values", "freshness_sla", "volume"]


# -- in a real browser --------------------------------------------------------------------------


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


@pytest.mark.integration
def test_report_renders_in_headless_chromium_with_scripts_off(history, tmp_path, chromium):
    out = tmp_path / "report.html"
    assert main(["report", "--history", str(history), "-o", str(out)]) == 0
    # --dump-dom serialises through script, so this run keeps it on; the page has none (its CSP forbids any)
    dom = chromium(tmp_path / "p1", "--dump-dom", out.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert re.search(r'<body[^>]*data-runs="8"[^>]*data-pipelines="2"', html)
    elements = marks(html)
    svgs = [a["id"] for t, a in elements if t == "svg"]
    assert svgs == ["chart-failure-rate", "chart-failed-count", "chart-valid-ratio", "chart-never-fail"]
    orders = [a["data-value"] for t, a in elements if t == "circle" and a["data-series"] == "orders"]
    assert orders == ["3", "2", "0", "3", "0", "0", "0.970000", "0.980000", "1", "0.970000", "1", "1"]
    customers = [a["data-value"] for t, a in elements if t == "circle" and a["data-series"] == "customers"]
    assert customers == ["0", "0", "1", "1"]
    assert [a["data-rule"] for t, a in elements if a.get("class") == "bar"] == ["orders · pedido_id_not_null"]
    assert sum(1 for t, a in elements if a.get("class") == "cell") == 6 * 5 + 2
    shot = tmp_path / "report.png"
    result = chromium(tmp_path / "p2", f"--screenshot={shot}",
                      "--window-size=1400,2600", "--hide-scrollbars", out.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    assert png_size(shot) == (1400, 2600)
    assert shot.stat().st_size > 60_000  # charts and tables drawn, not a blank page


def test_heatmap_shows_a_warned_dataset_rule_as_warned_not_ok():
    from dq_governance.observe.history import RunSummary
    from dq_governance.observe.report_html import heatmap

    run = RunSummary("orders", "r1", "orders", "1.0.0", None, "warned", 10, 10, 1.0, True, True, None, rules=[
        {"check_name": "row_count", "level": "dataset", "passed": True, "rule_status": "warned", "failed_count": None},
        {"check_name": "freshness", "level": "dataset", "passed": True, "rule_status": "passed", "failed_count": None},
        {"check_name": "volume", "level": "dataset", "passed": False, "rule_status": "failed", "failed_count": None}])
    cells = re.findall(r'data-rule="([^"]+)".*?fill="([^"]+)"/><text[^>]*>([^<]+)</text>', heatmap("h", [run], ["r1"]))
    assert cells == [("row_count", "#f6dfb4", "WARN"), ("freshness", "#dff0e2", "ok"),
                     ("volume", "rgb(230,50,50)", "FAIL")]


def test_heatmap_shows_a_warn_severity_rule_that_fired_as_warn_not_fail():
    """A warn-severity dataset rule that fired is passed=False, rule_status=warned (undeclared_columns: drop)."""
    from dq_governance.observe.history import RunSummary
    from dq_governance.observe.report_html import heatmap

    run = RunSummary("orders", "r1", "orders", "1.0.0", None, "passed", 10, 10, 1.0, True, True, None, rules=[
        {"check_name": "undeclared_columns", "level": "dataset", "severity": "warn", "passed": False,
         "rule_status": "warned", "failed_count": None}])
    svg = heatmap("h", [run], ["r1"])
    cells = re.findall(r'data-rule="([^"]+)"[^>]*data-rate="([^"]+)".*?fill="([^"]+)"/><text[^>]*>([^<]+)</text>', svg)
    assert cells == [("undeclared_columns", "1", "#f6dfb4", "WARN")]


def _two_contracts_one_pipeline() -> list[dict]:
    """One pipeline `nightly` (a Spark app name) writing orders (1000 rows, 50 null ids) and customers (10 rows,
    none null) each night under their own run ids."""
    from _observe_history import _rule, _run_row

    rows = []
    for day in range(3):
        for minute, (contract, total, nulls) in enumerate((("orders", 1000, 50), ("customers", 10, 0))):
            rule = _rule("id_not_null", "not_null", "row", "completeness", "failed" if nulls else "passed", nulls,
                         float(nulls))
            row = _run_row("nightly", f"{contract}-{day}", datetime(2026, 1, 1 + day, 1, minute, tzinfo=timezone.utc),
                           total, total - nulls, True, {"id": "bigint"}, rule)
            row["contract"] = contract
            rows.append(row)
    return rows


def test_two_contracts_in_one_pipeline_are_reported_apart(tmp_path):
    summaries = runs(read_history_rows(write_history(tmp_path / "report", _two_contracts_one_pipeline())))
    page = render_report(summaries, generated_at=datetime(2026, 1, 4, tzinfo=timezone.utc))
    assert re.findall(r"<h3>([^<]*)</h3>", page) == [
        "nightly (orders) · run orders-2 · 2026-01-03 01:00:00 UTC",
        "nightly (customers) · run customers-2 · 2026-01-03 01:01:00 UTC"]
    elements = marks(page)
    assert [(a["data-pipeline"], a["data-contract"], a["data-run"]) for t, a in elements if a.get("class") == "latest"] \
        == [("nightly", "orders", "orders-2"), ("nightly", "customers", "customers-2")]
    heat = next(a for t, a in elements if a.get("id") == "chart-failure-rate")
    assert heat["data-rules"] == "2"
    assert [(a["data-contract"], a["data-run"], a["data-rate"]) for t, a in elements if a.get("class") == "cell"] == [
        ("orders", "orders-0", "0.050000"), ("orders", "orders-1", "0.050000"), ("orders", "orders-2", "0.050000"),
        ("customers", "customers-0", "0"), ("customers", "customers-1", "0"), ("customers", "customers-2", "0")]
    assert re.findall(r'font-size="11" text-anchor="end">([^<]*)</text>', page.split('id="chart-failure-rate"')[1]
                      .split("</svg>")[0]) == ["nightly (orders) · id_not_null", "nightly (customers) · id_not_null"]
    points = [(a["data-series"], a["data-value"]) for t, a in elements if t == "circle"]
    assert points[:6] == [("nightly (orders)", "50")] * 3 + [("nightly (customers)", "0")] * 3  # failed_count trend
    assert never_failing(summaries) == [("nightly", "customers", "id_not_null", 3)]
    assert [a["data-rule"] for t, a in elements if a.get("class") == "bar"] == ["nightly (customers) · id_not_null"]
    found = {i.key: i for i in indicators(summaries)}
    assert found["null_rate"].latest == 50 / 1010  # orders-2 and customers-2, not customers-2 alone
    assert found["contract_violations"].latest == 0.5
    assert found["valid_record_ratio"].latest == 960 / 1010


def test_volume_fallback_judges_a_run_against_its_own_contract(tmp_path):
    """One app writes orders (1000 rows) daily, then customers (10 rows) for the first time: no volume rule, so the
    median/MAD fallback runs; customers has no history of its own and is not judged, orders stays steady."""
    from _observe_history import _rule, _run_row

    from dq_governance.observe.indicators import volume_flags

    rows = []
    for day, (contract, total) in enumerate([("orders", 1000)] * 6 + [("customers", 10)]):
        rule = _rule("id_not_null", "not_null", "row", "completeness", "passed", 0, 0.0)
        row = _run_row("app", f"{contract}-{day}", datetime(2026, 1, 1 + day, tzinfo=timezone.utc), total, total,
                       True, {"id": "bigint"}, rule)
        row["contract"] = contract
        rows.append(row)
    summaries = runs(read_history_rows(write_history(tmp_path / "report", rows)))
    assert volume_flags(summaries) == {**{("app", f"orders-{d}", "orders"): None for d in range(5)},
                                       ("app", "orders-5", "orders"): False, ("app", "customers-6", "customers"): None}
    found = {i.key: i for i in indicators(summaries)}["volume_anomaly"]
    assert (found.latest, found.overall, found.numerator, found.denominator) == (0.0, 0.0, 0.0, 1.0)

"""The quality history report: one self-contained HTML page, charts as inline SVG (no script, no network).

Charts: failure rate per rule over time (a rules x runs heat map), failed_count trend per pipeline, the
rules that never fail, and the valid-record ratio over time. Then the indicator table (each with its
definition and denominator) and the latest run's per-rule table. Every chart mark carries `data-*`
attributes with its exact value, so a browser test can read what was drawn.

Runs are grouped by (pipeline, contract), not by pipeline: one pipeline may hold several contracts (the session
extension's default pipeline is the Spark application name), and one table's runs say nothing about another's.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from html import escape
from typing import Sequence

from dq_governance.observe.history import RunSummary
from dq_governance.observe.indicators import Indicator, indicators, series_key
from dq_governance.scrub import redact

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
W, H = 760, 260  # line chart size
M_LEFT, M_RIGHT, M_TOP, M_BOTTOM = 64, 150, 20, 46

CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#666;font-size:13px}.grid{display:flex;flex-wrap:wrap;gap:18px}
figure{margin:0;border:1px solid #e3e3e3;border-radius:6px;padding:10px;background:#fcfcfc}
figcaption{font-weight:600;font-size:14px;margin-bottom:6px}.note{color:#666;font-size:12px;max-width:740px}
table{border-collapse:collapse;font-size:13px;margin-top:6px}th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.failed{color:#b00020;font-weight:600}.warned{color:#a05a00;font-weight:600}.passed{color:#1b7f3b}.skipped{color:#777}
svg text{font-family:inherit}
"""


def _x_label(run: RunSummary) -> str:
    return run.validated_at.strftime("%m-%d %H:%M") if run.validated_at else run.run_id[:8]


def _num(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "n/a"
    return str(int(value)) if float(value).is_integer() else f"{value:.{digits}f}"


def series_labels(runs: Sequence[RunSummary]) -> dict[tuple[str, str | None], str]:
    """(pipeline, contract) -> its name in the page: the pipeline, with the contract where it holds several."""
    keys = list(dict.fromkeys(series_key(run) for run in runs))
    shared = {p for p, _c in keys if sum(1 for q, _d in keys if q == p) > 1}
    return {(p, c): f"{p} ({c})" if p in shared and c is not None else p for p, c in keys}


def _status_class(status: str | None) -> str:
    return status if status in ("failed", "warned", "passed", "skipped") else ""


# --------------------------------------------------------------------------- charts


def line_chart(chart_id: str, series: dict[str, list[tuple[int, float | None]]], labels: Sequence[str], *,
               y_max: float | None = None, percent: bool = False, y_title: str = "") -> str:
    """An SVG line chart: x = run index (labels below), one polyline + points per series."""
    values = [v for points in series.values() for _x, v in points if v is not None]
    top = y_max if y_max is not None else _nice(max([1.0, *values]))
    n = max(1, len(labels))
    plot_w, plot_h = W - M_LEFT - M_RIGHT, H - M_TOP - M_BOTTOM

    def px(i: int) -> float:
        return M_LEFT + (plot_w * (i + 0.5) / n)

    def py(v: float) -> float:
        return M_TOP + plot_h * (1 - (v / top if top else 0))

    out = [f'<svg id="{chart_id}" class="chart" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" role="img" data-series-count="{len(series)}">']
    for k in range(5):  # gridlines and y ticks
        v = top * k / 4
        y = py(v)
        text = f"{100 * v:.0f}%" if percent else _num(round(v, 2), 2)
        out.append(f'<line x1="{M_LEFT}" x2="{W - M_RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{M_LEFT - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" fill="#555">{text}</text>')
    out.append(f'<line x1="{M_LEFT}" x2="{M_LEFT}" y1="{M_TOP}" y2="{H - M_BOTTOM}" stroke="#888"/>')
    out.append(f'<line x1="{M_LEFT}" x2="{W - M_RIGHT}" y1="{H - M_BOTTOM}" y2="{H - M_BOTTOM}" stroke="#888"/>')
    step = max(1, (n + 11) // 12)  # at most ~12 x labels
    for i, label in enumerate(labels):
        if i % step == 0 or i == n - 1:
            out.append(f'<text x="{px(i):.1f}" y="{H - M_BOTTOM + 16}" font-size="10" text-anchor="middle" '
                       f'fill="#555">{escape(label)}</text>')
    if y_title:
        out.append(f'<text x="14" y="{M_TOP + plot_h / 2:.0f}" font-size="11" fill="#555" '
                   f'transform="rotate(-90 14 {M_TOP + plot_h / 2:.0f})" text-anchor="middle">{escape(y_title)}</text>')
    for s, (name, points) in enumerate(series.items()):
        color = PALETTE[s % len(PALETTE)]
        drawn = [(x, v) for x, v in points if v is not None]
        if len(drawn) > 1:
            path = " ".join(f"{px(x):.1f},{py(v):.1f}" for x, v in drawn)
            out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}" '
                       f'data-series="{escape(name)}"/>')
        for x, v in drawn:
            shown = f"{100 * v:.2f}%" if percent else _num(v)
            out.append(f'<circle class="pt" cx="{px(x):.1f}" cy="{py(v):.1f}" r="3.5" fill="{color}" '
                       f'data-series="{escape(name)}" data-x="{escape(labels[x])}" data-value="{_num(v, 6)}">'
                       f'<title>{escape(name)} {escape(labels[x])}: {shown}</title></circle>')
        ly = M_TOP + 14 + 18 * s
        out.append(f'<rect x="{W - M_RIGHT + 12}" y="{ly - 9}" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{W - M_RIGHT + 28}" y="{ly}" font-size="11" class="legend">{escape(name[:22])}</text>')
    if not values:
        out.append(f'<text x="{W / 2:.0f}" y="{H / 2:.0f}" text-anchor="middle" fill="#777">no data</text>')
    out.append("</svg>")
    return "".join(out)


def _nice(value: float) -> float:
    """The smallest 1, 2, 4, 5 or 8 x 10^k at or above `value`, so four gridlines land on round numbers."""
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 4, 5, 8, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def _rule_rate(rule: dict, run: RunSummary) -> tuple[float | None, str]:
    """(failure rate, cell text) of one rule in one run: flagged rows / rows, or 0/1 for dataset rules."""
    status = rule.get("rule_status")
    if status == "skipped":
        return None, "skip"
    if rule.get("failed_count") is not None and rule.get("level") != "dataset":
        rate = rule["failed_count"] / run.total_rows if run.total_rows else 0.0
        return rate, f"{100 * rate:.1f}%"
    rate = 0.0 if rule.get("passed") else 1.0  # as the contract-violation indicator counts it
    # warned before passed: a warn-severity rule that fired is passed=False, a dataset rule past its `warn`
    # threshold is passed=True; both warned, neither FAIL nor ok
    if status == "warned":
        return rate, "WARN"
    return rate, "ok" if rule.get("passed") else "FAIL"


def _heat_color(rate: float | None, cell: str = "") -> str:
    if cell == "WARN":
        return "#f6dfb4"  # amber, as the tables' warned status
    if rate is None:
        return "#eeeeee"
    if rate == 0:
        return "#dff0e2"
    strength = min(1.0, 0.25 + rate * 1.5)  # small rates still stand out from zero
    g = int(220 - 170 * strength)
    return f"rgb(230,{g},{g})"


def heatmap(chart_id: str, runs: Sequence[RunSummary], labels: Sequence[str]) -> str:
    """Failure rate per rule (rows, per pipeline and contract) over runs (columns); each cell shows the rate."""
    rules: list[tuple[tuple[str, str | None], str]] = []
    names = series_labels(runs)
    multi = len(names) > 1
    for run in runs:
        for rule in run.rules:
            key = (series_key(run), rule["check_name"])
            if key not in rules:
                rules.append(key)
    label_w, cell_w, cell_h = 210, max(34, min(60, 560 // max(1, len(runs)))), 20
    width = label_w + cell_w * len(runs) + 10
    height = 30 + cell_h * len(rules) + 6
    out = [f'<svg id="{chart_id}" class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" role="img" data-rules="{len(rules)}" '
           f'data-runs="{len(runs)}">']
    step = max(1, (len(runs) + 11) // 12)
    for j, label in enumerate(labels):
        if j % step == 0 or j == len(labels) - 1:
            x = label_w + cell_w * j + cell_w / 2
            out.append(f'<text x="{x:.1f}" y="18" font-size="10" text-anchor="middle" fill="#555">{escape(label)}</text>')
    index = {run.key: j for j, run in enumerate(runs)}
    for i, ((pipeline, contract), name) in enumerate(rules):
        y = 26 + cell_h * i
        text = f"{names[(pipeline, contract)]} · {name}" if multi else name
        out.append(f'<text x="{label_w - 6}" y="{y + 14}" font-size="11" text-anchor="end">{escape(text[:34])}</text>')
        for run in runs:
            if series_key(run) != (pipeline, contract):
                continue
            j = index[run.key]
            found = [r for r in run.rules if r["check_name"] == name]
            if not found:
                continue
            rate, cell = _rule_rate(found[0], run)
            x = label_w + cell_w * j
            out.append(f'<g class="cell" data-rule="{escape(name)}" data-pipeline="{escape(pipeline)}" '
                       f'data-run="{escape(run.run_id)}" data-rate="{_num(rate, 6)}" '
                       f'data-contract="{escape(contract or "")}">'
                       f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{_heat_color(rate, cell)}"/>'
                       f'<text x="{x + (cell_w - 2) / 2:.1f}" y="{y + 13}" font-size="9" text-anchor="middle">{cell}</text>'
                       f'<title>{escape(name)} @ {escape(labels[j])}: {cell}</title></g>')
    out.append("</svg>")
    return "".join(out)


def never_failing(runs: Sequence[RunSummary]) -> list[tuple[str, str | None, str, int]]:
    """(pipeline, contract, rule, evaluations) of rules that passed in every run evaluating them (skips excluded)."""
    seen: dict[tuple[str, str | None, str], list[bool]] = {}
    for run in runs:
        for rule in run.rules:
            if rule.get("rule_status") == "skipped":
                continue
            seen.setdefault((*series_key(run), rule["check_name"]), []).append(bool(rule.get("passed")))
    return [(p, c, n, len(v)) for (p, c, n), v in seen.items() if all(v)]


def bar_chart(chart_id: str, bars: list[tuple[str, int]]) -> str:
    """Horizontal bars (label, count)."""
    label_w, bar_h, plot_w = 260, 18, 340
    top = max([1, *(c for _l, c in bars)])
    height = 20 + bar_h * max(1, len(bars)) + 20
    width = label_w + plot_w + 140
    out = [f'<svg id="{chart_id}" class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" data-bars="{len(bars)}">']
    for i, (label, count) in enumerate(bars):
        y = 14 + bar_h * i
        w = plot_w * count / top
        out.append(f'<g class="bar" data-rule="{escape(label)}" data-value="{count}">'
                   f'<text x="{label_w - 6}" y="{y + 12}" font-size="11" text-anchor="end">{escape(label[:40])}</text>'
                   f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 4}" fill="#6aa97a"/>'
                   f'<text x="{label_w + w + 4:.1f}" y="{y + 12}" font-size="11">{count} runs, 0 failures</text></g>')
    if not bars:
        out.append(f'<text x="{width / 2:.0f}" y="30" text-anchor="middle" fill="#777">every rule failed at least once</text>')
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------- the page


def _indicator_table(items: list[Indicator]) -> str:
    rows = ["<table id=\"indicators\"><thead><tr><th>Indicator</th><th>Latest run of each pipeline and contract</th>"
            "<th>All runs shown</th>"
            "<th>Numerator / denominator</th><th>Definition</th><th>Denominator</th></tr></thead><tbody>"]
    for item in items:
        frac = ("n/a" if item.denominator in (None, 0)
                else f"{_num(item.numerator)} / {_num(item.denominator)}")
        overall = item.show(item.overall) if item.unit != "seconds" else (
            "n/a" if item.overall is None else f"{100 * item.overall:.2f}% within SLA")
        rows.append(f'<tr data-indicator="{item.key}" data-latest="{_num(item.latest, 6)}" '
                    f'data-overall="{_num(item.overall, 6)}"><th>{escape(item.name)}</th>'
                    f'<td class="num">{escape(item.show(item.latest))}</td><td class="num">{escape(overall)}</td>'
                    f'<td class="num">{escape(frac)}</td><td>{escape(item.definition)}</td>'
                    f'<td>{escape(item.denominator_text)}</td></tr>')
    rows.append("</tbody></table>")
    return "".join(rows)


def _latest_table(run: RunSummary) -> str:
    head = ("<tr><th>Rule</th><th>Type</th><th>Column</th><th>Dimension</th><th>Severity</th><th>Status</th>"
            "<th>Failed rows</th><th>Metric</th><th>Threshold</th><th>Message</th></tr>")
    rows = [f'<table class="latest" data-pipeline="{escape(run.pipeline)}" '
            f'data-contract="{escape(run.contract or "")}" data-run="{escape(run.run_id)}">'
            f"<thead>{head}</thead><tbody>"]
    for rule in run.rules:
        status = rule.get("rule_status") or ("passed" if rule.get("passed") else "failed")
        failed = rule.get("failed_count")
        rows.append(
            f'<tr data-rule="{escape(rule["check_name"])}" data-status="{escape(status)}" '
            f'data-failed="{"" if failed is None else failed}"><td>{escape(rule["check_name"])}</td>'
            f'<td>{escape(rule.get("rule_type") or "")}</td><td>{escape(rule.get("column") or "-")}</td>'
            f'<td>{escape(rule.get("dimension") or "-")}</td><td>{escape(rule.get("severity") or "")}</td>'
            f'<td class="{_status_class(status)}">{escape(status)}</td>'
            f'<td class="num">{"-" if failed is None else failed}</td>'
            f'<td class="num">{escape(_num(rule.get("metric_value")))}</td>'
            f'<td>{escape(rule.get("threshold") or "-")}</td><td>{escape(rule.get("message") or "")}</td></tr>')
    rows.append("</tbody></table>")
    return "".join(rows)


def render_report(runs: Sequence[RunSummary], *, source: str = "", pipeline: str | None = None,
                  generated_at: datetime | None = None) -> str:
    """The whole HTML page for `runs` (oldest first)."""
    generated = (generated_at or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    pipelines = list(dict.fromkeys(r.pipeline for r in runs))
    names = series_labels(runs)
    labels = [_x_label(r) for r in runs]
    trend = {name: [(i, float(sum(x.get("failed_count") or 0 for x in r.rules)))
                    for i, r in enumerate(runs) if series_key(r) == key] for key, name in names.items()}
    ratio = {name: [(i, r.valid_ratio) for i, r in enumerate(runs) if series_key(r) == key]
             for key, name in names.items()}
    solid = never_failing(runs)
    multi = len(names) > 1
    bars = [(f"{names[(p, c)]} · {n}" if multi else n, count) for p, c, n, count in solid]
    latest = {series_key(r): r for r in runs}  # the last run of each pipeline and contract
    scope = f"pipeline {pipeline}" if pipeline else f"{len(pipelines)} pipeline(s): {', '.join(pipelines)}"
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">",
        f"<title>Data quality history: {escape(scope)}</title><style>{CSS}</style></head>",
        f'<body data-runs="{len(runs)}" data-pipelines="{len(pipelines)}">',
        f"<h1>Data quality history</h1><div class=\"meta\">{escape(scope)} · {len(runs)} run(s) · "
        f"history {escape(redact(source))} · generated {generated}</div>",
    ]
    if not runs:
        parts.append("<p>No runs in this history.</p></body></html>")
        return "".join(parts)
    parts += [
        "<h2>Charts</h2><div class=\"grid\">",
        "<figure><figcaption>Failure rate per rule over time</figcaption>",
        heatmap("chart-failure-rate", runs, labels),
        "<div class=\"note\">Row rules: flagged rows / rows checked in that run. Dataset rules (row count, "
        "freshness, volume, schema, ...): FAIL, WARN or ok. Grey: skipped (not enough history).</div></figure>",
        "<figure><figcaption>failed_count trend per pipeline</figcaption>",
        line_chart("chart-failed-count", trend, labels, y_title="failed rows (sum over rules)"),
        "<div class=\"note\">Sum of failed_count over the rules of each run (a row breaking two rules counts twice)."
        "</div></figure>",
        "<figure><figcaption>Valid-record ratio over time</figcaption>",
        line_chart("chart-valid-ratio", ratio, labels, y_max=1.0, percent=True, y_title="valid / total rows"),
        "</figure>",
        "<figure><figcaption>Rules that never fail</figcaption>",
        bar_chart("chart-never-fail", bars),
        "<div class=\"note\">Evaluated in every run shown and never failed: either the data is solid or the "
        "rule is too loose to catch anything. Review them.</div></figure></div>",
        "<h2>Indicators</h2>",
        _indicator_table(indicators(runs)),
        "<h2>Latest run</h2>",
    ]
    for key, run in latest.items():
        when = run.validated_at.strftime("%Y-%m-%d %H:%M:%S UTC") if run.validated_at else "?"
        score = "n/a" if run.quality_score is None else f"{run.quality_score:.4f}"
        gate = "n/a" if run.gate_passed is None else ("passed" if run.gate_passed else "FAILED")
        parts.append(f"<h3>{escape(names[key])} · run {escape(run.run_id)} · {when}</h3>"
                     f"<div class=\"meta\">rows {run.total_rows} · valid {run.valid_rows} · quality_score {score} · "
                     f"status {escape(run.run_status or '?')} · gate {gate}</div>")
        parts.append(_latest_table(run))
    parts.append("</body></html>")
    return "".join(parts)

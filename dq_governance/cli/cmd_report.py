"""`dqgov report`: the quality history as one self-contained HTML page (inline SVG charts, no network)."""

from __future__ import annotations

from pathlib import Path

import click

from dq_governance.cli.app import cli
from dq_governance.cli.inputs import refuse_output_in
from dq_governance.errors import ConfigError, InputDataError


@cli.command("report")
@click.option("--history", "history", required=True, help="Report history directory (what `dqgov check --report` writes).")
@click.option("--pipeline", help="Only this pipeline (default: every pipeline in the history).")
@click.option("-o", "--output", default="report.html", show_default=True, help="HTML file to write.")
@click.option("--format", "history_format", type=click.Choice(("parquet", "delta")), default="parquet",
              show_default=True, help="History format; parquet is read without Spark.")
def report_command(history: str, pipeline: str | None, output: str, history_format: str) -> int:
    """Write the HTML quality report of a report history."""
    from dq_governance.observe.history import read_history_rows, runs
    from dq_governance.observe.report_html import render_report

    if "://" not in history or history.startswith("file:"):
        refuse_output_in(output, history, "--history", "report history")
    spark = None
    if history_format == "delta":
        from pyspark.sql import SparkSession

        from dq_governance.cli.inputs import delta_conf
        from dq_governance.lineage.spark import spark_session

        owned = SparkSession.getActiveSession() is None
        spark = spark_session("dqgov-report", listener=False, **{"spark.ui.enabled": "false", **delta_conf()})
    try:
        rows = read_history_rows(history, pipeline=pipeline, format=history_format, spark=spark)
    finally:
        if spark is not None and owned:
            spark.stop()
    if not rows:
        where = f" for pipeline {pipeline}" if pipeline else ""
        raise InputDataError(f"{history}: no runs in the report history{where}")
    summaries = runs(rows)
    target = Path(output)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_report(summaries, source=history, pipeline=pipeline), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{output}: cannot write the report: {exc.strerror}") from None
    pipelines = len({s.pipeline for s in summaries})
    click.echo(f"wrote {output}: {len(summaries)} run(s), {pipelines} pipeline(s)")
    return 0

"""`dqgov check`: check a dataset against its contract, publish under the policy, record report and lineage.

Exit codes: 0 published (passed or warned), 1 the gate blocked publication, 2 bad input.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from pathlib import Path
from typing import Any

import click

from dq_governance.checks.materialize import STORAGES
from dq_governance.cli.app import cli
from dq_governance.cli.inputs import INPUT_FORMATS, delta_conf, guess_format, read_frame
from dq_governance.errors import EXIT_GATE_FAILED, EXIT_OK, ConfigError, InputDataError

log = logging.getLogger(__name__)


def _uuid(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a UUID") from None


@cli.command("check")
@click.argument("contract_path", metavar="CONTRACT")
@click.option("--input", "input_path", help="Data to check (default: the contract's dataset.path or table).")
@click.option("--format", "input_format", type=click.Choice(INPUT_FORMATS), help="Input format (default: from the contract or the file extension).")
@click.option("--output", help="Target for valid rows (default: out/<contract>/valid).")
@click.option("--output-format", type=click.Choice(("parquet", "delta", "table")), default="parquet", show_default=True)
@click.option("--mode", type=click.Choice(("overwrite", "append", "merge")), default="overwrite", show_default=True)
@click.option("--merge-keys", help="Comma-separated keys for --mode merge (Delta).")
@click.option("--quarantine", help="Where invalid rows go (default: out/<contract>/quarantine).")
@click.option("--report", help="Report history directory (default: out/report).")
@click.option("--run-id", callback=_uuid, help="Run id (a UUID; default: a new one).")
@click.option("--pipeline", help="Pipeline name in the report and lineage (default: the contract name).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the table.")
@click.option("--lineage", help="OpenLineage: file:PATH | http(s)://URL | console | none (default: file next to the report).")
@click.option("--lineage-strict", is_flag=True, help="Fail the run when a lineage event cannot be emitted.")
@click.option("--no-listener", is_flag=True, help="Do not attach the OpenLineage Spark listener.")
@click.option("--parent-run-id", help="Orchestrator run id, for the OpenLineage parent facet.")
@click.option("--parent-job", help="Orchestrator job as NAMESPACE/NAME.")
@click.option("--no-mask", is_flag=True, help="Publish PII columns unmasked (needs the next flag too).")
@click.option("--i-know-this-publishes-unmasked-data", "unmasked_ok", is_flag=True,
              help="Confirm --no-mask.")
@click.option("--show-failed", type=click.IntRange(min=0), default=0, metavar="N",
              help="Show up to N invalid rows with their failed rules, masked like the outputs.")
@click.option("--split-storage", type=click.Choice(STORAGES), default="auto",
              show_default=True, help="How the checked rows wait in Spark's cache for the two outputs: "
              "packed (one struct column per row: fastest), cache (one column per field: exact "
              "column-level lineage for a Spark listener), auto (packed unless a listener is set).")
@click.option("--sync", "sync_catalog", type=click.Choice(("openmetadata", "datahub")),
              help="Push this run's contract and results to a catalog.")
@click.option("--sync-url", help="Catalog URL (default: DQGOV_<CATALOG>_URL; none means a dry run).")
@click.option("--sync-out", help="Dry-run request folder (default: out/catalog/<catalog>).")
def check_command(
    contract_path: str, input_path: str | None, input_format: str | None, output: str | None, output_format: str,
    mode: str, merge_keys: str | None, quarantine: str | None, report: str | None, run_id: str | None,
    pipeline: str | None, as_json: bool, lineage: str | None, lineage_strict: bool, no_listener: bool,
    parent_run_id: str | None, parent_job: str | None, no_mask: bool, unmasked_ok: bool, show_failed: int,
    split_storage: str, sync_catalog: str | None, sync_url: str | None, sync_out: str | None,
) -> int:
    """Check CONTRACT's dataset; publish valid rows, quarantine invalid ones, append the report."""
    from dq_governance.api import resolve_contract, run

    if no_mask and not unmasked_ok:
        raise ConfigError("--no-mask publishes PII unmasked; add --i-know-this-publishes-unmasked-data to confirm")
    if unmasked_ok and not no_mask:
        raise ConfigError("--i-know-this-publishes-unmasked-data only goes with --no-mask")
    contract, _ = resolve_contract(contract_path)
    source = input_path or contract.dataset.path or contract.dataset.table
    if not source:
        raise InputDataError(f"{contract_path}: no --input given and the contract names no dataset.path or table")
    fmt = input_format or guess_format(source, contract.dataset.format, is_table=not input_path and not contract.dataset.path)
    if fmt != "table" and "://" not in source and not Path(source).exists():
        raise InputDataError(f"{source}: no such file or directory")
    keys = [k.strip() for k in (merge_keys or "").split(",") if k.strip()]
    if mode == "merge" and not keys:
        raise ConfigError("--mode merge needs --merge-keys")
    if mode == "merge" and output_format == "parquet":
        output_format = "delta"  # a merge needs Delta; say so in the summary rather than fail
    if output_format == "table" and not output:
        output = contract.dataset.table
        if not output:
            raise ConfigError("--output-format table needs --output TABLE (or dataset.table in the contract)")
    base = Path("out")
    # Local paths are made absolute here: Spark resolves relative ones against the JVM's start directory.
    output = _local(output or str(base / contract.name / "valid"), output_format)
    quarantine = _local(quarantine or str(base / contract.name / "quarantine"), "parquet")
    report = _local(report or str(base / "report"), "parquet")
    lineage = lineage or f"file:{Path(report).parent / 'lineage' / 'events.jsonl'}"
    source = _local(source, fmt)

    spark, owned = _session(contract, lineage, listener=not no_listener, parent_run_id=parent_run_id,
                            parent_job=parent_job, delta="delta" in (fmt, output_format))
    try:
        df = read_frame(spark, fmt, source)
        result = run(
            df, contract, target=output, quarantine=quarantine, report=report, mode=mode, format=output_format,
            merge_keys=keys, mask=not no_mask, lineage=lineage, lineage_strict=lineage_strict,
            parent_run_id=parent_run_id, parent_job=parent_job, run_id=run_id, pipeline=pipeline,
            source=source, raise_on_block=False, contract_location=contract_path, failed_sample=show_failed,
            storage=split_storage,
        )
        if sync_catalog:
            _sync(sync_catalog, contract, result, url=sync_url,
                  out=sync_out or str(base / "catalog" / sync_catalog), quiet=as_json)
        if as_json:
            summary = result.summary()
            summary.update({"masking": result.masking, "outputs": result.outputs, "report": report})
            if show_failed:
                summary["failed_sample"] = result.failed_rows
            click.echo(json.dumps(summary, default=str))
        else:
            click.echo(render_summary(result, report=report))
    finally:
        if owned:
            spark.stop()
    return EXIT_OK if result.gate.publish else EXIT_GATE_FAILED


def _sync(catalog: str, contract: Any, result: Any, *, url: str | None, out: str, quiet: bool) -> None:
    """Push the run to a catalog; a catalog failure is reported but never undoes the publication."""
    from dq_governance.catalogs.sync import sync_run

    url = url or os.environ.get(f"DQGOV_{catalog.upper()}_URL")
    report = sync_run(catalog, contract, result, url=url, out=out, dry_run=url is None)
    if not quiet:
        where = f"dry run, requests in {out}" if report.dry_run else url
        click.echo(f"catalog {catalog} ({where}): {len(report.created)} created, {len(report.updated)} updated, "
                   f"{len(report.unchanged)} unchanged, {len(report.failed)} failed")
    for entity, error in report.failed:
        log.warning("catalog %s: %s: %s", catalog, entity, error)


def _local(location: str, fmt: str) -> str:
    """An absolute path for a local file location; table names and URIs unchanged."""
    if fmt == "table" or "://" in location or location.startswith("file:"):
        return location
    return str(Path(location).resolve())


def _session(contract: Any, lineage: str | None, *, listener: bool, parent_run_id: str | None,
             parent_job: str | None, delta: bool) -> tuple[Any, bool]:
    """The Spark session (with the OpenLineage listener when available) and whether this command owns it."""
    from pyspark.sql import SparkSession

    if SparkSession.getActiveSession() is not None:
        return SparkSession.getActiveSession(), False
    from dq_governance.lineage.spark import spark_session

    # A local CLI run: no UI or progress bars in the summary, and shuffles sized to this machine's cores.
    conf = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": str(max(2, 2 * (os.cpu_count() or 1)))}
    if delta:
        conf.update(delta_conf())
    session = spark_session("dqgov-check", lineage=lineage, contract=contract, listener=listener,
                            parent_run_id=parent_run_id, parent_job=parent_job, **conf)
    session.sparkContext.setLogLevel("ERROR")
    return session, True


def render_summary(result: Any, *, report: str | None = None) -> str:
    """The readable summary: one line per rule, then totals, the gate decision and the outputs."""
    rows = [("rule", "type", "column", "severity", "failed", "metric", "status")]
    for rule in result.rules:
        rows.append((
            rule.name, rule.type, rule.column or "-", rule.severity,
            "-" if rule.failed_count is None else str(rule.failed_count),
            "-" if rule.metric_value is None else f"{rule.metric_value:g}",
            rule.status.upper() if rule.status != "passed" else "ok",
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [f"contract {result.contract_name} {result.contract_version}   run {result.run_id}   "
             f"pipeline {result.pipeline}"]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    score = "n/a (empty input)" if result.quality_score is None else f"{result.quality_score:.4f}"
    lines.append("")
    lines.append(f"rows: total {result.total_rows}  valid {result.valid_rows}  invalid {result.invalid_rows}  "
                 f"quality_score {score}")
    verdict = "PUBLISH" if result.gate.publish else "BLOCKED"
    lines.append(f"status: {result.status}   gate: {verdict}   published: {'yes' if result.published else 'no'}"
                 f"   masking: {result.masking or 'none'}")
    for reason in result.gate.reasons:
        lines.append(f"  - {reason}")
    for out in result.outputs:
        lines.append(f"wrote {out['kind']}: {_shown(out['location'])} ({out['rows']} rows, {out['format']})")
    if report:
        lines.append(f"report: {_shown(report)}")
    if result.failed_rows:
        masked = "unmasked: masking disabled" if result.masking == "disabled" else "PII masked"
        lines.append(f"failed rows (first {len(result.failed_rows)}, {masked}):")
        lines += ["  " + json.dumps(row, default=str, ensure_ascii=False) for row in result.failed_rows]
    return "\n".join(lines)


def _shown(location: str) -> str:
    """A path under the working directory, shown relative to it; anything else as is."""
    cwd = os.getcwd()
    if os.path.isabs(location) and (location + os.sep).startswith(cwd + os.sep):
        return os.path.relpath(location, cwd)
    return location

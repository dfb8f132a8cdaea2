"""`dqgov check`: check a dataset against its contract, publish under the policy, record report and lineage.

A seed-001 pipeline JSON (as CONTRACT or `--config`) also says where to read and write: its `input`,
`output`, `validations.outputs` and `report` are the defaults that explicit flags override.
Exit codes: 0 published (passed or warned), 1 the gate blocked publication or the `--sync` catalog refused a
write, 2 bad input (a contract or catalog setting `--sync` cannot use included). A failed sync never undoes
the publication.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import click

from dq_governance.checks.materialize import STORAGES
from dq_governance.cli.app import cli
from dq_governance.cli.inputs import INPUT_FORMATS, delta_conf, guess_format, read_frame
from dq_governance.errors import EXIT_GATE_FAILED, EXIT_OK, ConfigError, ContractError, InputDataError, SourceLocation
from dq_governance.session import set_log_level

log = logging.getLogger(__name__)
_DEFAULT_OUT = Path("out")


def _run_id(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--run-id as run() takes it (the same validate_run_id); a bad one is one error line, exit 2."""
    from dq_governance.publish.writer import validate_run_id

    if value is None:
        return None
    try:
        return validate_run_id(value)
    except ConfigError as exc:
        raise ConfigError(f"--run-id: {exc}") from None


def _name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not value.strip():  # would fall back to the default name without a word
        raise click.BadParameter("is empty")
    return value


@dataclass
class Destination:
    """Where one output of the run goes, after flags and the pipeline config are combined."""

    location: str  # an absolute path; a table name for --output-format table; a named table's Delta location
    format: str
    mode: str
    table: str | None = None  # the catalog table a pipeline config named (written as Delta at its location)
    merge_keys: list[str] = field(default_factory=list)
    key: str = ""  # the config key it came from, for messages


@cli.command("check")
@click.argument("contract_path", metavar="[CONTRACT]", required=False)
@click.option("--config", "config_path", metavar="PIPELINE_JSON",
              help="A seed-001 pipeline JSON (the same as giving it as CONTRACT): its validations are the contract; "
                   "its input, output, validations.outputs and report are this run's defaults.")
@click.option("--input", "input_path", help="Data to check (default: the config's input, else the contract's "
                                            "dataset.path or table).")
@click.option("--format", "input_format", type=click.Choice(INPUT_FORMATS), help="Input format (default: from the contract or the file extension).")
@click.option("--output", help="Target for valid rows (default: the config's output or validations.outputs.valid, "
                               "else out/<contract>/valid).")
@click.option("--output-format", type=click.Choice(("parquet", "delta", "table")),
              help="Target format (default: the config's, else parquet).")
@click.option("--mode", type=click.Choice(("overwrite", "append", "merge")),
              help="Target write mode (default: the config's, else overwrite).")
@click.option("--merge-keys", help="Comma-separated keys for --mode merge (Delta; default: the config's "
                                   "output.options.merge_keys).")
@click.option("--quarantine", help="Where invalid rows go (default: the config's validations.outputs.invalid, else "
                                   "out/<contract>/quarantine).")
@click.option("--report", help="Report history directory (default: the config's report, else out/report).")
@click.option("--run-id", callback=_run_id,
              help="Run id: 1-128 characters, a letter or digit first, then also . _ : + @ - (a UUID, or e.g. "
                   "Airflow's scheduled__2026-01-01T00:00:00+00:00); the same id again retries the run. Default: a "
                   "new UUID.")
@click.option("--pipeline", callback=_name,
              help="Pipeline name in the report and lineage (default: the config's name, else the contract name).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the table.")
@click.option("--lineage", help="OpenLineage: file:PATH | http(s)://URL | console | none (default: a file next to "
                                "the report directory; out/lineage/events.jsonl when the report is a table).")
@click.option("--lineage-strict", is_flag=True, help="Fail the run when a lineage event cannot be emitted.")
@click.option("--no-listener", is_flag=True, help="Do not attach the OpenLineage Spark listener.")
@click.option("--parent-run-id", help="The orchestrator's OpenLineage runId (a UUID, as in OPENLINEAGE_PARENT_ID), "
                                      "for the OpenLineage parent facet.")
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
@click.option("--sync-url", help="Catalog URL (default: DQGOV_<CATALOG>_URL, else <catalog>.url in "
              ".dqgov/config.yaml; none means a dry run). Catalog names come from that config too.")
@click.option("--sync-out", help="Dry run into this folder: the requests are written as files, not sent, even when "
              "a catalog URL is set (as `dqgov sync --out`). Without a URL the sync is a dry run into "
              "out/catalog/<catalog>.")
@click.option("--remote", metavar="sc://HOST:PORT",
              help="Run on a Spark Connect server (like the pyspark shell's --remote). The server owns the "
              "listener, Delta and log settings, so dqgov sets none of them; paths are the server's. On Connect "
              "a plain parquet append is refused and a parquet overwrite is not atomic: use Delta outputs.")
@click.option("--metrics-only", is_flag=True,
              help="Check and record only: no valid or quarantine output is written; the report history and "
              "lineage still are. Cannot be combined with --output, --output-format, --mode, --merge-keys or "
              "--quarantine.")
def check_command(
    contract_path: str | None, config_path: str | None, input_path: str | None, input_format: str | None,
    output: str | None, output_format: str | None, mode: str | None, merge_keys: str | None,
    quarantine: str | None, report: str | None, run_id: str | None, pipeline: str | None, as_json: bool,
    lineage: str | None, lineage_strict: bool, no_listener: bool, parent_run_id: str | None,
    parent_job: str | None, no_mask: bool, unmasked_ok: bool, show_failed: int, split_storage: str,
    sync_catalog: str | None, sync_url: str | None, sync_out: str | None, remote: str | None,
    metrics_only: bool,
) -> int:
    """Check CONTRACT's dataset; publish valid rows, quarantine invalid ones, append the report.

    CONTRACT is any contract file, or a seed-001 pipeline JSON (also accepted as --config). A pipeline's
    `input`, `output` (format, path, mode, options.merge_keys), `validations.outputs.valid` / `.invalid`
    and `report` are this run's defaults; a flag given explicitly overrides the one setting it names
    (--output the path only, --mode the mode only, ...). In a pipeline config a path without `/` (such as
    silver.orders_ok) is a catalog table, written as Delta at the table's location; anything else is a path,
    relative to the working directory.
    """
    from dq_governance.api import resolve_contract, run

    if no_mask and not unmasked_ok:
        raise ConfigError("--no-mask publishes PII unmasked; add --i-know-this-publishes-unmasked-data to confirm")
    if unmasked_ok and not no_mask:
        raise ConfigError("--i-know-this-publishes-unmasked-data only goes with --no-mask")
    if (sync_url or sync_out) and not sync_catalog:
        raise ConfigError("--sync-url and --sync-out go with --sync openmetadata|datahub")
    if contract_path and config_path:
        raise ConfigError("give the contract as CONTRACT or as --config, not both")
    contract_path = contract_path or config_path
    if not contract_path:
        raise ConfigError("missing CONTRACT (a contract file, or a pipeline JSON with --config)")
    if metrics_only:
        given = [flag for flag, value in (("--output", output), ("--output-format", output_format), ("--mode", mode),
                                          ("--merge-keys", merge_keys), ("--quarantine", quarantine)) if value]
        if given:
            raise ConfigError(f"--metrics-only writes no valid or quarantine output; drop {', '.join(given)}")
    contract, _ = resolve_contract(contract_path)
    project = _project_config() if sync_catalog else None  # a bad config stops the run before any Spark work
    if sync_catalog:
        from dq_governance.catalogs.sync import check_settings

        check_settings(sync_catalog, url=sync_url, dry_run=sync_out is not None, project=project)  # URL, token
    plan = _plan(contract, contract_path, input_path=input_path, input_format=input_format, output=output,
                 output_format=output_format, mode=mode, merge_keys=merge_keys, quarantine=quarantine,
                 report=report, pipeline=pipeline, lineage=lineage, local_input=remote is None)
    target, quarantined, reported = plan.target, plan.quarantine, plan.report
    written = [reported] if metrics_only else plan.destinations

    uses_delta = "delta" in (plan.format, *(d.format for d in written))
    if remote is not None:
        from dq_governance.session import remote as remote_session

        spark, owned = remote_session(remote), True
    else:
        spark, owned = _session(contract, plan.lineage, plan.pipeline or contract.name, listener=not no_listener,
                                parent_run_id=parent_run_id, parent_job=parent_job, delta=uses_delta)
    synced = None
    try:
        _require_delta(spark, uses_delta, written)
        if not metrics_only:
            _refuse_on_connect(spark, quarantined)
        for where in plan.destinations:
            if where.table:
                where.location = _table_location(spark, where)
        df = read_frame(spark, plan.format, plan.source)
        # --metrics-only: the API's outputs=False (no target, no quarantine); passed only then, so a plain
        # run does not depend on it
        outputs = {"outputs": False} if metrics_only else {
            "target": target.location, "quarantine": quarantined.location, "mode": target.mode,
            "format": target.format, "merge_keys": target.merge_keys, "quarantine_format": quarantined.format}
        result = run(
            df, contract, report=reported.location, report_format=reported.format, mask=not no_mask,
            lineage=plan.lineage, lineage_strict=lineage_strict, parent_run_id=parent_run_id, parent_job=parent_job,
            run_id=run_id, pipeline=plan.pipeline, source=plan.source, raise_on_block=False,
            contract_location=contract_path, failed_sample=show_failed, storage=split_storage, **outputs,
        )
        kinds = {out["kind"] for out in result.outputs}
        if quarantined.mode == "overwrite" and "quarantine" in kinds:
            _keep_only_run(spark, quarantined, result.run_id)
        tables = {where.table: where.location for where in written
                  if where.table and _register_table(spark, where)}
        if sync_catalog:
            synced = _sync(sync_catalog, contract, result, url=sync_url, project=project,
                           out=sync_out or str(_DEFAULT_OUT / "catalog" / sync_catalog), dry_run=sync_out is not None,
                           quiet=as_json)
        if as_json:
            summary = result.summary()
            summary.update({"masking": result.masking, "outputs": result.outputs, "report": reported.location,
                            "tables": tables})
            if synced is not None:
                summary["catalog_sync"] = synced.as_dict()
            if show_failed:
                summary["failed_sample"] = result.failed_rows
            click.echo(json.dumps(summary, default=str))
        else:
            click.echo(render_summary(result, report=reported.location, tables=tables))
    finally:
        if owned:
            spark.stop()
    code = EXIT_OK if result.gate.publish else EXIT_GATE_FAILED
    # The publication stands either way; the exit code says when the catalog sync failed (1) or could not use
    # the contract or the catalog settings (2).
    return max(code, synced.exit_code) if synced is not None else code


# ------------------------------------------------------------------ flags + the pipeline config


@dataclass
class _Plan:
    """What the run reads and where it writes, flags over the pipeline config over the defaults."""

    source: str
    format: str
    target: Destination
    quarantine: Destination
    report: Destination
    pipeline: str | None
    lineage: str

    @property
    def destinations(self) -> list[Destination]:
        """Target, quarantine and report."""
        return [self.target, self.quarantine, self.report]


def _plan(contract: Any, path: str, *, input_path: str | None, input_format: str | None, output: str | None,
          output_format: str | None, mode: str | None, merge_keys: str | None, quarantine: str | None,
          report: str | None, pipeline: str | None, lineage: str | None, local_input: bool = True) -> _Plan:
    """Combine the flags with the contract's seed pipeline settings (if any); no Spark yet.

    `local_input=False` (a remote session): the input is the server's, so it is not looked for here.
    """
    seed = _seed_pipeline(contract, path)
    source, fmt = _source(contract, seed, path, input_path, input_format, local=local_input)
    keys = [k.strip() for k in (merge_keys or "").split(",") if k.strip()]
    target = _target(contract, seed, output, output_format, mode, keys)
    quarantined = _configured(quarantine, seed.quarantine if seed else None,
                              _DEFAULT_OUT / contract.name / "quarantine", "parquet", "append")
    reported = _configured(report, seed.report if seed else None, _DEFAULT_OUT / "report", "parquet", "append")
    if lineage is None:  # next to the report's directory; a table report's location is known only to Spark
        beside = _DEFAULT_OUT if reported.table else Path(reported.location).parent
        lineage = f"file:{beside / 'lineage' / 'events.jsonl'}"
    return _Plan(_local(source, fmt), fmt, target, quarantined, reported,
                 pipeline or (seed.name if seed else None), lineage)


def _seed_pipeline(contract: Any, path: str) -> Any:
    """The contract's seed pipeline settings (None for a plain contract); a bad one names the file."""
    from dq_governance.contracts.migrate import seed_pipeline

    try:
        return seed_pipeline(contract)
    except ContractError as exc:  # a native / ODCS contract carrying extensions.seed (a seed file fails at load)
        raise ContractError(exc.message, exc.location or SourceLocation(path), exc.field) from None


def _source(contract: Any, seed: Any, path: str, input_path: str | None, input_format: str | None,
            *, local: bool = True) -> tuple[str, str]:
    """The input location and format: --input, else the config's `input`, else the contract's dataset."""
    configured = seed.input if seed and not input_path else None
    if configured is not None:  # a format the config states wins over the file extension
        source = configured.location
        fmt = input_format or ("table" if configured.table else configured.format) or guess_format(
            source, None, is_table=False)
    elif input_path:
        source = input_path
        fmt = input_format or guess_format(source, contract.dataset.format, is_table=False)
    elif seed is not None:  # a pipeline's dataset is its output: never read the target as the input
        raise InputDataError(f"{path}: no --input given and the pipeline names no `input`")
    else:
        source = contract.dataset.path or contract.dataset.table
        if not source:
            raise InputDataError(f"{path}: no --input given and the contract names no dataset.path or table")
        fmt = input_format or guess_format(source, contract.dataset.format, is_table=not contract.dataset.path)
    if local and fmt != "table" and "://" not in source and not Path(source).exists():
        raise InputDataError(f"{source}: no such file or directory")
    return source, fmt


def _target(contract: Any, seed: Any, output: str | None, output_format: str | None, mode: str | None,
            keys: list[str]) -> Destination:
    """The target: each flag given overrides its own setting of the config's output (or validations.outputs.valid)."""
    configured = seed.target if seed else None
    fmt = output_format or (configured.format if configured else "parquet")
    mode = mode or (configured.mode if configured else "overwrite")
    keys = keys or (list(configured.merge_keys) if configured else [])
    if mode == "merge" and not keys:
        raise ConfigError("--mode merge needs --merge-keys")
    if keys and mode != "merge":
        raise ConfigError(f"--merge-keys only go with --mode merge (the target's mode is {mode})")
    if mode == "merge" and fmt == "parquet":
        fmt = "delta"  # a merge needs Delta; say so in the summary rather than fail
    if fmt == "table":  # --output-format table: a catalog table written with saveAsTable
        location = output or (configured.location if configured and configured.table else None)
        location = location or contract.dataset.table
        if not location:
            raise ConfigError("--output-format table needs --output TABLE (or dataset.table in the contract)")
        return Destination(location, fmt, mode, merge_keys=keys)
    where = _configured(output, configured, _DEFAULT_OUT / contract.name / "valid", fmt, mode)
    where.format, where.mode, where.merge_keys = fmt, mode, keys
    if where.table and fmt != "delta":
        raise ConfigError(f"--output-format {fmt}: {where.key}.path `{where.table}` is a catalog table, written as "
                          "Delta; give --output PATH as well to write a path")
    return where


def _configured(flag: str | None, configured: Any, default: Path, fmt: str, mode: str) -> Destination:
    """A flag's path, else the config's destination (a table stays a name until Spark resolves it), else the default."""
    if configured is None:
        return Destination(_local(flag or str(default), fmt), fmt, mode)
    if flag:  # the path is overridden; the config's format and mode still apply
        return Destination(_local(flag, configured.format), configured.format, configured.mode, key=configured.key)
    if configured.table:
        return Destination("", configured.format, configured.mode, table=configured.location, key=configured.key)
    return Destination(_local(configured.location, configured.format), configured.format, configured.mode,
                       key=configured.key)


# ------------------------------------------------------------------ Spark: Delta, catalog tables


def _require_delta(spark: Any, needed: bool, destinations: list[Destination]) -> None:
    """Refuse before any work when an input or output is Delta and the session cannot write Delta."""
    from dq_governance.publish.writer import delta_enabled

    if needed and not delta_enabled(spark):
        named = ", ".join(d.table or d.location for d in destinations if d.format == "delta") or "the input"
        raise ConfigError(f"{named}: Delta needs delta-spark and a session with "
                          "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension")


def _table_location(spark: Any, where: Destination) -> str:
    """Where a configured table's Delta files live: the existing table's location, else where Spark would put it."""
    from dq_governance.contracts.migrate import table_parts
    from dq_governance.publish.writer import table_info

    name = str(where.table)
    info = table_info(spark, name)
    if info is not None:
        if info.provider != "delta" or not info.location:
            raise ConfigError(f"{where.key}.path: table {name} exists as a {info.provider or 'non-Delta'} table; "
                              "dqgov writes configured tables as Delta")
        return _plain(info.location)
    parts = [p.lower() for p in table_parts(name)]  # the catalog's own spelling of managed locations
    if len(parts) > 2:
        raise ConfigError(f"{where.key}.path: table {name} does not exist; dqgov creates new tables as db.table in "
                          "the session catalog only: create it first")
    database = parts[0] if len(parts) == 2 else spark.catalog.currentDatabase()
    if spark.catalog.databaseExists(database):
        base = _plain(spark.catalog.getDatabase(database).locationUri)
    else:
        base = str(Path(_plain(spark.conf.get("spark.sql.warehouse.dir"))) / f"{database}.db")
    return str(Path(base) / parts[-1])


def _register_table(spark: Any, where: Destination) -> bool:
    """Register a configured table over the Delta files just written (database included); True when it exists."""
    from dq_governance.contracts.migrate import table_parts
    from dq_governance.identifiers import quote_identifier
    from dq_governance.publish.writer import is_delta_table

    name = str(where.table)
    if spark.catalog.tableExists(name):
        return True
    if not is_delta_table(spark, where.location):  # nothing was written there (e.g. a blocked run)
        return False
    parts = table_parts(name)
    if len(parts) == 2:
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote_identifier(parts[0])}")
    location = where.location.replace("\\", "\\\\").replace("'", "\\'")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {'.'.join(map(quote_identifier, parts))} USING delta "
              f"LOCATION '{location}'")
    return True


def _keep_only_run(spark: Any, where: Destination, run_id: str) -> None:
    """validations.outputs.invalid `mode: overwrite`: once this run's quarantine is in place, drop earlier runs.

    run() keeps one quarantine partition per run (append); overwrite removes the other runs' partitions after
    this run's rows were promoted, so a failure never leaves the quarantine without the current rows.
    """
    from dq_governance.publish.policy import RUN_ID_COL
    from dq_governance.publish.writer import DeltaRef, _sql_literal, partition_dir
    from dq_governance.session import HadoopFs

    if where.format == "delta":  # SQL DELETE: the same on a classic and a Connect session
        spark.sql(f"DELETE FROM {DeltaRef(where.location).sql} WHERE `{RUN_ID_COL}` != {_sql_literal(run_id)}")
        return
    fs, keep = HadoopFs(spark, where.location), partition_dir(RUN_ID_COL, run_id)
    for name, is_dir in fs.children(where.location):
        if is_dir and name.startswith(f"{RUN_ID_COL}=") and name != keep:
            fs.delete(f"{where.location.rstrip('/')}/{name}")


def _refuse_on_connect(spark: Any, quarantined: Destination) -> None:
    """Before any write: a parquet quarantine with mode overwrite drops other runs' directories, which Connect cannot."""
    from dq_governance.session import is_connect, unsupported

    if is_connect(spark) and quarantined.mode == "overwrite" and quarantined.format != "delta":
        raise unsupported(f"{quarantined.key or 'quarantine'} mode overwrite on a parquet quarantine (it deletes "
                          "the other runs' directories)", "mode append or a Delta quarantine")


def _plain(location: str) -> str:
    """A local `file:` URI as a plain absolute path (other URIs unchanged)."""
    if location.startswith("file:"):
        return unquote(urlparse(location).path)
    return location if "://" in location else str(Path(location).resolve())


def _project_config() -> Any:
    """The project config of the current directory (`.dqgov/config.yaml`), as `dqgov sync` reads it."""
    from dq_governance.project_config import load_project_config

    return load_project_config(None)


def _sync(catalog: str, contract: Any, result: Any, *, url: str | None, project: Any, out: str, dry_run: bool,
          quiet: bool) -> Any:
    """Push the run to a catalog (a dry run into `out` when asked or without a URL) and print the outcome.

    A catalog failure never undoes the publication; it is in the returned SyncReport, whose exit code the
    command takes. Under --json (`quiet`) the outcome goes in the JSON, and a failure also to stderr.
    """
    from dq_governance.catalogs.base import SyncReport
    from dq_governance.catalogs.sync import catalog_url, sync_run

    url = catalog_url(catalog, url, project)
    dry_run = dry_run or url is None
    try:
        report = sync_run(catalog, contract, result, url=url, out=out, dry_run=dry_run, project=project)
    except (ConfigError, ContractError) as exc:  # settings the catalog cannot use: bad input, data already published
        report = SyncReport(catalog, dry_run=dry_run)
        report.invalid.append((f"catalog {catalog}", str(exc)))
    problems = report.invalid + report.failed
    where = f"dry run, requests in {out}" if report.dry_run else url
    lines = [f"catalog {catalog} ({where}): {len(report.created)} created, {len(report.updated)} updated, "
             f"{len(report.unchanged)} unchanged, {len(problems)} failed"]
    lines += [f"  FAILED {what}: {error}" for what, error in problems]
    if not quiet:
        click.echo("\n".join(lines + [f"  note: {note}" for note in report.notes]))
    elif problems:
        click.echo("\n".join(lines), err=True)
    return report


def _local(location: str, fmt: str) -> str:
    """An absolute path for a local file location; table names and URIs unchanged."""
    if fmt == "table" or "://" in location or location.startswith("file:"):
        return location
    return str(Path(location).resolve())


def _session(contract: Any, lineage: str | None, pipeline: str, *, listener: bool, parent_run_id: str | None,
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
    # The application name leads the Spark listener's job names: one per pipeline, the same in every run.
    session = spark_session(f"dqgov-check-{pipeline}", lineage=lineage, contract=contract, listener=listener,
                            parent_run_id=parent_run_id, parent_job=parent_job, **conf)
    set_log_level(session, "ERROR")
    return session, True


def render_summary(result: Any, *, report: str | None = None, tables: dict[str, str] | None = None) -> str:
    """The readable summary: one line per rule, then totals, the gate decision, the outputs and tables."""
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
    for name, location in (tables or {}).items():
        lines.append(f"table {name}: Delta at {_shown(location)}")
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

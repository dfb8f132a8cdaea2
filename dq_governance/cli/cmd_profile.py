"""`dqgov profile`: profile a dataset in one Spark pass and write a draft contract with evidence comments."""

from __future__ import annotations

import re
from pathlib import Path

import click

from dq_governance.cli.app import cli
from dq_governance.errors import ConfigError, InputDataError
from dq_governance.session import set_log_level

FORMATS = ("csv", "parquet", "json")
SAMPLE_SEED = 20_261_129


@cli.command("profile")
@click.option("--input", "input_path", required=True, help="Data to profile (a file or directory).")
@click.option("--format", "input_format", type=click.Choice(FORMATS), help="Input format (default: from the extension).")
@click.option("-o", "--output", help="Where to write the draft contract (default: print it).")
@click.option("--name", help="Contract and dataset name (default: the input file's stem).")
@click.option("--approx/--exact", "approx", default=None,
              help="Distinct counts by HyperLogLog or exactly (default: exact unless the input is large).")
@click.option("--sample-fraction", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Profile a deterministic sample of this fraction of the rows (evidence then says so).")
def profile_command(input_path: str, input_format: str | None, output: str | None, name: str | None,
                    approx: bool | None, sample_fraction: float | None) -> int:
    """Profile INPUT and draft a native contract: types, nulls, uniqueness, domains, ranges, formats, PII."""
    from dq_governance.cli.inputs import read_frame, refuse_output_in
    from dq_governance.profile import draft_contract, profile

    source = Path(input_path)
    if not source.exists():
        raise InputDataError(f"{input_path}: no such file or directory")
    if output is not None:  # before Spark starts: nothing is read that the write would then replace
        refuse_output_in(output, input_path, "--input", "data")
    fmt = input_format or _guess(source)
    stem = name or re.sub(r"[^A-Za-z0-9_]+", "_", source.stem).strip("_") or "dataset"
    spark, owned = _session()
    try:
        df = read_frame(spark, fmt, input_path)
        described = input_path
        if sample_fraction is not None and sample_fraction < 1:
            df = df.sample(withReplacement=False, fraction=sample_fraction, seed=SAMPLE_SEED)
            described = f"{input_path} (a {sample_fraction:.0%} sample)"
        prof = profile(df, source=described, approx_distinct=approx)
        text = draft_contract(prof, name=stem, path=input_path, fmt=fmt)
    finally:
        if owned:
            spark.stop()
    for col in prof.unprofiled:
        if not col.expressible:  # the draft says so in a comment; say it where it is seen too
            click.echo(f"dqgov: notice: {input_path}: column {col.name} ({col.source_type}) is not in the draft: "
                       "the contract's type syntax cannot state its type", err=True)
    if output is None:
        click.echo(text, nl=False)
        return 0
    try:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{output}: cannot write the contract: {exc.strerror}") from None
    click.echo(f"wrote draft contract {output}")
    return 0


def _guess(source: Path) -> str:
    suffix = source.suffix.lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    if suffix in ("jsonl", "ndjson"):
        return "json"
    if source.is_dir():
        return "parquet"
    raise InputDataError(f"{source}: cannot tell the format from the name; pass --format csv|parquet|json")


def _session() -> tuple[object, bool]:
    """The active SparkSession, or a small local one this command owns."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    from dq_governance.lineage.spark import spark_session

    session = spark_session("dqgov-profile", listener=False, **{
        "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false", "spark.sql.shuffle.partitions": "2"})
    set_log_level(session, "ERROR")
    return session, True

"""`dqgov mask`: mask a dataset by its contract and write it (parquet by default).

Exit codes: 0 written, 2 bad input or configuration (a missing masking key fails before any write).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from dq_governance.cli.app import cli
from dq_governance.cli.inputs import INPUT_FORMATS
from dq_governance.errors import ConfigError, InputDataError
from dq_governance.session import set_log_level

OUTPUT_FORMATS = ("parquet", "delta", "json", "csv")


def spark_for(app_name: str, *, delta: bool) -> tuple[Any, bool]:
    """The active SparkSession, or a new local one this command owns (and must stop)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    from dq_governance.lineage.spark import spark_session

    conf = {"spark.ui.enabled": "false", "spark.sql.session.timeZone": "UTC"}
    if delta:
        from dq_governance.cli.inputs import delta_conf

        conf.update(delta_conf())
    session = spark_session(app_name, listener=False, **conf)
    set_log_level(session, "ERROR")
    return session, True


def read_input(spark: Any, source: str, fmt: str | None, declared: str | None = None) -> Any:
    """Read PATH (or a table) like `dqgov check` does: text formats as strings, one-line errors."""
    from dq_governance.cli.inputs import guess_format, read_frame

    fmt = fmt or guess_format(source, declared, is_table=False)
    if fmt != "table" and "://" not in source and not Path(source).exists():
        raise InputDataError(f"{source}: no such file or directory")
    return read_frame(spark, fmt, source)


def error_class(exc: BaseException) -> str:
    """Spark's error condition (e.g. PATH_ALREADY_EXISTS) or the exception type: never the message."""
    for getter in ("getCondition", "getErrorClass"):
        method = getattr(exc, getter, None)
        if callable(method):
            try:
                value = method()
            except Exception:  # noqa: BLE001 - best effort
                value = None
            if value:
                return str(value)
    return type(exc).__name__


@cli.command("mask")
@click.argument("contract_path", metavar="CONTRACT")
@click.option("--input", "input_path", required=True, help="Data to mask (a path, or a table with --format table).")
@click.option("--format", "input_format", type=click.Choice(INPUT_FORMATS), help="Input format (default: from the extension).")
@click.option("--output", required=True, help="Where the masked data goes.")
@click.option("--output-format", type=click.Choice(OUTPUT_FORMATS), default="parquet", show_default=True)
@click.option("--overwrite", is_flag=True, help="Replace an existing output.")
@click.option("--policy", "policy_path", help="Project masking policy file (the contract's `masking:` keys win).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a line.")
def mask_command(
    contract_path: str, input_path: str, input_format: str | None, output: str, output_format: str,
    overwrite: bool, policy_path: str | None, as_json: bool,
) -> int:
    """Mask CONTRACT's masked columns (field masking, else policy defaults) in INPUT and write OUTPUT."""
    from dq_governance.api import resolve_contract
    from dq_governance.masking import effective_policy, load_policy_file, masked_columns, needs_key, resolve_key

    contract, _ = resolve_contract(contract_path)
    policy = load_policy_file(policy_path) if policy_path else None
    specs = masked_columns(contract, policy)
    base_dir = Path(contract_path).resolve().parent if Path(contract_path).is_file() else None
    # resolve the key first: a missing key fails before Spark starts or anything is written
    key = resolve_key(effective_policy(contract, policy), base_dir=base_dir) if needs_key(specs) else None
    if Path(output).exists() and not overwrite:
        raise ConfigError(f"{output} exists; pass --overwrite to replace it")
    spark, owned = spark_for("dqgov-mask", delta="delta" in (input_format, output_format))
    try:
        from dq_governance.masking import apply_masks

        df = read_input(spark, input_path, input_format, contract.dataset.format)
        masked = apply_masks(df, contract, keys=key, policy=policy)
        present = [c for c in specs if c.split(".")[0].lower() in {n.lower() for n in df.columns}]
        options = {"header": "true"} if output_format == "csv" else {}
        try:
            masked.write.format(output_format).mode("overwrite" if overwrite else "error").options(
                **options
            ).save(output)
        except Exception as exc:  # a Spark error message may quote a row value: report its class only
            raise InputDataError(f"{output}: writing the masked output failed ({error_class(exc)})") from None
        rows = spark.read.format(output_format).options(**options).load(output).count()
    finally:
        if owned:
            spark.stop()
    summary = {
        "contract": contract.name, "output": output, "format": output_format, "rows": rows,
        "masked": {c: specs[c].method for c in present}, "key_id": key.key_id if key else None,
    }
    if as_json:
        click.echo(json.dumps(summary))
    else:
        cols = ", ".join(f"{c}={m}" for c, m in summary["masked"].items()) or "none"
        key_note = f"; key id {key.key_id}" if key else ""
        click.echo(f"{contract.name}: wrote {rows} rows to {output} ({output_format}); masked {cols}{key_note}")
    return 0

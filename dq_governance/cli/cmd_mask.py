"""`dqgov mask`: mask a dataset by its contract and write it (parquet by default).

Exit codes: 0 written, 2 bad input or configuration (a missing masking key, an --output that overlaps --input,
undeclared columns under `undeclared_columns: fail`, a masked path that does not resolve: all before any write).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from dq_governance.cli.app import cli
from dq_governance.cli.inputs import INPUT_FORMATS, location, within
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
    """Spark's error condition (e.g. PATH_ALREADY_EXISTS) or the exception type: never the message.

    A py4j error carries the condition on its Java exception or one of that exception's causes.
    """
    candidates: list[Any] = [exc]
    java = getattr(exc, "java_exception", None)
    while java is not None and len(candidates) < 10:
        candidates.append(java)
        try:
            java = java.getCause()
        except Exception:  # noqa: BLE001 - best effort: a dead gateway has no causes to walk
            java = None
    for candidate in candidates:
        for getter in ("getCondition", "getErrorClass"):
            method = getattr(candidate, getter, None)
            if callable(method):
                try:
                    value = method()
                except Exception:  # noqa: BLE001 - best effort (a Java exception without the method)
                    value = None
                if value:
                    return str(value)
    return type(exc).__name__


def refuse_overlap(input_path: str, output: str) -> None:
    """ConfigError when OUTPUT is INPUT, inside it or holds it: the write would delete what it reads."""
    source, target = location(input_path), location(output)
    if within(source, target) or within(target, source):
        raise ConfigError(f"--output {output} overlaps --input {input_path} ({target} vs {source}): writing it would "
                          "delete the data being read; write the masked data somewhere else")


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
    """Mask CONTRACT's masked columns (field masking, else policy defaults) in INPUT and write OUTPUT.

    Undeclared columns follow `schema.undeclared_columns` as in `run()`: drop, keep, mask, or fail (exit 2).
    """
    from dq_governance.api import resolve_contract
    from dq_governance.contracts.consistency import unmatched_classifications
    from dq_governance.masking import effective_policy, load_policy_file, masked_columns, resolve_key
    from dq_governance.masking.policies import KEYED_METHODS, undeclared_spec

    contract, _ = resolve_contract(contract_path)
    for problem in unmatched_classifications(contract.schema_.fields, contract.masking):
        hint = f" ({problem.hint})" if problem.hint else ""
        click.echo(f"dqgov: warning: {contract_path}: {problem.message}{hint}", err=True)
    policy = load_policy_file(policy_path) if policy_path else None
    specs = masked_columns(contract, policy)
    base_dir = Path(contract_path).resolve().parent if Path(contract_path).is_file() else None
    # resolve the key first (for undeclared columns too: their method is known before the data is read),
    # so a missing key fails before Spark starts or anything is written
    methods = {spec.method for spec in [*specs.values(), undeclared_spec(contract, policy)] if spec is not None}
    key = resolve_key(effective_policy(contract, policy), base_dir=base_dir) if methods & KEYED_METHODS else None
    if input_format != "table":
        refuse_overlap(input_path, output)
    if Path(output).exists() and not overwrite:
        raise ConfigError(f"{output} exists; pass --overwrite to replace it")
    spark, owned = spark_for("dqgov-mask", delta="delta" in (input_format, output_format))
    try:
        from dq_governance.masking.apply import apply_masks, mask_targets

        df = published(read_input(spark, input_path, input_format, contract.dataset.format), contract, input_path)
        targets = mask_targets(df.schema, contract, policy)
        masked = apply_masks(df, contract, keys=key, policy=policy, base_dir=base_dir)
        options = {"header": "true"} if output_format == "csv" else {}
        try:
            masked.write.format(output_format).mode("overwrite" if overwrite else "error").options(
                **options
            ).save(output)
        except Exception as exc:  # a Spark error message may quote a row value: report its condition only
            raise InputDataError(f"{output}: writing the masked output failed ({error_class(exc)})") from None
        rows = spark.read.format(output_format).options(**options).load(output).count()
    finally:
        if owned:
            spark.stop()
    summary = {
        "contract": contract.name, "output": output, "format": output_format, "rows": rows,
        "masked": {t.path: t.spec.method for t in targets}, "key_id": key.key_id if key else None,
    }
    if as_json:
        click.echo(json.dumps(summary))
    else:
        cols = ", ".join(f"{c}={m}" for c, m in summary["masked"].items()) or "none"
        key_note = f"; key id {key.key_id}" if key else ""
        click.echo(f"{contract.name}: wrote {rows} rows to {output} ({output_format}); masked {cols}{key_note}")
    return 0


def published(df: Any, contract: Any, source: str) -> Any:
    """`df` with its undeclared columns as `run()` publishes them: left out (drop), refused (fail), kept (warned)."""
    from dq_governance.contracts.model import undeclared_columns
    from dq_governance.publish.policy import published_columns

    policy = contract.schema_.undeclared_columns
    found = undeclared_columns(contract, df.columns)
    if found and policy == "fail":
        raise ConfigError(f"{source}: undeclared column(s) {', '.join(found)} (schema.undeclared_columns: fail); "
                          "declare them in the contract or choose drop, keep or mask")
    if found and policy == "keep":
        click.echo(f"dqgov: warning: {source}: writing undeclared column(s) {', '.join(found)} unmasked, as read "
                   "(schema.undeclared_columns: keep)", err=True)
    return published_columns(df, contract)

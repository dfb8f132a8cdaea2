"""`dqgov scan-pii`: find columns that look like PII; propose (or write) the contract changes.

Exit codes: 0 scanned (warnings included), 1 with --strict when the contract leaves PII undeclared,
2 bad input. Output names columns, entities and rates only, never a sampled value. Fields inside structs are
scanned by dotted name and proposed under their struct's `fields`; array, map and binary columns (and struct
fields), which the detectors cannot read, are named as not scanned.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from dq_governance.cli.app import cli
from dq_governance.cli.cmd_mask import INPUT_FORMATS, read_input, spark_for
from dq_governance.errors import ConfigError, GateFailedError


@cli.command("scan-pii")
@click.option("--input", "input_path", required=True, help="Data to scan (a path, or a table with --format table).")
@click.option("--format", "input_format", type=click.Choice(INPUT_FORMATS),
              help="Input format (default: from the extension).")
@click.option("--contract", "contract_path", help="Compare with this contract: warn about undeclared PII.")
@click.option("--sample", "sample_rows", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Rows sampled (deterministic seed).")
@click.option("--min-confidence", type=click.FloatRange(0, 1), default=0.5, show_default=True)
@click.option("--write", "write", is_flag=True, help="Write the proposed changes into --contract (comments kept).")
@click.option("--strict", is_flag=True,
              help="Exit 1 when the contract leaves detected PII undeclared (needs --contract).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (findings, warnings, patch).")
def scan_pii_command(
    input_path: str, input_format: str | None, contract_path: str | None, sample_rows: int, min_confidence: float,
    write: bool, strict: bool, as_json: bool,
) -> int:
    """Sample INPUT, report PII-looking columns with confidence, and propose contract changes as YAML."""
    from dq_governance.masking.proposals import evidence, patch_yaml, propose, undeclared, write_proposals

    if write and not contract_path:
        raise ConfigError("--write needs --contract (the file to change)")
    if strict and not contract_path:  # undeclared PII is judged against a contract: without one it never fails
        raise ConfigError("--strict needs --contract (the contract to compare with)")
    contract = None
    if contract_path:
        from dq_governance.api import resolve_contract

        contract, _ = resolve_contract(contract_path)
    spark, owned = spark_for("dqgov-scan-pii", delta=input_format == "delta")
    try:
        from dq_governance.masking.detect import scan_pii

        df = read_input(spark, input_path, input_format, contract.dataset.format if contract else None)
        report = scan_pii(df, sample_rows=sample_rows, min_confidence=min_confidence)
    finally:
        if owned:
            spark.stop()
    proposals = propose(report.findings, contract, report.types)
    warnings = []
    if contract is not None:
        for finding in undeclared(report.findings, contract):
            state = "is not in the contract" if contract.field(finding.column) is None else "is not declared pii: true"
            warnings.append(f"{contract_path}: warning: column {finding.column!r} looks like PII "
                            f"({evidence(finding)}) but {state} [pii-undeclared]")
    patch = patch_yaml(proposals, contract_path)
    if write and proposals:
        write_proposals(Path(contract_path), proposals)  # type: ignore[arg-type]
    if as_json:
        click.echo(json.dumps({
            "sampled_rows": report.sampled_rows, "total_rows": report.total_rows,
            "findings": [{"column": f.column, "pii_type": f.pii_type, "confidence": f.confidence,
                          "hit_rate": f.hit_rate, "non_null": f.non_null, "name_match": f.name_match}
                         for f in report.findings],
            "not_scanned": [{"column": c, "type": t} for c, t in report.not_scanned.items()],
            "warnings": warnings, "patch": patch, "written": bool(write and proposals),
        }))
    else:
        click.echo(f"scanned {report.sampled_rows} of {report.total_rows} rows; "
                   f"{len(report.findings)} column(s) look like PII")
        for finding in report.findings:
            click.echo(f"  {finding.column}: {evidence(finding)}")
        for column, type_name in report.not_scanned.items():
            click.echo(f"not scanned: {column} ({type_name})")
        for line in warnings:
            click.echo(line, err=True)
        if write and proposals:
            click.echo(f"wrote {len(proposals)} change(s) to {contract_path}")
        else:
            click.echo(patch, nl=False)
    if strict and warnings:
        raise GateFailedError(f"{len(warnings)} PII column(s) undeclared in {contract_path}")
    return 0

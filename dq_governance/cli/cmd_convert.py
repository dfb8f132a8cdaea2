"""`dqgov convert FILE [--to native|odcs] [-o OUT]`: native <-> ODCS v3.1.0; DQX and seed JSON -> native.

Warnings go to stderr, one positioned line each: DQX functions with no equivalent rule, and what a DQX rules
file's aggregate or subquery expressions became.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dq_governance.cli.app import cli
from dq_governance.errors import ContractError, SourceLocation


@cli.command("convert")
@click.argument("path", type=click.Path(path_type=str))
@click.option("--to", "target", type=click.Choice(["native", "odcs"]), default=None,
              help="Output format (default: odcs for a native contract, native for anything else).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Write here instead of standard output.")
def convert_command(path: str, target: str | None, output: str | None) -> int:
    """Convert a contract between the native format and ODCS v3.1.0 (also reads DQX checks / rules and seed JSON)."""
    from dq_governance.contracts.load import check_document
    from dq_governance.contracts.native import contract_to_native, to_yaml
    from dq_governance.contracts.odcs import contract_to_odcs
    from dq_governance.contracts.source import read_source

    doc = read_source(path)
    result = check_document(doc)
    warnings = [str(issue) for issue in result.issues if issue.severity != "error"]
    warnings += [line for line in _rules_notes(doc, result) if line not in warnings]
    for line in warnings:
        click.echo(line, err=True)  # e.g. DQX functions with no equivalent rule
    if result.errors or result.contract is None:
        first = result.errors[0] if result.errors else None
        if first is None:
            raise ContractError("invalid contract", SourceLocation(path))
        more = len(result.errors) - 1
        error = first.to_error()
        if more:
            error = ContractError(f"{error.message} [and {more} more; run `dqgov lint {path}` to list them]",
                                  error.location, error.field)
        raise error
    fmt = target or ("odcs" if result.source.format == "native" else "native")
    doc = contract_to_odcs(result.contract) if fmt == "odcs" else contract_to_native(result.contract)
    text = to_yaml(doc)
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise ContractError(f"cannot write: {exc.strerror}", SourceLocation(output)) from None
        click.echo(f"dqgov convert: {path} ({result.source.format}) -> {output} ({fmt})", err=True)
    else:
        click.echo(text, nl=False)
    return 0


def _rules_notes(doc: Any, result: Any) -> list[str]:
    """A DQX rules file's conversion notes (aggregate and subquery expressions), as positioned warnings."""
    from dq_governance.contracts.migrate import dqx_rules_to_contract, is_dqx_rules

    if result.contract is None or result.source.format != "dqx" or not is_dqx_rules(doc.data):
        return []
    _, notes = dqx_rules_to_contract(doc.data, result.contract.name)
    return [str(doc.issue(where, note, severity="warning")) for where, note in notes]

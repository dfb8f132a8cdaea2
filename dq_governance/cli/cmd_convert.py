"""`dqgov convert FILE [--to native|odcs] [-o OUT]`: native <-> ODCS v3.1.0; DQX and seed JSON -> native."""

from __future__ import annotations

from pathlib import Path

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
    """Convert a contract between the native format and ODCS v3.1.0 (also reads DQX checks and seed JSON)."""
    from dq_governance.contracts.load import check_document
    from dq_governance.contracts.native import contract_to_native, to_yaml
    from dq_governance.contracts.odcs import contract_to_odcs
    from dq_governance.contracts.source import read_source

    result = check_document(read_source(path))
    for issue in result.issues:
        if issue.severity != "error":
            click.echo(str(issue), err=True)  # e.g. DQX functions with no equivalent rule
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

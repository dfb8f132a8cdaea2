"""`dqgov diff OLD NEW`: classify contract changes, check the version bump, and name who they break."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dq_governance.cli.app import cli
from dq_governance.contracts.diff import CLASSES, attach_consumers, diff_contracts, load_rules, render_table


@cli.command("diff")
@click.argument("old", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("new", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--lineage", "lineage_db", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A lineage store: list the downstream consumers of each (potentially) incompatible change.")
@click.option("--fail-on", type=click.Choice(CLASSES[1:]), default=None,
              help="Exit 1 when the overall class (or a wrong version bump) is at or above this level.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A change-rule table overriding the packaged one (default: .dqgov/change_rules.yaml if present).")
def diff_command(old: Path, new: Path, lineage_db: Path | None, fail_on: str | None, fmt: str,
                 rules_file: Path | None) -> int:
    """Compare two versions of a contract (native or ODCS): compatible, potentially incompatible or incompatible."""
    from dq_governance.contracts.load import load_contract

    old_contract, new_contract = load_contract(old), load_contract(new)
    report = diff_contracts(old_contract, new_contract, rules=load_rules(rules_file), old_name=str(old),
                            new_name=str(new))
    if lineage_db is not None:
        from dq_governance.lineage.graph import LineageGraph, store_errors

        with store_errors(lineage_db), LineageGraph(lineage_db, create=False) as graph:
            attach_consumers(report, old_contract, graph)
    if fmt == "json":
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        click.echo(render_table(report), nl=False)
    return report.exit_code(fail_on)

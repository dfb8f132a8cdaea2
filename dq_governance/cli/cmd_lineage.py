"""`dqgov lineage ingest FILE... [--db PATH]`: OpenLineage JSONL files (and contracts) into the lineage store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dq_governance.cli.app import cli
from dq_governance.lineage.graph import DEFAULT_DB, Attachment, IngestStats, LineageGraph, store_errors

CONTRACT_SUFFIXES = (".yaml", ".yml")


@cli.group("lineage")
def lineage_group() -> None:
    """The local lineage store (SQLite) that impact and diff read."""


@lineage_group.command("ingest")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--db", "db", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB, show_default=True,
              help="The lineage store.")
def ingest_command(files: tuple[Path, ...], db: Path) -> int:
    """Ingest OpenLineage events (.jsonl one per line, .json a list) and contracts (.yaml) into the store."""
    from dq_governance.contracts.load import load_contract_with_source

    total = IngestStats()
    attached: list[str] = []
    with store_errors(db), LineageGraph(db) as graph:
        for path in files:
            if path.suffix in CONTRACT_SUFFIXES:
                contract, source = load_contract_with_source(path)
                attached.append(_attached(path, contract, graph.attach_contract(contract, source.location)))
                continue
            total.merge(graph.ingest_file(path))
    click.echo(
        f"ingested {total.read} event(s) into {db}: {total.stored} stored, {total.duplicates} duplicate(s), "
        f"{total.skipped} skipped" + (f"; {len(attached)} contract(s) attached" if attached else ""))
    for line in attached:
        click.echo(line)
    for message in total.errors:
        click.echo(f"skipped {message}", err=True)
    if total.skipped > len(total.errors):
        by_reason = ", ".join(f"{reason} {count}" for reason, count in total.reasons.most_common())
        click.echo(f"skipped {total.skipped - len(total.errors)} more; all {total.skipped} by reason: {by_reason}",
                   err=True)
    return 0


def _attached(path: Path, contract: Any, where: Attachment) -> str:
    """One line per contract: which node it attached to, and whether that node is new (no event names it yet)."""
    ds = contract.dataset
    alias = "" if (where.namespace, where.name) == (ds.namespace or "file", ds.name) else f" (alias {ds.name})"
    new = "; a new node: no event names it yet" if where.created else ""
    return f"  {path}: contract {contract.name} {contract.version} -> {where.namespace}:{where.name}{alias}{new}"

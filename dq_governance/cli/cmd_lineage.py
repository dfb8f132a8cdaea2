"""`dqgov lineage ingest FILE... [--db PATH]`: OpenLineage JSONL files (and contracts) into the lineage store."""

from __future__ import annotations

from pathlib import Path

import click

from dq_governance.cli.app import cli
from dq_governance.lineage.graph import DEFAULT_DB, IngestStats, LineageGraph

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
    contracts = 0
    with LineageGraph(db) as graph:
        for path in files:
            if path.suffix in CONTRACT_SUFFIXES:
                contract, source = load_contract_with_source(path)
                graph.attach_contract(contract, source.location)
                contracts += 1
                continue
            total.merge(graph.ingest_file(path))
    click.echo(
        f"ingested {total.read} event(s) into {db}: {total.stored} stored, {total.duplicates} duplicate(s), "
        f"{total.skipped} skipped" + (f"; {contracts} contract(s) attached" if contracts else ""))
    for message in total.errors:
        click.echo(f"skipped {message}", err=True)
    return 0

"""`dqgov impact DATASET[.COLUMN]`: what a dataset or column reaches, through which jobs, and who to tell."""

from __future__ import annotations

from pathlib import Path

import click

from dq_governance.cli.app import cli
from dq_governance.errors import InputDataError
from dq_governance.lineage.graph import DEFAULT_DB, LineageGraph, store_errors
from dq_governance.lineage.impact import DIRECTIONS, FORMATS, impact, render, resolve_target


@cli.command("impact")
@click.argument("target")
@click.option("--db", "db", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB, show_default=True,
              help="The lineage store.")
@click.option("--namespace", default=None, help="Namespace of the dataset, when its name exists in several.")
@click.option("--direction", type=click.Choice(DIRECTIONS), default="downstream", show_default=True)
@click.option("--depth", type=click.IntRange(min=0), default=None, help="At most this many job hops.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of stdout.")
def impact_command(target: str, db: Path, namespace: str | None, direction: str, depth: int | None, fmt: str,
                   output: Path | None) -> int:
    """Datasets, columns, jobs, owners, contracts and quality status reached from DATASET[.COLUMN]."""
    with store_errors(db), LineageGraph(db, create=False) as graph:
        result = impact(graph, resolve_target(graph, target, namespace), direction, depth)
        text = render(result, fmt)
    if output is not None:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise InputDataError(f"{output}: cannot write the impact report: {exc.strerror or exc}") from None
        click.echo(f"wrote {output} ({len(result.hits)} hit(s))")
    else:
        click.echo(text, nl=False)
    return 0

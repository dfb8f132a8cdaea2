"""The `dqgov` click group; subcommands live in sibling `cmd_*.py` modules, one module each."""

from __future__ import annotations

import click

from dq_governance import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dqgov")
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """dq-governance: data contracts, quality checks, lineage and catalogs for Spark."""
    import logging

    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")

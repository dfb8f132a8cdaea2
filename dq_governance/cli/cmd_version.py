"""`dqgov version`: the package and the pinned runtime versions."""

from __future__ import annotations

import click

from dq_governance import __version__
from dq_governance.cli.app import cli


@cli.command("version")
def version_command() -> None:
    """Print dq-governance, PySpark and openlineage-python versions."""
    from importlib.metadata import PackageNotFoundError, version

    click.echo(f"dq-governance {__version__}")
    for dist in ("pyspark", "openlineage-python", "pydantic"):
        try:
            click.echo(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            click.echo(f"{dist} not installed")

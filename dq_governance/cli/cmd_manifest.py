"""`dqgov manifest CONTRACTS... -o manifest.json`: the governance manifest for the listener and session extensions."""

from __future__ import annotations

import click

from dq_governance.cli.app import cli


@cli.command("manifest")
@click.argument("contracts", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", default="manifest.json", show_default=True, metavar="PATH",
              help="Where to write the manifest (JSON).")
@click.option("--base-dir", default=None, metavar="DIR",
              help="Resolve relative dataset paths of the contracts against DIR (default: the current directory).")
@click.option("--match", "matches", multiple=True, metavar="NAME=GLOB",
              help="Also match contract NAME's dataset by this path glob (repeatable), "
                   "e.g. orders=s3://lake/orders/**.")
def manifest_command(contracts: tuple[str, ...], output: str, base_dir: str | None, matches: tuple[str, ...]) -> int:
    """Compile contract files and directories into the manifest the dq-governance jar reads (facets and checks)."""
    from dq_governance.lineage.manifest import (
        compile_manifest,
        contract_sources,
        manifest_target,
        parse_match_options,
        write_manifest,
    )

    manifest_target(output)  # an unwritable -o is refused before the checks compile in a Spark session
    compiled = compile_manifest(contract_sources(contracts), base_dir=base_dir,
                                extra_globs=parse_match_options(matches))
    for line in compiled.skipped:
        click.echo(f"dqgov: skipped {line}", err=True)
    path = write_manifest(compiled.document, output)
    count = len(compiled.document["contracts"])
    click.echo(f"{path}: {count} contract{'s' if count != 1 else ''} (manifestVersion "
               f"{compiled.document['manifestVersion']})")
    return 0

"""`dqgov sync`: push contracts (and the latest results) to OpenMetadata or DataHub, or dry-run to files."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from dq_governance.cli.app import cli
from dq_governance.errors import ConfigError

if TYPE_CHECKING:  # the catalogs package is imported only when a sync runs, to keep `dqgov` startup light
    from dq_governance.catalogs.naming import NameSettings


@cli.command("sync")
@click.option("--catalog", required=True, type=click.Choice(["openmetadata", "datahub"]), help="Target catalog.")
@click.option("--url", default=None, help="Catalog URL (else DQGOV_OPENMETADATA_URL / DQGOV_DATAHUB_URL, else "
              "<catalog>.url in the project config). Without one the sync is a dry run.")
@click.option("--contracts", "contracts", multiple=True, type=click.Path(path_type=str),
              help="Contract file or directory (repeatable). Default: ./contracts")
@click.option("--results", default=None, type=click.Path(path_type=str),
              help="Report history written by `dqgov check --report`; the latest run per contract is pushed.")
@click.option("--dry-run", is_flag=True, help="Send nothing; write each request as a numbered JSON file.")
@click.option("--out", default=None, type=click.Path(path_type=str),
              help="Directory for dry-run request files (default ./catalog-requests/<catalog>); "
              "giving it makes the sync a dry run.")
@click.option("--server-version", default=None, help="OpenMetadata version X.Y to target in a dry run "
              "(else openmetadata.server_version); a live sync refuses a server of another version.")
@click.option("--create-tables", is_flag=True, help="OpenMetadata: create missing tables with PUT /api/v1/tables.")
@click.option("--service", default=None, help="OpenMetadata database service: the first part of every table FQN.")
@click.option("--database", default=None, help="OpenMetadata database: the second part of every table FQN.")
@click.option("--schema", default=None, help="OpenMetadata schema: the third part of every table FQN "
              "(needed when dataset.name is a bare table).")
@click.option("--platform", default=None, help="DataHub platform of the dataset URN (default spark).")
@click.option("--platform-instance", default=None, help="DataHub platform instance (prefixes the URN's name).")
@click.option("--env", default=None, help="DataHub environment of the dataset URN (default PROD).")
@click.option("--project-config", default=None, type=click.Path(path_type=str),
              help="Project config with the catalog settings (default: ./.dqgov/config.yaml if present).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.argument("more", nargs=-1, type=click.Path(path_type=str))
def sync_command(catalog: str, url: str | None, contracts: tuple[str, ...], results: str | None, dry_run: bool,
                 out: str | None, server_version: str | None, create_tables: bool, project_config: str | None,
                 as_json: bool, more: tuple[str, ...], **names: str | None) -> int:
    """Sync contracts, owners, PII tags and quality results into a catalog.

    Contract paths may follow --contracts or stand alone: `--contracts a.yaml b.yaml` works.
    Each catalog name part comes from its option, else the contract's dataset.catalog hints and
    dataset.name, else the project config.
    """
    from dq_governance.catalogs.sync import default_out, load_contracts, load_results, make_pusher, sync
    from dq_governance.project_config import load_project_config

    settings = name_options(names)
    project = load_project_config(project_config)
    loaded, notes = load_contracts(list(contracts) + list(more) or ["contracts"])
    latest = load_results(results) if results else None
    pusher = make_pusher(catalog, url=url, dry_run=dry_run or out is not None, out=out,
                         server_version=server_version, create_tables=create_tables, names=settings,
                         project=project)
    for note in notes:
        pusher.report.note(note)
    with click.progressbar(length=len(loaded), label=f"sync {catalog}", file=sys.stderr,
                           show_pos=True) as bar:
        report = sync(pusher, loaded, latest, progress=lambda _contract: bar.update(1))
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        _print_summary(report, out or (str(default_out(catalog)) if report.dry_run else None),
                       getattr(pusher.transport, "count", 0))
    return report.exit_code


def name_options(values: dict[str, str | None]) -> NameSettings:
    """The naming options as a NameSettings; a value no catalog can take is a ConfigError naming its option."""
    from dq_governance.catalogs.naming import SETTINGS, NameSettings, setting_problem

    for setting, value in values.items():
        problem = setting_problem(setting, value) if value is not None else None
        if problem:
            raise ConfigError(f"{SETTINGS[setting][0]} {value}: {problem}")
    return NameSettings(**values)


def _print_summary(report, out: str | None, files: int) -> None:  # type: ignore[no-untyped-def]
    mode = "dry run" if report.dry_run else "sent"
    version = f", server {report.server_version}" if report.server_version else ""
    click.echo(f"dqgov sync {report.catalog} ({mode}{version}): {len(report.created)} created, "
               f"{len(report.updated)} updated, {len(report.unchanged)} unchanged, "
               f"{len(report.failed) + len(report.invalid)} failed")
    if report.dry_run:
        click.echo(f"  {files} request files written to {out}")
    if report.placeholders:
        click.echo("  placeholder ids (names a server would resolve to ids):")
        for name, value in sorted(report.placeholders.items()):
            click.echo(f"    {name} -> {value}")
    for what, error in report.invalid + report.failed:
        click.echo(f"  FAILED {what}: {error}")
    for note in report.notes:
        click.echo(f"  note: {note}")

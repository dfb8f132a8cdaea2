"""`dqgov lint FILE...`: validate contracts (any format) and the project config, one line per problem; exit 2 on errors."""

from __future__ import annotations

import click

from dq_governance.cli.app import cli
from dq_governance.errors import EXIT_BAD_INPUT, EXIT_OK


@cli.command("lint")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))
def lint_command(paths: tuple[str, ...]) -> int:
    """Check contract files (or the *.yaml, *.yml, *.json files in directories), and .dqgov/config.yaml if present."""
    from dq_governance.contracts.lint import contract_files, lint_path, with_project_config

    files, issues = contract_files(list(paths))
    files = with_project_config(files)
    for issue in issues:
        click.echo(str(issue))
    errors = sum(1 for i in issues if i.severity == "error")
    warnings = 0
    for file in files:
        found = lint_path(file)
        for issue in found:
            click.echo(str(issue))
        file_errors = sum(1 for i in found if i.severity == "error")
        errors += file_errors
        warnings += len(found) - file_errors
    noun = "file" if len(files) == 1 else "files"
    summary = f"dqgov lint: {len(files)} {noun} checked, {errors} error{'s' * (errors != 1)}"
    summary += f", {warnings} warning{'s' * (warnings != 1)}"
    click.echo(summary, err=True)
    return EXIT_BAD_INPUT if errors else EXIT_OK

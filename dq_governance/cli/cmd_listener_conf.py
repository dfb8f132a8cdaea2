"""`dqgov listener-conf CONTRACT [--transport …]`: the OpenLineage listener settings for a cluster."""

from __future__ import annotations

import shlex

import click

from dq_governance.cli.app import cli


def _load(path: str):  # type: ignore[no-untyped-def]
    """The contract at PATH, through the project loader (native or ODCS)."""
    from dq_governance.contracts.load import load_contract

    return load_contract(path)


@cli.command("listener-conf")
@click.argument("contract", type=click.Path(dir_okay=False))
@click.option("--transport", "transport", default=None, metavar="SPEC",
              help="file:PATH | http(s)://HOST[:PORT][/PATH] | console; default: openlineage.yml / OPENLINEAGE__* env.")
@click.option("--jar", default=None, metavar="PATH",
              help="Put this listener jar on spark.jars instead of resolving spark.jars.packages from Maven.")
@click.option("--format", "fmt", type=click.Choice(["both", "spark-defaults", "submit"]), default="both",
              show_default=True, help="spark-defaults.conf lines, spark-submit --conf flags, or both.")
@click.option("--enrich", is_flag=True,
              help="Also configure the dq-governance listener extension (contract facets on Spark's own events).")
@click.option("--manifest", default="manifest.json", show_default=True, metavar="PATH",
              help="With --enrich: the governance manifest path on the driver (from `dqgov manifest`).")
@click.option("--extension-jar", default=None, metavar="PATH",
              help="The dq-governance-listener jar path on the driver: stable job names for staged writes, and "
                   "with --enrich the transformer (default with --enrich: the local build).")
@click.option("--enforce", type=click.Choice(["observe", "block"]), default=None,
              help="Also enable the session extension: every write to a contracted dataset is measured in its own "
                   "pass (observe), and a failing gate or fail rule stops it before its commit (block). "
                   "Implies --enrich.")
@click.option("--history", default=None, metavar="PATH",
              help="With --enforce: the report history the extension appends its per-rule rows to.")
@click.option("--pipeline", default=None, metavar="NAME",
              help="With --enforce: the pipeline name of those rows (default: the Spark application name).")
def listener_conf_command(contract: str, transport: str | None, jar: str | None, fmt: str, enrich: bool,
                          manifest: str, extension_jar: str | None, enforce: str | None, history: str | None,
                          pipeline: str | None) -> int:
    """Print spark-defaults.conf lines and spark-submit --conf flags that enable the OpenLineage listener."""
    from dq_governance.errors import ConfigError
    from dq_governance.lineage.spark import listener_conf

    if (history or pipeline) and enforce is None:
        raise ConfigError("--history and --pipeline configure the session extension: add --enforce observe|block")
    given = click.get_current_context().get_parameter_source("manifest")
    if given is not click.core.ParameterSource.DEFAULT and not (enrich or enforce):
        raise ConfigError("--manifest names the manifest of --enrich or --enforce: add one of them")
    loaded = _load(contract)
    enrich = enrich or enforce is not None
    # Build both forms before printing, so an error never leaves half an output behind.
    extension = {"enrich": manifest if enrich else False, "extension_jar": extension_jar, "enforce": enforce,
                 "history": history, "pipeline": pipeline}
    defaults = listener_conf(loaded, transport, jar=jar, style="spark-defaults", **extension)
    flags = listener_conf(loaded, transport, jar=jar, style="submit", **extension)
    if enrich:
        click.echo(f"# the manifest: `dqgov manifest CONTRACTS_DIR -o {shlex.quote(manifest)}`, shipped with the job")
    if not (enrich or extension_jar):
        click.echo("# without the dq-governance extension jar (--extension-jar PATH, or --enrich) the listener "
                   "names staged writes' jobs with the run id: a new job per run")
    if fmt in ("both", "spark-defaults"):
        click.echo("# spark-defaults.conf")
        click.echo("# Each application gets its own spark.openlineage.applicationRunId (set it per submit to "
                   "correlate other events); put the API key in a secret, never in this file.")
        for line in defaults:
            click.echo(line)
    if fmt == "both":
        click.echo("")
    if fmt in ("both", "submit"):
        click.echo("# spark-submit")
        click.echo("spark-submit \\\n  " + " \\\n  ".join(flags) + " \\\n  your_job.py")
    return 0

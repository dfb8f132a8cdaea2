"""Entry point `dqgov`: thin parsing and printing; errors map to exit codes 0 / 1 / 2 (3: a bug in dqgov)."""

from __future__ import annotations

import importlib
import logging
import pkgutil
import sys

import click

from dq_governance.cli.app import cli
from dq_governance.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, DqGovernanceError
from dq_governance.scrub import redact, scrub_message
from dq_governance.session import first_line


def _load_commands() -> None:
    """Import every `cmd_*` module so its commands register on the group."""
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("cmd_"):
            importlib.import_module(f"{__name__}.{module.name}")


_load_commands()

#: exception classes that must never reach a user as a traceback: a missing capability of the session
#: (Spark Connect has no driver JVM) or a py4j / Connect transport failure. Matched by module and name, so
#: that neither py4j nor the Connect client has to be importable.
_SPARK_BACKSTOP = {
    ("pyspark.errors.exceptions.base", "PySparkAttributeError"): "not available on this Spark session",
    ("pyspark.errors.exceptions.base", "PySparkNotImplementedError"): "not available on this Spark session",
    ("py4j.protocol", "Py4JError"): "the Spark driver failed",
    ("py4j.protocol", "Py4JJavaError"): "the Spark driver failed",
    ("py4j.protocol", "Py4JNetworkError"): "the Spark driver failed",
    ("pyspark.errors.exceptions.connect", "SparkConnectGrpcException"): "the Spark Connect server failed",
}


def _backstop(exc: BaseException) -> str | None:
    """One line for an escaped session error (see _SPARK_BACKSTOP), None for anything else."""
    for klass in type(exc).__mro__:
        what = _SPARK_BACKSTOP.get((klass.__module__, klass.__name__))
        if what is not None:
            return f"{what}: {first_line(exc)}"
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and exit with) 0 ok or warn, 1 gate failed, 2 bad input, 3 a bug in dqgov."""
    try:
        # Commands return their exit code (an int) or None for 0; click returns ctx.exit() codes too.
        returned = cli.main(args=argv, prog_name="dqgov", standalone_mode=False)
        code = returned if isinstance(returned, int) else 0
    except DqGovernanceError as exc:  # a URL's userinfo and query (where tokens hide) never reach the terminal
        click.echo(f"dqgov: error: {redact(str(exc))}", err=True)
        code = exc.exit_code
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.ClickException as exc:
        exc.show()
        code = EXIT_BAD_INPUT
    except click.exceptions.Abort:
        click.echo("dqgov: aborted", err=True)
        code = EXIT_BAD_INPUT
    except Exception as exc:  # a Spark session error that escaped a command: one line, never a traceback
        line = _backstop(exc)
        if line is None:  # a bug: one line (quoted values hidden, as in events), the traceback at -v
            logging.getLogger(__name__).info("dqgov internal error", exc_info=True)
            click.echo(f"dqgov: internal error (a bug in dqgov; -v shows the traceback): {type(exc).__name__}: "
                       f"{scrub_message(str(exc), ())}", err=True)
            code = EXIT_INTERNAL
        else:
            click.echo(f"dqgov: error: {redact(line)}", err=True)
            code = EXIT_BAD_INPUT
    if argv is None:
        sys.exit(code)
    return code

"""`dqgov serve`: the OpenLineage HTTP collector and impact endpoint (localhost by default)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from dq_governance.cli.app import cli
from dq_governance.errors import ConfigError
from dq_governance.lineage.collector import DEFAULT_MAX_BODY, LINEAGE_PATH, TOKEN_ENV, make_server
from dq_governance.lineage.graph import DEFAULT_DB


@cli.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to bind (localhost by default). On loopback a request naming another Host is refused "
                   "(DNS rebinding); on any other interface only the token keeps others out: set one.")
@click.option("--port", type=click.IntRange(0, 65535), default=5000, show_default=True)
@click.option("--db", "db", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB, show_default=True,
              help="The lineage store.")
@click.option("--max-body", type=click.IntRange(min=1), default=DEFAULT_MAX_BODY, show_default=True,
              help="Largest accepted request body in bytes (larger gives 413).")
@click.option("--token-env", default=TOKEN_ENV, show_default=True,
              help="Environment variable holding the bearer token; when it is set, requests need it "
                   "(named explicitly, it must be set).")
@click.pass_context
def serve_command(ctx: click.Context, host: str, port: int, db: Path, max_body: int, token_env: str) -> int:
    """Receive OpenLineage events at POST /api/v1/lineage; answer GET /api/v1/impact and /healthz."""
    token = os.environ.get(token_env) or None
    if token is None and ctx.get_parameter_source("token_env") is not click.core.ParameterSource.DEFAULT:
        # asked for authentication: starting an open collector instead would be doing something else
        raise ConfigError(f"--token-env {token_env}: the variable is not set (the collector would accept anyone)")
    try:
        server = make_server(db, host, port, max_body=max_body, token=token)
    except OSError as exc:
        raise ConfigError(f"cannot bind {host}:{port}: {exc.strerror}") from None
    auth = f"bearer token from ${token_env}" if token else "no authentication"
    click.echo(f"dqgov collector on {server.url}{LINEAGE_PATH} (store {db}, {auth}); Ctrl-C stops it")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0

"""Spark Connect tests: a local Connect server (tests/connect_server.py) and a remote `spark` session.

They run only with DQGOV_CONNECT=1 and in a pytest process of their own:
    DQGOV_CONNECT=1 .venv/bin/python -m pytest -q tests/connect
Opening a remote session sets SPARK_CONNECT_MODE_ENABLED for the whole process, after which a classic
session (the rest of the suite's `spark`) cannot be created in it any more.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
ENABLED = os.environ.get("DQGOV_CONNECT") == "1"

if not ENABLED:  # skipped in the main suite's process (see the module doc)
    collect_ignore_glob = ["test_*.py"]

sys.path.insert(0, str(HERE.parent))  # connect_server, lineage_schema, _publish_fixtures


def pytest_collection_modifyitems(config, items):
    """Refuse to mix: a classic test in this process would fail on the Connect mode flag."""
    if not ENABLED:
        return
    outside = [item.nodeid for item in items if HERE not in Path(str(item.path)).resolve().parents]
    if outside:
        raise pytest.UsageError(f"DQGOV_CONNECT=1 runs tests/connect on its own; run {outside[0]} (and "
                                "the rest of the suite) in another pytest process")


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory):
    """One Connect server (with Delta) for the whole run, stopped at the end."""
    from connect_server import ConnectServer

    server = ConnectServer(tmp_path_factory.mktemp("connect-server"), delta=True).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def spark(connect_server):
    """A Spark Connect session to the test server."""
    from dq_governance.session import remote

    session = remote(connect_server.url)
    yield session
    session.stop()

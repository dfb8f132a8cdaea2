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


#: per test (pytest-timeout): the slowest Connect test takes under a minute; a stalled gRPC stream would wait forever
CONNECT_TEST_TIMEOUT = 300


def pytest_collection_modifyitems(config, items):
    """Refuse to mix (a classic test in this process would fail on the Connect mode flag); bound each test."""
    if not ENABLED:
        return
    outside = [item.nodeid for item in items if HERE not in Path(str(item.path)).resolve().parents]
    if outside:
        raise pytest.UsageError(f"DQGOV_CONNECT=1 runs tests/connect on its own; run {outside[0]} (and "
                                "the rest of the suite) in another pytest process")
    for item in items:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(CONNECT_TEST_TIMEOUT))


#: one line per failed test: where its main thread was and whether each server lived (printed at the end)
FAILED_AT: list[str] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report carries each running server's state, log tail and thread dump."""
    outcome = yield
    report = outcome.get_result()
    if ENABLED and report.failed:
        from connect_server import RUNNING

        for server in RUNNING:
            report.sections.append((f"Connect server {server.url}", server.diagnosis()))
        frames = [f"{Path(str(e.path)).name}:{e.lineno + 1} {e.name}" for e in
                  (call.excinfo.traceback if call.excinfo else []) if not any(
                      part in str(e.path) for part in ("pytest_timeout", "/_pytest/", "/pluggy/"))]
        servers = ", ".join(f"{s.url} {s.state()}" for s in RUNNING)
        FAILED_AT.append(f"{item.nodeid} ({report.when}): at {' < '.join(reversed(frames[-4:]))}; servers: {servers}")


def pytest_terminal_summary(terminalreporter):
    """Where each failed Connect test stood, just above pytest's short summary (so CI's tail shows it)."""
    for line in FAILED_AT:
        terminalreporter.write_line(f"connect failure: {line}")


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory):
    """One Connect server (with Delta) for the whole run, stopped at the end."""
    from connect_server import ConnectServer

    server = ConnectServer(tmp_path_factory.mktemp("connect-server"), delta=True, long_lived=True).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def spark(connect_server):
    """A Spark Connect session to the test server."""
    from dq_governance.session import remote

    session = remote(connect_server.url)
    yield session
    session.stop()

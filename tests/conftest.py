"""Shared fixtures. The Spark session is created once per test session and only when a test asks."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from jvm_startup import C1_ONLY, for_long_jvm, with_class_data_archive
from prerequisites import missing_prerequisite

REPO = Path(__file__).resolve().parent.parent
CONTRACTS = REPO / "contracts"
DATA = REPO / "examples" / "data"

# tests/connect/ runs against a Spark Connect server in a pytest process of its own (`make test-connect`):
# a Connect session sets a process-wide flag after which this process's local[2] session cannot start.
collect_ignore = [] if os.environ.get("DQGOV_CONNECT") == "1" else ["connect"]

# Every JVM the tests start through spark-submit maps Spark's classes from a class-data archive made once per Spark
# home and JDK (tests/jvm_startup.py: tests/test_enforce_trust.py 160 s -> 88 s wall). The short ones (spark-submit
# jobs, dqgov subprocesses, the extension test's Connect servers) compile with C1 alone; the long-lived ones (this
# process's shared session, the Delta jobs, the suite's shared Connect server) launch with for_long_jvm(), which
# keeps C2. Benchmarks never run under either.
os.environ["SPARK_SUBMIT_OPTS"] = with_class_data_archive(
    f"{os.environ.get('SPARK_SUBMIT_OPTS', '')} {C1_ONLY}".strip())


@contextlib.contextmanager
def _long_jvm_launch() -> Iterator[None]:
    """Launch this process's JVM with C2 kept (SPARK_SUBMIT_OPTS is read when the gateway starts)."""
    saved = os.environ["SPARK_SUBMIT_OPTS"]
    os.environ["SPARK_SUBMIT_OPTS"] = for_long_jvm(saved)
    try:
        yield
    finally:
        os.environ["SPARK_SUBMIT_OPTS"] = saved


MARKERS = {
    "cluster": "runs tests/cluster_job.py on local-cluster[2,1,1024] (two executor JVMs; about a minute)",
    "connect": "needs a Spark Connect server (tests/connect/, only with DQGOV_CONNECT=1)",
}


def pytest_configure(config):
    """Register this suite's markers (pyproject.toml keeps the base ones)."""
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


#: seconds per test file (setup, call and teardown), for the summary's slowest files
_FILE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    """Add each phase's duration to its file's total."""
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """The ten slowest test files: where a part's time budget goes, in the CI log itself."""
    slowest = sorted(_FILE_SECONDS.items(), key=lambda item: -item[1])[:10]
    if slowest:
        files = ", ".join(f"{path} {seconds:.0f} s" for path, seconds in slowest)
        terminalreporter.write_line(f"slowest files: {files}")


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


def spark_settings() -> dict[str, str]:
    """The shared session's settings; those read at JVM launch (jars, driver memory) count only for the first."""
    from dq_governance.checks import compat
    from dq_governance.lineage.spark import with_extension_jar

    return {
        **with_extension_jar({}),
        "spark.master": "local[2]",
        "spark.app.name": "dq-governance-tests",
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.memory": "2g",
        "spark.sql.ansi.enabled": "true",
        # Spark 4's default, which the date rules need (Spark 3.5's EXCEPTION aborts the pass; dqgov sets it too)
        compat.TIME_PARSER_POLICY_KEY: compat.TIME_PARSER_POLICY,
    }


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for all Spark tests: local[2], UI off, few shuffle partitions.

    With the extension jar built (`make test` builds it first) it is on the classpath, as in `dqgov` sessions:
    keyed masks then use its HMAC UDF.
    """
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in spark_settings().items():
        builder = builder.config(key, value)
    with _long_jvm_launch():
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_jvm() -> None:
    """This process's JVM launched as the `spark` fixture would launch it, with no session started.

    For tests whose code starts and stops a session of its own (`dqgov manifest` compiling in-process): the
    first session of a process fixes the JVM's class path, so one started without the extension jar would
    leave the shared session without it whatever ran next.
    """
    from pyspark import SparkConf, SparkContext

    with _long_jvm_launch():
        SparkContext._ensure_initialized(conf=SparkConf().setAll(list(spark_settings().items())))


@pytest.fixture(scope="session")
def chromium():
    """Run headless Chromium: `chromium(profile_dir, *args)` -> CompletedProcess (found, else installed).

    Without a browser the browser tests skip on a developer machine, but fail under CI (`CI` set), where
    `make test` has installed it and a skip would hide a broken page.
    """
    def found() -> str | None:
        return next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                    None)

    browser = found()
    if browser is None:
        subprocess.run([str(REPO / "scripts" / "ensure-chromium.sh")], check=False, timeout=900)
        browser = found()
    if browser is None:
        missing_prerequisite("Chromium is not installed and could not be installed (scripts/ensure-chromium.sh)")

    def run(profile: Path, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *args],
            capture_output=True, text=True, timeout=180)

    return run

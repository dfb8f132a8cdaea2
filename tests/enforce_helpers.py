"""What the session-extension tests share: the contracts they write, dqgov and its printed flags, the events.

Used by tests/test_enforce.py (spark-submit and spark-sql runs) and tests/connect/test_connect_enforce.py (a Spark
Connect server started with the same flags).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pyspark
import yaml

from dq_governance.lineage.enrich import find_extension_jar
from dq_governance.lineage.spark import find_listener_jar

REPO = Path(__file__).resolve().parent.parent
SPARK_HOME = Path(pyspark.__file__).resolve().parent
DQGOV = Path(sys.executable).parent / "dqgov"


def _contract(work: Path, name: str, *, path: str | None = None, table: str | None = None,
              extra_rules: list[dict] | None = None) -> Path:
    doc = yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text())
    doc["contract"]["name"] = name
    doc["dataset"] = {"name": name, "format": "parquet", **({"path": path} if path else {}),
                      **({"table": table} if table else {})}
    doc["quality"]["rules"] = doc["quality"]["rules"] + (extra_rules or [])
    target = work / f"{name}.yaml"
    target.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return target


def require_extension(why: str = "") -> None:
    """Skip on Spark 3.5 (the session extension runs on Spark 4.0); fail when the jars are not built."""
    import pytest

    if not pyspark.__version__.startswith("4."):
        pytest.skip("the session extension runs on Spark 4.0" + (f" ({why})" if why else ""))
    if find_listener_jar() is None or find_extension_jar() is None:
        pytest.fail("listener jars missing: run `make listener-jar listener`")


def _dqgov(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(DQGOV), *args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "DQGOV_", "SPARK_", "PYSPARK_"))}
    if "SPARK_SUBMIT_OPTS" in os.environ:  # the tests' JVM launch options (tests/conftest.py), not a session's
        env["SPARK_SUBMIT_OPTS"] = os.environ["SPARK_SUBMIT_OPTS"]
    env.update(SPARK_HOME=str(SPARK_HOME), PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    return env


def _flags(work: Path, contract: Path, events: Path, enforce: str, manifest: Path | str) -> list[str]:
    """The `--conf` flags exactly as `dqgov listener-conf --enforce` prints them."""
    out = _dqgov("listener-conf", str(contract), "--enforce", enforce, "--transport", f"file:{events}",
                 "--jar", find_listener_jar(), "--extension-jar", find_extension_jar(), "--manifest", str(manifest),
                 "--history", str(work / "history"), "--format", "submit", cwd=work).stdout
    lines = [line.strip().rstrip("\\").strip() for line in out.splitlines() if line.strip().startswith("--conf")]
    return [part for line in lines for part in shlex.split(line)]


def _events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _governed_outputs(events: list[dict], name: str) -> list[tuple[dict, dict]]:
    """(event, contract facet) of every event whose output `name` carries same-pass results."""
    out = []
    for event in events:
        for dataset in event.get("outputs") or []:
            facet = (dataset.get("facets") or {}).get("dqgov_dataContract") or {}
            if dataset["name"].endswith(name) and "rules" in facet:
                out.append((event, dataset))
    return out


def _tree_digest(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}

"""The session extension on a Spark Connect server: a remote client's writes are governed by the server's settings.

The server is started with exactly the settings `dqgov listener-conf --enforce` prints (the OpenLineage listener,
our jar, the extension, the manifest), and the client is a plain Connect session that imports nothing of ours to
write. The server's own sessions are classic ones, so the extension's rule and commit protocol run there.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from connect_server import ConnectServer, clean_env
from dq_governance.lineage.enrich import find_extension_jar
from dq_governance.lineage.spark import find_listener_jar

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "examples" / "data" / "orders.csv"
DQGOV = Path(sys.executable).parent / "dqgov"

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _contract(work: Path, name: str) -> Path:
    doc = yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text())
    doc["contract"]["name"] = name
    doc["dataset"] = {"name": name, "format": "parquet", "path": str(work / name)}
    target = work / f"{name}.yaml"
    target.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return target


def _dqgov(work: Path, *args: str) -> str:
    proc = subprocess.run([str(DQGOV), *args], cwd=work, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _settings(work: Path, contract: Path, enforce: str, events: Path) -> dict[str, str]:
    """The `--conf` settings exactly as `dqgov listener-conf --enforce` prints them."""
    out = _dqgov(work, "listener-conf", str(contract), "--enforce", enforce, "--transport", f"file:{events}",
                 "--jar", find_listener_jar(), "--extension-jar", find_extension_jar(),
                 "--manifest", str(work / "manifest.json"), "--history", str(work / "history"), "--format", "submit")
    parts = [part for line in out.splitlines() if line.strip().startswith("--conf")
             for part in shlex.split(line.strip().rstrip("\\"))]
    return dict(value.split("=", 1) for flag, value in zip(parts[::2], parts[1::2]) if flag == "--conf")


def _facet(events: Path, name: str) -> tuple[str, dict]:
    """The last event whose output `name` carries same-pass results: (eventType, dqgov_dataContract facet)."""
    found = []
    for line in events.read_text().splitlines():
        event = json.loads(line)
        for dataset in event.get("outputs") or []:
            facet = (dataset.get("facets") or {}).get("dqgov_dataContract") or {}
            if dataset["name"].endswith(name) and "rules" in facet:
                found.append((event["eventType"], facet))
    assert found, f"no governed output {name} in {events}"
    return found[-1]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    if find_listener_jar() is None or find_extension_jar() is None:
        pytest.fail("listener jars missing: run `make listener-jar listener`")
    work = tmp_path_factory.mktemp("connect-enforce")
    contracts = [_contract(work, "orders_observed"), _contract(work, "orders_blocked")]
    _dqgov(work, "manifest", *map(str, contracts), "-o", str(work / "manifest.json"))
    return work


@pytest.fixture(scope="module", params=["observe", "block"])
def governed(request, work):
    """A Connect server started with the extension in `observe` or `block` mode, and a client session to it."""
    from pyspark.sql import SparkSession

    mode = request.param
    events = work / f"{mode}.jsonl"
    server = ConnectServer(work / f"server-{mode}", delta=False,
                           conf=_settings(work, work / "orders_observed.yaml", mode, events)).start()
    session = SparkSession.builder.remote(server.url).create()  # not getOrCreate: the suite's session is elsewhere
    try:
        yield mode, session, events
    finally:
        session.stop()
        server.stop()


def test_a_connect_clients_write_is_measured_or_blocked_on_the_server(spark, governed, work):
    from dq_governance.api import check

    mode, session, events = governed
    seed = session.read.option("header", True).csv(str(SEED))
    expected = check(spark.read.option("header", True).csv(str(SEED)), str(work / "orders_observed.yaml"))
    engine = {r.name: r.failed_count for r in expected.rules if r.failed_count is not None and r.name != "pedido_id_unique"}
    target = work / "orders_observed"
    if mode == "observe":
        seed.write.mode("append").parquet(str(target))
        assert session.read.parquet(str(target)).count() == 7
        event_type, facet = _facet(events, "/orders_observed")
        assert event_type == "COMPLETE" and (facet["enforce"], facet["written_rows"], facet["vetoed"]) == (
            "observe", 7, False)
        ours = {r["name"]: r["failed_count"] for r in facet["rules"] if "failed_count" in r}
        assert ours == engine
        assert {k: v for k, v in ours.items() if v} == {
            "cliente_id_not_null": 1, "status_allowed_values": 1, "valor_range": 1, "data_pedido_type": 1}
        return
    blocked = work / "orders_blocked"
    session.read.option("header", True).csv(str(SEED)).limit(2).write.mode("append").parquet(str(blocked))
    before = {str(p.relative_to(blocked)): hashlib.sha256(p.read_bytes()).hexdigest()
              for p in sorted(blocked.rglob("*")) if p.is_file()}
    with pytest.raises(Exception, match="blocked by contract orders_blocked") as caught:
        seed.write.mode("append").parquet(str(blocked))  # the seed fails the gate: 3 of 7 valid
    assert "valid ratio 0.4286 is below minimum_valid_ratio 0.99" in str(caught.value)
    after = {str(p.relative_to(blocked)): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(blocked.rglob("*")) if p.is_file()}
    assert after == before and session.read.parquet(str(blocked)).count() == 2
    event_type, facet = _facet(events, "/orders_blocked")
    assert event_type == "FAIL" and facet["vetoed"] is True

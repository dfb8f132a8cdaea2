"""The session extension on a Spark Connect server: a remote client's writes are governed by the server's settings.

The server is started with exactly the settings `dqgov listener-conf --enforce` prints (the OpenLineage listener,
our jar, the extension, the manifest), and the client is a plain Connect session that imports nothing of ours to
write. The server's own sessions are classic ones, so the extension's rule and commit protocol run there.

`make test-connect` runs this file in a pytest process of its own, after the rest of tests/connect/: its servers
and second client stay apart from the shared server's session (the engine's answer it compares with is computed
through the governed server's own client, which reads and writes nothing governed).
"""

from __future__ import annotations

import pytest

from connect_server import ConnectServer
from dq_governance.lineage.enrich import find_extension_jar
from dq_governance.lineage.spark import find_listener_jar
from enforce_helpers import REPO, _contract, _dqgov, _events, _flags, _governed_outputs, _tree_digest

SEED = REPO / "examples" / "data" / "orders.csv"

pytestmark = [pytest.mark.spark, pytest.mark.integration]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    if find_listener_jar() is None or find_extension_jar() is None:
        pytest.fail("listener jars missing: run `make listener-jar listener`")
    work = tmp_path_factory.mktemp("connect-enforce")
    contracts = [_contract(work, name, path=str(work / name)) for name in ("orders_observed", "orders_blocked")]
    _dqgov("manifest", *map(str, contracts), "-o", str(work / "manifest.json"), cwd=work)
    return work


@pytest.fixture(scope="module", params=["observe", "block"])
def governed(request, work):
    """A Connect server started with the extension in `observe` or `block` mode, and a client session to it."""
    from pyspark.sql import SparkSession

    mode = request.param
    events = work / f"{mode}.jsonl"
    flags = _flags(work, work / "orders_observed.yaml", events, mode, work / "manifest.json")
    settings = dict(value.split("=", 1) for flag, value in zip(flags[::2], flags[1::2]) if flag == "--conf")
    server = ConnectServer(work / f"server-{mode}", delta=False, conf=settings).start()
    session = SparkSession.builder.remote(server.url).create()  # not getOrCreate: this server, whatever else is active
    try:
        yield mode, session, events
    finally:
        session.stop()
        server.stop()


def test_a_connect_clients_write_is_measured_or_blocked_on_the_server(governed, work):
    from dq_governance.api import check

    mode, session, events = governed
    seed = session.read.option("header", True).csv(str(SEED))
    if mode == "observe":
        target = work / "orders_observed"
        seed.write.mode("append").parquet(str(target))
        assert session.read.parquet(str(target)).count() == 7
        event, dataset = _governed_outputs(_events(events), "/orders_observed")[-1]
        facet = dataset["facets"]["dqgov_dataContract"]
        assert event["eventType"] == "COMPLETE" and (facet["enforce"], facet["written_rows"], facet["vetoed"]) == (
            "observe", 7, False)
        ours = {r["name"]: r["failed_count"] for r in facet["rules"] if "failed_count" in r}
        expected = check(session.read.option("header", True).csv(str(SEED)), str(work / "orders_observed.yaml"))
        try:
            assert ours == {r.name: r.failed_count for r in expected.rules if r.name in ours} and len(ours) == 14
        finally:
            expected.release()
        assert {k: v for k, v in ours.items() if v} == {
            "cliente_id_not_null": 1, "status_allowed_values": 1, "valor_range": 1, "data_pedido_type": 1}
        return
    blocked = work / "orders_blocked"
    seed.limit(2).write.mode("append").parquet(str(blocked))
    before = _tree_digest(blocked)
    with pytest.raises(Exception, match="blocked by contract orders_blocked") as caught:
        seed.write.mode("append").parquet(str(blocked))  # the seed fails the gate: 3 of 7 valid
    assert "valid ratio 0.4286 is below minimum_valid_ratio 0.99" in str(caught.value)
    assert _tree_digest(blocked) == before and session.read.parquet(str(blocked)).count() == 2
    event, dataset = _governed_outputs(_events(events), "/orders_blocked")[-1]
    assert event["eventType"] == "FAIL" and dataset["facets"]["dqgov_dataContract"]["vetoed"] is True

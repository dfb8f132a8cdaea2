"""The OpenLineage HTTP collector: a real server on loopback, real openlineage-python HTTP transport, real requests.

When the OpenLineage helper's recorded Spark listener run exists (tests/fixtures/listener_events.jsonl),
those events are posted; otherwise the realistic fixed set of graph_events.py is. Either way the
expected impact is derived from the posted events themselves and asserted exactly.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import threading
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
import requests
from graph_events import fixture_events
from prerequisites import missing_prerequisite

from dq_governance.lineage.collector import make_server
from dq_governance.lineage.graph import LineageGraph

LISTENER_EVENTS = Path(__file__).resolve().parent / "fixtures" / "listener_events.jsonl"
TOKEN = "tok-3b9e1f7c-not-a-real-secret"


def recorded_events() -> tuple[str, list[dict]]:
    """The real Spark listener's events when recorded, else our realistic fixture set."""
    if LISTENER_EVENTS.is_file():
        lines = [line for line in LISTENER_EVENTS.read_text().splitlines() if line.strip()]
        return "listener", [json.loads(line) for line in lines]
    return "fixture", fixture_events()


@pytest.fixture()
def server(tmp_path):
    srv = make_server(tmp_path / "collector.db", port=0, max_body=64 * 1024)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(5)


@pytest.fixture()
def token_server(tmp_path):
    srv = make_server(tmp_path / "secured.db", port=0, token=TOKEN)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(5)


def ol_transport(url: str, api_key: str | None = None, compression: str | None = None):
    """The openlineage-python HTTP transport, configured as a pipeline would."""
    from openlineage.client.transport.http import HttpConfig, HttpTransport

    config: dict = {"type": "http", "url": url, "endpoint": "api/v1/lineage",
                    "retry": {"total": 0}}
    if api_key:
        config["auth"] = {"type": "api_key", "apiKey": api_key}
    if compression:
        config["compression"] = compression
    return HttpTransport(HttpConfig.from_dict(config))


def expected_dataset_edges(events: list[dict]) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(input ns, name) -> outputs written by a job reading it, straight from the events."""
    edges: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for event in events:
        for inp in event.get("inputs") or []:
            for out in event.get("outputs") or []:
                if (out["namespace"], out["name"]) != (inp["namespace"], inp["name"]):
                    edges.setdefault((inp["namespace"], inp["name"]), set()).add((out["namespace"], out["name"]))
    return edges


def test_healthz_and_localhost_default(server):
    assert server.server_address[0] == "127.0.0.1"
    response = requests.get(f"{server.url}/healthz", timeout=10)
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_post_recorded_events_then_query_impact(server):
    source, events = recorded_events()
    transport = ol_transport(server.url)
    for event in events:
        assert transport.emit(event).status_code == 201
    with LineageGraph(server.db_path) as graph:
        assert graph.counts()["events"] == len({json.dumps(e, sort_keys=True) for e in events})
    edges = expected_dataset_edges(events)
    assert edges, f"the {source} events have no input -> output edge"
    for (namespace, name), outputs in edges.items():
        response = requests.get(f"{server.url}/api/v1/impact", timeout=10, params={
            "target": name, "namespace": namespace, "depth": "1"})
        assert response.status_code == 200, response.text
        body = response.json()
        reached = {(h["namespace"], h["dataset"]) for h in body["hits"]}
        assert reached == outputs, (source, name)
        assert all(h["distance"] == 1 and h["column"] is None for h in body["hits"])
    # column level: every columnLineage input field reaches its output field in one hop
    column_edges = expected_column_edges(events)
    assert column_edges, f"the {source} events carry no columnLineage"
    for (namespace, name, column), outputs in column_edges.items():
        response = requests.get(f"{server.url}/api/v1/impact", timeout=10, params={
            "target": f"{name}.{column}", "namespace": namespace, "depth": "1"})
        assert response.status_code == 200, response.text
        hits = response.json()["hits"]
        assert {(h["namespace"], h["dataset"], h["column"]) for h in hits if not h["coarse"]} == outputs
    # the latest contract status per dataset is its quality status
    for (namespace, name), status in expected_contract_status(events).items():
        body = requests.get(f"{server.url}/api/v1/impact", timeout=10, params={
            "target": name, "namespace": namespace, "direction": "upstream", "depth": "1"}).json()
        upstream = {(h["namespace"], h["dataset"]) for h in body["hits"]}
        for up_ns, up_name in upstream:
            down = requests.get(f"{server.url}/api/v1/impact", timeout=10, params={
                "target": up_name, "namespace": up_ns, "depth": "1"}).json()
            [hit] = [h for h in down["hits"] if (h["namespace"], h["dataset"]) == (namespace, name)]
            assert hit["quality_status"] == status


def expected_column_edges(events: list[dict]) -> dict[tuple[str, str, str], set[tuple[str, str, str]]]:
    """(input ns, name, field) -> output fields (None: the whole output), from the events' columnLineage facets."""
    edges: dict[tuple[str, str, str], set[tuple[str, str, str]]] = {}
    for event in events:
        for out in event.get("outputs") or []:
            lineage = (out.get("facets") or {}).get("columnLineage") or {}
            for out_field, spec in (lineage.get("fields") or {}).items():
                for item in spec.get("inputFields") or []:
                    key = (item["namespace"], item["name"], item["field"])
                    edges.setdefault(key, set()).add((out["namespace"], out["name"], out_field))
            for item in lineage.get("dataset") or []:  # used for the output as a whole (filter, join...)
                key = (item["namespace"], item["name"], item["field"])
                edges.setdefault(key, set()).add((out["namespace"], out["name"], None))
    return edges


def expected_contract_status(events: list[dict]) -> dict[tuple[str, str], str]:
    """The status of the newest dqgov_dataContract facet per output dataset."""
    latest: dict[tuple[str, str], tuple[str, str]] = {}
    for event in events:
        for out in event.get("outputs") or []:
            facet = (out.get("facets") or {}).get("dqgov_dataContract")
            key = (out["namespace"], out["name"])
            if facet and (key not in latest or event["eventTime"] >= latest[key][0]):
                latest[key] = (event["eventTime"], facet["status"])
    return {key: status for key, (_, status) in latest.items()}


def test_post_batch_and_column_impact(server):
    events = fixture_events()
    response = requests.post(f"{server.url}/api/v1/lineage", json=events, timeout=10)
    assert response.status_code == 201
    assert response.json() == {"stored": 10, "duplicates": 0, "skipped": 0, "errors": []}
    again = requests.post(f"{server.url}/api/v1/lineage", json={"events": events[:3]}, timeout=10)
    assert again.json()["duplicates"] == 3
    impact = requests.get(f"{server.url}/api/v1/impact", timeout=10,
                          params={"target": "raw.orders.cliente_id", "direction": "downstream"}).json()
    assert impact["datasets"] == ["stg.orders_a", "stg.orders_b", "mart.orders_joined", "analytics.customer_analytics"]
    assert impact["owners"] == ["team:finance-analytics", "team:marketing-analytics", "user:ana"]
    mermaid = requests.get(f"{server.url}/api/v1/impact", timeout=10,
                           params={"target": "cyc.a.x", "format": "mermaid"})
    assert mermaid.headers["Content-Type"].startswith("text/plain")
    assert mermaid.text.startswith("flowchart LR")


def test_real_openlineage_client_with_gzip(server):
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
    from openlineage.client.facet_v2 import column_lineage_dataset as cl

    client = OpenLineageClient(transport=ol_transport(server.url, compression="gzip"))
    lineage = cl.ColumnLineageDatasetFacet(fields={"total": cl.Fields(inputFields=[
        cl.InputField(namespace="s3://lake", name="sales", field="amount",
                      transformations=[cl.Transformation(type="DIRECT", subtype="AGGREGATION")])])})
    client.emit(RunEvent(
        eventType=RunState.COMPLETE, eventTime=datetime.now(timezone.utc).isoformat(),
        run=Run(runId=str(uuid.uuid4())), job=Job(namespace="dqgov", name="daily_totals"),
        inputs=[InputDataset(namespace="s3://lake", name="sales")],
        outputs=[OutputDataset(namespace="s3://lake", name="totals", facets={"columnLineage": lineage})]))
    body = requests.get(f"{server.url}/api/v1/impact", params={"target": "sales.amount"}, timeout=10).json()
    assert [(h["dataset"], h["column"], h["jobs"]) for h in body["hits"]] == [
        ("totals", "total", ["dqgov:daily_totals"])]


def test_bad_json_is_400_with_reason(server):
    response = requests.post(f"{server.url}/api/v1/lineage", data=b'{"eventTime": ', timeout=10,
                             headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["reason"].startswith("invalid JSON: Expecting value")


def test_invalid_event_is_400_naming_the_field(server):
    event = fixture_events()[0]
    del event["job"]["namespace"]
    response = requests.post(f"{server.url}/api/v1/lineage", json=event, timeout=10)
    assert response.status_code == 400
    assert response.json()["reason"] == "invalid OpenLineage event: job.namespace: missing or not a non-empty string"
    event = fixture_events()[0]
    event["run"]["runId"] = "run-1"
    response = requests.post(f"{server.url}/api/v1/lineage", json=event, timeout=10)
    assert (response.status_code, response.json()["reason"]) == (
        400, "invalid OpenLineage event: run.runId: 'run-1' is not a UUID")


def test_batch_with_one_bad_event_stores_the_rest(server):
    events = fixture_events()[:2] + [{"eventTime": "2026-01-01T00:00:00Z"}]
    response = requests.post(f"{server.url}/api/v1/lineage", json=events, timeout=10)
    assert response.status_code == 201
    body = response.json()
    assert (body["stored"], body["skipped"]) == (2, 1)
    assert body["errors"] == ["/api/v1/lineage[2]: job: missing or not an object"]


def test_bodies_that_break_the_parsers_get_a_400_and_the_server_stays_up(server):
    url, json_type = f"{server.url}/api/v1/lineage", {"Content-Type": "application/json"}
    nested = requests.post(url, data=b"[" * 5000 + b"]" * 5000, headers=json_type, timeout=10)
    assert (nested.status_code, nested.json()["reason"]) == (400, "invalid JSON: nested too deeply")
    broken = gzip.compress(json.dumps(fixture_events()[0]).encode())
    broken = broken[:10] + bytes(b ^ 0xFF for b in broken[10:20]) + broken[20:]  # the header kept, deflate broken
    corrupt = requests.post(url, data=broken, headers={**json_type, "Content-Encoding": "gzip"}, timeout=10)
    assert (corrupt.status_code, corrupt.json()["reason"]) == (400, "body is not valid gzip")
    lone = fixture_events()[2]
    lone["job"]["name"] = "job\ud800"  # a lone surrogate: JSON can say it, no store can keep it as text
    batch = requests.post(url, json=[*fixture_events()[:2], lone], timeout=10)
    assert batch.status_code == 201
    assert batch.json() == {"stored": 2, "duplicates": 0, "skipped": 1, "errors": [
        "/api/v1/lineage[2]: string: holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which is not text"]}
    pair = fixture_events()[2]
    pair["job"]["name"] = "job \U0001F600"  # a pair (an emoji) is text
    assert requests.post(url, json=pair, timeout=10).json()["stored"] == 1


def test_an_unexpected_error_is_a_500_with_one_log_line_and_the_server_stays_up(server, monkeypatch, caplog):
    def breaks(_events):
        raise RuntimeError("secret-looking detail that must not be sent")

    monkeypatch.setattr(server.writer, "ingest_events", breaks)
    response = requests.post(f"{server.url}/api/v1/lineage", json=fixture_events()[0], timeout=10)
    assert response.status_code == 500
    assert response.json() == {"error": "Internal Server Error", "reason": "the request failed: RuntimeError"}
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == ["POST /api/v1/lineage: RuntimeError"]
    monkeypatch.undo()
    assert requests.post(f"{server.url}/api/v1/lineage", json=fixture_events()[0], timeout=10).status_code == 201


def test_oversized_body_is_413(server):
    big = b"[" + b" " * (64 * 1024) + b"]"
    response = requests.post(f"{server.url}/api/v1/lineage", data=big, timeout=10,
                             headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert "above the limit of 65536 bytes" in response.json()["reason"]
    # a gzip body that inflates past the limit is refused too
    bomb = gzip.compress(b"[" + b" " * (1024 * 1024) + b"]")
    response = requests.post(f"{server.url}/api/v1/lineage", data=bomb, timeout=10,
                             headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert response.status_code == 413
    # the server is still healthy afterwards
    assert requests.get(f"{server.url}/healthz", timeout=10).status_code == 200


def test_token_required_when_configured(token_server, caplog):
    url = f"{token_server.url}/api/v1/lineage"
    event = fixture_events()[0]
    missing = requests.post(url, json=event, timeout=10)
    assert missing.status_code == 401
    assert missing.headers["WWW-Authenticate"].startswith("Bearer")
    wrong = requests.post(url, json=event, timeout=10, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert requests.get(f"{token_server.url}/api/v1/impact", params={"target": "raw.orders"}, timeout=10).status_code == 401
    assert requests.get(f"{token_server.url}/healthz", timeout=10).status_code == 200  # liveness stays open
    # the OpenLineage transport's api_key auth sends `Authorization: Bearer <key>`
    assert ol_transport(token_server.url, api_key=TOKEN).emit(event).status_code == 201
    ok = requests.get(f"{token_server.url}/api/v1/impact", params={"target": "raw.orders"}, timeout=10,
                      headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200 and ok.json()["datasets"] == ["stg.orders_a"]
    assert TOKEN not in caplog.text


def test_impact_errors(server):
    missing = requests.get(f"{server.url}/api/v1/impact", timeout=10)
    assert missing.status_code == 400
    unknown = requests.get(f"{server.url}/api/v1/impact", params={"target": "no.such"}, timeout=10)
    assert unknown.status_code == 404
    assert unknown.json()["reason"] == "no dataset in the lineage store matches 'no.such'"
    assert requests.get(f"{server.url}/nope", timeout=10).status_code == 404


def test_dqgov_serve_command(tmp_path):
    """`dqgov serve --port 0` in its own process: prints its URL, accepts an event, stops on SIGTERM."""
    db = tmp_path / "served.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from dq_governance.cli import main; sys.exit(main(sys.argv[1:]))",
         "serve", "--port", "0", "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("dqgov collector on http://127.0.0.1:"), line + proc.stderr.read()
        base = line.split()[3].rsplit("/api/v1/lineage", 1)[0]
        response = requests.post(f"{base}/api/v1/lineage", json=fixture_events()[0], timeout=10)
        assert response.status_code == 201
    finally:
        proc.terminate()
        proc.wait(10)
    with LineageGraph(db) as graph:
        assert graph.counts()["events"] == 1


def test_negative_content_length_is_400(server):
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    conn.putrequest("POST", "/api/v1/lineage")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", "-5")
    conn.endheaders()
    response = conn.getresponse()
    assert response.status == 400
    assert json.loads(response.read())["reason"] == "Content-Length is not a non-negative number"
    conn.close()


def test_dqgov_serve_refuses_a_named_token_variable_that_is_not_set(tmp_path, monkeypatch, capsys):
    """Asked for authentication, the collector does not start open instead: exit 2, one line, nothing bound."""
    from dq_governance.cli import main

    monkeypatch.delenv("MY_COLLECTOR_TOKEN", raising=False)
    assert main(["serve", "--port", "0", "--db", str(tmp_path / "l.db"), "--token-env", "MY_COLLECTOR_TOKEN"]) == 2
    assert capsys.readouterr().err == ("dqgov: error: --token-env MY_COLLECTOR_TOKEN: the variable is not set "
                                       "(the collector would accept anyone)\n")
    assert not (tmp_path / "l.db").exists()


# -- browsers are kept out: Content-Type, Origin, Host (DNS rebinding) ---------------------------------------


def stored_events(srv) -> int:
    """How many events the collector's store holds."""
    with LineageGraph(srv.db_path) as graph:
        return graph.counts()["events"]


def raw_request(srv, method: str, path: str, headers: dict[str, str], body: bytes | None = None):
    """One request with exactly these headers (Host included: http.client would add its own); (status, JSON body)."""
    import http.client

    conn = http.client.HTTPConnection(srv.server_address[0], srv.server_address[1], timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


@pytest.mark.parametrize("content_type", [
    "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
    None, "application/jsonx", "application/json; boundary=x"])
def test_post_without_json_content_type_is_415_and_stores_nothing(server, content_type):
    """The cross-site "simple" request (no preflight: text/plain, a form, no type) cannot plant an event."""
    port = server.server_address[1]
    headers = {"Host": f"127.0.0.1:{port}"} | ({"Content-Type": content_type} if content_type else {})
    status, body = raw_request(server, "POST", "/api/v1/lineage", headers, json.dumps(fixture_events()[0]).encode())
    assert (status, body) == (415, {"error": "Unsupported Media Type",
                                    "reason": f"Content-Type must be application/json, not {content_type!r}"})
    assert stored_events(server) == 0


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=UTF-8",
                                          "Application/JSON;charset=utf-8"])
def test_post_with_json_content_type_is_accepted(server, content_type):
    """Regression guard (passes on the old code too): JSON, with or without a charset, is still stored.
    The Spark listener's transport sends `application/json; charset=UTF-8`, openlineage-python `application/json`."""
    port = server.server_address[1]
    status, body = raw_request(server, "POST", "/api/v1/lineage",
                               {"Host": f"127.0.0.1:{port}", "Content-Type": content_type},
                               json.dumps(fixture_events()[0]).encode())
    assert (status, body) == (201, {"stored": 1, "duplicates": 0, "skipped": 0, "errors": []})
    assert stored_events(server) == 1


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://127.0.0.1:1", "https://127.0.0.1:{port}",
                                    "http://evil.example:{port}", "http://127.0.0.1.evil.example:{port}"])
def test_foreign_origin_is_403_and_stores_nothing(server, origin):
    """A page of another site can neither post events nor read impact answers, even with a JSON body."""
    port = server.server_address[1]
    origin = origin.format(port=port)
    reason = f"Origin {origin!r} is not http://127.0.0.1:{port}: cross-site requests are refused"
    status, body = raw_request(server, "POST", "/api/v1/lineage",
                               {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json", "Origin": origin},
                               json.dumps(fixture_events()[0]).encode())
    assert (status, body) == (403, {"error": "Forbidden", "reason": reason})
    assert stored_events(server) == 0
    status, body = raw_request(server, "GET", "/api/v1/impact?target=raw.orders",
                               {"Host": f"127.0.0.1:{port}", "Origin": origin})
    assert (status, body) == (403, {"error": "Forbidden", "reason": reason})


def test_own_origin_is_accepted(server):
    """Regression guard (passes on the old code too): the server's own origin, by any loopback name, may post."""
    port = server.server_address[1]
    for count, origin in enumerate([f"http://127.0.0.1:{port}", f"http://localhost:{port}"], start=1):
        status, _ = raw_request(server, "POST", "/api/v1/lineage",
                                {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json", "Origin": origin},
                                json.dumps(fixture_events()[count - 1]).encode())
        assert status == 201
        assert stored_events(server) == count


@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "127.0.0.1.evil.example:{port}",
                                  "localhost:{other}", "127.0.0.1:{other}", "[::1]:{other}", "10.0.0.1:{port}",
                                  "localhost:", "[::1"])
def test_foreign_host_on_loopback_is_403_and_stores_nothing(server, host):
    """DNS rebinding: a foreign name resolved to 127.0.0.1 arrives with its own Host; nothing is answered or stored."""
    port = server.server_address[1]
    host = host.format(port=port, other=port + 1 if port < 65535 else port - 1)
    reason = f"Host {host!r} is not a loopback name with port {port}"
    for path in ("/api/v1/impact?target=raw.orders", "/healthz"):
        assert raw_request(server, "GET", path, {"Host": host}) == (403, {"error": "Forbidden", "reason": reason})
    status, body = raw_request(server, "POST", "/api/v1/lineage", {"Host": host, "Content-Type": "application/json"},
                               json.dumps(fixture_events()[0]).encode())
    assert (status, body) == (403, {"error": "Forbidden", "reason": reason})
    assert stored_events(server) == 0


@pytest.mark.parametrize("host", ["localhost:{port}", "localhost", "LOCALHOST:{port}", "127.0.0.1:{port}",
                                  "127.0.0.1", "127.1.2.3:{port}", "[::1]:{port}", "[::1]"])
def test_loopback_host_is_accepted(server, host):
    """Regression guard (passes on the old code too): every loopback name, with our port or none, is answered."""
    host = host.format(port=server.server_address[1])
    assert raw_request(server, "GET", "/healthz", {"Host": host}) == (200, {"status": "ok"})


def test_non_loopback_bind_leaves_the_host_to_the_token(tmp_path):
    """Bound to all interfaces the Host check does not apply (the token protects; regression guard, passes on the
    old code), while a foreign Origin is still refused (fails on the old code)."""
    srv = make_server(tmp_path / "wide.db", host="0.0.0.0", port=0, token=TOKEN)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        port = srv.server_address[1]
        bearer = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        event = json.dumps(fixture_events()[0]).encode()
        status, body = raw_request(srv, "POST", "/api/v1/lineage", {"Host": f"lineage.corp.example:{port}"} | bearer,
                                   event)
        assert (status, body) == (201, {"stored": 1, "duplicates": 0, "skipped": 0, "errors": []})
        status, _ = raw_request(srv, "POST", "/api/v1/lineage", {"Host": "lineage.corp.example"}, event)
        assert status == 401
        origin = "https://evil.example"
        status, body = raw_request(srv, "POST", "/api/v1/lineage",
                                   {"Host": f"lineage.corp.example:{port}", "Origin": origin} | bearer, event)
        assert (status, body) == (403, {"error": "Forbidden", "reason": f"Origin {origin!r} is not "
                                                                        f"http://0.0.0.0:{port}: cross-site "
                                                                        "requests are refused"})
        assert stored_events(srv) == 1
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


SPARK_LISTENER_EMIT = """
import io.openlineage.client.OpenLineageClientUtils;
import io.openlineage.client.transports.HttpConfig;
import io.openlineage.client.transports.HttpTransport;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;

public class EmitOverHttp {
  public static void main(String[] args) throws Exception {
    HttpConfig config = new HttpConfig();
    config.setUrl(URI.create(args[0]));
    config.setEndpoint("/api/v1/lineage");
    try (HttpTransport transport = new HttpTransport(config)) {
      transport.emit(OpenLineageClientUtils.runEventFromJson(Files.readString(Path.of(args[1]))));
    }
  }
}
"""


def test_spark_listener_http_transport_is_accepted(server, tmp_path):
    """Regression guard (passes on the old code too): the HttpTransport inside the OpenLineage Spark listener jar
    (it sends `Content-Type: application/json; charset=UTF-8` and `Host: 127.0.0.1:PORT`) still stores its event."""
    import shutil

    import pyspark

    from dq_governance.lineage.spark import find_listener_jar

    jar = find_listener_jar()
    slf4j = sorted((Path(pyspark.__file__).parent / "jars").glob("slf4j-api-*.jar"))
    if shutil.which("java") is None or jar is None or not slf4j:
        missing_prerequisite("needs java, the OpenLineage Spark listener jar (make listener-jar) and pyspark's "
                             "slf4j-api")
    source = tmp_path / "EmitOverHttp.java"
    source.write_text(SPARK_LISTENER_EMIT)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(fixture_events()[0]))
    run = subprocess.run(["java", "-cp", f"{jar}:{slf4j[-1]}", str(source), server.url, str(event)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert stored_events(server) == 1


def test_an_ipv6_loopback_bind_is_served_and_keeps_the_host_check(tmp_path):
    """`dqgov serve --host ::1` failed to bind (an IPv4 socket for an IPv6 address)."""
    srv = make_server(tmp_path / "v6.db", host="::1", port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        port = srv.server_address[1]
        assert srv.url == f"http://[::1]:{port}"
        assert requests.get(f"{srv.url}/healthz", timeout=10).json() == {"status": "ok"}
        event = json.dumps(fixture_events()[0]).encode()
        json_type = {"Content-Type": "application/json"}
        assert raw_request(srv, "POST", "/api/v1/lineage", {"Host": f"[::1]:{port}"} | json_type, event) == (
            201, {"stored": 1, "duplicates": 0, "skipped": 0, "errors": []})
        status, _ = raw_request(srv, "POST", "/api/v1/lineage", {"Host": f"rebound.example:{port}"} | json_type, event)
        assert status == 403 and stored_events(srv) == 1
    finally:
        srv.shutdown()
        srv.server_close()


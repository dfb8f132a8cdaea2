"""Benchmark `dqgov sync`: 200 contracts x 20 columns (plus one run's results each) to a local catalog.

A stdlib HTTP/1.1 server on loopback, started here, plays DataHub GMS and OpenMetadata with in-memory
state (reads return what earlier writes stored, so the second DataHub sync is the real no-op path).
The measured configuration is the shipped one: one pooled `requests.Session` per catalog and, for
DataHub, `ingestProposalBatch`. The baseline, in the same process, is the naive client: a new
connection per request (`Connection: close`), one `ingestProposal` per aspect and one request at a
time (the shipped default overlaps per-rule requests on 8 connections); it runs on a
subset of the contracts (`--baseline-contracts`) to keep the run short, and ratios are per contract.

    python benchmarks/bench_sync.py [--contracts 200] [--columns 20] [--baseline-contracts 40]

Prints one JSON object. Target: the 200-contract sync of each catalog under 30 s.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import sys
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from dq_governance.catalogs.sync import make_pusher, sync
from dq_governance.checks.result import CheckResult, GateDecision, RuleResult
from dq_governance.contracts.model import Contract

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


# --------------------------------------------------------------------------- the local catalog


class Catalog:
    """In-memory state for both catalogs; one lock, the server is threaded."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.aspects: dict[tuple[str, str], Any] = {}
        self.events: dict[str, list[dict[str, Any]]] = {}
        self.om: dict[str, dict[str, Any]] = {}  # path-ish key -> entity
        self.counter = 0

    def new_id(self) -> str:
        self.counter += 1
        return f"00000000-0000-4000-8000-{self.counter:012d}"


def make_handler(state: Catalog) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive unless the client says Connection: close
        disable_nagle_algorithm = True  # small header+body writes must not wait for delayed ACKs

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if self.close_connection:
                self.send_header("Connection", "close")  # so the client does not reuse a closed socket
            self._headers_buffer.append(b"\r\n" + data)  # headers and body in one write
            self.flush_headers()

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length)) if length else None

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_PUT(self) -> None:
            self._route("PUT")

        def do_PATCH(self) -> None:
            self._route("PATCH")

        def _route(self, method: str) -> None:
            body = self._body()
            with state.lock:
                state.requests += 1
                status, reply = (datahub if not self.path.startswith("/api/") else openmetadata)(
                    state, method, self.path, body)
            self._send(status, reply)

    return Handler


def datahub(state: Catalog, method: str, path: str, body: Any) -> tuple[int, Any]:
    parts = urlsplit(path)
    if method == "GET" and parts.path == "/config":
        return 200, {"noCode": "true", "patchCapable": True, "versions": {"acryldata/datahub": {"version": "v1.2.0"}}}
    if method == "GET" and parts.path.startswith("/aspects/"):
        key = (unquote(parts.path[len("/aspects/"):]), parse_qs(parts.query)["aspect"][0])
        return (200, {"aspect": {"value": state.aspects[key]}}) if key in state.aspects else (404, {"status": 404})
    if method == "POST" and parts.query == "action=getTimeseriesAspectValues":
        events = [e for e in state.events.get(body["urn"], []) if body["startTimeMillis"] <= e["timestampMillis"]
                  <= body["endTimeMillis"]]
        return 200, {"value": {"values": [{"aspect": {"value": json.dumps(e)}} for e in events]}}
    if method == "POST" and parts.query in ("action=ingestProposal", "action=ingestProposalBatch"):
        for mcp in body.get("proposals") or [body["proposal"]]:
            value = json.loads(mcp["aspect"]["value"])
            if mcp["aspectName"] == "assertionRunEvent":
                state.events.setdefault(mcp["entityUrn"], []).append(value)
            elif mcp["changeType"] == "UPSERT":
                state.aspects[(mcp["entityUrn"], mcp["aspectName"])] = value
            else:
                _datahub_patch(state, mcp["entityUrn"], mcp["aspectName"], value)
        return 200, {"value": "ok"}
    return 404, {"message": f"no route {method} {path}"}


_LIST_KEYS = {"globalTags": ("tags", "tag"), "ownership": ("owners", "owner")}


def _datahub_patch(state: Catalog, urn: str, aspect: str, ops: list[dict[str, Any]]) -> None:
    """Enough of DataHub's patch templates for the aspects the pusher patches."""
    doc = state.aspects.setdefault((urn, aspect), {})
    for op in ops:
        parts = op["path"].strip("/").split("/")
        if aspect in _LIST_KEYS:
            field, _ = _LIST_KEYS[aspect]
            doc.setdefault(field, []).append(op["value"])
        elif aspect == "editableSchemaMetadata":
            infos = doc.setdefault("editableSchemaFieldInfo", [])
            info = next((i for i in infos if i["fieldPath"] == parts[1]), None)
            if info is None:
                info = {"fieldPath": parts[1]}
                infos.append(info)
            if parts[2] == "description":
                info["description"] = op["value"]
            else:
                info.setdefault(parts[2], {}).setdefault(parts[3], []).append(op["value"])
        else:
            node = doc
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = op["value"]


def openmetadata(state: Catalog, method: str, path: str, body: Any) -> tuple[int, Any]:
    parts = urlsplit(path)
    p = unquote(parts.path[len("/api/v1"):])
    om = state.om
    if method == "GET" and p == "/system/version":
        return 200, {"version": "1.9.11"}
    if method == "GET" and re.match(r"^/(teams|users|tables|classifications|tags|dataQuality/testCases)/name/", p):
        found = om.get(p.replace("/name/", "/", 1))
        return (200, found) if found else (404, {"message": "not found"})
    if method == "PUT" and p in ("/classifications", "/tags"):
        key = f"{p}/{body['name']}" if p == "/classifications" else f"/tags/{body['classification']}.{body['name']}"
        om[key] = body
        return 200, body
    if method == "PATCH" and p.startswith("/tables/"):
        return 200, {}
    if method == "PUT" and p == "/dataQuality/testSuites/basic":
        suite = {"id": state.new_id(), "fullyQualifiedName": body["name"]}
        om[f"/tables/{body['basicEntityReference']}"]["testSuite"] = suite
        return 200, suite
    if method == "PUT" and p == "/dataQuality/testCases":
        link = body["entityLink"].strip("<>#").split("::")
        fqn = f"{link[2]}.{link[4]}.{body['name']}" if len(link) > 3 else f"{link[2]}.{body['name']}"
        case = {**body, "id": state.new_id(), "fullyQualifiedName": fqn}
        om[f"/dataQuality/testCases/{fqn}"] = case
        return 200, case
    if p.startswith("/dataQuality/testCases/testCaseResults/"):
        fqn = p.rsplit("/", 1)[-1]
        results = om.setdefault(f"results/{fqn}", {"data": []})
        if method == "POST":
            results["data"].append(body)
            return 200, body
        q = {k: int(v[0]) for k, v in parse_qs(parts.query).items()}
        return 200, {"data": [r for r in results["data"] if q["startTs"] <= r["timestamp"] <= q["endTs"]]}
    if method == "GET" and p == "/dataContracts/entity":
        found = om.get(f"contract-of/{parse_qs(parts.query)['entityId'][0]}")
        return (200, found) if found else (404, {"message": "not found"})
    if method == "PUT" and p == "/dataContracts":
        contract = {**body, "id": state.new_id(), "fullyQualifiedName": body["name"]}
        om[f"contract-of/{body['entity']['id']}"] = contract
        return 200, contract
    if p.startswith("/dataContracts/") and p.endswith("/results/latest"):
        found = om.get(f"contract-result/{p.split('/')[2]}")
        return (200, found) if found else (404, {"message": "not found"})
    if method == "PUT" and p.startswith("/dataContracts/") and p.endswith("/results"):
        om[f"contract-result/{p.split('/')[2]}"] = body
        return 200, body
    return 404, {"message": f"no route {method} {path}"}


# --------------------------------------------------------------------------- inputs

_TYPES = ["long", "string", "decimal(12,2)", "date", "timestamp"]


def make_contract(i: int, columns: int) -> Contract:
    fields = []
    for j in range(columns):
        field: dict[str, Any] = {"name": f"col_{j:02d}", "type": _TYPES[j % len(_TYPES)],
                                 "description": f"Column {j} of dataset {i}"}
        if j == 0:
            field.update(primary_key=True)
        if j % 5 == 1:
            field.update(pii=True, classification="restricted", type="string")
        if j % 7 == 2:
            field.update(required=True)
        if j % 9 == 3:
            field.update(type="string", allowed_values=["A", "B", "C"])
        if j % 6 == 4 and field["type"] in ("long", "decimal(12,2)"):
            field.update(minimum=0, maximum=1000)
        fields.append(field)
    return Contract.model_validate({
        "contract": {"name": f"dataset_{i:03d}", "version": "1.0.0", "owner": f"team:team-{i % 10}",
                     "steward": f"user:steward-{i % 7}", "description": f"Benchmark contract {i}"},
        "dataset": {"name": f"bench.dataset_{i:03d}", "description": f"Dataset {i}", "classification": "internal",
                    "catalog": {"openmetadata_fqn": f"lake.bench.curated.dataset_{i:03d}", "datahub_platform": "spark"}},
        "schema": {"fields": fields},
        "quality": {"rules": [{"type": "row_count", "min": 1, "name": "rows"}]},
    })


def make_result(contract: Contract) -> CheckResult:
    rules = [RuleResult(name=r.name, type=r.type, columns=r.target_columns, level=r.level, severity=r.severity,
                        action=r.action, dimension=r.dimension, passed=True, status="passed",
                        failed_count=0 if r.level == "row" else None,
                        metric_value=1000.0 if r.level == "dataset" else None) for r in contract.rules()]
    return CheckResult(run_id=f"run-{contract.name}", contract_name=contract.name, contract_version=contract.version,
                       pipeline="bench", rules=rules, total_rows=1000, valid_rows=1000, invalid_rows=0, status="passed",
                       gate=GateDecision(True, True), started_at=T0, finished_at=T0)


def seed_openmetadata(state: Catalog, contracts: list[Contract]) -> None:
    """Tables and teams exist before the sync, as ingestion would have created them."""
    for contract in contracts:
        fqn = contract.dataset.catalog["openmetadata_fqn"]
        state.om[f"/tables/{fqn}"] = {
            "id": state.new_id(), "fullyQualifiedName": fqn, "tags": [], "owners": [],
            "columns": [{"name": f.name, "dataType": "STRING", "tags": []} for f in contract.fields]}
    for t in range(10):
        state.om[f"/teams/team-{t}"] = {"id": state.new_id(), "name": f"team-{t}"}
    state.om["/classifications/PII"] = {"name": "PII"}
    state.om["/tags/PII.Sensitive"] = {"name": "Sensitive"}


# --------------------------------------------------------------------------- runs


def run(catalog: str, url: str, contracts: list[Contract], *, reuse: bool, batch: bool,
        workers: int) -> dict[str, Any]:
    pusher = make_pusher(catalog, url=url, batch=batch, workers=workers)
    if not reuse:
        # The naive client: no keep-alive, so every request opens a new TCP connection.
        pusher.transport.session.headers["Connection"] = "close"  # type: ignore[attr-defined]
    results = {c.name: make_result(c) for c in contracts}
    started = time.perf_counter()
    report = sync(pusher, contracts, results)
    seconds = time.perf_counter() - started
    assert not report.failed and not report.invalid, report.failed + report.invalid
    return {"seconds": round(seconds, 3), "requests": pusher.transport.requests_sent,  # type: ignore[attr-defined]
            "writes": report.writes, "created": len(report.created), "unchanged": len(report.unchanged),
            "per_contract_ms": round(seconds / len(contracts) * 1000, 2)}


def serve(state: Catalog, port: Any) -> None:
    """Child process: the catalog server (its own interpreter, so it does not share the client's GIL)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    server.daemon_threads = True
    port.send(server.server_address[1])
    server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contracts", type=int, default=200)
    parser.add_argument("--columns", type=int, default=20)
    parser.add_argument("--baseline-contracts", type=int, default=40)
    parser.add_argument("--workers", type=int, default=8, help="concurrent requests per pusher (shipped default 8)")
    args = parser.parse_args(argv)

    out: dict[str, Any] = {"contracts": args.contracts, "columns": args.columns, "workers": args.workers,
                           "rules_per_contract": len(make_contract(0, args.columns).rules())}
    for catalog in ("datahub", "openmetadata"):
        state = Catalog()
        contracts = [make_contract(i, args.columns) for i in range(args.contracts)]
        baseline_set = [make_contract(i, args.columns) for i in range(10_000, 10_000 + args.baseline_contracts)]
        if catalog == "openmetadata":
            seed_openmetadata(state, contracts + baseline_set)
        receive, send = multiprocessing.Pipe(duplex=False)
        server = multiprocessing.get_context("fork").Process(target=serve, args=(state, send), daemon=True)
        server.start()
        url = f"http://127.0.0.1:{receive.recv()}"
        try:
            measured = run(catalog, url, contracts, reuse=True, batch=True, workers=args.workers)
            entry: dict[str, Any] = {"sync": measured}
            if catalog == "datahub":
                entry["resync_unchanged"] = run(catalog, url, contracts, reuse=True, batch=True, workers=args.workers)
                assert entry["resync_unchanged"]["writes"] == 0
            baseline = run(catalog, url, baseline_set, reuse=False, batch=False, workers=1)
            entry["baseline_no_reuse_no_batch"] = {**baseline, "contracts": len(baseline_set)}
            entry["speedup_per_contract"] = round(baseline["per_contract_ms"] / measured["per_contract_ms"], 2)
            entry["under_30s"] = measured["seconds"] < 30
            out[catalog] = entry
        finally:
            server.terminate()
            server.join()
    print(json.dumps(out, indent=2))
    return 0 if all(out[c]["under_30s"] for c in ("datahub", "openmetadata")) else 1


if __name__ == "__main__":
    sys.exit(main())

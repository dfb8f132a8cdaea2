"""Test support for the catalog tests: vendored payloads, field-by-field comparison, and `responses`
callbacks that keep catalog state the way the documented APIs do (so a second sync can be checked).

The state handlers implement only what the reference notes document: OpenMetadata JSON Patch
(RFC 6902 with array indexes) and DataHub's patch templates (arrays keyed by their primary key).
"""

from __future__ import annotations

import copy
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import responses

FIXTURES = Path(__file__).parent / "fixtures" / "catalogs"
OM_URL = "http://om.test:8585"
DH_URL = "http://gms.test:8080"
TOKEN = "s3cr3t-t0ken-value-123"


def om_fixture(name: str) -> dict[str, Any]:
    """One validated OpenMetadata body."""
    return copy.deepcopy(json.loads((FIXTURES / "openmetadata_bodies.json").read_text())[name])


def dh_fixture(name: str) -> dict[str, Any]:
    """One DataHub SDK payload: {"restli": envelope, "aspect_value": decoded aspect}."""
    return copy.deepcopy(json.loads((FIXTURES / "datahub_aspects.json").read_text())[name])


def assert_fields(actual: Any, expected: Any, path: str = "$", *, extra: set[str] = frozenset(),
                  differ: dict[str, Any] | None = None, absent: set[str] = frozenset()) -> None:
    """Compare field by field. Every expected field must be present and equal, except paths listed in
    `differ` (path -> the value we produce instead) or `absent` (we do not send it). Fields we send
    that the fixture lacks must be listed in `extra`."""
    differ = differ or {}
    if path in differ:
        assert actual == differ[path], f"{path}: expected our documented value {differ[path]!r}, got {actual!r}"
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            sub = f"{path}.{key}"
            if sub in absent:
                assert key not in actual, f"{sub}: documented as not sent, but present"
                continue
            assert key in actual, f"{sub}: missing"
            assert_fields(actual[key], value, sub, extra=extra, differ=differ, absent=absent)
        for key in actual:
            sub = f"{path}.{key}"
            assert key in expected or sub in extra, f"{sub}: not in the validated payload ({actual[key]!r})"
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), \
            f"{path}: expected {len(expected)} items, got {actual!r}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_fields(a, e, f"{path}[{i}]", extra=extra, differ=differ, absent=absent)
    else:
        assert actual == expected and type(actual) is type(expected), f"{path}: expected {expected!r}, got {actual!r}"


def body_of(call: Any) -> Any:
    """The JSON body of a recorded `responses` call."""
    raw = call.request.body
    return None if raw is None else json.loads(raw)


def writes(calls: Any) -> list[Any]:
    """Calls that change state (everything but GET and the DataHub timeseries read)."""
    return [c for c in calls if c.request.method != "GET" and "getTimeseriesAspectValues" not in c.request.url]


# --------------------------------------------------------------------------- JSON Patch (RFC 6902)


def _pointer(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def apply_json_patch(doc: Any, ops: list[dict[str, Any]]) -> Any:
    """Apply add / replace / remove with array indexes and `-` (what OpenMetadata PATCH accepts)."""
    doc = copy.deepcopy(doc)
    for op in ops:
        parts = _pointer(op["path"])
        parent = doc
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent[part]
        last = parts[-1]
        if op["op"] in ("add", "replace"):
            if isinstance(parent, list):
                if last == "-":
                    parent.append(copy.deepcopy(op["value"]))
                elif op["op"] == "add":
                    parent.insert(int(last), copy.deepcopy(op["value"]))
                else:
                    parent[int(last)] = copy.deepcopy(op["value"])
            else:
                assert op["op"] == "add" or last in parent, f"replace of missing {op['path']}"
                parent[last] = copy.deepcopy(op["value"])
        elif op["op"] == "remove":
            if isinstance(parent, list):
                del parent[int(last)]
            else:
                del parent[last]
        else:
            raise AssertionError(f"unsupported op {op['op']}")
    return doc


# --------------------------------------------------------------------------- OpenMetadata


@dataclass
class OMState:
    version: str = "1.9.11"
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)  # fqn -> table
    teams: dict[str, str] = field(default_factory=dict)  # name -> id
    users: dict[str, str] = field(default_factory=dict)
    classifications: dict[str, dict[str, Any]] = field(default_factory=lambda: {"PII": {"name": "PII"}})
    tags: dict[str, dict[str, Any]] = field(default_factory=lambda: {
        "PII.Sensitive": {}, "PII.NonSensitive": {}, "PII.None": {}, "Tier.Tier1": {}, "Tier.Tier2": {}})
    suites: dict[str, dict[str, Any]] = field(default_factory=dict)
    test_cases: dict[str, dict[str, Any]] = field(default_factory=dict)  # fqn -> test case
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    contracts: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> contract
    contract_results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    lineage: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)  # entity name -> id to hand out
    counter: int = 0
    # write kind ("result", "table patch", "contract result") -> how many of the next such writes are stored,
    # then answered 503 (a proxy timing out)
    stored_then_503: dict[str, int] = field(default_factory=dict)

    lock: Any = field(default_factory=threading.Lock)

    def new_id(self, name: str) -> str:
        """A preset id for `name` or a fresh one (the pusher calls from several threads)."""
        if name in self.ids:
            return self.ids[name]
        with self.lock:
            self.counter += 1
            return f"00000000-0000-4000-8000-{self.counter:012d}"

    def add_table(self, fqn: str, columns: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        """An existing table as ingestion would have created it."""
        cols = []
        for col in columns:
            col = {"tags": [], **col}
            col["fullyQualifiedName"] = f"{fqn}.{col['name']}"
            cols.append(col)
        table = {"id": self.new_id(fqn), "name": fqn.split(".")[-1], "fullyQualifiedName": fqn,
                 "columns": cols, "tags": [], "owners": [], **extra}
        self.tables[fqn] = table
        return table


def _json(status: int, body: Any) -> tuple[int, dict[str, str], str]:
    return status, {"Content-Type": "application/json"}, json.dumps(body)


def _not_found(what: str) -> tuple[int, dict[str, str], str]:
    return _json(404, {"code": 404, "message": f"{what} instance for name not found"})


class OMServer:
    """`responses` callbacks over OMState for every endpoint the pusher uses."""

    def __init__(self, rsps: responses.RequestsMock, state: OMState | None = None):
        self.state = state or OMState()
        self.rsps = rsps
        api = re.escape(OM_URL) + "/api/v1"
        routes = [
            ("GET", r"/system/version$", self.version),
            ("GET", r"/tables/name/[^/?]+(\?.*)?$", self.get_table),
            ("PUT", r"/tables$", self.put_table),
            ("PATCH", r"/tables/[^/?]+$", self.patch_table),
            ("GET", r"/(teams|users)/name/[^/?]+$", self.get_principal),
            ("GET", r"/classifications/name/[^/?]+$", self.get_classification),
            ("PUT", r"/classifications$", self.put_classification),
            ("GET", r"/tags/name/[^/?]+$", self.get_tag),
            ("PUT", r"/tags$", self.put_tag),
            ("PUT", r"/dataQuality/testSuites/(basic|executable)$", self.put_suite),
            ("GET", r"/dataQuality/testCases/name/[^/?]+(\?.*)?$", self.get_case),
            ("PUT", r"/dataQuality/testCases$", self.put_case),
            ("POST", r"/dataQuality/testCases/testCaseResults/[^/?]+$", self.add_result),
            ("GET", r"/dataQuality/testCases/testCaseResults/[^/?]+(\?.*)?$", self.list_results),
            ("PUT", r"/dataQuality/testCases/[^/?]+/testCaseResult$", self.add_result),
            ("GET", r"/dataQuality/testCases/[^/?]+/testCaseResult(\?.*)?$", self.list_results),
            ("GET", r"/dataContracts/entity(\?.*)?$", self.get_contract_for),
            ("PUT", r"/dataContracts$", self.put_contract),
            ("GET", r"/dataContracts/[^/?]+/results/latest$", self.latest_contract_result),
            ("PUT", r"/dataContracts/[^/?]+/results$", self.put_contract_result),
            ("GET", r"/lineage/getLineageEdge/[^/]+/[^/?]+$", self.get_edge),
            ("PUT", r"/lineage$", self.put_edge),
        ]
        for method, pattern, handler in routes:
            rsps.add_callback(method, re.compile(api + pattern), callback=handler)

    # helpers
    @staticmethod
    def _last(request: Any, strip: str = "") -> str:
        path = urlsplit(request.url).path
        if strip and path.endswith(strip):
            path = path[: -len(strip)]
        return unquote(path.rsplit("/", 1)[-1])

    @staticmethod
    def _query(request: Any) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(urlsplit(request.url).query).items()}

    # handlers
    def version(self, request: Any):
        return _json(200, {"version": self.state.version, "revision": "abc", "timestamp": 1720000000000})

    def get_table(self, request: Any):
        fqn = self._last(request)
        table = self.state.tables.get(fqn)
        return _json(200, table) if table else _not_found(f"table {fqn}")

    def put_table(self, request: Any):
        body = json.loads(request.body)
        fqn = f"{body['databaseSchema']}.{body['name']}"
        # ColumnUtil.validateColumn, the server's own check on every column (children too)
        pending = list(body["columns"])
        while pending:
            column = pending.pop()
            pending += column.get("children") or []
            if column["dataType"] in ("CHAR", "VARCHAR", "BINARY", "VARBINARY") and column.get("dataLength") is None:
                return _json(400, {"code": 400, "message": "For column data types char, varchar, binary, varbinary "
                                                           "dataLength must not be null"})
        table = copy.deepcopy(body)
        table.pop("databaseSchema")
        table.update(id=self.state.new_id(fqn), fullyQualifiedName=fqn)
        for col in table["columns"]:
            col.setdefault("tags", [])
            col["fullyQualifiedName"] = f"{fqn}.{col['name']}"
        table.setdefault("tags", [])
        table.setdefault("owners", [])
        self.state.tables[fqn] = table
        return _json(201, table)

    def patch_table(self, request: Any):
        assert request.headers["Content-Type"] == "application/json-patch+json"
        table_id = self._last(request)
        fqn = next(f for f, t in self.state.tables.items() if t["id"] == table_id)
        patched = apply_json_patch(self.state.tables[fqn], json.loads(request.body))
        owners = patched.get("owners") or []
        if any(o["type"] == "team" for o in owners) and len(owners) > 1:  # the server's default data asset rule
            return _json(400, {"code": 400, "message": "Rule [Multiple Users or Single Team Ownership] validation "
                                                       "failed: Entity does not satisfy the rule."})
        self.state.tables[fqn] = patched
        return self._stored("table patch", patched)

    def get_principal(self, request: Any):
        kind = urlsplit(request.url).path.split("/")[-3]
        name = self._last(request)
        ids = self.state.teams if kind == "teams" else self.state.users
        return _json(200, {"id": ids[name], "name": name}) if name in ids else _not_found(f"{kind[:-1]} {name}")

    def get_classification(self, request: Any):
        name = self._last(request)
        found = self.state.classifications.get(name)
        return _json(200, found) if found else _not_found(f"classification {name}")

    def put_classification(self, request: Any):
        body = json.loads(request.body)
        self.state.classifications[body["name"]] = body
        return _json(201, body)

    def get_tag(self, request: Any):
        name = self._last(request)
        return _json(200, {"fullyQualifiedName": name}) if name in self.state.tags else _not_found(f"tag {name}")

    def put_tag(self, request: Any):
        body = json.loads(request.body)
        self.state.tags[f"{body['classification']}.{body['name']}"] = body
        return _json(201, body)

    def put_suite(self, request: Any):
        body = json.loads(request.body)
        table_fqn = body.get("basicEntityReference") or body.get("executableEntityReference")
        suite = {"id": self.state.new_id(body["name"]), "name": body["name"], "fullyQualifiedName": body["name"]}
        self.state.suites[body["name"]] = suite
        self.state.tables[table_fqn]["testSuite"] = suite
        return _json(201, suite)

    def get_case(self, request: Any):
        fqn = self._last(request)
        case = self.state.test_cases.get(fqn)
        return _json(200, case) if case else _not_found(f"testCase {fqn}")

    def put_case(self, request: Any):
        body = json.loads(request.body)
        link = body["entityLink"].strip("<>#").split("::")
        table = link[2]
        name = f'"{body["name"]}"' if "." in body["name"] else body["name"]  # as the server quotes a dotted name
        fqn = f"{table}.{link[4]}.{name}" if len(link) > 3 else f"{table}.{name}"
        existing = self.state.test_cases.get(fqn, {})
        case = {**existing, **copy.deepcopy(body), "id": existing.get("id") or self.state.new_id(body["name"]),
                "fullyQualifiedName": fqn,
                "testDefinition": {"name": body["testDefinition"], "fullyQualifiedName": body["testDefinition"],
                                   "type": "testDefinition"}}
        case.pop("testSuite", None)
        self.state.test_cases[fqn] = case
        return _json(201 if not existing else 200, case)

    def add_result(self, request: Any):
        fqn = self._last(request, "/testCaseResult")
        assert fqn in self.state.test_cases, f"result for unknown test case {fqn}"
        self.state.results.setdefault(fqn, []).append(json.loads(request.body))
        return self._stored("result", json.loads(request.body))

    def _stored(self, kind: str, body: Any) -> tuple[int, dict[str, str], str]:
        """200 with the body, or 503 for a write set to fail after it was stored."""
        with self.state.lock:
            if self.state.stored_then_503.get(kind, 0) > 0:
                self.state.stored_then_503[kind] -= 1
                return _json(503, {"code": 503, "message": "upstream timed out"})
        return _json(200, body)

    def list_results(self, request: Any):
        fqn = self._last(request, "/testCaseResult")
        q = self._query(request)
        data = [r for r in self.state.results.get(fqn, [])
                if int(q["startTs"]) <= r["timestamp"] <= int(q["endTs"])]
        return _json(200, {"data": data, "paging": {"total": len(data)}})

    def get_contract_for(self, request: Any):
        q = self._query(request)
        found = next((c for c in self.state.contracts.values() if c["entity"]["id"] == q["entityId"]), None)
        return _json(200, found) if found else _not_found("dataContract for entity")

    def put_contract(self, request: Any):
        body = json.loads(request.body)
        existing = next((c for c in self.state.contracts.values() if c["name"] == body["name"]), None)
        table = next(t for t in self.state.tables.values() if t["id"] == body["entity"]["id"])
        contract = {**(existing or {}), **copy.deepcopy(body),
                    "id": existing["id"] if existing else self.state.new_id(body["name"]),
                    "fullyQualifiedName": f"{table['fullyQualifiedName']}.{body['name']}"}
        self.state.contracts[contract["id"]] = contract
        return _json(200 if existing else 201, contract)

    def latest_contract_result(self, request: Any):
        contract_id = urlsplit(request.url).path.split("/")[-3]
        found = self.state.contract_results.get(contract_id)
        return _json(200, found[-1]) if found else _not_found("dataContractResult")

    def put_contract_result(self, request: Any):
        contract_id = urlsplit(request.url).path.split("/")[-2]
        self.state.contract_results.setdefault(contract_id, []).append(json.loads(request.body))
        return self._stored("contract result", json.loads(request.body))

    def get_edge(self, request: Any):
        parts = urlsplit(request.url).path.split("/")
        edge = self.state.lineage.get((parts[-2], parts[-1]))
        return _json(200, {"edge": edge}) if edge else _not_found("lineage edge")

    def put_edge(self, request: Any):
        edge = json.loads(request.body)["edge"]
        self.state.lineage[(edge["fromEntity"]["id"], edge["toEntity"]["id"])] = edge
        return _json(200, {})


# --------------------------------------------------------------------------- DataHub

PEGASUS = {
    "datasetProperties": "com.linkedin.dataset.DatasetProperties",
    "schemaMetadata": "com.linkedin.schema.SchemaMetadata",
    "editableSchemaMetadata": "com.linkedin.schema.EditableSchemaMetadata",
    "ownership": "com.linkedin.common.Ownership",
    "globalTags": "com.linkedin.common.GlobalTags",
    "upstreamLineage": "com.linkedin.dataset.UpstreamLineage",
    "assertionInfo": "com.linkedin.assertion.AssertionInfo",
    "dataContractProperties": "com.linkedin.datacontract.DataContractProperties",
    "dataContractStatus": "com.linkedin.datacontract.DataContractStatus",
    "status": "com.linkedin.common.Status",
    "dataPlatformInstance": "com.linkedin.common.DataPlatformInstance",
}

#: DataHub patch templates: which arrays are addressed by key (arrayPrimaryKeys) per aspect
_KEYED = {
    "globalTags": {"tags": ["tag"]},
    "ownership": {"owners": ["owner", "type"]},
    "editableSchemaMetadata": {"editableSchemaFieldInfo": ["fieldPath"]},
    "_fieldInfo": {"globalTags.tags": ["tag"], "glossaryTerms.terms": ["urn"]},
}


def _to_map(items: list[dict[str, Any]], keys: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        node = out
        for key in keys[:-1]:
            node = node.setdefault(item[key], {})
        node[item[keys[-1]]] = item
    return out


def _from_map(mapping: dict[str, Any], keys: list[str]) -> list[dict[str, Any]]:
    if len(keys) == 1:
        return list(mapping.values())
    return [item for sub in mapping.values() for item in _from_map(sub, keys[1:])]


def _field_info(info: dict[str, Any], to_map: bool) -> None:
    for dotted, keys in _KEYED["_fieldInfo"].items():
        outer, inner = dotted.split(".")
        if outer in info:
            value = info[outer].get(inner, [] if to_map else {})
            info[outer][inner] = _to_map(value, keys) if to_map else _from_map(value, keys)


def apply_datahub_patch(aspect: str, current: dict[str, Any] | None, ops: list[dict[str, Any]]) -> dict[str, Any]:
    """Apply a patch the way DataHub's templates do: keyed arrays become maps, JSON Patch, back to arrays."""
    doc = copy.deepcopy(current or {})
    keyed = _KEYED.get(aspect, {})
    for name, keys in keyed.items():
        doc[name] = _to_map(doc.get(name, []), keys)
    if aspect == "editableSchemaMetadata":
        for info in doc["editableSchemaFieldInfo"].values():
            _field_info(info, to_map=True)
    for op in ops:
        assert op["op"] == "add", op
        parts = _pointer(op["path"])
        node = doc
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = copy.deepcopy(op["value"])
    if aspect == "editableSchemaMetadata":
        infos = []
        for path, info in doc["editableSchemaFieldInfo"].items():
            info["fieldPath"] = path
            _field_info(info, to_map=False)
            infos.append(info)
        doc["editableSchemaFieldInfo"] = infos
    else:
        for name, keys in keyed.items():
            doc[name] = _from_map(doc[name], keys)
    return doc


@dataclass
class DHState:
    aspects: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    timeseries: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # assertion urn -> run events
    batch: bool = True
    config: dict[str, Any] = field(default_factory=lambda: {
        "noCode": "true", "patchCapable": True,
        "versions": {"acryldata/datahub": {"version": "v1.2.0", "commit": "abc"}}})


class DHServer:
    """`responses` callbacks for GMS: /config, /aspects reads, ingestProposal(Batch), timeseries reads."""

    def __init__(self, rsps: responses.RequestsMock, state: DHState | None = None):
        self.state = state or DHState()
        base = re.escape(DH_URL)
        rsps.add_callback("GET", re.compile(base + r"/config$"), callback=self.config)
        rsps.add_callback("GET", re.compile(base + r"/aspects/[^?]+\?.*$"), callback=self.get_aspect)
        rsps.add_callback("POST", re.compile(base + r"/aspects\?action=ingestProposal$"), callback=self.ingest)
        rsps.add_callback("POST", re.compile(base + r"/aspects\?action=ingestProposalBatch$"), callback=self.batch)
        rsps.add_callback("POST", re.compile(base + r"/aspects\?action=getTimeseriesAspectValues$"),
                          callback=self.timeseries)

    def config(self, request: Any):
        return _json(200, self.state.config)

    def get_aspect(self, request: Any):
        parts = urlsplit(request.url)
        urn = unquote(parts.path[len("/aspects/"):])
        aspect = parse_qs(parts.query)["aspect"][0]
        value = self.state.aspects.get((urn, aspect))
        if value is None:
            return _json(404, {"message": f"{aspect} of {urn} not found", "status": 404})
        return _json(200, {"aspect": {PEGASUS[aspect]: value}, "version": 0})

    def _apply(self, proposal: dict[str, Any]) -> None:
        urn, aspect = proposal["entityUrn"], proposal["aspectName"]
        value = json.loads(proposal["aspect"]["value"])
        if aspect == "assertionRunEvent":
            self.state.timeseries.setdefault(urn, []).append(value)
        elif proposal["changeType"] == "UPSERT":
            assert proposal["aspect"]["contentType"] == "application/json"
            self.state.aspects[(urn, aspect)] = value
        else:
            assert proposal["changeType"] == "PATCH"
            assert proposal["aspect"]["contentType"] == "application/json-patch+json"
            self.state.aspects[(urn, aspect)] = apply_datahub_patch(aspect, self.state.aspects.get((urn, aspect)),
                                                                    value)

    def ingest(self, request: Any):
        body = json.loads(request.body)
        assert body["async"] == "false"
        self._apply(body["proposal"])
        return _json(200, {"value": body["proposal"]["entityUrn"]})

    def batch(self, request: Any):
        if not self.state.batch:
            return _json(404, {"message": "No such action ingestProposalBatch", "status": 404})
        body = json.loads(request.body)
        for proposal in body["proposals"]:
            self._apply(proposal)
        return _json(200, {"value": [p["entityUrn"] for p in body["proposals"]]})

    def timeseries(self, request: Any):
        body = json.loads(request.body)
        events = [e for e in self.state.timeseries.get(body["urn"], [])
                  if body.get("startTimeMillis", 0) <= e["timestampMillis"] <= body.get("endTimeMillis", 2**62)]
        return _json(200, {"value": {"limit": body.get("limit"), "values": [
            {"aspect": {"value": json.dumps(e), "contentType": "application/json"}} for e in events]}})

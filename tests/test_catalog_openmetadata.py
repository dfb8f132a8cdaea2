"""OpenMetadata pusher against `responses`: every request (paths, methods, headers, bodies) per version,
bodies compared field by field with the validated payloads, idempotence, and tags/owners kept."""

from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import quote

import pytest
import responses

from catalog_support import (
    OM_URL,
    TOKEN,
    OMServer,
    OMState,
    assert_fields,
    body_of,
    om_fixture,
    writes,
)
from dq_governance.catalogs.base import ColumnLineage, DatasetRef, LineageEdge
from dq_governance.catalogs.openmetadata import parse_version, profile_for
from dq_governance.catalogs.sync import make_pusher, sync
from dq_governance.catalogs.transport import Secret
from dq_governance.checks.result import CheckResult, GateDecision, RuleResult
from dq_governance.contracts.model import Contract
from dq_governance.errors import CatalogError

FQN = "spark_lake.default.sales.orders"
TEAM_ID = "7d5e3c8a-2f0e-4c59-9a8f-2b1f0b8f6e11"
TABLE_ID = "0b6c3f1e-2222-4c59-9a8f-2b1f0b8f6e11"
CASE_ID = "0b6c3f1e-4444-4c59-9a8f-2b1f0b8f6e11"
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)  # 1735689600000 ms, the fixtures' timestamp
TAG = {"source": "Classification", "labelType": "Automated", "state": "Confirmed"}
#: our TagLabel says Automated (machine-applied PII, as the notes advise); the validated example says Manual
AUTOMATED = "Automated"


def contract(fields: list[dict], rules: list[dict] | None = None, **extra) -> Contract:
    doc = {
        "contract": {"name": "orders", "version": "1.0.0", "owner": "team:data-platform",
                     "description": "Contract for orders"},
        "dataset": {"name": "sales.orders", "description": "Orders produced by spark job orders_etl",
                    "catalog": {"openmetadata_fqn": FQN}},
        "schema": {"fields": fields},
        "quality": {"rules": rules or []},
    }
    for key, value in extra.items():
        doc[key] = value
    return Contract.model_validate(doc)


def state(version: str = "1.9.11") -> OMState:
    st = OMState(version=version)
    st.teams["data-platform"] = TEAM_ID
    st.ids.update({FQN: TABLE_ID, "orders_customer_email_not_null": CASE_ID})
    return st


def pusher(**kw):
    return make_pusher("openmetadata", url=OM_URL, token=Secret(TOKEN), sleep=lambda s: None, **kw)


def rule(name, type_, columns, passed, status, failed=None, metric=None, level="row", message="") -> RuleResult:
    return RuleResult(name=name, type=type_, columns=columns, level=level, severity="error", action=None,
                      dimension=None, passed=passed, status=status, failed_count=failed, metric_value=metric,
                      message=message)


def result(rules: list[RuleResult], total: int, run_id: str = "run-1", when: datetime = T0,
           name: str = "orders") -> CheckResult:
    failed = any(r.status == "failed" for r in rules)
    return CheckResult(run_id=run_id, contract_name=name, contract_version="1.0.0", pipeline="p", rules=rules,
                       total_rows=total, valid_rows=total, invalid_rows=0, status="failed" if failed else "passed",
                       gate=GateDecision(True, True), started_at=when, finished_at=when)


def calls_of(method: str, fragment: str):
    return [c for c in responses.calls if c.request.method == method and fragment in c.request.url]


# --------------------------------------------------------------------------- versions


@pytest.mark.parametrize("text,profile", [
    ("1.6.13", "1.6-1.7"), ("1.7.7", "1.6-1.7"), ("1.8.12", "1.8"), ("1.9.11", "1.9"),
    ("1.10.14", "1.10-2.x"), ("1.12.5", "1.10-2.x"), ("2.0.7", "1.10-2.x"), ("1.9.0-SNAPSHOT", "1.9"),
])
def test_version_profiles(text, profile):
    assert profile_for(parse_version(text)).name == profile


@pytest.mark.parametrize("text", ["1.5.9", "3.0.0"])
def test_unsupported_versions(text):
    with pytest.raises(CatalogError, match="not supported"):
        profile_for(parse_version(text))


# --------------------------------------------------------------------------- bodies vs validated payloads


ORDERS_COLUMNS = [
    {"name": "order_id", "type": "long", "primary_key": True, "description": "PK"},
    {"name": "customer_email", "type": "string", "required": True, "pii": True},
    {"name": "amount", "type": "decimal(12,2)"},
    {"name": "address", "type": "struct<city:string,zip:string>", "fields": [{"name": "city"}, {"name": "zip"}]},
]


@responses.activate
def test_create_table_body_matches_validated_payload():
    st = state()
    OMServer(responses.mock, st)
    c = contract(ORDERS_COLUMNS, dataset={"name": "sales.orders", "description": "Orders produced by spark job "
                                          "orders_etl", "tags": ["Tier.Tier2"], "catalog": {"openmetadata_fqn": FQN}})
    report = sync(pusher(create_tables=True), [c])
    assert report.failed == [] and report.invalid == []
    (put,) = calls_of("PUT", "/api/v1/tables")
    expected = om_fixture("createTable")
    differ = {"$.columns[1].tags[0].labelType": AUTOMATED, "$.tags[0].labelType": AUTOMATED}
    assert_fields(body_of(put), expected, differ=differ)
    # the table was created with everything, so no PATCH follows
    assert calls_of("PATCH", "/api/v1/tables") == []
    assert "table spark_lake.default.sales.orders" in report.created


@responses.activate
def test_a_char_varchar_or_binary_column_is_created_with_a_length():
    # OpenMetadata refuses a CHAR, VARCHAR or BINARY column without dataLength: the whole table was not created
    st = state()
    OMServer(responses.mock, st)
    c = contract([{"name": "code", "type": "varchar(10)"}, {"name": "uf", "type": "CHAR(2)"},
                  {"name": "photo", "type": "binary"}],
                 dataset={"name": "sales.orders", "catalog": {"openmetadata_fqn": FQN}})
    report = sync(pusher(create_tables=True), [c])
    assert report.failed == [] and report.invalid == []
    assert [(col["name"], col["dataType"], col["dataLength"]) for col in st.tables[FQN]["columns"]] == [
        ("code", "VARCHAR", 10), ("uf", "CHAR", 2), ("photo", "BINARY", 1)]


@responses.activate
def test_test_case_bodies_match_validated_payloads_1_9():
    OMServer(responses.mock, state("1.9.11")).state.add_table(FQN, [
        {"name": "order_id", "dataType": "BIGINT"}, {"name": "customer_email", "dataType": "STRING"},
        {"name": "amount", "dataType": "DECIMAL"}, {"name": "status", "dataType": "STRING"}])
    c = contract(
        [{"name": "order_id", "type": "long"}, {"name": "customer_email", "type": "string"},
         {"name": "amount", "type": "decimal(12,2)"}, {"name": "status", "type": "string"}],
        [{"type": "not_null", "column": "customer_email", "name": "customer_email_not_null",
          "description": "from contract orders v1"},
         {"type": "range", "column": "amount", "min": 0, "max": 10000, "name": "amount_between"},
         {"type": "allowed_values", "column": "status", "values": ["NEW", "PAID", "SHIPPED"], "name": "status_in_set"},
         {"type": "row_count", "min": 1, "max": 100000000, "name": "row_count"},
         {"type": "sql", "query": "SELECT * FROM orders WHERE amount < 0", "name": "no_negative_amount"}])
    sync(pusher(), [c])
    bodies = {body_of(call)["name"]: body_of(call) for call in calls_of("PUT", "/api/v1/dataQuality/testCases")}
    assert sorted(bodies) == ["orders_amount_between", "orders_customer_email_not_null", "orders_no_negative_amount",
                              "orders_row_count", "orders_status_in_set"]
    assert_fields(bodies["orders_customer_email_not_null"], om_fixture("createTestCase_1.8plus"))
    # Optional fields we always send, as in the validated 1.8+ body above.
    optional = {"$.computePassedFailedRowCount", "$.description"}
    assert_fields(bodies["orders_amount_between"], om_fixture("createTestCase_between"), extra=optional)
    assert_fields(bodies["orders_status_in_set"], om_fixture("createTestCase_inset"), extra=optional)
    assert_fields(bodies["orders_row_count"], om_fixture("createTestCase_rowcount"), extra={"$.description"})
    assert_fields(bodies["orders_no_negative_amount"], om_fixture("createTestCase_customsql"),
                  extra={"$.description"})
    assert bodies["orders_amount_between"]["computePassedFailedRowCount"] is True
    assert "computePassedFailedRowCount" not in bodies["orders_row_count"]  # a table test has no row counts
    (suite,) = calls_of("PUT", "/api/v1/dataQuality/testSuites/basic")
    assert_fields(body_of(suite), om_fixture("createBasicTestSuite"))


@responses.activate
def test_test_case_body_1_6_carries_the_suite():
    OMServer(responses.mock, state("1.6.13")).state.add_table(FQN, [{"name": "customer_email", "dataType": "STRING"}])
    c = contract([{"name": "customer_email"}],
                 [{"type": "not_null", "column": "customer_email", "name": "customer_email_not_null",
                   "description": "from contract orders v1"}])
    sync(pusher(), [c])
    (case,) = calls_of("PUT", "/api/v1/dataQuality/testCases")
    assert_fields(body_of(case), om_fixture("createTestCase_1.6"),
                  extra={"$.parameterValues", "$.computePassedFailedRowCount", "$.description"})
    assert body_of(case)["parameterValues"] == [] and body_of(case)["description"] == "from contract orders v1"


@pytest.mark.parametrize("version,method,path", [
    ("1.7.7", "PUT", "/api/v1/dataQuality/testCases/{fqn}/testCaseResult"),
    ("1.9.11", "POST", "/api/v1/dataQuality/testCases/testCaseResults/{fqn}"),
    ("2.0.7", "POST", "/api/v1/dataQuality/testCases/testCaseResults/{fqn}"),
])
@responses.activate
def test_test_case_result_body_and_endpoint_per_version(version, method, path):
    st = state(version)
    OMServer(responses.mock, st)
    st.add_table(FQN, [{"name": "customer_email", "dataType": "STRING"}])
    c = contract([{"name": "customer_email"}],
                 [{"type": "not_null", "column": "customer_email", "name": "customer_email_not_null"}])
    res = result([rule("customer_email_not_null", "not_null", ["customer_email"], False, "failed", failed=3)], 1000)
    report = sync(pusher(), [c], {"orders": res})
    assert report.failed == []
    case_fqn = f"{FQN}.customer_email.orders_customer_email_not_null"
    (post,) = [c for c in responses.calls if c.request.method == method and "testCaseResult" in c.request.url]
    assert post.request.url == OM_URL + path.format(fqn=quote(case_fqn, safe=""))
    differ = {"$.result": "customer_email_not_null failed: 3 of 1000 rows violate it"}
    assert_fields(body_of(post), om_fixture("testCaseResult"), differ=differ)


@pytest.mark.parametrize("version,fixture,absent", [
    ("1.9.11", "dataContract_1.9", set()),
    ("2.0.7", "dataContract_2x", {"$.sla.refreshFrequency"}),  # the contract has no refresh frequency
])
@responses.activate
def test_data_contract_body_matches_validated_payload(version, fixture, absent):
    st = state(version)
    OMServer(responses.mock, st)
    st.add_table(FQN, [{"name": "order_id", "dataType": "BIGINT"}, {"name": "customer_email", "dataType": "STRING"}])
    c = contract([{"name": "order_id", "type": "long"}, {"name": "customer_email", "type": "string"}],
                 [{"type": "not_null", "column": "customer_email", "name": "customer_email_not_null"}],
                 service_level={"freshness": {"max_age": "4h", "column": "order_id"}})  # a column: or no SLA
    sync(pusher(), [c])
    (put,) = calls_of("PUT", "/api/v1/dataContracts")
    assert_fields(body_of(put), om_fixture(fixture), absent=absent)


@responses.activate
def test_data_contract_result_body_matches_validated_payload():
    st = state("1.9.11")
    OMServer(responses.mock, st)
    st.add_table(FQN, [{"name": "order_id", "dataType": "BIGINT"}, {"name": "customer_email", "dataType": "STRING"}])
    c = contract([{"name": "order_id", "type": "long"}, {"name": "customer_email", "type": "string"}],
                 [{"type": "not_null", "column": "customer_email", "name": "customer_email_not_null"}])
    rules = [rule("order_id_type", "type", ["order_id"], True, "passed", failed=0),
             rule("customer_email_type", "type", ["customer_email"], True, "passed", failed=0),
             rule("customer_email_not_null", "not_null", ["customer_email"], False, "failed", failed=3),
             rule("q2", "row_count", [], True, "passed", metric=1000, level="dataset"),
             rule("q3", "sql", [], True, "passed", metric=1, level="dataset")]
    sync(pusher(), [c], {"orders": result(rules, 1000)})
    contract_id = next(iter(st.contracts))
    (put,) = calls_of("PUT", f"/api/v1/dataContracts/{contract_id}/results")
    assert_fields(body_of(put), om_fixture("dataContractResult"), differ={"$.result": "1 of 5 checks failed"})


@responses.activate
def test_lineage_body_matches_validated_payload_and_is_merged_once():
    st = state("2.0.7")
    OMServer(responses.mock, st)
    st.ids["spark_lake.default.raw.orders"] = "0b6c3f1e-1111-4c59-9a8f-2b1f0b8f6e11"
    st.add_table("spark_lake.default.raw.orders", [{"name": "email", "dataType": "STRING"}])
    st.add_table(FQN, [{"name": "customer_email", "dataType": "STRING"}])
    edge = LineageEdge(DatasetRef("raw.orders", "spark_lake.default.raw.orders"), DatasetRef("sales.orders", FQN),
                       (ColumnLineage(("email",), "customer_email", "lower(email)"),), description="orders_etl")
    p = pusher()
    p.push_lineage([edge])
    (put,) = calls_of("PUT", "/api/v1/lineage")
    assert_fields(body_of(put), om_fixture("addLineage"), absent={"$.edge.lineageDetails.pipeline"})
    responses.calls.reset()
    again = pusher()
    again.push_lineage([edge])
    assert writes(responses.calls) == []
    assert again.report.unchanged == [f"lineage spark_lake.default.raw.orders -> {FQN}"]


# --------------------------------------------------------------------------- every request, per version

TINY = "spark_lake.default.sales.tiny"


def tiny_contract() -> Contract:
    return Contract.model_validate({
        "contract": {"name": "tiny", "version": "1.0.0", "owner": "team:data-platform", "description": "Tiny"},
        "dataset": {"name": "sales.tiny", "description": "Tiny table", "catalog": {"openmetadata_fqn": TINY}},
        "schema": {"fields": [
            {"name": "id", "type": "long", "required": True, "description": "Identifier"},
            {"name": "email", "type": "string", "pii": True, "classification": "restricted"}]},
        "service_level": {"freshness": {"max_age": "1d", "column": "id"}},  # without a column it is refused
        "quality": {"rules": [{"type": "row_count", "min": 1, "name": "rows"}]},
    })


def tiny_result(run_id: str = "run-1", when: datetime = T0) -> CheckResult:
    return result([rule("id_type", "type", ["id"], True, "passed", failed=0),
                   rule("id_not_null", "not_null", ["id"], False, "failed", failed=1),
                   rule("email_type", "type", ["email"], True, "passed", failed=0),
                   rule("rows", "row_count", [], True, "passed", metric=4, level="dataset")],
                  4, run_id=run_id, when=when, name="tiny")


def expected_requests(version: str, table_id: str, contract_id: str | None) -> list[tuple[str, str]]:
    v = parse_version(version)
    q = quote
    not_null = f"{TINY}.id.tiny_id_not_null"
    rows = f"{TINY}.tiny_rows"
    suite = "executable" if v < (1, 6, 2) else "basic"
    out = [
        ("GET", "/api/v1/system/version"),
        ("GET", "/api/v1/teams/name/data-platform"),
        ("GET", "/api/v1/classifications/name/DataClassification"),
        ("PUT", "/api/v1/classifications"),
        ("GET", "/api/v1/tags/name/DataClassification.restricted"),
        ("PUT", "/api/v1/tags"),
        ("GET", f"/api/v1/tables/name/{TINY}?fields=columns%2Ctags%2Cowners%2CtestSuite&include=non-deleted"),
        ("PATCH", f"/api/v1/tables/{table_id}"),
        ("PUT", f"/api/v1/dataQuality/testSuites/{suite}"),
        ("GET", f"/api/v1/dataQuality/testCases/name/{q(not_null, safe='')}?fields=testDefinition%2CtestSuite"),
        ("PUT", "/api/v1/dataQuality/testCases"),
        ("GET", f"/api/v1/dataQuality/testCases/name/{q(rows, safe='')}?fields=testDefinition%2CtestSuite"),
        ("PUT", "/api/v1/dataQuality/testCases"),
    ]
    if v[:2] >= (1, 8):
        out += [("GET", f"/api/v1/dataContracts/entity?entityId={table_id}&entityType=table"),
                ("PUT", "/api/v1/dataContracts")]
    for case in (not_null, rows):
        window = "?startTs=1735689600000&endTs=1735689600000"
        if v[:2] >= (1, 8):
            path = f"/api/v1/dataQuality/testCases/testCaseResults/{q(case, safe='')}"
            out += [("GET", path + window), ("POST", path)]
        else:
            path = f"/api/v1/dataQuality/testCases/{q(case, safe='')}/testCaseResult"
            out += [("GET", path + window), ("PUT", path)]
    if v[:2] >= (1, 9):
        out += [("GET", f"/api/v1/dataContracts/{contract_id}/results/latest"),
                ("PUT", f"/api/v1/dataContracts/{contract_id}/results")]
    return out


@pytest.mark.parametrize("workers", [1, 8])
@pytest.mark.parametrize("version", ["1.6.0", "1.6.13", "1.7.7", "1.8.12", "1.9.11", "1.10.14", "2.0.7"])
@responses.activate
def test_every_request_per_version(version, workers):
    st = OMState(version=version)
    st.teams["data-platform"] = TEAM_ID
    OMServer(responses.mock, st)
    table = st.add_table(TINY, [{"name": "id", "dataType": "BIGINT"}, {"name": "email", "dataType": "STRING"}])
    report = sync(pusher(workers=workers), [tiny_contract()], {"tiny": tiny_result()})
    assert report.failed == [] and report.invalid == []
    contract_id = next(iter(st.contracts), None)
    got = [(c.request.method, c.request.url[len(OM_URL):]) for c in responses.calls]
    if workers > 1:
        # per-rule requests overlap on the pool: the same requests, per-rule order not fixed
        assert sorted(got) == sorted(expected_requests(version, table["id"], contract_id))
        return
    assert got == expected_requests(version, table["id"], contract_id)

    for call in responses.calls:
        headers = call.request.headers
        assert headers["Authorization"] == f"Bearer {TOKEN}"
        if call.request.method == "PATCH":
            assert headers["Content-Type"] == "application/json-patch+json"
        elif call.request.method != "GET":
            assert headers["Content-Type"] == "application/json"

    bodies = [body_of(c) for c in responses.calls]
    assert bodies[3] == {"name": "DataClassification", "mutuallyExclusive": True,
                         "description": "Data classification levels declared in data contracts (dq-governance)"}
    assert bodies[5] == {"classification": "DataClassification", "name": "restricted",
                         "description": "Data classified as restricted by a data contract"}
    assert bodies[7] == [
        {"op": "add", "path": "/description", "value": "Tiny table"},
        {"op": "add", "path": "/columns/0/description", "value": "Identifier"},
        {"op": "add", "path": "/columns/1/tags/-", "value": {"tagFQN": "PII.Sensitive", **TAG}},
        {"op": "add", "path": "/columns/1/tags/-", "value": {"tagFQN": "DataClassification.restricted", **TAG}},
        {"op": "add", "path": "/owners/-", "value": {"id": TEAM_ID, "type": "team"}},
    ]
    ref = "executableEntityReference" if version == "1.6.0" else "basicEntityReference"
    assert bodies[8] == {"name": f"{TINY}.testSuite", ref: TINY}
    suite = {"testSuite": f"{TINY}.testSuite"} if parse_version(version)[:2] <= (1, 7) else {}
    assert bodies[10] == {"name": "tiny_id_not_null", "testDefinition": "columnValuesToBeNotNull",
                          "entityLink": f"<#E::table::{TINY}::columns::id>", "parameterValues": [],
                          "computePassedFailedRowCount": True, "description": "from contract tiny v1.0.0", **suite}
    assert bodies[12] == {"name": "tiny_rows", "testDefinition": "tableRowCountToBeBetween",
                          "entityLink": f"<#E::table::{TINY}>", "parameterValues": [{"name": "minValue", "value": "1"}],
                          "description": "from contract tiny v1.0.0", **suite}
    results = [b for c, b in zip(responses.calls, bodies) if "testCaseResult" in c.request.url and b is not None]
    assert results == [
        {"timestamp": 1735689600000, "testCaseStatus": "Failed",
         "result": "id_not_null failed: 1 of 4 rows violate it", "testResultValue": [{"name": "nullCount", "value": "1"}],
         "passedRows": 3, "failedRows": 1, "passedRowsPercentage": 75.0, "failedRowsPercentage": 25.0},
        {"timestamp": 1735689600000, "testCaseStatus": "Success", "result": "rows passed: metric 4",
         "testResultValue": [{"name": "rowCount", "value": "4"}]},
    ]
    v = parse_version(version)[:2]
    contract_bodies = [b for c, b in zip(responses.calls, bodies)
                       if c.request.url.endswith("/api/v1/dataContracts") and c.request.method == "PUT"]
    if v < (1, 8):
        assert contract_bodies == []
        return
    (contract_body,) = contract_bodies
    cases = {c["name"]: c["id"] for c in st.test_cases.values()}
    common = {"name": "tiny_contract", "description": "Tiny", "entity": {"id": table["id"], "type": "table"},
              "semantics": [{"name": "has_owner", "description": "Table must have an owner",
                             "rule": '{"!!": [{"var": "owners"}]}', "enabled": True}]}
    if v == (1, 8):
        assert contract_body == {**common, "status": "Active",
                                 "schema": [{"name": "id", "dataType": "LONG"}, {"name": "email", "dataType": "STRING"}],
                                 "qualityExpectations": [
                                     {"name": "tiny_id_not_null", "definition": "columnValuesToBeNotNull",
                                      "testCase": {"id": cases["tiny_id_not_null"], "type": "testCase"}},
                                     {"name": "tiny_rows", "definition": "tableRowCountToBeBetween",
                                      "testCase": {"id": cases["tiny_rows"], "type": "testCase"}}]}
        return
    expectations = [{"id": cases["tiny_id_not_null"], "type": "testCase"}, {"id": cases["tiny_rows"], "type": "testCase"}]
    schema = [{"name": "id", "dataType": "BIGINT"}, {"name": "email", "dataType": "STRING"}]
    if v == (1, 9):
        assert contract_body == {**common, "status": "Active", "schema": schema, "qualityExpectations": expectations}
    else:
        assert contract_body == {**common, "entityStatus": "Approved", "schema": schema,
                                 "qualityExpectations": expectations, "owners": [{"id": TEAM_ID, "type": "team"}],
                                 "sla": {"maxLatency": {"value": 1, "unit": "day"}}}
    (contract_result,) = [b for c, b in zip(responses.calls, bodies) if c.request.url.endswith("/results")]
    assert contract_result == {
        "dataContractFQN": f"{TINY}.tiny_contract", "timestamp": 1735689600000, "contractExecutionStatus": "Failed",
        "result": "1 of 4 checks failed", "schemaValidation": {"passed": 2, "failed": 0, "total": 2},
        "qualityValidation": {"passed": 1, "failed": 1, "total": 2, "qualityScore": 50.0}}


# --------------------------------------------------------------------------- idempotence and other people's edits


@pytest.mark.parametrize("version", ["1.7.7", "1.9.11", "2.0.7"])
@responses.activate
def test_second_sync_of_unchanged_input_writes_nothing(version):
    st = OMState(version=version)
    st.teams["data-platform"] = TEAM_ID
    OMServer(responses.mock, st)
    st.add_table(TINY, [{"name": "id", "dataType": "BIGINT"}, {"name": "email", "dataType": "STRING"}])
    first = sync(pusher(), [tiny_contract()], {"tiny": tiny_result()})
    assert first.failed == [] and len(writes(responses.calls)) > 0
    responses.calls.reset()
    second = sync(pusher(), [tiny_contract()], {"tiny": tiny_result()})
    assert writes(responses.calls) == []
    assert second.created == [] and second.updated == [] and second.failed == []
    assert f"table {TINY}" in second.unchanged
    # a new run is pushed, and only its results are written
    responses.calls.reset()
    third = sync(pusher(), [tiny_contract()], {"tiny": tiny_result("run-2", datetime(2025, 1, 2, tzinfo=timezone.utc))})
    methods = sorted({(c.request.method, c.request.url.split("/api/v1/")[1].split("/")[0]) for c in writes(responses.calls)})
    assert methods == ([("POST", "dataQuality")] if version != "1.7.7" else [("PUT", "dataQuality")]) + (
        [("PUT", "dataContracts")] if version != "1.7.7" else [])
    assert len(third.created) == 2 + (version != "1.7.7")


@responses.activate
def test_tags_and_owners_set_by_others_survive():
    st = OMState(version="2.0.7")
    st.teams["data-platform"] = TEAM_ID
    OMServer(responses.mock, st)
    alice = {"id": "11111111-aaaa-4bbb-8ccc-000000000001", "type": "user"}
    st.add_table(TINY, [
        {"name": "id", "dataType": "BIGINT", "description": "Written by a steward in the UI",
         "tags": [{"tagFQN": "Tier.Tier1", **TAG, "labelType": "Manual"}]},
        {"name": "email", "dataType": "STRING",
         "tags": [{"tagFQN": "PersonalData.Personal", **TAG, "labelType": "Manual"},
                  {"tagFQN": "PII.NonSensitive", **TAG, "labelType": "Manual"}]}],
        owners=[alice], tags=[{"tagFQN": "Tier.Tier2", **TAG, "labelType": "Manual"}])
    sync(pusher(), [tiny_contract()])
    table = st.tables[TINY]
    # OpenMetadata holds several users or one team: the contract's team replaces the user (added beside her,
    # the server refuses the patch); tags set by others stay
    assert table["owners"] == [{"id": TEAM_ID, "type": "team"}]
    assert [t["tagFQN"] for t in table["tags"]] == ["Tier.Tier2"]
    assert [t["tagFQN"] for t in table["columns"][0]["tags"]] == ["Tier.Tier1"]
    # PII is mutually exclusive: the contract's PII.Sensitive replaces PII.NonSensitive, the rest stays
    assert [t["tagFQN"] for t in table["columns"][1]["tags"]] == [
        "PersonalData.Personal", "PII.Sensitive", "DataClassification.restricted"]
    (patch,) = calls_of("PATCH", "/api/v1/tables/")
    assert {"op": "remove", "path": "/columns/1/tags/1"} in body_of(patch)
    assert table["columns"][0]["description"] == "Identifier"  # the contract owns descriptions


@responses.activate
def test_missing_table_is_a_failure_naming_it_unless_create_tables():
    OMServer(responses.mock, state("1.9.11"))
    report = sync(pusher(), [tiny_contract()])
    assert report.failed == [("contract tiny", f"openmetadata: table {TINY} does not exist; ingest it first or pass "
                                               "--create-tables")]
    assert report.exit_code == 1


@responses.activate
def test_server_400_fails_that_contract_and_sync_keeps_going():
    st = state("1.9.11")
    st.add_table(TINY, [{"name": "id", "dataType": "BIGINT"}, {"name": "email", "dataType": "STRING"}])
    st.add_table(FQN, [{"name": "customer_email", "dataType": "STRING"}])
    # the PATCH of the tiny table is rejected (registered first, so it wins); orders still syncs
    responses.patch(f"{OM_URL}/api/v1/tables/{st.tables[TINY]['id']}", status=400,
                    json={"code": 400, "message": "Tag label DataClassification.restricted is invalid"})
    OMServer(responses.mock, st)
    report = sync(pusher(), [tiny_contract(), contract([{"name": "customer_email"}])])
    assert report.failed == [("contract tiny", f"openmetadata rejected PATCH /api/v1/tables/{st.tables[TINY]['id']} "
                                               f"for table {TINY}: HTTP 400: Tag label DataClassification.restricted "
                                               "is invalid")]
    assert "table spark_lake.default.sales.orders" in report.updated
    assert report.exit_code == 1



@responses.activate
def test_a_changed_contract_sends_only_the_changes():
    st = OMState(version="1.9.11")
    st.teams["data-platform"] = TEAM_ID
    OMServer(responses.mock, st)
    st.add_table(TINY, [{"name": "id", "dataType": "BIGINT"}, {"name": "email", "dataType": "STRING"}])
    sync(pusher(), [tiny_contract()])
    responses.calls.reset()
    doc = tiny_contract().model_dump(by_alias=True, exclude_none=True)
    doc["quality"]["rules"][0]["min"] = 5
    doc["schema"]["fields"][0]["description"] = "Surrogate key"
    report = sync(pusher(workers=1), [Contract.model_validate(doc)])
    sent = [(c.request.method, c.request.url[len(OM_URL):], body_of(c)) for c in writes(responses.calls)]
    assert [(m, p) for m, p, _ in sent] == [("PATCH", f"/api/v1/tables/{st.tables[TINY]['id']}"),
                                            ("PUT", "/api/v1/dataQuality/testCases")]
    assert sent[0][2] == [{"op": "add", "path": "/columns/0/description", "value": "Surrogate key"}]
    assert sent[1][2]["parameterValues"] == [{"name": "minValue", "value": "5"}]
    assert st.test_cases[f"{TINY}.tiny_rows"]["parameterValues"] == [{"name": "minValue", "value": "5"}]
    assert sorted(report.updated) == [f"table {TINY}", f"testCase {TINY}.tiny_rows"]

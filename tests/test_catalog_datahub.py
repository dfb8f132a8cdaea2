"""DataHub pusher against `responses`: envelopes, headers, aspects compared field by field with the SDK's
own serialization, batching with fallback, idempotence, and tags/owners set by others kept."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from urllib.parse import quote

import pytest
import responses

from catalog_support import DH_URL, TOKEN, DHServer, DHState, assert_fields, body_of, dh_fixture, writes
from dq_governance.catalogs.base import ColumnLineage, DatasetRef, LineageEdge
from dq_governance.catalogs.datahub import assertion_urn, contract_urn
from dq_governance.catalogs.naming import NameSettings
from dq_governance.catalogs.sync import make_pusher, sync
from dq_governance.catalogs.transport import Secret
from dq_governance.checks.result import CheckResult, GateDecision, RuleResult
from dq_governance.contracts.model import Contract
from dq_governance.errors import CatalogError

DS = "urn:li:dataset:(urn:li:dataPlatform:spark,lake.sales.orders,PROD)"
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def contract(fields: list[dict], rules: list[dict] | None = None, **extra) -> Contract:
    doc = {
        "contract": {"name": "orders", "version": "1.0.0", "description": "Orders contract"},
        "dataset": {"name": "lake.sales.orders", "description": "Orders table",
                    "catalog": {"datahub_platform": "spark"}},
        "schema": {"fields": fields},
        "quality": {"rules": rules or []},
    }
    doc.update(extra)
    return Contract.model_validate(doc)


def pusher(**kw):
    return make_pusher("datahub", url=DH_URL, token=Secret(TOKEN), sleep=lambda s: None, **kw)


def proposals(calls=None) -> list[dict]:
    """Every proposal sent, batched or single, in order."""
    out = []
    for call in calls if calls is not None else responses.calls:
        body = body_of(call) if call.request.method == "POST" else None
        if body and "proposal" in body:
            out.append(body["proposal"])
        elif body and "proposals" in body:
            out.extend(body["proposals"])
    return out


def aspect(name: str, urn: str | None = None) -> tuple[dict, dict]:
    """(envelope, decoded value) of the one proposal for aspect `name` (on `urn`)."""
    found = [p for p in proposals() if p["aspectName"] == name and (urn is None or p["entityUrn"] == urn)]
    assert len(found) == 1, f"{len(found)} proposals for {name}"
    return found[0], json.loads(found[0]["aspect"]["value"])


def rr(name, type_, columns, status, failed=None, metric=None, message="") -> RuleResult:
    return RuleResult(name=name, type=type_, columns=columns, level="row", severity="error", action=None,
                      dimension=None, passed=status == "passed", status=status, failed_count=failed,
                      metric_value=metric, message=message)


def check_result(rules, total, run_id="spark-app-20250101-0001", when=T0, name="orders") -> CheckResult:
    return CheckResult(run_id=run_id, contract_name=name, contract_version="1.0.0", pipeline="p", rules=rules,
                       total_rows=total, valid_rows=total, invalid_rows=0, status="failed", gate=GateDecision(False, False),
                       started_at=when, finished_at=when)


# --------------------------------------------------------------------------- transport and envelope


@responses.activate
def test_config_once_headers_and_restli_envelope():
    DHServer(responses.mock)
    c = contract([{"name": "order_id", "type": "long"}])
    sync(pusher(batch=False), [c])
    assert [c.request.url for c in responses.calls].count(DH_URL + "/config") == 1
    for call in responses.calls:
        assert call.request.headers["Authorization"] == f"Bearer {TOKEN}"
        if call.request.method == "POST":
            assert call.request.headers["X-RestLi-Protocol-Version"] == "2.0.0"
            assert call.request.headers["Content-Type"] == "application/json"
    single = [c for c in responses.calls if c.request.url == DH_URL + "/aspects?action=ingestProposal"]
    expected = dh_fixture("datasetProperties")["restli"]
    (props,) = [c for c in single if body_of(c)["proposal"]["aspectName"] == "datasetProperties"]
    body = body_of(props)
    # the envelope is exactly the SDK's; only the JSON-string aspect value differs (compared below)
    assert {k: v for k, v in body["proposal"].items() if k != "aspect"} == \
        {k: v for k, v in expected["proposal"].items() if k != "aspect"}
    assert body["async"] == expected["async"] == "false"
    assert body["proposal"]["aspect"]["contentType"] == expected["proposal"]["aspect"]["contentType"]
    reads = [c.request.url for c in responses.calls if c.request.method == "GET" and "/aspects/" in c.request.url]
    # dataset reads overlap on the pool, so their order is not fixed
    assert sorted(r for r in reads if "dataset%3A" in r) == sorted(
        f"{DH_URL}/aspects/{quote(DS, safe='')}?aspect={a}&version=0"
        for a in ("datasetProperties", "schemaMetadata", "editableSchemaMetadata", "ownership", "globalTags"))


@responses.activate
def test_frontend_url_is_rejected():
    DHServer(responses.mock, DHState(config={"versions": {}}))
    report = sync(pusher(), [contract([{"name": "a"}])])
    assert report.failed == [("contract orders", "datahub: GET /config has no noCode=true; this looks like the "
                                                 "frontend, not GMS")]


@responses.activate
def test_batching_and_fallback_to_single_proposals():
    state = DHState()
    DHServer(responses.mock, state)
    c = contract([{"name": "order_id", "type": "long", "required": True}])
    sync(pusher(), [c])
    batches = [c for c in responses.calls if c.request.url.endswith("ingestProposalBatch")]
    assert len(batches) == 1 and len(body_of(batches[0])["proposals"]) == len(proposals())
    assert not [c for c in responses.calls if c.request.url.endswith("action=ingestProposal")]

    responses.calls.reset()
    old = DHState(batch=False)
    responses.mock.reset()
    DHServer(responses.mock, old)
    report = sync(pusher(), [c])
    (refused,) = [c for c in responses.calls if c.request.url.endswith("ingestProposalBatch")]
    assert refused.response.status_code == 404
    singles = [c for c in responses.calls if c.request.url.endswith("action=ingestProposal")]
    # the same proposals, in the same order, one request each
    assert [body_of(s)["proposal"] for s in singles] == body_of(refused)["proposals"] and len(singles) == 9
    assert old.aspects == state.aspects
    assert "datahub server has no ingestProposalBatch; sent proposals one by one" in report.notes


# --------------------------------------------------------------------------- aspects vs the SDK's serialization


@responses.activate
def test_dataset_aspects_match_sdk_payloads():
    DHServer(responses.mock)
    c = contract([{"name": "order_id", "type": "long", "primary_key": True},
                  {"name": "customer_email", "type": "string", "pii": True, "description": "email"}])
    sync(pusher(), [c])
    env, value = aspect("schemaMetadata")
    assert env["entityUrn"] == DS and env["changeType"] == "UPSERT"
    assert_fields(value, dh_fixture("schemaMetadata")["aspect_value"])
    _, props = aspect("datasetProperties")
    # customProperties is a free map: ours names the contract instead of the example's owner_team
    assert_fields(props, dh_fixture("datasetProperties")["aspect_value"],
                  differ={"$.customProperties": {"data_contract": "orders", "data_contract_version": "1.0.0"}})
    env, tags = aspect("globalTags")
    assert env["changeType"] == "PATCH" and env["aspect"]["contentType"] == "application/json-patch+json"
    assert tags == [{"op": "add", "path": "/tags/urn:li:tag:PII", "value": {"tag": "urn:li:tag:PII"}}]
    assert_fields({"tags": [op["value"] for op in tags]}, dh_fixture("globalTags")["aspect_value"])
    _, status = aspect("status", DS)
    assert_fields(status, dh_fixture("dataset.status")["aspect_value"])


@responses.activate
def test_field_tags_terms_and_owners_are_patches_matching_sdk_values():
    state = DHState()
    DHServer(responses.mock, state)
    c = contract([{"name": "customer_email", "type": "string", "pii": True, "classification": "sensitive",
                   "description": "Customer email"}],
                 roles={"owner": "user:jdoe", "steward": "team:data-platform"})
    sync(pusher(), [c])
    env, ops = aspect("editableSchemaMetadata")
    assert env["changeType"] == "PATCH"
    assert ops == [
        {"op": "add", "path": "/editableSchemaFieldInfo/customer_email/description", "value": "Customer email"},
        {"op": "add", "path": "/editableSchemaFieldInfo/customer_email/globalTags/tags/urn:li:tag:PII",
         "value": {"tag": "urn:li:tag:PII"}},
        {"op": "add", "path": "/editableSchemaFieldInfo/customer_email/globalTags/tags/"
                             "urn:li:tag:DataClassification.sensitive",
         "value": {"tag": "urn:li:tag:DataClassification.sensitive"}},
        {"op": "add", "path": "/editableSchemaFieldInfo/customer_email/glossaryTerms/terms/"
                             "urn:li:glossaryTerm:Classification.Sensitive",
         "value": {"urn": "urn:li:glossaryTerm:Classification.Sensitive"}},
    ]
    # What the server holds after the patch, against the SDK's full aspect: audit stamps are filled in by
    # DataHub's patch template, and our extra tag is the data classification.
    stored = state.aspects[(DS, "editableSchemaMetadata")]
    assert_fields(stored, dh_fixture("editableSchemaMetadata")["aspect_value"],
                  absent={"$.created", "$.lastModified", "$.editableSchemaFieldInfo[0].glossaryTerms.auditStamp"},
                  differ={"$.editableSchemaFieldInfo[0].globalTags.tags": [
                      {"tag": "urn:li:tag:PII"}, {"tag": "urn:li:tag:DataClassification.sensitive"}]})
    _, owners = aspect("ownership")
    assert owners == [
        {"op": "add", "path": "/owners/urn:li:corpuser:jdoe/TECHNICAL_OWNER",
         "value": {"owner": "urn:li:corpuser:jdoe", "type": "TECHNICAL_OWNER"}},
        {"op": "add", "path": "/owners/urn:li:corpGroup:data-platform/DATA_STEWARD",
         "value": {"owner": "urn:li:corpGroup:data-platform", "type": "DATA_STEWARD"}},
    ]
    # owner and steward types are the contract's roles (contracts/model.py OWNER_TYPES), as in lineage facets
    assert_fields(owners[1]["value"], dh_fixture("ownership")["aspect_value"]["owners"][0],
                  differ={"$.type": "DATA_STEWARD"})


@responses.activate
def test_assertion_infos_match_sdk_payloads():
    DHServer(responses.mock)
    c = contract(
        [{"name": "customer_email"}, {"name": "amount", "type": "decimal(12,2)"}, {"name": "status"}],
        [{"type": "not_null", "column": "customer_email", "name": "email_not_null",
          "description": "email must not be null"},
         {"type": "range", "column": "amount", "min": 0, "max": 10000, "name": "amount_between"},
         {"type": "row_count", "min": 1, "max": 1000000, "name": "rowcount"},
         {"type": "sql", "query": "SELECT COUNT(*) FROM orders WHERE amount < 0", "name": "sql"},
         {"type": "allowed_values", "column": "status", "values": ["NEW", "PAID"], "name": "status_in_set"}])
    sync(pusher(), [c])

    def info(rule):
        urn = assertion_urn(c, DS, rule)
        env, value = aspect("assertionInfo", urn)
        assert env["entityType"] == "assertion" and env["changeType"] == "UPSERT"
        return value

    ours = {"engine": "spark", "contract": "orders", "severity": "error"}
    extra_props = {f"$.customProperties.{k}" for k in ("contract", "rule", "severity")}
    value = info("email_not_null")
    assert_fields(value, dh_fixture("assertionInfo(DATASET)")["aspect_value"], extra=extra_props,
                  differ={"$.datasetAssertion.nativeType": "not_null"})  # our rule type, not an OM test name
    value = info("amount_between")
    assert_fields(value, dh_fixture("assertionInfo(DATASET between)")["aspect_value"],
                  differ={"$.customProperties": {**ours, "rule": "amount_between"}},
                  extra={"$.source", "$.description", "$.datasetAssertion.nativeType",
                         "$.datasetAssertion.nativeParameters"})
    for rule, fixture in (("rowcount", "assertionInfo(VOLUME)"), ("status_in_set", "assertionInfo(FIELD values)")):
        assert_fields(info(rule), dh_fixture(fixture)["aspect_value"],
                      differ={"$.customProperties": {**ours, "rule": rule}}, extra={"$.description"})
    # our SQL rules return one boolean (true passes), so the operator is IS_TRUE rather than EQUAL_TO 0
    assert_fields(info("sql"), dh_fixture("assertionInfo(SQL)")["aspect_value"],
                  differ={"$.customProperties": {**ours, "rule": "sql"}, "$.sqlAssertion.operator": "IS_TRUE",
                          "$.sqlAssertion.parameters": {}}, extra={"$.description"})
    platforms = [json.loads(p["aspect"]["value"]) for p in proposals() if p["aspectName"] == "dataPlatformInstance"]
    assert platforms and all(p == {"platform": "urn:li:dataPlatform:spark"} for p in platforms)
    assert_fields(platforms[0], dh_fixture("dataPlatformInstance")["aspect_value"], absent={"$.instance"})


@responses.activate
def test_run_events_and_data_contract_match_sdk_payloads():
    state = DHState()
    DHServer(responses.mock, state)
    c = contract([{"name": "customer_email"}, {"name": "ts", "type": "timestamp"}],
                 [{"type": "not_null", "column": "customer_email", "name": "email_not_null"}],
                 service_level={"freshness": {"max_age": "1d", "column": "ts"}})
    res = check_result([rr("email_not_null", "not_null", ["customer_email"], "failed", failed=3, metric=3.0)], 1000)
    sync(pusher(), [c], {"orders": res})
    urn = assertion_urn(c, DS, "email_not_null")
    env, event = aspect("assertionRunEvent", urn)
    assert env["entityType"] == "assertion"
    assert_fields(event, dh_fixture("assertionRunEvent")["aspect_value"],
                  differ={"$.assertionUrn": urn}, absent={"$.result.externalUrl"},
                  extra={"$.result.nativeResults.severity", "$.result.nativeResults.message"})
    assert event["result"]["nativeResults"]["message"] == "email_not_null failed: 3 of 1000 rows violate it"

    curl = contract_urn(DS)
    _, props = aspect("dataContractProperties", curl)
    fixture = dh_fixture("dataContractProperties")["aspect_value"]
    schema = [{"assertion": assertion_urn(c, DS, n)} for n in ("customer_email_type", "ts_type")]
    assert_fields(props, fixture, differ={
        "$.schema": schema, "$.freshness": [{"assertion": assertion_urn(c, DS, "freshness_sla")}],
        "$.dataQuality": [{"assertion": urn}], "$.rawContract": props["rawContract"]})
    assert props["rawContract"].startswith("contract:\n  name: orders\n")
    _, status = aspect("dataContractStatus", curl)
    assert_fields(status, dh_fixture("dataContractStatus")["aspect_value"])
    _, fresh = aspect("assertionInfo", assertion_urn(c, DS, "freshness_sla"))
    assert fresh["type"] == "FRESHNESS" and fresh["freshnessAssertion"] == {
        "type": "DATASET_CHANGE", "entity": DS,
        "schedule": {"type": "FIXED_INTERVAL", "fixedInterval": {"unit": "DAY", "multiple": 1}}}


@responses.activate
def test_upstream_lineage_matches_sdk_payload_and_keeps_existing_upstreams():
    state = DHState()
    other = "urn:li:dataset:(urn:li:dataPlatform:kafka,orders_topic,PROD)"
    state.aspects[(DS, "upstreamLineage")] = {"upstreams": [
        {"auditStamp": {"time": 5, "actor": "urn:li:corpuser:someone"}, "dataset": other, "type": "COPY"}]}
    DHServer(responses.mock, state)
    edge = LineageEdge(DatasetRef("raw.orders", datahub_platform="hive"), DatasetRef("lake.sales.orders"),
                       (ColumnLineage(("email",), "customer_email", "lower"),))
    pusher().push_lineage([edge])
    _, value = aspect("upstreamLineage", DS)
    expected = dh_fixture("upstreamLineage")["aspect_value"]
    assert value["upstreams"][0]["dataset"] == other  # what someone else declared stays
    assert_fields({"upstreams": value["upstreams"][1:], "fineGrainedLineages": value["fineGrainedLineages"]},
                  expected, differ={"$.upstreams[0].auditStamp": {"time": 0, "actor": "urn:li:corpuser:unknown"}})
    responses.calls.reset()
    again = pusher()
    again.push_lineage([edge])
    assert writes(responses.calls) == [] and again.report.unchanged == [f"lineage into {DS}"]


@responses.activate
def test_a_platform_instance_prefixes_the_urn_and_sends_the_sdk_aspect_once():
    state = DHState()
    DHServer(responses.mock, state)
    c = contract([{"name": "order_id", "type": "long"}])
    report = sync(pusher(names=NameSettings(platform_instance="cluster1")), [c])
    # what the SDK's make_dataset_urn_with_platform_instance builds (reference notes, DataHub URNs)
    urn = "urn:li:dataset:(urn:li:dataPlatform:spark,cluster1.lake.sales.orders,PROD)"
    assert report.failed == [] and report.invalid == [] and f"dataset {urn}" in report.created
    assert {p["entityUrn"] for p in proposals() if p["entityType"] == "dataset"} == {urn}
    env, value = aspect("dataPlatformInstance", urn)
    sdk = dh_fixture("dataPlatformInstance")
    # the SDK example attaches the aspect to the URN without the instance prefix; the aspect itself is identical
    assert env == {**sdk["restli"]["proposal"], "entityUrn": urn}
    assert value == sdk["aspect_value"] and state.aspects[(urn, "dataPlatformInstance")] == sdk["aspect_value"]
    responses.calls.reset()
    sync(pusher(names=NameSettings(platform_instance="cluster1")), [c])
    assert proposals() == []  # sent with the dataset's creation only


# --------------------------------------------------------------------------- idempotence, other people's edits


@responses.activate
def test_second_sync_writes_nothing_and_a_new_run_writes_only_run_events():
    DHServer(responses.mock)
    c = contract([{"name": "customer_email", "pii": True, "classification": "restricted", "description": "mail"},
                  {"name": "n", "type": "int", "minimum": 0}],
                 [{"type": "row_count", "min": 1, "name": "rows"}], roles={"owner": "team:crm"})
    res = check_result([rr("rows", "row_count", [], "passed", metric=10.0),
                        rr("n_range", "range", ["n"], "failed", failed=2)], 10)
    first = sync(pusher(), [c], {"orders": res})
    assert first.failed == [] and len(proposals()) > 0
    responses.calls.reset()
    second = sync(pusher(), [c], {"orders": res})
    assert proposals() == [] and writes(responses.calls) == []
    assert second.created == [] and second.updated == []
    responses.calls.reset()
    later = check_result(res.rules, 10, run_id="run-2", when=datetime(2025, 1, 2, tzinfo=timezone.utc))
    sync(pusher(), [c], {"orders": later})
    assert {p["aspectName"] for p in proposals()} == {"assertionRunEvent"} and len(proposals()) == 2


@responses.activate
def test_tags_and_owners_set_in_the_ui_survive():
    state = DHState()
    state.aspects[(DS, "globalTags")] = {"tags": [{"tag": "urn:li:tag:Legacy"}]}
    state.aspects[(DS, "ownership")] = {"owners": [{"owner": "urn:li:corpuser:alice", "type": "BUSINESS_OWNER"}],
                                        "ownerTypes": {}}
    state.aspects[(DS, "editableSchemaMetadata")] = {"editableSchemaFieldInfo": [
        {"fieldPath": "customer_email", "globalTags": {"tags": [{"tag": "urn:li:tag:Marketing"}]}}]}
    DHServer(responses.mock, state)
    c = contract([{"name": "customer_email", "pii": True}], roles={"owner": "team:crm"})
    sync(pusher(), [c])
    assert state.aspects[(DS, "globalTags")]["tags"] == [{"tag": "urn:li:tag:Legacy"}, {"tag": "urn:li:tag:PII"}]
    assert state.aspects[(DS, "ownership")]["owners"] == [
        {"owner": "urn:li:corpuser:alice", "type": "BUSINESS_OWNER"},
        {"owner": "urn:li:corpGroup:crm", "type": "TECHNICAL_OWNER"}]
    (info,) = state.aspects[(DS, "editableSchemaMetadata")]["editableSchemaFieldInfo"]
    assert info["globalTags"]["tags"] == [{"tag": "urn:li:tag:Marketing"}, {"tag": "urn:li:tag:PII"}]
    assert all(p["changeType"] == "PATCH" for p in proposals()
               if p["aspectName"] in ("globalTags", "ownership", "editableSchemaMetadata"))


@responses.activate
def test_a_field_name_with_a_slash_or_a_tilde_is_one_json_pointer_segment():
    # RFC 6901: `~` is sent as `~0` and `/` as `~1`, so the patch lands on the field, not on a nested path.
    state = DHState()
    DHServer(responses.mock, state)
    c = contract([{"name": "in/out~rate", "type": "string", "pii": True}])
    sync(pusher(), [c])
    _, ops = aspect("editableSchemaMetadata")
    assert [op["path"] for op in ops] == ["/editableSchemaFieldInfo/in~1out~0rate/globalTags/tags/urn:li:tag:PII"]
    (info,) = state.aspects[(DS, "editableSchemaMetadata")]["editableSchemaFieldInfo"]
    assert info["fieldPath"] == "in/out~rate"
    assert info["globalTags"]["tags"] == [{"tag": "urn:li:tag:PII"}]


@responses.activate
def test_rejected_batch_fails_the_contract_with_the_server_message():
    responses.post(DH_URL + "/aspects?action=ingestProposalBatch", status=422,
                   json={"message": "Failed to validate record with class com.linkedin.assertion.AssertionInfo",
                         "status": 422})
    DHServer(responses.mock)
    report = sync(pusher(), [contract([{"name": "a"}])])
    *entities, (what, error) = report.failed
    assert what == "contract orders"
    assert error.startswith("datahub rejected POST /aspects?action=ingestProposalBatch for ")
    assert error.endswith("HTTP 422: Failed to validate record with class com.linkedin.assertion.AssertionInfo")
    assert TOKEN not in error and report.exit_code == 1
    # nothing was written, so nothing counts as created: what the refused batch carried failed with it
    assert entities == [(f"dataset {DS}", "not written: the request carrying it failed"),
                        ("assertion orders.a_type", "not written: the request carrying it failed"),
                        ("dataContract orders", "not written: the request carrying it failed")]
    assert (report.created, report.updated, report.writes) == ([], [], 0)


def test_unknown_catalog_is_config_error():
    from dq_governance.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown catalog 'atlas'"):
        make_pusher("atlas")


def test_catalog_error_is_exit_1():
    assert CatalogError("x").exit_code == 1


@responses.activate
def test_pusher_retries_429_with_retry_after_and_503_then_succeeds():
    batch = DH_URL + "/aspects?action=ingestProposalBatch"
    responses.post(batch, status=429, headers={"Retry-After": "3"}, json={"message": "rate limited"})
    responses.post(batch, status=503, json={"message": "unavailable"})
    state = DHState()
    DHServer(responses.mock, state)
    sleeps: list[float] = []
    p = make_pusher("datahub", url=DH_URL, token=Secret(TOKEN), sleep=sleeps.append)
    report = sync(p, [contract([{"name": "a"}])])
    assert report.failed == []
    posted = [c for c in responses.calls if c.request.url == batch]
    assert [c.response.status_code for c in posted] == [429, 503, 200]
    assert body_of(posted[0]) == body_of(posted[2])  # the same batch, resent
    assert sleeps[0] == 3.0 and 0.5 <= sleeps[1] <= 1.0  # Retry-After, then backoff with jitter (try 2)
    assert (DS, "datasetProperties") in state.aspects


@responses.activate
def test_a_changed_contract_sends_only_the_changes():
    state = DHState()
    DHServer(responses.mock, state)
    fields = [{"name": "n", "type": "int", "minimum": 0, "maximum": 10}]
    sync(pusher(), [contract(fields)])
    responses.calls.reset()
    changed = contract([{"name": "n", "type": "int", "minimum": 0, "maximum": 20}])
    changed.contract.version = "1.1.0"
    report = sync(pusher(), [changed])
    sent = [(p["aspectName"], p["changeType"], p["entityUrn"]) for p in proposals()]
    range_urn = assertion_urn(changed, DS, "n_range")
    assert sent == [("datasetProperties", "PATCH", DS), ("assertionInfo", "UPSERT", range_urn),
                    ("dataContractProperties", "UPSERT", contract_urn(DS))]
    assert json.loads(proposals()[0]["aspect"]["value"]) == [
        {"op": "add", "path": "/customProperties/data_contract_version", "value": "1.1.0"}]
    assert state.aspects[(range_urn, "assertionInfo")]["datasetAssertion"]["parameters"]["maxValue"] == \
        {"value": "20", "type": "NUMBER"}
    assert f"assertion orders.n_range" in report.updated and f"dataset {DS}" in report.updated

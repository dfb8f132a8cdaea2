"""What a sync reports can be trusted: nothing is dropped without a note, no check is published looser or
tighter than the contract's, bad settings stop before any write, and counts follow what the server took."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
import responses

from catalog_support import DH_URL, OM_URL, TOKEN, DHServer, OMServer, OMState, body_of, writes
from dq_governance.catalogs.base import rule_bounds
from dq_governance.catalogs.datahub import HEADERS, DataHubPusher, assertion_info, assertion_urn
from dq_governance.catalogs.dryrun import DryRunTransport
from dq_governance.catalogs.openmetadata import OpenMetadataPusher
from dq_governance.catalogs.sync import make_pusher, sync
from dq_governance.catalogs.transport import HttpTransport, RetryPolicy, Secret, load_token
from dq_governance.checks.result import CheckResult, GateDecision, RuleResult
from dq_governance.cli import main
from dq_governance.contracts.model import Contract
from dq_governance.errors import CatalogError, ConfigError

REPO = Path(__file__).resolve().parent.parent
SEED = str(REPO / "tests" / "fixtures" / "seed_orders.yaml")
FQN = "lake.sales.curated.mix"
DS = "urn:li:dataset:(urn:li:dataPlatform:spark,curated.mix,PROD)"
TEAM_ID = "7d5e3c8a-2f0e-4c59-9a8f-2b1f0b8f6e11"
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
CURLY = "\u2019"  # a typographic apostrophe, as a copy-paste from a web page brings it


def mix_contract() -> Contract:
    """A steward, tags without a dot, a rule type OpenMetadata lacks, a filtered rule, exclusive bounds."""
    return Contract.model_validate({
        "contract": {"name": "mix", "version": "1.0.0", "owner": "team:sales-data-team",
                     "steward": "user:maria.silva"},
        "dataset": {"name": "curated.mix", "tags": ["finance", "Tier.Tier1"],
                    "catalog": {"openmetadata_fqn": FQN}},
        "schema": {"fields": [
            {"name": "id", "type": "long", "required": True},
            {"name": "amount", "type": "decimal(12,2)", "minimum": 0, "exclusive_minimum": True, "maximum": 100,
             "exclusive_maximum": True},
            {"name": "email", "type": "string", "tags": ["gdpr"]}]},
        "quality": {"rules": [
            {"type": "not_null", "column": "amount", "filter": "id > 100", "name": "amount_not_null_recent"},
            {"type": "range", "column": "id", "min": 1, "name": "id_positive"},
            {"type": "row_count", "must_be": "!= 0", "name": "rows_nonzero"}]},
    })


MIX_NOTES = [
    "mix: rules id_type, amount_type, email_type not pushed to OpenMetadata, nor their results: OpenMetadata has "
    "no test definition for type rules",
    "mix: rule amount_range not pushed to OpenMetadata, nor its results: columnValuesToBeBetween is inclusive and "
    "the rule excludes its minimum and maximum",
    "mix: rule amount_not_null_recent not pushed to OpenMetadata, nor its results: a test case cannot carry the "
    "rule's filter, so it would test every row",
    "mix: rule rows_nonzero not pushed to OpenMetadata, nor its results: tableRowCountToBeBetween needs fixed bounds "
    "and the rule's threshold has none",
    "mix: steward maria.silva not pushed to OpenMetadata: the table's owners are the contract owner only",
    "mix: tags finance (dataset), gdpr (column email) not pushed to OpenMetadata: its tags are Classification.Tag "
    "names",
]


def rr(name: str, type_: str, columns: list[str], status: str, failed: int | None = None) -> RuleResult:
    return RuleResult(name=name, type=type_, columns=columns, level="row", severity="error", action=None,
                      dimension=None, passed=status == "passed", status=status, failed_count=failed)


def mix_result() -> CheckResult:
    rules = [rr("id_not_null", "not_null", ["id"], "passed", 0),
             rr("amount_range", "range", ["amount"], "failed", 1),
             rr("amount_not_null_recent", "not_null", ["amount"], "failed", 2),
             rr("id_positive", "range", ["id"], "passed", 0)]
    return CheckResult(run_id="run-1", contract_name="mix", contract_version="1.0.0", pipeline="p", rules=rules,
                       total_rows=10, valid_rows=7, invalid_rows=3, status="failed", gate=GateDecision(False, False),
                       started_at=T0, finished_at=T0)


def om_state(version: str = "1.9.11") -> OMState:
    state = OMState(version=version)
    state.teams["sales-data-team"] = TEAM_ID
    state.add_table(FQN, [{"name": n, "dataType": "STRING"} for n in ("id", "amount", "email")])
    return state


def om_pusher(**kw):
    return make_pusher("openmetadata", url=OM_URL, token=Secret(TOKEN), sleep=lambda s: None, **kw)


# --------------------------------------------------------------------------- 3. nothing dropped without a note


@responses.activate
def test_openmetadata_notes_every_item_it_does_not_push_and_never_tests_a_filtered_rule_unfiltered():
    state = om_state()
    OMServer(responses.mock, state)
    report = sync(om_pusher(), [mix_contract()], {"mix": mix_result()})
    assert (report.failed, report.invalid, report.exit_code) == ([], [], 0)
    assert report.notes == MIX_NOTES
    # only the two rules OpenMetadata states exactly became test cases, and only their results were sent
    assert sorted(state.test_cases) == [f"{FQN}.id.mix_id_not_null", f"{FQN}.id.mix_id_positive"]
    assert sorted(state.results) == [f"{FQN}.id.mix_id_not_null", f"{FQN}.id.mix_id_positive"]
    assert state.test_cases[f"{FQN}.id.mix_id_positive"]["parameterValues"] == [{"name": "minValue", "value": "1"}]
    table = state.tables[FQN]
    assert [o["id"] for o in table["owners"]] == [TEAM_ID]  # the owner; the steward only in its note
    assert [t["tagFQN"] for t in table["tags"]] == ["Tier.Tier1"]
    assert [t["tagFQN"] for t in table["columns"][2]["tags"]] == []


@responses.activate
@pytest.mark.parametrize("version", ["1.9.11", "1.6.2"])
def test_a_result_the_server_stored_before_a_5xx_is_not_written_again(version):
    state = om_state(version)
    OMServer(responses.mock, state)
    state.stored_then_503["result"] = 2  # both results: stored, then a 503 as a proxy timing out would answer
    report = sync(om_pusher(), [mix_contract()], {"mix": mix_result()})
    assert (report.failed, report.exit_code) == ([], 0)
    # each retry asked first and found its result stored: one write per result, one record each
    writes_sent = [c for c in responses.calls if "testCaseResult" in c.request.url and c.request.method != "GET"]
    assert len(writes_sent) == 2
    assert {fqn: len(rows) for fqn, rows in state.results.items()} == {
        f"{FQN}.id.mix_id_not_null": 1, f"{FQN}.id.mix_id_positive": 1}
    assert sorted(e for e in report.created if e.startswith("test case result")) == [
        f"test case result {FQN}.id.mix_id_not_null @ 1735689600000",
        f"test case result {FQN}.id.mix_id_positive @ 1735689600000"]


@responses.activate
def test_a_table_patch_and_a_contract_result_the_server_stored_before_a_5xx_are_not_applied_again():
    state = om_state("1.9.11")
    OMServer(responses.mock, state)
    state.stored_then_503.update({"table patch": 1, "contract result": 1})
    report = sync(om_pusher(), [mix_contract()], {"mix": mix_result()})
    assert (report.failed, report.exit_code) == ([], 0)
    # the retry read the table back, found nothing left to patch and sent nothing: the owner and tag once
    assert len([c for c in responses.calls if c.request.method == "PATCH"]) == 1
    table = state.tables[FQN]
    assert [o["id"] for o in table["owners"]] == [TEAM_ID]
    assert [t["tagFQN"] for t in table["tags"]] == ["Tier.Tier1"]
    assert [[r["timestamp"] for r in rows] for rows in state.contract_results.values()] == [[1735689600000]]


@responses.activate
def test_a_live_sync_refuses_a_server_of_another_version_than_the_one_set():
    state = om_state("1.10.14")
    OMServer(responses.mock, state)
    report = sync(om_pusher(server_version="1.9"), [mix_contract()], {"mix": mix_result()})
    assert report.failed == [("contract mix", "openmetadata: the server is 1.10.14, and the server version set "
                              "(--server-version or openmetadata.server_version) is 1.9; nothing was written")]
    assert (report.exit_code, writes(responses.calls)) == (1, [])
    state = om_state("1.9.11")
    responses.reset()
    OMServer(responses.mock, state)
    report = sync(om_pusher(server_version="1.9"), [mix_contract()], {"mix": mix_result()})
    assert (report.failed, report.server_version) == ([], "1.9.11")  # read, not assumed


@responses.activate
def test_a_tag_is_added_once_and_one_per_exclusive_classification():
    state = OMState(version="1.9.11")
    OMServer(responses.mock, state)
    state.add_table(FQN, [{"name": n, "dataType": "STRING"} for n in ("email", "phone")])
    contract = Contract.model_validate({
        "contract": {"name": "tags", "version": "1.0.0"},
        "dataset": {"name": "curated.tags", "catalog": {"openmetadata_fqn": FQN}},
        "schema": {"fields": [{"name": "email", "type": "string", "pii": True, "tags": ["PII.Sensitive"]},
                              {"name": "phone", "type": "string", "pii": True, "tags": ["PII.NonSensitive"]}]}})
    report = sync(om_pusher(), [contract])
    assert [[t["tagFQN"] for t in c["tags"]] for c in state.tables[FQN]["columns"]] == [
        ["PII.Sensitive"], ["PII.Sensitive"]]
    assert report.notes[-1] == (
        "tags: tag PII.NonSensitive (column phone) not pushed to OpenMetadata: its classification holds one tag per "
        "column or table, and pii or classification already sets it")


@responses.activate
@pytest.mark.parametrize("have, owner, expected", [
    ([{"id": "u-1", "type": "user"}], "team:sales-data-team", [{"id": TEAM_ID, "type": "team"}]),
    ([{"id": "t-9", "type": "team"}], "team:sales-data-team", [{"id": TEAM_ID, "type": "team"}]),
    ([{"id": "u-1", "type": "user"}], "user:maria", [{"id": "u-1", "type": "user"}, {"id": "u-2", "type": "user"}]),
    ([{"id": "t-9", "type": "team"}], "user:maria", [{"id": "u-2", "type": "user"}]),
], ids=["team-over-user", "team-over-team", "user-beside-user", "user-over-team"])
def test_owners_follow_the_servers_several_users_or_one_team_rule(have, owner, expected):
    state = OMState(version="1.9.11")
    state.teams["sales-data-team"] = TEAM_ID
    state.users["maria"] = "u-2"
    OMServer(responses.mock, state)
    state.add_table(FQN, [{"name": "id", "dataType": "STRING"}], owners=have)
    contract = Contract.model_validate({
        "contract": {"name": "own", "version": "1.0.0", "owner": owner},
        "dataset": {"name": "curated.own", "catalog": {"openmetadata_fqn": FQN}},
        "schema": {"fields": [{"name": "id", "type": "string"}]}})
    assert sync(om_pusher(), [contract]).failed == []
    assert state.tables[FQN]["owners"] == expected
    before = len(responses.calls)
    assert sync(om_pusher(), [contract]).failed == []
    assert writes(responses.calls[before:]) == []  # a second sync finds the owners as the contract wants them


@responses.activate
def test_a_dotted_table_name_gets_its_test_cases_quoted_and_a_second_sync_writes_nothing():
    dotted = 'lake.sales.curated."my.mix"'
    state = om_state("1.9.11")
    state.add_table(dotted, [{"name": n, "dataType": "STRING"} for n in ("id", "amount", "email")])
    OMServer(responses.mock, state)
    contract = mix_contract().model_copy(deep=True)
    contract.dataset.catalog["openmetadata_fqn"] = dotted
    assert sync(om_pusher(), [contract]).failed == []
    assert sorted(c for c in state.test_cases if c.startswith(dotted)) == [
        f'{dotted}.id."my.mix_id_not_null"', f'{dotted}.id."my.mix_id_positive"']
    before = len(responses.calls)
    second = sync(om_pusher(), [contract])
    assert (second.created, second.updated, writes(responses.calls[before:])) == ([], [], [])


def test_datahub_urns_percent_encode_their_delimiters_as_the_sdk_does():
    from dq_governance.catalogs.datahub import dataset_urn, field_urn, urn_part
    from dq_governance.catalogs.naming import CatalogNaming

    assert urn_part("orders,2024 (v2)\u241f") == "orders%2C2024 %28v2%29%E2%90%9F"
    contract = Contract.model_validate({"contract": {"name": "c", "version": "1.0.0"},
                                        "dataset": {"name": "sales.orders,2024"},
                                        "schema": {"fields": [{"name": "id", "type": "long"}]}})
    assert dataset_urn(CatalogNaming().datahub_ref(contract)) == (
        "urn:li:dataset:(urn:li:dataPlatform:spark,sales.orders%2C2024,PROD)")
    assert field_urn("urn:li:dataset:(urn:li:dataPlatform:spark,t,PROD)", "count(x)") == (
        "urn:li:schemaField:(urn:li:dataset:(urn:li:dataPlatform:spark,t,PROD),count%28x%29)")


def test_a_dry_run_notes_the_same_items(tmp_path):
    report = sync(make_pusher("openmetadata", dry_run=True, out=tmp_path, server_version="1.9"), [mix_contract()],
                  {"mix": mix_result()})
    assert report.notes == ["dry run: tables assumed to exist with the contract's columns and no descriptions, "
                            "tags or owners", *MIX_NOTES]
    cases = [json.loads(p.read_text())["body"]["name"] for p in sorted(tmp_path.iterdir())
             if p.name.endswith("PUT-dataQuality_testCases.json")]
    assert cases == ["mix_id_not_null", "mix_id_positive"]


# --------------------------------------------------------------------------- 4. bounds as the contract states them


def test_openmetadata_skips_a_range_with_one_exclusive_bound(tmp_path):
    doc = mix_contract().model_dump(by_alias=True, exclude_none=True)
    doc["quality"]["rules"] = [{"type": "range", "column": "id", "min": 0, "min_exclusive": True, "name": "id_gt0"}]
    report = sync(make_pusher("openmetadata", dry_run=True, out=tmp_path, server_version="2.0"),
                  [Contract.model_validate(doc)])
    assert ("mix: rule id_gt0 not pushed to OpenMetadata, nor its results: columnValuesToBeBetween is inclusive "
            "and the rule excludes its minimum") in report.notes
    assert not [p for p in tmp_path.iterdir() if "testCases" in p.name and "id_gt0" in p.read_text()]


def _dh_assertion(rule: dict) -> dict:
    contract = Contract.model_validate({
        "contract": {"name": "orders", "version": "1.0.0"}, "dataset": {"name": "curated.mix"},
        "schema": {"fields": [{"name": "amount", "type": "decimal(12,2)"}, {"name": "id", "type": "long"},
                              {"name": "status"}]},
        "quality": {"rules": [{**rule, "name": "r"}]}})
    (found,) = [r for r in contract.rules() if r.name == "r"]
    return assertion_info(contract, DS, found)


AMOUNT = f"urn:li:schemaField:({DS},amount)"


@pytest.mark.parametrize("rule,body", [
    # two bounds, one exclusive: BETWEEN would include it, so the rule goes natively with its exact parameters
    ({"type": "range", "column": "amount", "min": 0, "max": 100, "min_exclusive": True, "max_exclusive": True},
     {"datasetAssertion": {"dataset": DS, "scope": "DATASET_COLUMN", "fields": [AMOUNT], "aggregation": "_NATIVE_",
                           "operator": "_NATIVE_", "nativeType": "range", "nativeParameters": {
                               "column": "amount", "min": "0", "max": "100", "min_exclusive": "true",
                               "max_exclusive": "true"}}}),
    # one exclusive bound: DataHub's own operator says it
    ({"type": "range", "column": "amount", "min": 0, "min_exclusive": True},
     {"datasetAssertion": {"dataset": DS, "scope": "DATASET_COLUMN", "fields": [AMOUNT], "operator": "GREATER_THAN",
                           "parameters": {"value": {"value": "0", "type": "NUMBER"}}, "aggregation": "IDENTITY",
                           "nativeType": "range", "nativeParameters": {"column": "amount", "min": "0",
                                                                       "min_exclusive": "true"}}}),
    ({"type": "range", "column": "amount", "min": 0, "max": 100},
     {"datasetAssertion": {"dataset": DS, "scope": "DATASET_COLUMN", "fields": [AMOUNT], "operator": "BETWEEN",
                           "parameters": {"maxValue": {"value": "100", "type": "NUMBER"},
                                          "minValue": {"value": "0", "type": "NUMBER"}},
                           "aggregation": "IDENTITY", "nativeType": "range",
                           "nativeParameters": {"column": "amount", "min": "0", "max": "100"}}}),
    # a filtered rule is never an unconditional assertion
    ({"type": "not_null", "column": "amount", "filter": "id > 100"},
     {"datasetAssertion": {"dataset": DS, "scope": "DATASET_COLUMN", "fields": [AMOUNT], "aggregation": "_NATIVE_",
                           "operator": "_NATIVE_", "nativeType": "not_null",
                           "nativeParameters": {"filter": "id > 100", "column": "amount"}}}),
    ({"type": "allowed_values", "column": "status", "values": ["NEW"], "filter": "id > 100"},
     {"datasetAssertion": {"dataset": DS, "scope": "DATASET_COLUMN", "fields": [f"urn:li:schemaField:({DS},status)"],
                           "aggregation": "_NATIVE_", "operator": "_NATIVE_", "nativeType": "allowed_values",
                           "nativeParameters": {"filter": "id > 100", "column": "status", "values": '["NEW"]'}}}),
    # a count threshold with no fixed bounds has no VOLUME form
    ({"type": "row_count", "must_be": "!= 0"},
     {"datasetAssertion": {"dataset": DS, "scope": "DATASET_ROWS", "aggregation": "_NATIVE_", "operator": "_NATIVE_",
                           "nativeType": "row_count", "nativeParameters": {"must_be": "!= 0"}}}),
])
def test_datahub_assertions_state_the_rule_exactly(rule, body):
    info = _dh_assertion(rule)
    assert {k: v for k, v in info.items() if k in ("type", "datasetAssertion")} == {"type": "DATASET", **body}


def test_a_volume_rule_is_native_in_datahub():
    info = _dh_assertion({"type": "volume", "must_be": ">= 10", "min_rows": 5})
    assert (info["type"], info["datasetAssertion"]["operator"], info["datasetAssertion"]["nativeParameters"]) == (
        "DATASET", "_NATIVE_", {"history_runs": "20", "min_history": "5", "sensitivity": "3.5", "min_rows": "5",
                                "must_be": ">= 10"})


@pytest.mark.parametrize("must_be,bounds", [
    ("> 5", (6, None)), ("> 5.5", (6, None)), (">= 5.5", (6, None)), ("< 10", (None, 9)), ("< 9.5", (None, 9)),
    ("<= 9.5", (None, 9)), ("between 1.5 and 9.5", (2, 9)), ("= 4", (4, 4)), ("= 4.5", (None, None)),
    ("!= 0", (None, None)), ("not between 1 and 3", (None, None)),
])
def test_count_thresholds_become_the_same_integer_bounds(must_be, bounds):
    rule = Contract.model_validate({
        "contract": {"name": "c", "version": "1.0.0"}, "dataset": {"name": "t"},
        "quality": {"rules": [{"type": "row_count", "must_be": must_be}]}}).rules()[0]
    assert rule_bounds(rule) == bounds


# --------------------------------------------------------------------------- 5. unsupported versions: no write


@responses.activate
def test_an_unsupported_server_is_refused_before_any_write():
    state = om_state("1.5.2")
    OMServer(responses.mock, state)
    report = sync(om_pusher(), [mix_contract(), mix_contract().model_copy(update={"contract": mix_contract(
        ).contract.model_copy(update={"name": "mix2"})})])
    assert [(c.request.method, c.request.url) for c in responses.calls] == [("GET", OM_URL + "/api/v1/system/version")]
    assert writes(responses.calls) == []
    assert report.failed == [("contract mix", "OpenMetadata server 1.5.2 is not supported (1.6 to 2.x)"),
                             ("contract mix2", "OpenMetadata server 1.5.2 is not supported (1.6 to 2.x)")]
    assert (report.server_version, report.writes, report.created, report.exit_code) == ("1.5.2", 0, [], 1)


@pytest.mark.parametrize("version,shown", [("1.5", "1.5.0"), ("3.0", "3.0.0"), ("1.5.9", "1.5.9")])
def test_an_unsupported_server_version_option_is_bad_input_before_any_file(tmp_path, capsys, version, shown):
    out = tmp_path / "om"
    code = main(["sync", "--catalog", "openmetadata", "--out", str(out), "--server-version", version,
                 "--service", "s", "--database", "d", SEED])
    assert code == 2
    assert capsys.readouterr().err == (f"dqgov: error: --server-version {version}: OpenMetadata {shown} is not "
                                       "supported (1.6 to 2.x)\n")
    assert not out.exists()


def test_an_unsupported_version_given_to_the_pusher_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError) as info:
        OpenMetadataPusher(DryRunTransport(tmp_path, "openmetadata"), server_version="1.5")
    assert str(info.value) == "server version 1.5: OpenMetadata 1.5.0 is not supported (1.6 to 2.x)"
    assert info.value.exit_code == 2


@responses.activate
def test_a_server_version_that_is_not_a_version_is_a_catalog_error():
    responses.get(OM_URL + "/api/v1/system/version", json={"version": "banana"})
    report = sync(om_pusher(), [mix_contract()])
    assert report.failed == [("contract mix", "openmetadata: GET /api/v1/system/version returned 'banana', "
                                              "not X.Y.Z")]
    assert report.exit_code == 1


# --------------------------------------------------------------------------- 6. tokens outside printable ASCII


NOT_ASCII = "the token holds a character that is not printable ASCII (a typographic quote from copy-paste?)"


@pytest.mark.parametrize("value,problem", [
    (f"abc{CURLY}def", NOT_ASCII), ("abc\u00e9def", NOT_ASCII), ("abc\u20acdef", NOT_ASCII),
    ("abc\u00a0def", "the token holds whitespace or control characters (a second line?)"),  # NBSP is whitespace
])
def test_a_token_outside_printable_ascii_is_refused_naming_the_variable(value, problem):
    with pytest.raises(ConfigError) as info:
        load_token("DQGOV_DATAHUB_TOKEN", {"DQGOV_DATAHUB_TOKEN": value})
    assert str(info.value) == f"DQGOV_DATAHUB_TOKEN: {problem}; give the token alone"
    assert info.value.exit_code == 2


def test_a_token_file_outside_printable_ascii_is_refused_naming_the_variable(tmp_path):
    path = tmp_path / "token"
    path.write_text(f"{TOKEN}{CURLY}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_token("DQGOV_OPENMETADATA_TOKEN", {"DQGOV_OPENMETADATA_TOKEN_FILE": str(path)})
    assert str(info.value) == (f"DQGOV_OPENMETADATA_TOKEN_FILE ({path}): the token holds a character that is not "
                               "printable ASCII (a typographic quote from copy-paste?); give the token alone")


@responses.activate
def test_the_cli_refuses_such_a_token_in_one_line_before_any_request(monkeypatch, capsys):
    monkeypatch.setenv("DQGOV_DATAHUB_TOKEN", f"{TOKEN}{CURLY}")
    code = main(["sync", "--catalog", "datahub", "--url", DH_URL, SEED])
    err = capsys.readouterr().err
    assert code == 2
    assert err == ("dqgov: error: DQGOV_DATAHUB_TOKEN: the token holds a character that is not printable ASCII "
                   "(a typographic quote from copy-paste?); give the token alone\n")
    assert TOKEN not in err and len(responses.calls) == 0


def test_a_token_handed_to_the_transport_is_checked_too():
    with pytest.raises(ConfigError) as info:
        HttpTransport(OM_URL, "openmetadata", token=Secret(f"{TOKEN}{CURLY}"))
    assert str(info.value) == ("openmetadata: the token holds a character that is not printable ASCII (a "
                               "typographic quote from copy-paste?); give the token alone")


def test_a_header_the_http_library_cannot_encode_is_a_one_line_catalog_error():
    transport = HttpTransport("http://127.0.0.1:9", "openmetadata", token=Secret(TOKEN),
                              retry=RetryPolicy(attempts=1), sleep=lambda _s: None)
    transport.session.headers["Authorization"] = f"Bearer {TOKEN}{CURLY}"
    with pytest.raises(CatalogError) as info:
        transport.request("GET", "/api/v1/tables/name/x", entity="table x")
    assert str(info.value) == "openmetadata GET /api/v1/tables/name/x: UnicodeEncodeError in a request header"


# --------------------------------------------------------------------------- 7. DataHub counts what was written


def dh_contract() -> Contract:
    return Contract.model_validate({
        "contract": {"name": "orders", "version": "1.0.0"},
        "dataset": {"name": "curated.mix"},
        "schema": {"fields": [{"name": "a"}]}})


def dh_pusher(batch_size: int) -> DataHubPusher:
    transport = HttpTransport(DH_URL, "datahub", token=Secret(TOKEN), headers=HEADERS, sleep=lambda s: None)
    return DataHubPusher(transport, batch_size=batch_size)


class SecondBatchRefused(DHServer):
    """GMS that takes the first ingestProposalBatch and refuses every later one."""

    batches = 0

    def batch(self, request):
        self.batches += 1
        if self.batches > 1:
            return 422, {"Content-Type": "application/json"}, json.dumps({"message": "Failed to validate record"})
        return super().batch(request)


@responses.activate
def test_datahub_counts_only_what_the_server_accepted():
    server = SecondBatchRefused(responses.mock)
    # 7 proposals: dataset 3 (properties, status, schema), assertion 2, data contract 2; batches of 3
    report = sync(dh_pusher(batch_size=3), [dh_contract()])
    batches = [len(body_of(c)["proposals"]) for c in responses.calls if "ingestProposalBatch" in c.request.url]
    assert batches == [3, 3]
    assert report.created == [f"dataset {DS}"] and report.updated == []
    assert report.writes == 3
    urn = assertion_urn(dh_contract(), DS, "a_type")
    assert (urn, "assertionInfo") not in server.state.aspects
    assert report.failed == [
        ("assertion orders.a_type", "not written: the request carrying it failed"),
        ("dataContract orders", "not written: the request carrying it failed"),
        ("contract orders", "datahub rejected POST /aspects?action=ingestProposalBatch for 3 aspects of assertion "
                            "orders.a_type, dataContract orders: HTTP 422: Failed to validate record")]
    summary = report.as_dict()
    assert (summary["created"], summary["updated"], summary["failed"], summary["writes"]) == (1, 0, 3, 3)


@responses.activate
def test_datahub_entities_behind_a_refused_request_are_counted_as_not_sent():
    SecondBatchRefused(responses.mock)
    report = sync(dh_pusher(batch_size=2), [dh_contract()])
    # batches: [dataset x2], [dataset, assertion] refused, the rest never sent
    assert report.created == [] and report.writes == 2
    assert report.failed[:3] == [
        (f"dataset {DS}", "not written: the request carrying it failed"),
        ("assertion orders.a_type", "not written: the request carrying it failed"),
        ("dataContract orders", "not sent: an earlier request failed")]
    assert report.failed[3][0] == "contract orders"


@responses.activate
def test_datahub_counts_a_full_success_as_before():
    DHServer(responses.mock)
    report = sync(make_pusher("datahub", url=DH_URL, token=Secret(TOKEN)), [dh_contract()])
    assert report.failed == []
    assert report.created == [f"dataset {DS}", "assertion orders.a_type", "dataContract orders"]
    assert report.writes == 7


# --------------------------------------------------------------------------- 1, 2. `dqgov check --sync` (no Spark)


def seed_result() -> CheckResult:
    rules = [rr("pedido_id_not_null", "not_null", ["pedido_id"], "passed", 0)]
    return CheckResult(run_id="run-1", contract_name="orders", contract_version="1.0.0", pipeline="p", rules=rules,
                       total_rows=7, valid_rows=7, invalid_rows=0, status="passed", gate=GateDecision(True, True),
                       started_at=T0, finished_at=T0)


def test_check_sync_reports_an_unusable_contract_as_exit_2(tmp_path, capsys):
    from dq_governance.cli.cmd_check import _sync
    from dq_governance.contracts.load import load_contract
    from dq_governance.project_config import ProjectConfig

    report = _sync("openmetadata", load_contract(SEED), seed_result(), url=None, project=ProjectConfig(),
                   out=str(tmp_path), dry_run=False, quiet=False)
    assert (report.dry_run, report.exit_code) == (True, 2)
    printed = capsys.readouterr().out
    assert printed.startswith(f"catalog openmetadata (dry run, requests in {tmp_path}): 0 created, 0 updated, "
                              "0 unchanged, 1 failed\n  FAILED contract orders: curated.orders: OpenMetadata needs a "
                              "service and a database for its table FQN: ")


def test_check_sync_turns_unusable_settings_into_a_failed_sync_not_a_lost_summary(tmp_path, capsys):
    from dq_governance.cli.cmd_check import _sync
    from dq_governance.contracts.load import load_contract
    from dq_governance.project_config import ProjectConfig

    report = _sync("datahub", load_contract(SEED), seed_result(), url="gms:8080", project=ProjectConfig(),
                   out=str(tmp_path), dry_run=False, quiet=True)
    assert report.invalid == [("catalog datahub", "datahub: catalog URL must start with http:// or https://, got "
                                                  "'gms:8080'")]
    assert report.exit_code == 2 and report.as_dict()["failed"] == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # --json: the command prints the JSON; the failure goes to stderr too
    assert captured.err == ("catalog datahub (gms:8080): 0 created, 0 updated, 0 unchanged, 1 failed\n"
                            "  FAILED catalog datahub: datahub: catalog URL must start with http:// or https://, "
                            "got 'gms:8080'\n")


@responses.activate
def test_check_sync_json_mode_is_quiet_when_the_sync_succeeds(capsys):
    from dq_governance.cli.cmd_check import _sync
    from dq_governance.contracts.load import load_contract
    from dq_governance.project_config import ProjectConfig

    DHServer(responses.mock)
    report = _sync("datahub", load_contract(SEED), seed_result(), url=DH_URL, project=ProjectConfig(), out="unused",
                   dry_run=False, quiet=True)
    assert (report.dry_run, report.exit_code, report.failed) == (False, 0, [])
    assert capsys.readouterr() == ("", "")


def test_check_with_a_bad_sync_token_stops_before_any_spark_work(repo, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DQGOV_DATAHUB_URL", DH_URL)
    monkeypatch.setenv("DQGOV_DATAHUB_TOKEN", f"{TOKEN}{CURLY}")
    monkeypatch.chdir(tmp_path)
    code = main(["check", str(repo / "contracts/orders.yaml"), "--input", str(repo / "examples/data/orders.csv"),
                 "--output", str(tmp_path / "valid"), "--sync", "datahub"])
    assert code == 2
    assert capsys.readouterr().err == (
        "dqgov: error: DQGOV_DATAHUB_TOKEN: the token holds a character that is not printable ASCII (a "
        "typographic quote from copy-paste?); give the token alone\n")
    assert not (tmp_path / "valid").exists() and not (tmp_path / "out").exists()


def test_a_rule_on_a_structs_field_is_not_pushed_to_openmetadata_and_says_why():
    """A test case's entity link names a top-level column: a rule on `cliente.email` (a struct field's shorthand or a
    quality rule) is left out with its reason, where the same rule on a top-level column is pushed."""
    from dq_governance.catalogs.openmetadata import skip_reason

    contract = Contract.model_validate({
        "contract": {"name": "nested", "version": "1.0.0"}, "dataset": {"name": "curated.nested"},
        "schema": {"fields": [
            {"name": "email", "type": "string", "required": True},
            {"name": "cliente", "type": "struct<email:string>", "fields": [{"name": "email", "required": True}]}]},
        "quality": {"rules": [{"type": "not_null", "column": "cliente.email", "name": "nested_rule"}]}})
    reasons = {rule.name: skip_reason(rule) for rule in contract.rules() if rule.type == "not_null"}
    nested = "a test case names a top-level column and the rule checks a struct's field"
    assert reasons == {"email_not_null": None, "cliente.email_not_null": nested, "nested_rule": nested}

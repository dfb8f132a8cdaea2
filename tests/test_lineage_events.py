"""OpenLineage events of a check run: schema-valid, exact facets, PII-safe, HTTP transports, failure handling.

Spark-free: the check result is built from the seed lab's known answer (7 rows, 1 valid) so the
facets can be asserted exactly; the Spark + listener path is in test_lineage_listener.py.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import responses
import yaml

from dq_governance.checks.result import CheckResult, ColumnMetrics, GateDecision, RuleResult
from dq_governance.contracts.model import Contract
from dq_governance.errors import ConfigError, LineageError
from dq_governance.lineage import emit as E
from dq_governance.lineage import facets as F
from lineage_schema import validation_errors

REPO = Path(__file__).resolve().parent.parent
TOKEN = "s3cr3t-token-7f1c9a"  # a made-up token; asserted absent from events and logs

# The seed lab's violations per rule (issue 3's known answer); every other derived rule passes.
SEED_FAILURES = {"cliente_id_not_null": 1, "status_allowed_values": 1, "valor_range": 1, "data_pedido_type": 1,
                 "pedido_id_unique": 2}


def orders() -> Contract:
    return Contract.model_validate(yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text()))


def seed_result(contract: Contract, run_id: str) -> CheckResult:
    """The seed lab's check result: total 7, valid 1, invalid 6, the gate blocks."""
    rules = []
    for rule in contract.rules():
        failed = SEED_FAILURES.get(rule.name, 0)
        dataset_level = rule.level == "dataset"
        rules.append(RuleResult(
            name=rule.name, type=rule.type, columns=rule.target_columns, level=rule.level, severity=rule.severity,
            action=rule.action, dimension=rule.dimension, passed=failed == 0, status="passed" if failed == 0 else "failed",
            failed_count=None if dataset_level else failed, metric_value=7.0 if dataset_level else None,
            threshold=getattr(rule, "must_be", None) and f"must_be {rule.must_be}",
        ))
    now = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
    return CheckResult(
        run_id=run_id, contract_name="orders", contract_version="1.0.0", pipeline="seed", rules=rules,
        total_rows=7, valid_rows=1, invalid_rows=6, status="failed",
        gate=GateDecision(passed=False, publish=False, reasons=["valid ratio 0.1429 < minimum 0.99"]),
        started_at=now, finished_at=now + timedelta(seconds=3),
        column_metrics={
            "pedido_id": ColumnMetrics(null_count=0, distinct_count=6, count=7, min=1, max=6, sum=23),
            "valor": ColumnMetrics(null_count=0, distinct_count=6, count=7, min=-100.0, max=230.0, sum=739.9),
            "email": ColumnMetrics(null_count=0, distinct_count=6, count=7),
        },
        contract_location="contracts/orders.yaml",
    )


def read_events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def by_name(items: list[dict], key: str = "name") -> dict[str, dict]:
    return {item[key]: item for item in items}


@pytest.fixture(autouse=True)
def _no_ambient_parent(monkeypatch):
    for name in (E.PARENT_ENV, E.ROOT_PARENT_ENV, E.API_KEY_ENV, "OPENLINEAGE_NAMESPACE", "OPENLINEAGE_DISABLED"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture()
def seed_events(tmp_path):
    """START + COMPLETE + FAIL of the seed run into a JSONL file; returns the parsed events."""
    contract = orders()
    run_id = str(uuid.uuid4())
    path = tmp_path / "lineage.jsonl"
    emitter = E.build_emitter(f"file:{path}", contract, run_id=run_id, pipeline="seed",
                              contract_location="contracts/orders.yaml")
    result = seed_result(contract, run_id)
    input_ns, input_name = "file", str(REPO / "examples" / "data" / "orders.csv")
    emitter.start(input_namespace=input_ns, input_name=input_name)
    outputs = [{"namespace": "file", "name": "/lake/curated/orders", "rows": 1, "kind": "target"},
               {"namespace": "file", "name": "/lake/quarantine/orders", "rows": 6, "kind": "quarantine"}]
    emitter.complete(result, outputs=outputs)
    emitter.fail(result, "quality gate blocked publication: valid ratio 0.1429 < minimum 0.99")
    emitter.close()
    return read_events(path), run_id


# --------------------------------------------------------------------------- schemas


def test_every_emitted_event_validates_against_the_openlineage_and_custom_schemas(seed_events):
    events, _ = seed_events
    assert [e["eventType"] for e in events] == ["START", "COMPLETE", "FAIL"]
    for event in events:
        assert validation_errors(event) == []
    keys = {key for e in events for group in (e["inputs"][0]["facets"],) for key in group}
    assert F.CONTRACT_FACET_KEY in keys  # the custom facet was among those validated


def test_the_validator_rejects_a_broken_facet(seed_events):
    events, _ = seed_events
    broken = json.loads(json.dumps(events[1]))
    del broken["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"][0]["success"]
    broken["inputs"][0]["facets"][F.CONTRACT_FACET_KEY]["enforcement"] = "sometimes"
    errors = validation_errors(broken)
    assert any("'success' is a required property" in e for e in errors)
    assert any("'sometimes' is not one of" in e for e in errors)


def test_contract_facet_schema_url_is_versioned_and_matches_the_schema_file():
    schema = json.loads((REPO / "dq_governance/lineage/schemas/DataContractDatasetFacet.json").read_text())
    assert F.CONTRACT_FACET_SCHEMA_URL == schema["$id"] + "#/$defs/DataContractDatasetFacet"
    assert "/v0.1.0/" in F.CONTRACT_FACET_SCHEMA_URL and "/main/" not in F.CONTRACT_FACET_SCHEMA_URL


# --------------------------------------------------------------------------- facet contents


def test_job_is_stable_and_carries_type_ownership_and_documentation(seed_events):
    events, run_id = seed_events
    assert {(e["job"]["namespace"], e["job"]["name"]) for e in events} == {("dqgov", "seed.curated.orders.contract_check")}
    assert {e["run"]["runId"] for e in events} == {run_id}
    job = events[0]["job"]["facets"]
    assert (job["jobType"]["processingType"], job["jobType"]["integration"], job["jobType"]["jobType"]) == (
        "BATCH", "SPARK", "DATA_QUALITY")
    assert job["ownership"]["owners"] == [{"name": "team:sales-data-team", "type": "TECHNICAL_OWNER"},
                                         {"name": "user:maria.silva", "type": "DATA_STEWARD"}]
    assert "orders 1.0.0" in job["documentation"]["description"]
    assert all(e["producer"] == F.PRODUCER for e in events)
    assert events[0]["run"]["facets"]["processing_engine"]["name"] == "spark"


def test_complete_event_carries_the_seed_lab_quality_numbers(seed_events):
    events, _ = seed_events
    complete = events[1]
    dataset = complete["inputs"][0]
    assertions = by_name(dataset["inputFacets"]["dataQualityAssertions"]["assertions"])
    unique = assertions["pedido_id_unique"]
    assert (unique["assertion"], unique["column"], unique["success"], unique["actual"], unique["severity"]) == (
        "unique", "pedido_id", False, "2", "error")
    assert {n: a["actual"] for n, a in assertions.items() if not a["success"]} == {
        "cliente_id_not_null": "1", "status_allowed_values": "1", "valor_range": "1", "data_pedido_type": "1",
        "pedido_id_unique": "2"}
    assert assertions["pedido_id_not_null"]["success"] is True and assertions["pedido_id_not_null"]["actual"] == "0"
    assert assertions["row_count"]["actual"] == "7" and assertions["row_count"]["expected"] == "must_be >= 1"
    assert len(assertions) == len(orders().rules())
    # the same facet under `facets`, as dbt does
    assert dataset["facets"]["dataQualityAssertions"]["assertions"] == dataset["inputFacets"]["dataQualityAssertions"][
        "assertions"]
    metrics = dataset["inputFacets"]["dataQualityMetrics"]
    assert metrics["rowCount"] == 7
    assert metrics["columnMetrics"]["valor"] == {"nullCount": 0, "distinctCount": 6, "count": 7, "min": -100,
                                                 "max": 230, "sum": 739.9}
    contract = dataset["facets"][F.CONTRACT_FACET_KEY]
    assert {k: v for k, v in contract.items() if not k.startswith("_")} == {
        "name": "orders", "version": "1.0.0", "standard": "native", "enforcement": "blocking",
        "location": "contracts/orders.yaml", "status": "failed", "quality_score": 1 / 7, "valid_rows": 1,
        "invalid_rows": 6, "row_outputs": "split"}
    tests = by_name(complete["run"]["facets"]["test"]["tests"])
    assert tests["pedido_id_unique"]["status"] == "fail" and tests["pedido_id_not_null"]["status"] == "pass"
    assert sorted(n for n, t in tests.items() if t["status"] == "fail") == sorted(SEED_FAILURES)


def test_input_schema_ownership_tags_and_documentation(seed_events):
    events, _ = seed_events
    facets = events[1]["inputs"][0]["facets"]
    fields = by_name(facets["schema"]["fields"])
    assert list(fields) == ["pedido_id", "cliente_id", "status", "valor", "data_pedido", "email"]
    assert (fields["valor"]["type"], fields["valor"]["description"]) == ("decimal(12,2)", "Order amount in BRL")
    tags = {(t["key"], t["value"], t.get("field")) for t in facets["tags"]["tags"]}
    assert tags == {("classification", "internal", None), ("domain", "sales", None), ("pii", "true", "email"),
                    ("classification", "restricted", "email"), ("masking", "hmac", "email")}
    assert [o["name"] for o in facets["ownership"]["owners"]] == ["team:sales-data-team", "user:maria.silva"]
    assert facets["documentation"]["description"] == "Commercial orders, consolidated"


def test_outputs_carry_statistics_schema_ownership_tags_and_column_lineage(seed_events):
    events, _ = seed_events
    outputs = by_name(events[1]["outputs"])
    target, quarantine = outputs["/lake/curated/orders"], outputs["/lake/quarantine/orders"]
    assert target["outputFacets"]["outputStatistics"]["rowCount"] == 1
    assert quarantine["outputFacets"]["outputStatistics"]["rowCount"] == 6
    for out in (target, quarantine):
        assert {"schema", "ownership", "tags", "columnLineage"} <= set(out["facets"])
    assert F.CONTRACT_FACET_KEY in target["facets"] and F.CONTRACT_FACET_KEY not in quarantine["facets"]
    email = target["facets"]["columnLineage"]["fields"]["email"]["inputFields"][0]
    # masked: a TRANSFORMATION (the spec's IDENTITY is the exact same value); copied as is: IDENTITY
    assert (email["field"], email["transformations"][0]["masking"], email["transformations"][0]["subtype"]) == (
        "email", True, "TRANSFORMATION")
    valor = target["facets"]["columnLineage"]["fields"]["valor"]["inputFields"][0]["transformations"][0]
    assert (valor["masking"], valor["subtype"]) == (False, "IDENTITY")


def test_fail_event_when_the_gate_blocks_has_an_error_message(seed_events):
    events, _ = seed_events
    fail = events[2]
    assert fail["eventType"] == "FAIL"
    assert fail["run"]["facets"]["errorMessage"]["message"].startswith("quality gate blocked publication")
    assert fail["run"]["facets"]["errorMessage"]["programmingLanguage"] == "python"
    assert fail["outputs"] == []


def test_pii_column_values_never_reach_a_facet(tmp_path):
    doc = yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text())
    doc["schema"]["fields"].append({"name": "salario", "type": "double", "pii": True})
    doc["quality"]["rules"].append({"type": "max", "column": "salario", "must_be": "< 1000000"})
    contract = Contract.model_validate(doc)
    run_id = str(uuid.uuid4())
    result = seed_result(contract, run_id)
    result.column_metrics["salario"] = ColumnMetrics(null_count=1, distinct_count=5, count=6, min=1234.5,
                                                     max=98765.43, sum=200111.11)
    for rule in result.rules:
        if rule.name == "salario_max":
            rule.metric_value, rule.passed, rule.message = 98765.43, True, "max(salario) = 98765.43 (ana@example.com)"
    path = tmp_path / "events.jsonl"
    emitter = E.build_emitter(f"file:{path}", contract, run_id=run_id, pipeline="seed")
    emitter.complete(result)
    text = path.read_text()
    for raw in ("98765.43", "1234.5", "200111.11", "ana@example.com"):
        assert raw not in text
    event = read_events(path)[0]
    salary = event["inputs"][0]["inputFacets"]["dataQualityMetrics"]["columnMetrics"]["salario"]
    assert salary == {"nullCount": 1, "distinctCount": 5, "count": 6}
    assert "actual" not in by_name(event["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"])["salario_max"]
    # a non-PII column keeps its min / max
    assert event["inputs"][0]["inputFacets"]["dataQualityMetrics"]["columnMetrics"]["valor"]["max"] == 230


# --------------------------------------------------------------------------- parents


def test_orchestrator_parent_from_flags_and_env(tmp_path, monkeypatch):
    contract, run_id = orders(), str(uuid.uuid4())
    parent_run, root_run = str(uuid.uuid4()), str(uuid.uuid4())
    path = tmp_path / "e.jsonl"
    emitter = E.build_emitter(f"file:{path}", contract, run_id=run_id, pipeline="p", parent_run_id=parent_run,
                              parent_job="airflow/orders_dag.check_orders")
    emitter.start()
    parent = read_events(path)[0]["run"]["facets"]["parent"]
    assert parent["run"]["runId"] == parent_run
    assert (parent["job"]["namespace"], parent["job"]["name"]) == ("airflow", "orders_dag.check_orders")
    assert parent["root"]["run"]["runId"] == parent_run  # no separate root given: the orchestrator is the root

    monkeypatch.setenv(E.PARENT_ENV, f"airflow/orders_dag.check_orders/{parent_run}")
    monkeypatch.setenv(E.ROOT_PARENT_ENV, f"airflow/orders_dag/{root_run}")
    path2 = tmp_path / "e2.jsonl"
    E.build_emitter(f"file:{path2}", contract, run_id=run_id, pipeline="p").start()
    parent = read_events(path2)[0]["run"]["facets"]["parent"]
    assert (parent["run"]["runId"], parent["root"]["run"]["runId"], parent["root"]["job"]["name"]) == (
        parent_run, root_run, "orders_dag")
    assert validation_errors(read_events(path2)[0]) == []


def test_bad_parent_values_are_config_errors(monkeypatch):
    with pytest.raises(ConfigError, match="not a UUID"):
        E.build_emitter("console", orders(), run_id=str(uuid.uuid4()), pipeline="p", parent_run_id="abc",
                        parent_job="x")
    with pytest.raises(ConfigError, match="go together"):
        E.build_emitter("console", orders(), run_id=str(uuid.uuid4()), pipeline="p", parent_run_id=str(uuid.uuid4()))
    monkeypatch.setenv(E.PARENT_ENV, "airflow-only")
    with pytest.raises(ConfigError, match="OPENLINEAGE_PARENT_ID"):
        E.build_emitter("console", orders(), run_id=str(uuid.uuid4()), pipeline="p")


# --------------------------------------------------------------------------- transport specs


def test_lineage_specs():
    assert E.build_emitter("none", orders(), run_id=str(uuid.uuid4()), pipeline="p") is None
    assert E.build_emitter(None, orders(), run_id=str(uuid.uuid4()), pipeline="p") is not None  # standard sources
    assert E.transport_config("console") == {"type": "console"}
    assert E.transport_config("https://gms.example:8443/openapi/openlineage/api/v1/lineage")["url"] == (
        "https://gms.example:8443")
    assert E.transport_config("http://marquez:5000")["endpoint"] == "/api/v1/lineage"
    with pytest.raises(ConfigError, match="expected file:PATH"):
        E.transport_config("fle:/tmp/x")


@pytest.mark.parametrize(("spec", "error"), [
    ("http://", "--lineage 'http://': the URL names no host"),
    ("http://exa mple:5000/x", "--lineage 'http://exa mple:5000/x': the URL holds whitespace"),
    ("https://gms.example:99999", "--lineage 'https://gms.example:99999': the URL has a port that is not a number "
                                  "from 1 to 65535"),
])
def test_an_http_spec_without_a_usable_host_is_refused_before_anything_runs(spec, error):
    with pytest.raises(ConfigError) as info:
        E.transport_config(spec)
    assert str(info.value) == error


def test_an_openlineage_yml_is_read_as_utf8_and_its_http_url_checked(tmp_path):
    config = tmp_path / "openlineage.yml"
    config.write_text("transport:\n  type: http\n  url: 'http://'\n")
    with pytest.raises(ConfigError) as info:
        E.transport_config(str(config))
    assert str(info.value) == f"{config}: transport.url: the URL names no host"
    config.write_bytes(b"transport:\n  type: http\n  url: http://h:5000\n  auth: {type: api_key, apiKey: k\xff}\n")
    with pytest.raises(ConfigError) as info:
        E.transport_config(str(config))
    assert str(info.value) == f"{config}: OpenLineage config is not UTF-8 text"


def test_standard_openlineage_env_config_is_used(tmp_path, monkeypatch):
    path = tmp_path / "env.jsonl"
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "file")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__LOG_FILE_PATH", str(path))
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__APPEND", "true")
    emitter = E.build_emitter("default", orders(), run_id=str(uuid.uuid4()), pipeline="p")
    emitter.start()
    assert [e["eventType"] for e in read_events(path)] == ["START"]


CONSUMERS = [
    # consumer, --lineage URL, the endpoint it must hit
    ("marquez", "http://marquez.example:5000", "http://marquez.example:5000/api/v1/lineage"),
    ("datahub", "http://gms.example:8080/openapi/openlineage/api/v1/lineage",
     "http://gms.example:8080/openapi/openlineage/api/v1/lineage"),
    ("openmetadata", "https://om.example:8585/api/v1/openlineage/lineage",
     "https://om.example:8585/api/v1/openlineage/lineage"),
]


@pytest.mark.parametrize(("consumer", "spec", "endpoint"), CONSUMERS, ids=[c[0] for c in CONSUMERS])
@responses.activate
def test_http_transport_posts_to_each_consumer_endpoint_with_bearer_auth(consumer, spec, endpoint, monkeypatch,
                                                                         caplog):
    monkeypatch.setenv(E.API_KEY_ENV, TOKEN)
    responses.add(responses.POST, endpoint, status=200 if consumer != "marquez" else 201)
    contract, run_id = orders(), str(uuid.uuid4())
    emitter = E.build_emitter(spec, contract, run_id=run_id, pipeline="seed")
    caplog.set_level(logging.DEBUG)
    emitter.start(input_namespace="file", input_name="/data/orders.csv")
    emitter.complete(seed_result(contract, run_id), outputs=[{"namespace": "file", "name": "/lake/orders", "rows": 1,
                                                               "kind": "target"}])
    assert emitter.failures == 0
    assert [c.request.url for c in responses.calls] == [endpoint, endpoint]
    for call in responses.calls:
        assert call.request.headers["Authorization"] == f"Bearer {TOKEN}"
        assert call.request.headers["Content-Type"] == "application/json"
        body = call.request.body
        assert TOKEN not in (body.decode() if isinstance(body, bytes) else body)
    body = json.loads(responses.calls[1].request.body)
    assert body["eventType"] == "COMPLETE" and body["run"]["runId"] == run_id
    assert (body["inputs"][0]["namespace"], body["inputs"][0]["name"]) == ("file", "/data/orders.csv")
    unique = by_name(body["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"])["pedido_id_unique"]
    assert (unique["success"], unique["actual"]) == (False, "2")
    assert validation_errors(body) == []
    assert TOKEN not in caplog.text


@responses.activate
def test_a_failing_transport_does_not_fail_the_run_and_leaks_no_token(monkeypatch, caplog):
    monkeypatch.setenv(E.API_KEY_ENV, TOKEN)
    url = "http://marquez.example:5000/api/v1/lineage"
    responses.add(responses.POST, url, status=503)
    contract, run_id = orders(), str(uuid.uuid4())
    emitter = E.build_emitter("http://marquez.example:5000", contract, run_id=run_id, pipeline="p")
    with caplog.at_level(logging.WARNING, logger="dq_governance.lineage.emit"):
        emitter.start()
        emitter.fail(seed_result(contract, run_id), "quality gate blocked publication")
    assert emitter.failures == 2 and emitter.emitted == []
    warnings = [r.getMessage() for r in caplog.records if r.name == "dq_governance.lineage.emit"]
    assert len(warnings) == 2 and all("not emitted" in w for w in warnings)
    assert TOKEN not in caplog.text


@responses.activate
def test_credentials_in_an_openlineage_env_url_never_reach_the_logs(monkeypatch, caplog):
    # The standard sources are the user's (no spec of ours may carry `user:password@`), but the client's
    # transport logs its URL at debug level, which `dqgov -vv` shows.
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "http")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__URL", "http://svc:PASSWORD-9@marquez.example:5000/x?code=QUERY-7")
    responses.add(responses.POST, re.compile(r"http://.*marquez\.example:5000/"), status=201)
    contract, run_id = orders(), str(uuid.uuid4())
    caplog.set_level(logging.DEBUG)
    emitter = E.build_emitter("default", contract, run_id=run_id, pipeline="p")
    emitter.start()
    assert emitter.failures == 0 and len(responses.calls) == 1
    assert "marquez.example:5000" in caplog.text  # the line is kept, without what follows `//` up to `@`
    assert "PASSWORD-9" not in caplog.text and "QUERY-7" not in caplog.text


@responses.activate
def test_strict_mode_raises_a_lineage_error():
    responses.add(responses.POST, "http://marquez.example:5000/api/v1/lineage", body=ConnectionError("refused"))
    emitter = E.build_emitter("http://marquez.example:5000", orders(), run_id=str(uuid.uuid4()), pipeline="p",
                              strict=True)
    with pytest.raises(LineageError, match="START event .* not emitted"):
        emitter.start()


def test_unwritable_file_transport_is_logged_not_raised(tmp_path, caplog):
    target = tmp_path / "dir-not-file"
    emitter = E.build_emitter(f"file:{target}", orders(), run_id=str(uuid.uuid4()), pipeline="p")
    target.mkdir()  # the path is now a directory: every write fails
    with caplog.at_level(logging.WARNING):
        emitter.start()
    assert emitter.failures == 1 and "START event" in caplog.text


def test_dataset_identity_follows_openlineage_naming():
    csv = REPO / "examples" / "data" / "orders.csv"
    assert F.dataset_identity(str(csv)) == ("file", str(csv))
    assert F.dataset_identity("s3a://lake/raw/orders") == ("s3://lake", "raw/orders")
    assert F.dataset_identity("hdfs://nn:8020/warehouse/orders") == ("hdfs://nn:8020", "/warehouse/orders")
    assert F.dataset_identity("file:/tmp/x.csv") == ("file", "/tmp/x.csv")
    assert F.normalize_name("dqgov orders check") == "dqgov_orders_check"
    assert F.normalize_name("OrdersCheck-v2") == "orders_check_v2"


def test_fail_message_hides_quoted_values_but_keeps_identifiers(tmp_path):
    path = tmp_path / "e.jsonl"
    emitter = E.build_emitter(f"file:{path}", orders(), run_id=str(uuid.uuid4()), pipeline="p")
    emitter.fail(None, "[CAST_INVALID_INPUT] The value 'ana@example.com' of the type \"STRING\" cannot be cast "
                       "for column 'email'\n\tat org.apache.spark...")
    [event] = read_events(path)
    message = event["run"]["facets"]["errorMessage"]["message"]
    assert message == ("[CAST_INVALID_INPUT] The value '<redacted>' of the type '<redacted>' cannot be cast "
                       "for column 'email'")
    assert "stackTrace" not in event["run"]["facets"]["errorMessage"]
    assert validation_errors(event) == []


def test_redact_strips_userinfo_and_query_strings_anywhere_in_text():
    text = "POST https://bob:s3cr3t@gms.example/api?token=abc123 failed; retry http://x.example/p?k=v"
    assert E.redact(text) == "POST https://gms.example/api failed; retry http://x.example/p"


def test_object_store_input_names_drop_the_leading_slash(tmp_path):
    path = tmp_path / "e.jsonl"
    E.build_emitter(f"file:{path}", orders(), run_id=str(uuid.uuid4()), pipeline="p").start(
        input_namespace="s3://lake", input_name="/raw/orders")
    assert read_events(path)[0]["inputs"][0]["name"] == "raw/orders"


def test_nested_fields_keep_their_types_in_the_schema_facet():
    from pyspark.sql.types import (  # types only, no JVM
        ArrayType, DecimalType, LongType, StringType, StructField, StructType)

    doc = yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text())
    doc["schema"]["fields"].append({"name": "entrega", "type": "struct<cep:string,numero:long>",
                                    "description": "Delivery address",
                                    "fields": [{"name": "cep", "type": "string", "pii": True},
                                               {"name": "numero", "type": "long"}]})
    contract = Contract.model_validate(doc)
    [entrega] = [f for f in F.schema_facet(contract).fields if f.name == "entrega"]
    assert [(f.name, f.type) for f in entrega.fields] == [("cep", "string"), ("numero", "long")]
    spark_schema = StructType([StructField("entrega", ArrayType(StructType([
        StructField("cep", StringType()), StructField("numero", LongType())])))])
    [field] = F.schema_facet(contract, spark_schema).fields
    # named as the Spark listener names them, nested fields listed under the array of structs
    assert (field.type, field.description) == ("array", "Delivery address")
    assert [(f.name, f.type) for f in field.fields] == [("cep", "string"), ("numero", "long")]
    assert F.spark_type_name(DecimalType(12, 2)) == "decimal(12,2)"
    assert ("pii", "true", "entrega.cep") in {(t.key, t.value, t.field) for t in F.tags_facet(contract).tags}


def test_event_modules_do_not_import_spark():
    import subprocess
    import sys

    code = ("import sys, dq_governance.lineage.emit, dq_governance.lineage.facets; "
            "sys.exit(1 if 'pyspark' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO).returncode == 0


def test_customers_tags_follow_the_masking_policy_and_unmasked_outputs_say_so(tmp_path):
    from dq_governance.contracts.load import load_contract

    contract = load_contract(str(REPO / "contracts" / "customers.yaml"))
    masking = {(t.field, t.value) for t in F.tags_facet(contract).tags if t.key == "masking"}
    assert masking == {("nome", "redact"), ("cpf", "hmac"), ("email", "partial"), ("telefone", "tokenize"),
                       ("data_nascimento", "generalize"), ("cep", "generalize")}
    pii = {t.field for t in F.tags_facet(contract).tags if t.key == "pii"}
    assert pii == {"nome", "cpf", "email", "telefone", "data_nascimento", "cep"}
    # a run published with masking disabled: outputs carry no masking tag and no masking flag
    run_id = str(uuid.uuid4())
    result = seed_result(orders(), run_id)
    result.masking = "disabled"
    path = tmp_path / "e.jsonl"
    emitter = E.build_emitter(f"file:{path}", orders(), run_id=run_id, pipeline="p")
    emitter.complete(result, outputs=[{"namespace": "file", "name": "/lake/o", "rows": 1, "kind": "target"}])
    [event] = read_events(path)
    out = event["outputs"][0]["facets"]
    assert not [t for t in out["tags"]["tags"] if t["key"] == "masking"]
    assert out["columnLineage"]["fields"]["email"]["inputFields"][0]["transformations"][0]["masking"] is False
    assert ("masking", "hmac", "email") in {(t["key"], t["value"], t.get("field"))
                                             for t in event["inputs"][0]["facets"]["tags"]["tags"]}


@pytest.mark.spark
def test_a_catalog_table_input_is_named_by_its_location_with_its_table_as_a_symlink(spark, tmp_path):
    """As the Spark listener names a table (its location; `db.table` a symlink), so the check's quality and contract
    land on the node that holds the table's real consumers."""
    import dq_governance

    table = "default.lineage_table_input"
    spark.createDataFrame([(1,), (2,)], "id long").write.mode("overwrite").saveAsTable(table)
    try:
        contract = Contract.model_validate({
            "contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "curated.t", "table": table},
            "schema": {"fields": [{"name": "id", "type": "long"}]}})
        events = tmp_path / "events.jsonl"
        dq_governance.run(spark.table(table), contract, source=table, lineage=f"file:{events}",
                          report=str(tmp_path / "report"))
        location = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").where("col_name = 'Location'").first()[1]
        warehouse = spark.conf.get("spark.sql.warehouse.dir")
        sent = [json.loads(line) for line in events.read_text().splitlines()]
        assert [e["eventType"] for e in sent] == ["START", "COMPLETE"]
        for event in sent:
            assert validation_errors(event) == []
            (read,) = event["inputs"]
            assert (read["namespace"], read["name"]) == ("file", location.removeprefix("file:"))
            (identifier,) = read["facets"]["symlinks"]["identifiers"]
            assert identifier == {"namespace": "file:" + warehouse.removeprefix("file:").rstrip("/"),
                                  "name": table, "type": "TABLE"}
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")

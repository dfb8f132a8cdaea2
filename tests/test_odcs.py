"""ODCS v3.1.0 / v3.0.x: schema validation, import, export and round trips (no Spark)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft201909Validator

from dq_governance.contracts.model import Contract
from dq_governance.contracts.odcs import (
    contract_to_odcs,
    is_odcs,
    odcs_issues,
    odcs_to_contract,
    schema_for,
)
from dq_governance.errors import ContractError

REPO = Path(__file__).resolve().parent.parent
CONTRACTS = REPO / "contracts"
REFERENCE = REPO.parent / "shared" / "reference" / "odcs"
NATIVE_EXAMPLES = sorted(p for p in CONTRACTS.glob("*.yaml") if not p.name.endswith(".odcs.yaml"))
ODCS_EXAMPLES = sorted(CONTRACTS.glob("*.odcs.yaml"))


def native(path: Path) -> Contract:
    return Contract.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def read(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def validates_v310(doc: dict) -> list[str]:
    """Errors of the official v3.1.0 schema, applied directly with jsonschema (not through odcs_issues)."""
    validator = Draft201909Validator(schema_for("v3.1.0"))
    return [e.message for e in validator.iter_errors(json.loads(json.dumps(doc)))]


def test_examples_exist() -> None:
    assert [p.name for p in NATIVE_EXAMPLES] == ["customers.yaml", "orders.yaml", "sales.yaml"]
    assert [p.name for p in ODCS_EXAMPLES] == ["full-example.odcs.yaml", "orders.odcs.yaml"]


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="reference material not checked out next to the repo")
@pytest.mark.parametrize("name", ["odcs-json-schema-v3.1.0.json", "odcs-json-schema-v3.0.2.json"])
def test_vendored_schemas_are_the_official_files(name: str) -> None:
    vendored = REPO / "dq_governance" / "contracts" / "schemas" / name
    assert vendored.read_bytes() == (REFERENCE / name).read_bytes()


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="reference material not checked out next to the repo")
def test_full_example_is_a_copy_of_the_reference() -> None:
    assert (CONTRACTS / "full-example.odcs.yaml").read_bytes() == (REFERENCE / "full-example.odcs.yaml").read_bytes()


# --------------------------------------------------------------------------- detection, validation


def test_is_odcs() -> None:
    assert is_odcs({"apiVersion": "v3.1.0", "kind": "DataContract"})
    assert is_odcs({"apiVersion": "v3.0.2", "kind": "DataContract"})
    assert not is_odcs({"apiVersion": "v2.2.2", "kind": "DataContract"})
    assert not is_odcs({"apiVersion": "v3.1.0", "kind": "Other"})
    assert not is_odcs(read(CONTRACTS / "orders.yaml"))
    assert not is_odcs([{"apiVersion": "v3.1.0"}])


def test_examples_validate() -> None:
    for path in ODCS_EXAMPLES:
        assert odcs_issues(read(path)) == [], path.name
    table_column = {
        "version": "1.0.0", "kind": "DataContract", "id": "53581432-6c55-4ba2-a65f-72344a91553b",
        "status": "active", "name": "my_table", "apiVersion": "v3.0.2",
        "schema": [{"name": "tbl", "physicalType": "table", "properties": [
            {"name": "rcvr_cntry_code", "logicalType": "string", "physicalType": "varchar(2)"}]}],
    }
    assert odcs_issues(table_column) == []


def test_issues_name_the_path_and_the_problem() -> None:
    doc = read(CONTRACTS / "orders.odcs.yaml")
    del doc["status"]
    doc["schema"][0]["properties"][1]["colour"] = "red"
    doc["schema"][0]["quality"][0]["mustBe"] = 5  # two operators: the schema allows exactly one
    issues = odcs_issues(doc)
    assert issues == [
        ((), "'status' is a required property"),
        (("schema", 0, "properties", 1), "Unevaluated properties are not allowed ('colour' was unexpected)"),
        (("schema", 0, "quality", 0), "a quality check takes exactly one operator, found mustBeGreaterOrEqualTo, mustBe"),
    ]


def test_v3_0_documents_use_the_v3_0_2_schema() -> None:
    doc = {"apiVersion": "v3.0.2", "kind": "DataContract", "id": "x", "version": "1.0.0", "status": "draft",
           "schema": [{"name": "t", "properties": [{"name": "ts", "logicalType": "timestamp"}]}]}
    # `timestamp` arrived in v3.1.0: the v3.0.2 enum rejects it
    path, message = odcs_issues(doc)[0]
    assert path == ("schema", 0, "properties", 0, "logicalType")
    assert message.startswith("'timestamp' is not one of ['string', 'date', 'number'")
    assert odcs_issues({**doc, "apiVersion": "v2.2.2"}) == [
        (("apiVersion",), "unsupported ODCS apiVersion 'v2.2.2'; expected v3.1.0 or v3.0.0 to v3.0.2")]


def test_invalid_document_raises_contract_error_with_field() -> None:
    doc = read(CONTRACTS / "orders.odcs.yaml")
    doc["schema"][0]["properties"][0]["required"] = "yes"
    with pytest.raises(ContractError) as info:
        odcs_to_contract(doc)
    assert info.value.field == "schema.0.properties.0.required"
    assert info.value.message == "'yes' is not of type 'boolean'"


def test_non_semver_version_is_a_contract_error() -> None:
    doc = read(CONTRACTS / "orders.odcs.yaml")
    doc["version"] = "v1"
    with pytest.raises(ContractError) as info:
        odcs_to_contract(doc)
    assert info.value.field == "contract.version"
    assert "is not semantic" in info.value.message


# --------------------------------------------------------------------------- round trips


def test_char_and_varchar_lengths_survive_the_round_trip() -> None:
    # the import read varchar(10) back as string: the diff saw a widening and the length went unchecked
    contract = Contract.model_validate({
        "contract": {"name": "vc", "version": "1.0.0"}, "dataset": {"name": "vc"},
        "schema": {"fields": [{"name": "code", "type": "varchar(10)"}, {"name": "uf", "type": "char(2)"}]}})
    again = odcs_to_contract(yaml.safe_load(yaml.safe_dump(contract_to_odcs(contract), sort_keys=False)))
    assert again == contract and [f.type for f in again.fields] == ["varchar(10)", "char(2)"]


def test_a_nested_varchar_is_string_in_its_parents_type_and_keeps_its_length_as_a_field() -> None:
    # struct<zip:varchar(5)> and array<varchar(20)> are types the run refuses (casting.parse_type)
    doc = {"version": "1.0.0", "kind": "DataContract", "id": "x", "status": "active", "name": "t",
           "apiVersion": "v3.0.2", "schema": [{"name": "tbl", "physicalType": "table", "properties": [
               {"name": "addr", "logicalType": "object", "properties": [
                   {"name": "zip", "logicalType": "string", "physicalType": "varchar(5)"}]},
               {"name": "tags", "logicalType": "array", "items": {"logicalType": "string",
                                                                  "physicalType": "varchar(20)"}}]}]}
    contract = odcs_to_contract(doc)
    assert [(path, spec.type) for path, spec in contract.iter_fields()] == [
        ("addr", "struct<zip:string>"), ("addr.zip", "varchar(5)"), ("tags", "array<string>")]


@pytest.mark.parametrize("path", NATIVE_EXAMPLES, ids=lambda p: p.name)
def test_native_odcs_native_round_trip_is_equal(path: Path) -> None:
    contract = native(path)
    exported = contract_to_odcs(contract)
    assert exported["apiVersion"] == "v3.1.0"
    assert validates_v310(exported) == []
    assert odcs_issues(exported) == []
    # through YAML text too, as `dqgov convert` writes it
    again = odcs_to_contract(yaml.safe_load(yaml.safe_dump(exported, sort_keys=False)))
    assert again == contract
    assert [r.model_dump() for r in again.rules()] == [r.model_dump() for r in contract.rules()]


@pytest.mark.parametrize("path", ODCS_EXAMPLES, ids=lambda p: p.name)
def test_odcs_examples_export_valid_v310_and_are_stable(path: Path) -> None:
    contract = odcs_to_contract(read(path))
    exported = contract_to_odcs(contract)
    assert validates_v310(exported) == []
    assert odcs_to_contract(exported) == contract


def _normal(value: object, drop_check_names: bool = False) -> object:
    """Order-free form of a document: lists sorted, optionally without the names export gives checks."""
    if isinstance(value, dict):
        out = {k: _normal(v, drop_check_names) for k, v in value.items()}
        if drop_check_names and ("metric" in out or out.get("type") in ("sql", "custom")):
            out.pop("name", None)
        return out
    if isinstance(value, list):
        items = [_normal(v, drop_check_names) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    return value


def test_full_example_loses_nothing() -> None:
    original = read(CONTRACTS / "full-example.odcs.yaml")
    exported = contract_to_odcs(odcs_to_contract(original))
    assert validates_v310(exported) == []
    # export adds the contract name (ODCS makes it optional, the model requires it) and check names
    assert exported.pop("name") == "tbl"
    assert _normal(exported, True) == _normal(json.loads(json.dumps(original)), True)


def test_full_example_mapping() -> None:
    contract = odcs_to_contract(read(CONTRACTS / "full-example.odcs.yaml"))
    assert contract.contract.model_dump(exclude_none=True) == {
        "name": "tbl", "version": "1.1.0", "owner": "my-team", "domain": "seller",
        "description": "Views built on top of the seller tables.", "id": "53581432-6c55-4ba2-a65f-72344a91553a",
        "status": "active"}
    assert (contract.dataset.name, contract.dataset.table, contract.dataset.tags) == ("tbl", "tbl_1",
                                                                                      ["finance", "payments"])
    assert [(f.name, f.type, f.primary_key, f.classification) for f in contract.fields] == [
        ("transaction_reference_date", "date", False, "public"),
        # a physical length limit stays one: the type rule checks it (Spark itself reads varchar(n) as string)
        ("rcvr_id", "varchar(18)", True, "restricted"),
        ("rcvr_cntry_code", "varchar(2)", False, "public"),
    ]
    rules = {r.name: r for r in contract.rules()}
    null_check = rules["rcvr_cntry_code_missing_count"]
    assert (null_check.type, null_check.column, null_check.must_be, null_check.dimension) == (
        "missing_count", "rcvr_cntry_code", "= 0", "completeness")
    assert (rules["row_count"].type, rules["row_count"].must_be) == ("row_count", "> 1000000")
    assert "rcvr_id_not_null" in rules and "rcvr_id_unique" in rules  # primaryKey
    assert contract.service_level is not None and contract.service_level.latency == "4d"
    assert contract.governance is not None and contract.governance.retention == "1095d"  # 3 y
    assert contract.governance.purpose == "Predict sales over time"
    assert contract.roles is not None and contract.roles.owner is not None
    assert contract.roles.owner.name == "daustin"
    assert [p.name for p in contract.roles.consumers] == [
        "microstrategy_user_opr", "bq_queryman_user_opr", "risk_data_access_opr", "bq_unica_user_opr"]
    odcs = contract.extensions["odcs"]
    assert odcs["objects"][0]["name"] == "receivers"
    assert "physicalType" not in odcs["properties"]["rcvr_id"]  # varchar(18) is the field's own type
    assert odcs["quality"]["row_count"] == {
        "type": "library", "severity": "error", "method": "reconciliation", "businessImpact": "operational",
        "schedule": "0 20 * * *", "scheduler": "cron"}
    assert [s["property"] for s in odcs["otherSla"]] == [
        "generalAvailability", "endOfSupport", "endOfLife", "frequency", "timeOfAvailability", "timeOfAvailability"]


# --------------------------------------------------------------------------- exact mappings


def test_orders_odcs_gives_the_same_rules_as_orders_yaml() -> None:
    odcs = odcs_to_contract(read(CONTRACTS / "orders.odcs.yaml"))
    ours = native(CONTRACTS / "orders.yaml")
    assert [r.model_dump() for r in odcs.rules()] == [r.model_dump() for r in ours.rules()]
    assert [r.name for r in odcs.rules()] == [
        "pedido_id_type", "pedido_id_not_null", "pedido_id_unique", "cliente_id_type", "cliente_id_not_null",
        "status_type", "status_not_null", "status_allowed_values", "valor_type", "valor_not_null", "valor_range",
        "data_pedido_type", "data_pedido_not_null", "email_type", "email_format", "row_count"]
    assert odcs.quality == ours.quality
    assert odcs.quality.on_failure == "block_publication" and odcs.quality.minimum_valid_ratio == 0.99
    # the same contract apart from the identity ODCS requires
    assert odcs.model_copy(update={"contract": ours.contract}) == ours
    assert (odcs.contract.id, odcs.contract.status) == ("6f1c2a7e-3b9d-4c1e-9a55-0d4e8b7f2a10", "active")


def test_customers_export_mapping() -> None:
    doc = contract_to_odcs(native(CONTRACTS / "customers.yaml"))
    obj = doc["schema"][0]
    props = {p["name"]: p for p in obj["properties"]}
    assert props["cliente_id"] == {"name": "cliente_id", "logicalType": "integer", "physicalType": "long",
                                   "description": "Customer identifier", "required": True, "unique": True}
    assert props["cpf"]["logicalTypeOptions"] == {"format": "cpf"}
    assert props["cpf"]["classification"] == "restricted"
    assert props["cpf"]["customProperties"] == [{"property": "pii", "value": True},
                                                {"property": "masking", "value": "hmac"}]
    assert props["email"]["quality"] == [{
        "name": "missing_email", "metric": "nullValues", "unit": "percent", "mustBeLessThan": 50,
        "customProperties": [{"property": "warn", "value": "= 0"}]}]
    assert props["segmento"]["quality"] == [
        {"metric": "invalidValues", "arguments": {"validValues": ["VAREJO", "ATACADO", "PREMIUM"]}, "mustBe": 0}]
    assert props["limite_credito"]["logicalTypeOptions"] == {"minimum": 0, "maximum": 100000}
    assert props["atualizado_em"]["logicalTypeOptions"] == {"format": "yyyy-MM-dd HH:mm:ss"}
    checks = {c["name"]: c for c in obj["quality"]}
    assert checks["volume_sla"] == {"name": "volume_sla", "metric": "rowCount", "mustBeGreaterOrEqualTo": 1,
                                    "dimension": "completeness"}
    assert checks["nome_data_nascimento_duplicate_count"] == {
        "name": "nome_data_nascimento_duplicate_count", "metric": "duplicateValues",
        "arguments": {"properties": ["nome", "data_nascimento"]}, "mustBe": 0, "severity": "warning"}
    assert checks["limite_credito_avg"] == {
        "name": "limite_credito_avg", "type": "custom", "engine": "dq-governance",
        "implementation": {"type": "avg", "column": "limite_credito", "must_be": "between 0 and 50000"}}
    assert doc["slaProperties"] == [
        {"property": "freshness", "value": 3650, "unit": "d", "element": "curated.customers.atualizado_em"},
        {"property": "retention", "value": 1825, "unit": "d"}]
    cps = {c["property"]: c["value"] for c in doc["customProperties"]}
    assert cps["freshnessTime"] == "ingestion" and cps["legalBasis"] == "consent"
    assert cps["dqgovDefaults"] == ["id", "status"]
    assert doc["team"]["name"] == "team:crm-data-team"
    assert doc["team"]["members"][0] == {"username": "crm-data-team", "role": "owner", "customProperties": [
        {"property": "contact", "value": "crm-data@example.com"}]}
    assert doc["roles"] == [{"role": "marketing-analytics", "access": "read", "customProperties": [
        {"property": "contact", "value": "marketing@example.com"}]}]


def test_sales_sql_rule_uses_the_odcs_placeholder() -> None:
    doc = contract_to_odcs(native(CONTRACTS / "sales.yaml"))
    sql = [c for c in doc["schema"][0]["quality"] if c.get("type") == "sql"]
    assert sql == [{"name": "one_sale_per_day_at_least", "type": "sql",
                    "query": "SELECT COUNT(DISTINCT data_venda) >= 1 FROM {object}", "mustBe": True}]


def test_v3_0_2_import() -> None:
    doc = {
        "apiVersion": "v3.0.2", "kind": "DataContract", "id": "c-1", "name": "payments", "version": "2.0.0",
        "status": "active",
        "team": [{"username": "ana", "role": "Data Steward"}, {"username": "rui", "role": "owner"}],
        "schema": [{"name": "payments", "physicalType": "table", "properties": [
            {"name": "id", "logicalType": "integer", "physicalType": "INT", "required": True,
             "quality": [{"rule": "duplicateCount", "mustBe": 0}]},
            {"name": "amount", "logicalType": "number", "physicalType": "DOUBLE",
             "logicalTypeOptions": {"minimum": 0, "exclusiveMinimum": True, "maximum": 10}},
            {"name": "kind", "logicalType": "string", "physicalType": "VARCHAR(8)",
             "quality": [{"rule": "validValues", "validValues": ["A", "B"], "mustBe": 0, "name": "kind_ok"}]},
        ], "quality": [{"rule": "rowCount", "mustBeGreaterThan": 0, "type": "library"}]}],
    }
    contract = odcs_to_contract(doc)
    fields = {f.name: f for f in contract.fields}
    assert (fields["id"].type, fields["id"].required) == ("INT", True)
    assert (fields["amount"].minimum, fields["amount"].exclusive_minimum, fields["amount"].maximum) == (0, True, 10)
    assert fields["kind"].type == "varchar(8)"  # VARCHAR(8) as written stays in physicalType
    assert contract.roles is not None and contract.roles.owner is not None and contract.roles.steward is not None
    assert (contract.roles.owner.name, contract.roles.steward.name) == ("rui", "ana")
    dumped = [r.model_dump(exclude_defaults=True) for r in contract.quality.rules]
    assert dumped == [
        {"type": "duplicate_count", "column": "id", "must_be": "= 0"},
        {"type": "invalid_count", "name": "kind_ok", "column": "kind", "must_be": "= 0", "valid_values": ["A", "B"]},
        {"type": "row_count", "name": "row_count", "must_be": "> 0"},
    ]
    exported = contract_to_odcs(contract)
    assert validates_v310(exported) == []
    props = {p["name"]: p for p in exported["schema"][0]["properties"]}
    assert props["amount"]["logicalTypeOptions"] == {"exclusiveMinimum": 0, "maximum": 10}  # v3.1 form
    assert props["kind"]["physicalType"] == "VARCHAR(8)"
    assert exported["team"]["members"][0] == {"username": "rui", "role": "owner"}
    assert exported["team"]["members"][1] == {"username": "ana", "role": "Data Steward"}


def test_sql_check_with_operator_becomes_a_boolean_query() -> None:
    doc = read(CONTRACTS / "orders.odcs.yaml")
    doc["schema"][0]["properties"][0]["quality"] = [
        {"type": "sql", "query": "SELECT COUNT(*) FROM ${table} WHERE {property} < 0", "mustBeLessThan": 1,
         "severity": "info"}]
    contract = odcs_to_contract(doc)
    rule = contract.quality.rules[0]
    assert rule.type == "sql"
    assert rule.query == "SELECT (SELECT COUNT(*) FROM _validation_df WHERE pedido_id < 0) < 1"
    assert rule.severity == "warn"
    back = contract_to_odcs(contract)["schema"][0]["quality"]
    # a dataset-level rule now; the source's own severity word is kept
    assert back[0] == {"name": "sql", "type": "sql", "mustBe": True, "severity": "info",
                       "query": "SELECT (SELECT COUNT(*) FROM {object} WHERE pedido_id < 0) < 1"}


def test_custom_checks_of_other_engines_are_kept_verbatim() -> None:
    doc = read(CONTRACTS / "orders.odcs.yaml")
    soda = {"type": "custom", "engine": "soda", "implementation": "checks for orders:\n  - row_count > 0"}
    text = {"type": "text", "description": "Orders are never back-dated."}
    doc["schema"][0]["quality"] += [soda, text]
    contract = odcs_to_contract(doc)
    assert contract.extensions["odcs"]["checks"] == [{"at": "", "check": soda}, {"at": "", "check": text}]
    assert [r.type for r in contract.quality.rules] == ["row_count"]
    assert contract_to_odcs(contract)["schema"][0]["quality"][-2:] == [soda, text]


def test_rule_order_survives_property_and_schema_placement() -> None:
    contract = native(CONTRACTS / "orders.yaml")
    rules = [
        {"type": "row_count", "must_be": ">= 1"},
        {"type": "missing_percent", "column": "email", "must_be": "<1%", "warn": "= 0", "filter": "status = 'PAGO'",
         "action": "fail", "dimension": "integrity"},
        {"type": "not_null", "columns": ["pedido_id", "cliente_id"], "severity": "warn"},
        {"type": "invalid_count", "column": "status", "valid_regex": "^[A-Z]+$", "must_be": "<= 2"},
    ]
    changed = Contract.model_validate({**contract.model_dump(by_alias=True, exclude_defaults=True),
                                       "quality": {"rules": rules}})
    exported = contract_to_odcs(changed)
    assert validates_v310(exported) == []
    cps = {c["property"]: c["value"] for c in exported["customProperties"]}
    assert cps["ruleOrder"] == [3, 1, 0, 2]  # status's check, email's, then the schema-level ones
    email = [p for p in exported["schema"][0]["properties"] if p["name"] == "email"][0]
    assert email["quality"] == [{
        "name": "email_missing_percent", "metric": "nullValues", "unit": "percent", "mustBeLessThan": 1,
        "customProperties": [{"property": "thresholdText", "value": "<1%"}, {"property": "warn", "value": "= 0"},
                             {"property": "dimension", "value": "integrity"},
                             {"property": "action", "value": "fail"},
                             {"property": "filter", "value": "status = 'PAGO'"}]}]
    assert odcs_to_contract(exported) == changed


def test_nested_struct_fields_round_trip() -> None:
    doc = {
        "contract": {"name": "events", "version": "0.1.0"}, "dataset": {"name": "raw.events"},
        "schema": {"fields": [
            {"name": "id", "type": "bigint", "required": True},
            {"name": "device", "type": "struct<os:string,ip:string>", "fields": [
                {"name": "os", "type": "string", "allowed_values": ["ios", "android"]},
                {"name": "ip", "type": "string", "format": "ipv4"}]},
            {"name": "tags", "type": "array<string>", "min_length": 1},
        ]},
        "quality": {"rules": [{"type": "missing_count", "column": "device.ip", "must_be": "= 0"},
                              {"type": "unique", "column": "id"}]},
    }
    contract = Contract.model_validate(doc)
    exported = contract_to_odcs(contract)
    assert validates_v310(exported) == []
    device = exported["schema"][0]["properties"][1]
    assert device["logicalType"] == "object" and [p["name"] for p in device["properties"]] == ["os", "ip"]
    assert device["properties"][1]["quality"][0]["metric"] == "nullValues"
    tags = exported["schema"][0]["properties"][2]
    assert tags["logicalType"] == "array" and tags["customProperties"] == [{"property": "minLength", "value": 1}]
    assert odcs_to_contract(exported) == contract


def _with_property(prop: dict) -> dict:
    doc = read(CONTRACTS / "orders.odcs.yaml")
    doc["schema"][0]["properties"].append(prop)
    return doc


@pytest.mark.parametrize(("prop", "field", "message"), [
    ({"name": "attrs", "logicalType": "object"}, "logicalType",
     "object with no `properties` and no Spark physicalType (struct<...> or map<...>): the column's type is unknown"),
    ({"name": "attrs", "logicalType": "object", "physicalType": "OBJECT"}, "logicalType",
     "object with no `properties` and no Spark physicalType (struct<...> or map<...>): the column's type is unknown"),
    ({"name": "tags", "logicalType": "array"}, "logicalType",
     "array with no `items` and no Spark physicalType (array<...>): the element type is unknown"),
    ({"name": "tags", "logicalType": "array", "items": {"logicalType": "object"}}, "items.logicalType",
     "object with no `properties` and no Spark physicalType (struct<...> or map<...>): the column's type is unknown"),
])
def test_object_or_array_without_a_type_is_refused_not_read_as_string(prop: dict, field: str, message: str) -> None:
    # read as `string`, the column would be converted to its display text on publish
    doc = _with_property(prop)
    index = len(doc["schema"][0]["properties"]) - 1
    with pytest.raises(ContractError) as info:
        odcs_to_contract(doc)
    assert info.value.field == f"schema.0.properties.{index}.{field}"
    assert info.value.message == message


def test_object_and_array_types_come_from_properties_and_items() -> None:
    doc = _with_property({"name": "tags", "logicalType": "array", "items": {
        "logicalType": "object", "properties": [{"name": "code", "logicalType": "string"},
                                                {"name": "n", "logicalType": "integer"}]}})
    doc["schema"][0]["properties"].append({"name": "attrs", "logicalType": "object", "physicalType": "OBJECT",
                                           "properties": [{"name": "a", "physicalType": "int"}]})
    doc["schema"][0]["properties"].append({"name": "ids", "logicalType": "array", "physicalType": "array<int>"})
    types = {f.name: f.type for f in odcs_to_contract(doc).schema_.fields}
    assert types["tags"] == "array<struct<code:string,n:bigint>>"
    assert types["attrs"] == "struct<a:int>"
    assert types["ids"] == "array<int>"


def test_retention_in_ambiguous_months_is_rejected() -> None:
    doc = read(CONTRACTS / "orders.odcs.yaml")
    doc["slaProperties"][0] = {"property": "retention", "value": 6, "unit": "m"}
    with pytest.raises(ContractError) as info:
        odcs_to_contract(doc)
    assert info.value.field == "slaProperties.0.unit"
    assert info.value.message == "unit 'm' is ambiguous for retention; use 'min' or 'mo'"


def test_export_does_not_mutate_the_model() -> None:
    contract = odcs_to_contract(read(CONTRACTS / "full-example.odcs.yaml"))
    before = copy.deepcopy(contract.model_dump())
    contract_to_odcs(contract)
    contract_to_odcs(contract)
    assert contract.model_dump() == before

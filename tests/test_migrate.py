"""Migration formats: DQX checks YAML and the seed framework's `validations` JSON (no Spark)."""

from __future__ import annotations

import json

import pytest
import yaml

from dq_governance.contracts.migrate import dqx_to_contract, is_dqx, is_seed_validations, seed_to_contract
from dq_governance.contracts.odcs import contract_to_odcs, odcs_issues, odcs_to_contract
from dq_governance.errors import ContractError

DQX_YAML = r"""
- criticality: error
  check:
    function: is_not_null
    for_each_column: [customer_id, customer_name]
- criticality: warn
  name: name_present
  check:
    function: is_not_null_and_not_empty
    arguments:
      column: customer_name
      trim_strings: true
- criticality: warn
  filter: country = 'BR'
  user_metadata: {check_category: validity, steward: ana@example.com}
  name: status_known
  check:
    function: is_in_list
    arguments:
      column: status
      allowed: [NEW, PAID]
- check:
    function: is_in_range
    arguments:
      column: amount
      min_limit: 0
      max_limit: 1000
- check:
    function: is_not_less_than
    arguments:
      column: sale_date
      limit: 2023-01-01
- check:
    function: regex_match
    arguments:
      column: customer_email
      regex: '^[A-Za-z0-9._%+-]+@example\.com$'
- check:
    function: is_unique
    arguments:
      columns: [customer_id]
- check:
    function: foreign_key
    arguments:
      columns: [customer_id]
      ref_columns: [id]
      ref_table: main.crm.customers
- check:
    function: sql_expression
    arguments:
      expression: ends_at >= starts_at
      msg: contracts end after they start
- check:
    function: is_valid_date
    arguments:
      column: sale_date
      date_format: yyyy-MM-dd
- check:
    function: is_valid_ipv4_address
    arguments:
      column: ip
- check:
    function: is_aggr_not_greater_than
    arguments:
      column: amount
      aggr_type: avg
      limit: 500
- check:
    function: is_aggr_not_less_than
    arguments:
      column: "*"
      limit: 1
- check:
    function: is_valid_ipv6_address
    arguments:
      column: ip6
- check:
    function: compare_datasets
    arguments:
      columns: [id]
      ref_columns: [id]
      ref_table: main.crm.customers_snapshot
- check:
    function: is_aggr_not_greater_than
    arguments:
      column: amount
      aggr_type: sum
      group_by: [country]
      limit: 10
"""


def test_is_dqx() -> None:
    assert is_dqx(yaml.safe_load(DQX_YAML))
    assert not is_dqx({"contract": {"name": "x"}})
    assert not is_dqx([])
    assert not is_dqx([{"criticality": "error"}])


def test_dqx_mapped_and_unmapped_functions() -> None:
    contract, unmapped = dqx_to_contract(yaml.safe_load(DQX_YAML), "customers")
    assert unmapped == ["is_valid_ipv6_address", "compare_datasets", "is_aggr_not_greater_than"]
    assert (contract.name, contract.version, contract.dataset.name) == ("customers", "1.0.0", "customers")
    rules = [r.model_dump(exclude_defaults=True) for r in contract.quality.rules]
    assert rules == [
        {"type": "not_null", "column": "customer_id"},
        {"type": "not_null", "column": "customer_name"},
        {"type": "expression", "name": "name_present", "severity": "warn",
         "expression": "customer_name IS NOT NULL AND trim(CAST(customer_name AS STRING)) <> ''"},
        {"type": "allowed_values", "name": "status_known", "severity": "warn", "filter": "country = 'BR'",
         "column": "status", "values": ["NEW", "PAID"]},
        {"type": "range", "column": "amount", "min": 0, "max": 1000},
        {"type": "expression", "expression": "sale_date IS NULL OR (sale_date >= DATE '2023-01-01')"},
        {"type": "regex", "column": "customer_email", "pattern": r"^[A-Za-z0-9._%+-]+@example\.com$"},
        {"type": "unique", "column": "customer_id"},
        {"type": "foreign_key", "column": "customer_id",
         "reference": {"table": "main.crm.customers", "column": "id"}},
        {"type": "expression", "description": "contracts end after they start", "expression": "ends_at >= starts_at"},
        {"type": "format", "column": "sale_date", "format": "date", "date_format": "yyyy-MM-dd"},
        {"type": "format", "column": "ip", "format": "ipv4"},
        {"type": "avg", "column": "amount", "must_be": "<= 500"},
        {"type": "row_count", "must_be": ">= 1"},
    ]
    # nothing dropped: unmapped checks and user metadata stay in the contract
    kept = contract.extensions["dqx"]
    assert [item["check"]["function"] for item in kept["unmapped"]] == unmapped
    assert kept["user_metadata"] == {"status_known": {"check_category": "validity", "steward": "ana@example.com"}}
    assert [r.name for r in contract.rules()][:3] == ["customer_id_not_null", "customer_name_not_null",
                                                      "name_present"]


def test_dqx_older_names_and_arguments() -> None:
    doc = [
        {"criticality": "warn", "check": {"function": "value_is_in_list",
                                          "arguments": {"col_name": "kind", "allowed": ["a", "b"]}}},
        {"check": {"function": "not_less_than", "arguments": {"col_name": "qty", "limit": 1}}},
        {"check": {"function": "is_in_list", "arguments": {"column": "kind", "allowed": ["A"],
                                                           "case_sensitive": False}}},
        {"check": {"function": "is_unique", "arguments": {"columns": ["a", "b"], "nulls_distinct": False}}},
    ]
    contract, unmapped = dqx_to_contract(doc, "t")
    assert [r.model_dump(exclude_defaults=True) for r in contract.quality.rules] == [
        {"type": "allowed_values", "severity": "warn", "column": "kind", "values": ["a", "b"]},
        {"type": "range", "column": "qty", "min": 1},
        {"type": "expression", "expression": "kind IS NULL OR (lower(kind) IN (lower('A')))"},
    ]
    assert unmapped == ["is_unique"]  # nulls_distinct=False: null keys collide in DQX, never in our rule


def test_dqx_bad_criticality() -> None:
    with pytest.raises(ContractError) as info:
        dqx_to_contract([{"criticality": "fatal", "check": {"function": "is_not_null",
                                                            "arguments": {"column": "a"}}}], "t")
    assert info.value.field == "0.criticality"
    assert info.value.message == "unknown criticality 'fatal'; expected error or warn"


def test_dqx_contract_exports_to_valid_odcs() -> None:
    contract, _ = dqx_to_contract(yaml.safe_load(DQX_YAML), "customers")
    exported = contract_to_odcs(contract)
    assert odcs_issues(exported) == []
    assert odcs_to_contract(exported) == contract


# --------------------------------------------------------------------------- the seed framework

FOUR_RULES = """
{
  "validations": {
    "on_failure": "warn",
    "rules": [
      { "type": "row_count", "min": 1 },
      { "type": "not_null", "columns": ["id"] },
      { "type": "unique", "columns": ["id"] },
      { "type": "range", "column": "amount", "min": 0 }
    ]
  }
}
"""

WITH_OUTPUTS = """
{
  "validations": {
    "on_failure": "fail",
    "rules": [
      { "type": "not_null", "columns": ["id"] },
      { "type": "invalid_count", "column": "email", "valid_format": "email", "must_be": "= 0" },
      { "type": "missing_percent", "name": "missing cpf", "column": "cpf", "warn": "= 0", "must_be": "< 1%" },
      { "type": "sql", "query": "SELECT ABS(SUM(debit) - SUM(credit)) < 0.01 FROM _validation_df",
        "error_message": "Ledger does not balance" },
      { "type": "schema", "required_columns": ["id", "amount"], "column_types": { "id": "bigint", "amount": "double" } }
    ],
    "outputs": {
      "valid":   { "format": "delta", "path": "silver.orders_ok",         "mode": "overwrite" },
      "invalid": { "format": "delta", "path": "silver.orders_quarantine", "mode": "overwrite" }
    }
  },
  "output": { "format": "delta", "path": "analytics.orders", "mode": "merge", "options": { "merge_keys": ["order_id"] } }
}
"""


def test_is_seed_validations() -> None:
    assert is_seed_validations(json.loads(FOUR_RULES))
    assert not is_seed_validations({"validations": {"on_failure": "warn"}})
    assert not is_seed_validations([{"validations": {}}])


def test_seed_four_rules() -> None:
    contract = seed_to_contract(json.loads(FOUR_RULES), "orders")
    assert contract.quality.on_failure == "warn"
    assert [r.model_dump(exclude_defaults=True) for r in contract.quality.rules] == [
        {"type": "row_count", "min": 1},
        {"type": "not_null", "columns": ["id"]},
        {"type": "unique", "columns": ["id"]},
        {"type": "range", "column": "amount", "min": 0},
    ]
    assert [r.name for r in contract.rules()] == ["row_count", "id_not_null", "id_unique", "amount_range"]
    assert contract.extensions == {}


def test_seed_outputs_and_destination() -> None:
    contract = seed_to_contract(json.loads(WITH_OUTPUTS), "orders")
    assert contract.quality.on_failure == "fail"
    assert (contract.dataset.table, contract.dataset.format, contract.dataset.path) == ("analytics.orders", "delta",
                                                                                        None)
    names = [r.name for r in contract.rules()]
    assert names == ["id_not_null", "email_invalid_count", "missing cpf", "sql", "schema"]
    sql = contract.quality.rules[3]
    assert (sql.query, sql.error_message) == ("SELECT ABS(SUM(debit) - SUM(credit)) < 0.01 FROM _validation_df",
                                              "Ledger does not balance")
    seed = contract.extensions["seed"]
    assert seed["validations"]["outputs"]["invalid"] == {"format": "delta", "path": "silver.orders_quarantine",
                                                         "mode": "overwrite"}
    assert seed["output"]["options"] == {"merge_keys": ["order_id"]}
    exported = contract_to_odcs(contract)
    assert odcs_issues(exported) == []
    assert odcs_to_contract(exported) == contract


def test_seed_filter_is_not_a_rule() -> None:
    doc = {"validations": {"rules": [{"type": "not_null", "columns": ["id"]},
                                     {"type": "filter", "condition": "id IS NOT NULL"}]}}
    with pytest.raises(ContractError) as info:
        seed_to_contract(doc, "orders")
    assert info.value.field == "validations.rules.1.type"
    assert info.value.message == "unknown rule type 'filter' (`filter` is a transformation, not a validation)"


def test_seed_bad_threshold_is_a_contract_error() -> None:
    doc = {"validations": {"rules": [{"type": "avg", "column": "amount", "must_be": "about 10"}]}}
    with pytest.raises(ContractError) as info:
        seed_to_contract(doc, "orders")
    assert info.value.field == "quality.rules.0.avg.must_be"
    assert "invalid threshold 'about 10'" in info.value.message

"""Migration formats: DQX checks YAML and the seed framework's `validations` JSON (no Spark)."""

from __future__ import annotations

import json

import pytest
import yaml

from dq_governance.contracts.migrate import (
    SeedDestination,
    SeedPipeline,
    dqx_to_contract,
    is_dqx,
    is_seed_validations,
    seed_extension_issues,
    seed_issues,
    seed_pipeline,
    seed_to_contract,
)
from dq_governance.contracts.model import Contract
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
    contract, skipped = dqx_to_contract(yaml.safe_load(DQX_YAML), "customers")
    unmapped = [s.function for s in skipped]
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
    contract, skipped = dqx_to_contract(doc, "t")
    assert [r.model_dump(exclude_defaults=True) for r in contract.quality.rules] == [
        {"type": "allowed_values", "severity": "warn", "column": "kind", "values": ["a", "b"]},
        {"type": "range", "column": "qty", "min": 1},
        {"type": "expression", "expression": "kind IS NULL OR (lower(kind) IN (lower('A')))"},
    ]
    assert [s.function for s in skipped] == ["is_unique"]  # nulls_distinct=False: null keys collide in DQX, never in our rule


def test_a_dqx_argument_no_rule_honours_keeps_its_check_out_instead_of_dropping_the_argument() -> None:
    # each was imported as a rule that ignored the argument: a window, a row filter, a made-up argument
    doc = [
        {"check": {"function": "is_unique", "arguments": {"columns": ["id"], "window_spec": "created_at"}}},
        {"check": {"function": "is_aggr_not_greater_than",
                   "arguments": {"column": "*", "limit": 10, "row_filter": "status = 'X'"}}},
        {"check": {"function": "is_not_null", "arguments": {"col_name": "id", "bogus": 1}}},
        {"check": {"function": "sql_expression", "arguments": {"expression": "a > 0", "negate": True},
                   "for_each_column": ["a", "b"]}},
        {"check": {"function": "is_not_null", "arguments": {"col_name": "id"}}},
        # `columns` names DQX's result columns, nothing more: the check is imported
        {"check": {"function": "sql_expression", "arguments": {"expression": "a > 0", "columns": ["a"]}}},
    ]
    contract, skipped = dqx_to_contract(doc, "t")
    assert [(s.index, s.path, s.message) for s in skipped] == [
        (0, ("check", "arguments", "window_spec"),
         "DQX function `is_unique`: argument(s) `window_spec` have no equivalent in its rule; not imported"),
        (1, ("check", "arguments", "row_filter"), "DQX function `is_aggr_not_greater_than`: argument(s) "
         "`row_filter` have no equivalent in its rule; not imported"),
        (2, ("check", "arguments", "bogus"),
         "DQX function `is_not_null`: argument(s) `bogus` have no equivalent in its rule; not imported"),
        (3, ("check", "for_each_column"), "DQX function `sql_expression`: argument(s) `for_each_column` have no "
         "equivalent in its rule; not imported")]
    assert [r.model_dump(exclude_defaults=True) for r in contract.quality.rules] == [
        {"type": "not_null", "column": "id"}, {"type": "expression", "expression": "a > 0"}]
    assert contract.extensions["dqx"]["unmapped"] == doc[:4]


@pytest.mark.parametrize(("item", "field", "message"), [
    ({"criticalty": "warn", "check": {"function": "is_not_null", "arguments": {"column": "a"}}}, "0.criticalty",
     "unknown DQX check key `criticalty`; did you mean `criticality`? "
     "(known: criticality, check, name, filter, user_metadata)"),
    ({"check": {"function": "is_not_null", "arguments": {"column": "a"}, "for_each_colum": ["a", "b"]}},
     "0.check.for_each_colum", "unknown DQX `check` key `for_each_colum`; did you mean `for_each_column`? "
     "(known: function, arguments, for_each_column)"),
])
def test_a_misspelled_dqx_key_is_refused_with_the_closest_one(item, field, message) -> None:
    # a misspelled criticality made a warning check an error; a misspelled for_each_column checked one column
    with pytest.raises(ContractError) as info:
        dqx_to_contract([item], "t")
    assert (info.value.field, info.value.message) == (field, message)


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
  }
}
"""

MERGE_GUARD = """
{
  "validations": {
    "on_failure": "fail",
    "rules": [{ "type": "unique", "columns": ["order_id"] }]
  },
  "output": {
    "format": "delta",
    "path": "analytics.orders",
    "mode": "merge",
    "options": { "merge_keys": ["order_id"] }
  }
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
    names = [r.name for r in contract.rules()]
    assert names == ["id_not_null", "email_invalid_count", "missing cpf", "sql", "schema"]
    sql = contract.quality.rules[3]
    assert (sql.query, sql.error_message) == ("SELECT ABS(SUM(debit) - SUM(credit)) < 0.01 FROM _validation_df",
                                              "Ledger does not balance")
    seed = contract.extensions["seed"]
    assert seed["validations"]["outputs"]["invalid"] == {"format": "delta", "path": "silver.orders_quarantine",
                                                         "mode": "overwrite"}
    assert seed_pipeline(contract) == SeedPipeline(
        target=SeedDestination("validations.outputs.valid", "silver.orders_ok", "delta", "overwrite", table=True),
        quarantine=SeedDestination("validations.outputs.invalid", "silver.orders_quarantine", "delta", "overwrite",
                                   table=True))
    exported = contract_to_odcs(contract)
    assert odcs_issues(exported) == []
    assert odcs_to_contract(exported) == contract


def test_seed_merge_output_is_the_dataset_and_the_target() -> None:
    contract = seed_to_contract(json.loads(MERGE_GUARD), "orders")
    assert (contract.dataset.table, contract.dataset.format, contract.dataset.path) == ("analytics.orders", "delta",
                                                                                        None)
    assert contract.extensions["seed"]["output"]["options"] == {"merge_keys": ["order_id"]}
    assert seed_pipeline(contract) == SeedPipeline(target=SeedDestination(
        "output", "analytics.orders", "delta", "merge", table=True, merge_keys=("order_id",)))


def test_seed_report_input_and_name() -> None:
    doc = json.loads(FOUR_RULES)
    doc.update({"name": "orders-daily", "input": {"path": "data/orders.csv"},
                "report": {"format": "delta", "path": "quality.pipeline_report", "mode": "append",
                           "partition_by": ["pipeline"]}})
    assert seed_issues(doc) == []
    assert seed_pipeline(seed_to_contract(doc, "orders")) == SeedPipeline(
        name="orders-daily", input=SeedDestination("input", "data/orders.csv", ""),
        report=SeedDestination("report", "quality.pipeline_report", "delta", "append", table=True,
                               partition_by=("pipeline",)))
    # a path with `/` (or starting with `.`) is a path; parquet reports may also name the run_id level
    doc["report"] = {"format": "parquet", "path": "./history", "partition_by": ["pipeline", "run_id"]}
    assert seed_pipeline(seed_to_contract(doc, "orders")).report == SeedDestination(
        "report", "./history", "parquet", "append", partition_by=("pipeline", "run_id"))


def test_plain_contract_has_no_seed_pipeline() -> None:
    assert seed_pipeline(seed_to_contract(json.loads(FOUR_RULES), "orders")) is None


@pytest.mark.parametrize("change, field, message", [
    ({"transformations": [{"type": "filter", "condition": "id IS NOT NULL"}]}, "transformations",
     "unknown key `transformations`; a pipeline document takes name, input, validations, output, report (dqgov "
     "checks the data a pipeline produced; run its transformations in the job itself)"),
    ({"output": {"format": "delta", "path": "analytics.orders", "mode": "merge",
                 "options": {"merge_keys": ["id"], "foo": 1}}}, "output.options.foo",
     "unknown key `foo`; output.options takes merge_keys"),
    ({"output": {"format": "delta", "path": "analytics.orders", "mode": "merge"}}, "output.mode",
     "mode merge needs options.merge_keys (the columns a row is matched on)"),
    ({"output": {"format": "parquet", "path": "./orders", "mode": "merge", "options": {"merge_keys": ["id"]}}},
     "output.format", "mode merge needs format delta"),
    ({"output": {"format": "delta", "path": "./orders", "mode": "append", "options": {"merge_keys": ["id"]}}},
     "output.options.merge_keys", "merge_keys only act with mode merge, not `append`"),
    ({"output": {"format": "delta", "path": "./orders", "mode": "upsert"}}, "output.mode",
     "mode `upsert` is not supported here; use overwrite, append or merge"),
    ({"output": {"format": "parquet", "path": "silver.orders"}}, "output.format",
     "`silver.orders` names a catalog table (it has no `/`), and dqgov reads and writes tables as Delta: use "
     "format delta, or a path such as ./silver.orders for parquet"),
    ({"output": {"format": "delta", "path": "my orders"}}, "output.path",
     "`my orders` is neither a path (it has no `/`) nor a table name (db.table); write ./my orders for a "
     "directory"),
    ({"output": {"format": "csv", "path": "./orders"}}, "output.format",
     "format `csv` is not supported here; use delta or parquet"),
    ({"output": {"format": "delta"}}, "output", "missing required key `path`"),
    ({"report": {"format": "delta", "path": "quality.report", "mode": "overwrite"}}, "report.mode",
     "mode `overwrite` is not supported here; use append (a re-run with the same run id replaces its own rows)"),
    ({"report": {"format": "delta", "path": "quality.report", "partition_by": ["pipeline", "run_id"]}},
     "report.partition_by", 'the report history is partitioned by its own layout (["pipeline"] for delta); it '
     'cannot be partitioned by ["pipeline", "run_id"]'),
    ({"report": {"format": "parquet", "path": "./report", "partition_by": ["validated_at"]}},
     "report.partition_by", 'the report history is partitioned by its own layout (["pipeline"] or ["pipeline", '
     '"run_id"] for parquet); it cannot be partitioned by ["validated_at"]'),
    ({"report": {"format": "delta", "path": "quality.report", "retention": "30d"}}, "report.retention",
     "unknown key `retention`; report takes format, path, mode, partition_by"),
    ({"input": {"path": "./orders.csv", "options": {"header": True}}}, "input.options",
     "unknown key `options`; input takes format, path"),
    ({"name": ""}, "name", "the pipeline name must be a non-empty string"),
])
def test_seed_keys_dqgov_cannot_honour_are_refused_with_their_path(change, field, message) -> None:
    doc = {**json.loads(FOUR_RULES), **change}
    with pytest.raises(ContractError) as info:
        seed_to_contract(doc, "orders")
    assert (info.value.field, info.value.message) == (field, message)


def test_seed_validations_keys_dqgov_cannot_honour() -> None:
    doc = json.loads(WITH_OUTPUTS)
    doc["validations"]["rules"][3]["failed_rows"] = True
    doc["validations"]["outputs"]["failed"] = {"format": "delta", "path": "silver.failed"}
    doc["validations"]["alert"] = "slack"
    doc["output"] = {"format": "delta", "path": "analytics.orders"}
    assert seed_issues(doc) == [
        (("validations", "rules", 3, "failed_rows"),
         "a rule's own failed-rows output is not supported: validations.outputs.invalid receives every row that "
         "fails a row rule, with the rules it failed in `_dq_errors`"),
        (("validations", "outputs", "failed"), "unknown key `failed`; validations.outputs takes valid, invalid"),
        (("validations", "alert"),
         "unknown key `alert`; validations takes on_failure, minimum_valid_ratio, rules, outputs"),
        (("validations", "outputs", "valid"),
         "`output` already names where the checked rows are published; dqgov publishes one target: keep either "
         "output or validations.outputs.valid"),
    ]


def test_seed_settings_carried_by_a_native_contract_are_checked_at_run_time() -> None:
    contract = seed_to_contract(json.loads(MERGE_GUARD), "orders")
    native = contract.model_dump(by_alias=True, exclude_defaults=True)
    native["extensions"]["seed"]["output"]["mode"] = "upsert"
    with pytest.raises(ContractError) as info:
        seed_pipeline(Contract.model_validate(native))
    assert info.value.field == "extensions.seed.output.mode"
    assert info.value.message == "mode `upsert` is not supported here; use overwrite, append or merge"


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


def test_seed_extension_issues_for_lint() -> None:
    extensions = {"seed": {"report": {"format": "delta", "path": "quality.report", "mode": "overwrite"},
                           "validations": {"outputs": {"valid": {"path": "./ok", "mode": "replace"}}}}}
    assert seed_extension_issues(extensions) == [
        (("seed", "report", "mode"),
         "mode `overwrite` is not supported here; use append (a re-run with the same run id replaces its own rows)"),
        (("seed", "validations", "outputs", "valid", "mode"),
         "mode `replace` is not supported here; use overwrite, append or merge"),
    ]
    assert seed_extension_issues({"dqx": {"notes": []}}) == []
    assert seed_extension_issues({"seed": "orders"}) == [(("seed",), "must be a mapping (the seed pipeline's settings)")]

"""The contract model, the threshold DSL and field-shorthand expansion. No Spark."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import ValidationError

from dq_governance.contracts.load import load_contract
from dq_governance.contracts.model import (
    Contract,
    FormatRule,
    FreshnessRule,
    RangeRule,
    RowCountRule,
    TypeRule,
    UniqueRule,
)
from dq_governance.contracts.thresholds import parse_duration, parse_threshold
from dq_governance.errors import ContractError, ThresholdSyntaxError


def _doc(fields=None, rules=None, **extra):
    doc = {
        "contract": {"name": "t", "version": "1.0.0"},
        "dataset": {"name": "t"},
        "schema": {"fields": fields if fields is not None else [{"name": "id", "type": "long"}]},
        "quality": {"rules": rules or []},
    }
    doc.update(extra)
    return doc


# ------------------------------------------------------------------ example contracts


def test_orders_rule_names_exact(repo):
    contract = load_contract(repo / "contracts" / "orders.yaml")
    assert [(r.name, r.type, r.level) for r in contract.rules()] == [
        ("pedido_id_type", "type", "row"),
        ("pedido_id_not_null", "not_null", "row"),
        ("pedido_id_unique", "unique", "row"),
        ("cliente_id_type", "type", "row"),
        ("cliente_id_not_null", "not_null", "row"),
        ("status_type", "type", "row"),
        ("status_not_null", "not_null", "row"),
        ("status_allowed_values", "allowed_values", "row"),
        ("valor_type", "type", "row"),
        ("valor_not_null", "not_null", "row"),
        ("valor_range", "range", "row"),
        ("data_pedido_type", "type", "row"),
        ("data_pedido_not_null", "not_null", "row"),
        ("email_type", "type", "row"),
        ("email_format", "format", "row"),
        ("row_count", "row_count", "dataset"),
    ]


def test_orders_model_values(repo):
    contract = load_contract(repo / "contracts" / "orders.yaml")
    assert (contract.name, contract.version) == ("orders", "1.0.0")
    assert contract.column_names() == ["pedido_id", "cliente_id", "status", "valor", "data_pedido", "email"]
    assert contract.pii_columns() == ["email"]
    assert contract.quality.on_failure == "block_publication"
    assert contract.quality.minimum_valid_ratio == 0.99
    # The seed's `freshness_minutes: 60` names no column (and data_pedido is a date): orders.yaml has no SLA.
    assert contract.service_level is None
    assert contract.field("email").masking.method == "hmac"
    assert contract.roles.owner.contact == "sales-data@example.com"
    rules = {r.name: r for r in contract.rules()}
    assert rules["status_allowed_values"].values == ["CRIADO", "PAGO", "CANCELADO"]
    assert (rules["valor_range"].min, rules["valor_range"].max) == (0, None)
    assert rules["data_pedido_type"].data_type == "date"
    assert rules["data_pedido_type"].date_format == "yyyy-MM-dd"
    assert rules["valor_type"].data_type == "decimal(12,2)"
    assert rules["row_count"].must_be == ">= 1"
    assert rules["pedido_id_unique"].dimension == "uniqueness"


def test_customers_and_sales_rule_names(repo):
    customers = load_contract(repo / "contracts" / "customers.yaml")
    names = [r.name for r in customers.rules()]
    assert names[-10:] == [
        "freshness_sla", "volume_sla", "missing_email", "invalid_phone",
        "nome_data_nascimento_duplicate_count", "limite_credito_avg", "schema", "premium_needs_credit",
        "nome_length", "pii_undeclared",
    ]
    assert len(names) == 31 and len(set(names)) == 31
    assert customers.pii_columns() == ["nome", "cpf", "email", "telefone", "data_nascimento", "cep"]
    sales = load_contract(repo / "contracts" / "sales.yaml")
    assert [r.name for r in sales.rules()][-5:] == [
        "cliente_id_foreign_key", "reconcile", "one_sale_per_day_at_least", "valor_total_sum", "row_count",
    ]


# ------------------------------------------------------------------ shorthand expansion


def test_field_shorthands_expand_in_fixed_order():
    contract = Contract.model_validate(_doc(fields=[
        {"name": "code", "type": "string", "primary_key": True, "allowed_values": ["A"], "min_length": 1,
         "max_length": 3, "pattern": "^[A-Z]+$", "format": "uuid"},
        {"name": "amount", "type": "double", "minimum": 0, "maximum": 10, "exclusive_maximum": True},
        {"name": "day", "type": "date", "format": "date"},
    ]))
    rules = contract.rules()
    assert [r.name for r in rules] == [
        "code_type", "code_not_null", "code_unique", "code_allowed_values", "code_length", "code_regex",
        "code_format", "amount_type", "amount_range", "day_type",
    ]
    amount_range = rules[8]
    assert isinstance(amount_range, RangeRule)
    assert (amount_range.min, amount_range.max, amount_range.min_exclusive, amount_range.max_exclusive) == (
        0, 10, False, True)
    assert isinstance(rules[6], FormatRule) and rules[6].format == "uuid"
    assert isinstance(rules[0], TypeRule) and rules[0].data_type == "string"


def test_service_level_rules_and_name_collisions():
    contract = Contract.model_validate(_doc(
        fields=[{"name": "id", "type": "long"}, {"name": "ts", "type": "timestamp"}],
        rules=[{"type": "unique", "column": "id"}, {"type": "unique", "column": "id"},
               {"type": "row_count", "name": "enough", "must_be": ">= 5"}],
        service_level={"freshness": "1d", "freshness_column": "ts", "volume": {"min_rows": 2}},
    ))
    rules = contract.rules()
    assert [r.name for r in rules] == [
        "id_type", "ts_type", "freshness_sla", "volume_sla", "id_unique", "id_unique_2", "enough",
    ]
    fresh = rules[2]
    assert isinstance(fresh, FreshnessRule)
    assert (fresh.column, fresh.must_be, fresh.level) == ("ts", "< 1d", "dataset")
    assert isinstance(rules[3], RowCountRule) and (rules[3].min, rules[3].max) == (2, None)
    assert isinstance(rules[4], UniqueRule) and rules[4].level == "row"
    # The contract itself is not mutated by naming.
    assert contract.quality.rules[0].name is None


def test_nested_fields_and_shorthands():
    contract = Contract.model_validate(_doc(
        fields=[{"name": "customer", "type": "struct<email:string>", "fields": [
            {"name": "email", "type": "string", "pii": True, "masking": "redact"}]}],
        roles={"owner": "team-a"},
        masking={"pii": "hmac", "by_classification": {"restricted": "redact"}},
    ))
    assert contract.column_names(nested=True) == ["customer", "customer.email"]
    assert contract.pii_columns() == ["customer.email"]
    assert contract.field("customer.email").masking.method == "redact"
    assert contract.roles.owner.name == "team-a"
    assert contract.masking.pii.method == "hmac"
    assert contract.masking.by_classification["restricted"].method == "redact"


# ------------------------------------------------------------------ model validation


def _errors(doc):
    with pytest.raises(ValidationError) as info:
        Contract.model_validate(doc)
    return info.value.errors()


def test_bad_threshold_is_a_located_validation_error():
    errors = _errors(_doc(rules=[{"type": "missing_count", "column": "id", "must_be": "<< 1"}]))
    assert [(e["loc"], e["type"]) for e in errors] == [(("quality", "rules", 0, "missing_count", "must_be"),
                                                        "value_error")]
    assert "invalid threshold '<< 1'" in errors[0]["msg"]


def test_seed_freshness_minutes_with_its_column_is_a_60_minute_sla():
    contract = Contract.model_validate(_doc(fields=[{"name": "ts", "type": "timestamp"}],
                                            service_level={"freshness_minutes": 60, "freshness_column": "ts"}))
    assert (contract.service_level.freshness.max_age, contract.service_level.freshness.seconds) == ("60m", 3600.0)
    assert [(r.name, r.column, r.must_be) for r in contract.rules() if r.type == "freshness"] == [
        ("freshness_sla", "ts", "< 60m")]


@pytest.mark.parametrize("level", [{"freshness_minutes": 60}, {"freshness": {"max_age": "1h"}}, {"freshness": "1d"}])
def test_freshness_without_its_column_is_refused(level):
    errors = _errors(_doc(service_level=level))
    assert [(e["loc"], e["ctx"]["path"], e["ctx"]["message"]) for e in errors] == [
        (("service_level",), ("freshness",),
         "freshness needs `freshness_column` (or `freshness.column`) to be evaluated")]


def test_bad_duration_is_a_located_validation_error():
    errors = _errors(_doc(service_level={"freshness": {"max_age": "soon"}}))
    assert [e["loc"] for e in errors] == [("service_level", "freshness", "max_age")]


def test_invalid_valid_regex_is_located_on_the_key():
    errors = _errors(_doc(rules=[{"type": "invalid_count", "column": "id", "valid_regex": "((", "must_be": "= 0"}]))
    assert [e["loc"] for e in errors] == [("quality", "rules", 0, "invalid_count", "valid_regex")]


def test_duplicate_field_name_names_its_path():
    errors = _errors(_doc(fields=[{"name": "a"}, {"name": "b", "fields": [{"name": "c"}, {"name": "c"}]}]))
    assert [(e["loc"], e["ctx"]["path"], e["msg"]) for e in errors] == [
        (("schema",), ("fields", 1, "fields", 1, "name"), "fields.1.fields.1.name: duplicate field name 'c'"),
    ]


def test_unique_rule_on_unknown_column_names_its_path():
    errors = _errors(_doc(fields=[{"name": "id"}, {"name": "status"}],
                          rules=[{"type": "unique", "columns": ["id", "stauts"]}]))
    assert [(e["loc"], e["ctx"]["path"], e["ctx"]["hint"]) for e in errors] == [
        ((), ("quality", "rules", 0, "columns", 1), "did you mean `status`?"),
    ]


def test_semver_required():
    doc = _doc()
    doc["contract"]["version"] = "1.0"
    assert [e["loc"] for e in _errors(doc)] == [("contract", "version")]
    doc["contract"]["version"] = "2.1.0-rc.1"
    assert Contract.model_validate(doc).version == "2.1.0-rc.1"


def test_sql_rule_must_be_a_select():
    good = _doc(rules=[{"type": "sql", "query": "  (SELECT COUNT(*) > 0 FROM _validation_df)"}])
    assert Contract.model_validate(good).quality.rules[0].level == "dataset"
    assert [e["loc"] for e in _errors(_doc(rules=[{"type": "sql", "query": "DROP TABLE x"}]))] == [
        ("quality", "rules", 0, "sql", "query")]


def test_load_contract_from_text_and_document():
    text = "contract: {name: t, version: 1.0.0}\ndataset: {name: t}\n"
    assert load_contract(text).name == "t"
    assert load_contract(_doc()).name == "t"
    with pytest.raises(ContractError) as info:
        load_contract("contract: {name: t, version: '1'}\ndataset: {name: t}\n")
    assert str(info.value).startswith("<string>:1:30: contract.version: version '1' is not semantic")


# ------------------------------------------------------------------ thresholds


@pytest.mark.parametrize(
    "text, inside, outside",
    [
        ("= 0", [0], [1, -1]),
        ("< 1%", [0, 0.99], [1, 50]),
        (">= 10", [10, 11], [9.99]),
        ("between 10 and 100", [10, 55, 100], [9, 101]),
        ("not between 10 and 100", [9, 101], [10, 100]),
        ("< 1d", [86399], [86400, 90000]),
        ("!= 3", [2, 4], [3]),
        (0, [0], [1]),
        # Decimal and long metrics (Spark's sums of such columns) meet the bound as written: as floats, each
        # pair below is one number. Float metrics keep float semantics, so a double 0.1 meets "<= 0.1".
        ("<= 12345678901234567.88", [Decimal("12345678901234567.88"), 12345678901234567],
         [Decimal("12345678901234567.89"), 12345678901234568]),
        ("<= 0.1", [0.1, Decimal("0.1")], [Decimal("0.10000000000000001"), 0.11]),
        ("between 9007199254740992 and 9007199254740992", [9007199254740992], [9007199254740993]),
        ("not between 0 and 9007199254740992", [9007199254740993], [9007199254740992]),
        (9007199254740992, [9007199254740992], [9007199254740993]),
    ],
)
def test_threshold_holds(text, inside, outside):
    threshold = parse_threshold(text)
    assert all(threshold.holds(v) for v in inside)
    assert not any(threshold.holds(v) for v in outside)
    assert threshold.holds(None) is False


def test_threshold_values_and_units():
    assert (parse_threshold("< 1%").value, parse_threshold("< 1%").unit) == (1.0, "percent")
    assert (parse_threshold("<= 2h").value, parse_threshold("<= 2h").unit) == (7200.0, "duration")
    between = parse_threshold("between 1m and 1h")
    assert (between.value, between.upper, between.unit) == (60.0, 3600.0, "duration")
    assert str(parse_threshold(" >= 10 ")) == ">= 10"


@pytest.mark.parametrize("text", ["less than 1", "<< 1", "between 5 and 1", "between 1% and 2", "= ", "= 1x"])
def test_threshold_rejects(text):
    with pytest.raises(ThresholdSyntaxError):
        parse_threshold(text)


def test_durations():
    assert parse_duration("60m") == 3600.0
    assert parse_duration("1d") == 86400.0
    assert parse_duration("30s") == 30.0
    assert parse_duration("2w") == 1209600.0
    assert parse_duration(5) == 300.0  # a bare number means minutes
    with pytest.raises(ThresholdSyntaxError):
        parse_duration("1 fortnight")

"""The DQX article's rules files (`rules: [{name, description, expression}]`): detected, converted, linted, checked.

Row expressions stay `expression` rules; `x IN (SELECT y FROM t)` becomes a `foreign_key` rule; an aggregate
(`COUNT(DISTINCT id) = COUNT(id)`) cannot be a row rule and becomes a `sql` rule over `_validation_df`, with a
conversion note. The two rule lists are the article's (its second one written as the YAML list it stands for).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dq_governance.cli import main
from dq_governance.contracts.load import load_contract_with_source
from dq_governance.contracts.migrate import dqx_rules_to_contract, is_dqx, is_dqx_rules
from dq_governance.errors import ContractError

CUSTOMER_RULES = r"""rules:
  - name: customer_id_not_null
    description: "Customer ID não pode ser nulo"
    expression: "customer_id IS NOT NULL"
  - name: customer_name_not_empty
    description: "Nome do cliente não pode estar vazio"
    expression: "customer_name != ''"
  - name: customer_email_format
    description: "E-mail deve seguir o padrão @example.com"
    expression: "customer_email RLIKE '^[A-Za-z0-9._%+-]+@example\\.com$'"
  - name: customer_id_unique
    description: "Customer ID deve ser único"
    expression: "COUNT(DISTINCT customer_id) = COUNT(customer_id)"
"""

SALES_RULES = r"""rules:
  - name: sale_id_unique
    description: "Sale ID deve ser único"
    expression: "COUNT(DISTINCT sale_id) = COUNT(sale_id)"
  - name: sale_date_in_2023
    description: "Data da venda deve estar em 2023"
    expression: "sale_date >= '2023-01-01' AND sale_date <= '2023-12-31'"
  - name: sale_amount_positive
    description: "Valor da venda deve ser maior que zero"
    expression: "sale_amount > 0"
  - name: customer_id_exists
    description: "Customer ID deve existir na tabela de clientes"
    expression: "customer_id IN (SELECT customer_id FROM silver_customers)"
"""

AGGREGATE_NOTE = ("aggregate expression (COUNT) cannot be a row rule: imported as a sql rule over _validation_df, "
                  "one verdict for the dataset (no row is quarantined for it)")

# The article's customers, plus a second customer 2 so that the uniqueness rule has something to find.
CUSTOMERS = [
    (1, "João Silva", "joao@example.com"),
    (2, "Maria Oliveira", "maria@example.com"),
    (None, "Pedro", "pedro@example.com"),
    (3, "", "carlos@gmail.com"),
    (2, "Maria O.", "maria.o@example.com"),
]
SALES = [
    (101, "2023-05-10", 150.00, 1),
    (102, "2023-07-15", 200.00, 2),
    (103, "2022-12-01", 100.00, 1),
    (104, "2023-03-20", -50.00, 3),
]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_rules_shape_is_a_dqx_document() -> None:
    doc = yaml.safe_load(CUSTOMER_RULES)
    assert is_dqx_rules(doc) and is_dqx(doc)
    assert not is_dqx_rules({"validations": {"rules": [{"type": "not_null", "columns": ["id"]}]}})
    assert not is_dqx_rules({"rules": [{"type": "not_null"}]})  # no `expression` anywhere: not this shape


def test_customer_rules_convert_row_rules_and_one_sql_rule(tmp_path: Path) -> None:
    contract, source = load_contract_with_source(_write(tmp_path, "customer_rules.yaml", CUSTOMER_RULES))
    assert (source.format, contract.name) == ("dqx", "customer_rules")
    assert [r.model_dump(exclude_defaults=True, exclude={"description"}) for r in contract.quality.rules] == [
        {"type": "expression", "name": "customer_id_not_null", "expression": "customer_id IS NOT NULL"},
        {"type": "expression", "name": "customer_name_not_empty", "expression": "customer_name != ''"},
        {"type": "expression", "name": "customer_email_format",
         "expression": r"customer_email RLIKE '^[A-Za-z0-9._%+-]+@example\.com$'"},
        {"type": "sql", "name": "customer_id_unique",
         "query": "SELECT COUNT(DISTINCT customer_id) = COUNT(customer_id) FROM _validation_df"},
    ]
    assert contract.quality.rules[0].description == "Customer ID não pode ser nulo"
    assert contract.extensions["dqx"]["notes"] == [f"rules[3] customer_id_unique: {AGGREGATE_NOTE}"]


def test_sales_rules_subquery_becomes_a_foreign_key() -> None:
    contract, notes = dqx_rules_to_contract(yaml.safe_load(SALES_RULES), "sales_rules")
    assert [(r.type, r.name) for r in contract.quality.rules] == [
        ("sql", "sale_id_unique"), ("expression", "sale_date_in_2023"), ("expression", "sale_amount_positive"),
        ("foreign_key", "customer_id_exists")]
    fk = contract.quality.rules[3]
    assert (fk.column, fk.reference.table, fk.reference.column) == ("customer_id", "silver_customers", "customer_id")
    assert notes == [
        (("rules", 0, "expression"), f"sale_id_unique: {AGGREGATE_NOTE}"),
        (("rules", 3, "expression"), "customer_id_exists: `customer_id IN (SELECT ...)` imported as a foreign_key "
                                     "rule on silver_customers.customer_id (a row whose customer_id is null passes, "
                                     "as in SQL)"),
    ]


def test_other_subqueries_become_a_sql_rule_never_dropped() -> None:
    doc = {"rules": [{"name": "above_average", "expression": "amount > (SELECT avg(amount) FROM sales_history)"}]}
    contract, notes = dqx_rules_to_contract(doc, "sales")
    rule = contract.quality.rules[0]
    assert (rule.type, rule.query) == (
        "sql", "SELECT COUNT(*) = 0 FROM _validation_df WHERE NOT (amount > (SELECT avg(amount) FROM sales_history))")
    assert notes == [(("rules", 0, "expression"),
                      "above_average: expression with a subquery cannot be a row rule: imported as a sql rule that "
                      "fails when any row breaks it, one verdict for the dataset (no row is quarantined for it)")]


@pytest.mark.parametrize("doc, field, message", [
    ({"rules": [{"name": "a", "expresion": "x > 0", "expression": "x > 0"}]}, "rules.0.expresion",
     "unknown key `expresion`; a rule takes name, description, expression, criticality, filter, user_metadata "
     "(did you mean `expression`?)"),
    ({"rules": [{"name": "a", "expression": "x > 0"}, {"name": "b"}]}, "rules.1", "missing required key `expression`"),
    ({"rules": [{"expression": "x > 0"}], "version": 2}, "version",
     "unknown key `version`; a DQX rules file holds `rules` only"),
    ({"rules": [{"expression": "x > 0", "criticality": "fatal"}]}, "rules.0.criticality",
     "unknown criticality 'fatal'; expected error or warn"),
])
def test_rules_file_problems_name_their_item(doc, field, message) -> None:
    with pytest.raises(ContractError) as info:
        dqx_rules_to_contract(doc, "x")
    assert (info.value.field, info.value.message) == (field, message)


def test_convert_prints_the_notes_and_lint_accepts_both_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    customers = _write(tmp_path, "customer_rules.yaml", CUSTOMER_RULES)
    sales = _write(tmp_path, "sales_rules.yaml", SALES_RULES)
    assert main(["convert", str(customers)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"{customers}:13:17: warning: rules[3].expression: customer_id_unique: {AGGREGATE_NOTE}"]
    doc = yaml.safe_load(captured.out)
    assert doc["quality"]["rules"][3] == {
        "type": "sql", "name": "customer_id_unique", "description": "Customer ID deve ser único",
        "query": "SELECT COUNT(DISTINCT customer_id) = COUNT(customer_id) FROM _validation_df"}
    assert main(["convert", str(sales)]) == 0
    assert [line.split(": warning: ")[0] for line in capsys.readouterr().err.splitlines()] == [
        f"{sales}:4:17", f"{sales}:13:17"]
    assert main(["lint", str(customers), str(sales)]) == 0
    assert "2 files checked, 0 errors" in capsys.readouterr().err


def test_lint_positions_a_bad_rule_item(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = _write(tmp_path, "rules.yaml", CUSTOMER_RULES + "  - name: typo\n    expresion: \"x > 0\"\n")
    assert main(["lint", str(broken)]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"{broken}:15:16: rules[4].expresion: unknown key `expresion`; a rule takes name, description, expression, "
        "criticality, filter, user_metadata (did you mean `expression`?)"]


@pytest.mark.spark
def test_customer_rules_on_the_article_data(spark, tmp_path: Path) -> None:
    from dq_governance import check

    df = spark.createDataFrame(CUSTOMERS, "customer_id long, customer_name string, customer_email string")
    result = check(df, _write(tmp_path, "customer_rules.yaml", CUSTOMER_RULES))
    try:
        failed = {r.name: (r.passed, r.failed_count) for r in result.rules}
        assert failed == {
            "customer_id_not_null": (False, 1),  # Pedro
            "customer_name_not_empty": (False, 1),  # customer 3, empty name
            "customer_email_format": (False, 1),  # customer 3, gmail.com
            "customer_id_unique": (False, None),  # customer 2 twice: one verdict, no row flagged
        }
        assert (result.total_rows, result.valid_rows, result.invalid_rows) == (5, 3, 2)
        assert sorted(r["customer_name"] for r in result.quarantine_df.collect()) == ["", "Pedro"]
        assert result.gate.publish is False  # a failed dataset rule blocks under the default policy
    finally:
        result.release()


@pytest.mark.spark
def test_sales_rules_on_the_article_data(spark, tmp_path: Path) -> None:
    from dq_governance import check

    spark.createDataFrame([(1,), (2,)], "customer_id long").createOrReplaceTempView("silver_customers")
    df = spark.createDataFrame(SALES, "sale_id long, sale_date string, sale_amount double, customer_id long")
    result = check(df, _write(tmp_path, "sales_rules.yaml", SALES_RULES))
    try:
        failed = {r.name: (r.passed, r.failed_count) for r in result.rules}
        assert failed == {
            "sale_id_unique": (True, None),
            "sale_date_in_2023": (False, 1),  # 103, 2022-12-01
            "sale_amount_positive": (False, 1),  # 104, -50
            "customer_id_exists": (False, 1),  # 104: customer 3 is not a silver customer
        }
        assert (result.total_rows, result.valid_rows, result.invalid_rows) == (4, 2, 2)
        assert sorted(r["sale_id"] for r in result.valid_df.collect()) == [101, 102]
        assert result.gate.publish is True
    finally:
        result.release()
        spark.catalog.dropTempView("silver_customers")


@pytest.mark.spark
def test_dqgov_check_runs_a_rules_file(spark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spark.createDataFrame([(1,), (2,)], "customer_id long").createOrReplaceTempView("silver_customers")
    sales = str(tmp_path / "sales.parquet")  # typed, as the article's spark.table("sales_table")
    spark.createDataFrame(SALES, "sale_id long, sale_date string, sale_amount double, customer_id long") \
        .write.parquet(sales)
    try:
        code = main(["check", str(_write(tmp_path, "sales_rules.yaml", SALES_RULES)), "--input", sales,
                     "--output", str(tmp_path / "valid"), "--quarantine", str(tmp_path / "quarantine"),
                     "--report", str(tmp_path / "report"), "--lineage", "none", "--json"])
    finally:
        spark.catalog.dropTempView("silver_customers")
    summary = json.loads(capsys.readouterr().out)
    assert code == 0
    assert (summary["total_rows"], summary["valid_rows"], summary["invalid_rows"]) == (4, 2, 2)
    assert {o["kind"]: o["rows"] for o in summary["outputs"]} == {"target": 2, "quarantine": 2}
    assert spark.read.parquet(str(tmp_path / "valid")).count() == 2

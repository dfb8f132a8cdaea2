"""`schema.undeclared_columns`: the check-side rule `undeclared_columns` (one report row per run), the pure
`undeclared_columns()` the publish side calls, and the setting's ODCS round trip.
"""

from __future__ import annotations

import json

import pytest
import yaml

from dq_governance.contracts.model import Contract, undeclared_columns
from dq_governance.contracts.odcs import contract_to_odcs, odcs_issues, odcs_to_contract

FIELDS = [{"name": "id", "type": "long", "required": True}, {"name": "valor", "type": "double", "minimum": 0}]
ROWS = [("1", "10.0", "ana@example.com", "x", "b1"), ("2", "-1", "bruno@example.com", "y", "b1"),
        ("3", "5", None, None, "b1")]
SCHEMA = "id string, valor string, email string, nota string, _dq_batch string"


def contract(policy: str | None = None, fields=FIELDS, rules=(), **quality) -> Contract:
    schema: dict = {"fields": fields}
    if policy is not None:
        schema["undeclared_columns"] = policy
    return Contract.model_validate({"contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"},
                                    "schema": schema, "quality": {"rules": list(rules), **quality}})


# --------------------------------------------------------------------------- the model side (no Spark)


def test_undeclared_columns_lists_data_columns_in_input_order():
    c = contract()
    assert undeclared_columns(c, ["nota", "id", "email", "_dq_errors", "_dq_batch", "valor"]) == ["nota", "email"]
    assert undeclared_columns(c, ["id", "valor"]) == []
    assert undeclared_columns(contract(fields=[]), ["id", "email"]) == []  # nothing declared: cannot apply
    assert undeclared_columns(c, ["ID", "valor"]) == ["ID"]  # names match exactly, as the contract columns do


@pytest.mark.parametrize("policy, severity", [(None, "warn"), ("keep", "warn"), ("mask", "warn"), ("fail", "error")])
def test_check_rules_end_with_the_undeclared_rule(policy, severity):
    c = contract(policy)
    rules = c.check_rules()
    assert [r.name for r in rules] == [r.name for r in c.rules()] + ["undeclared_columns"]
    last = rules[-1]
    assert (last.type, last.level, last.severity, last.policy, last.dimension) == (
        "undeclared_columns", "dataset", severity, policy or "drop", "validity")
    assert "undeclared_columns" not in [r.type for r in c.rules()]  # catalogs publish rules(): not this one


def test_no_fields_no_rule_and_a_user_rule_keeps_its_name():
    assert [r.type for r in contract(fields=[], rules=[{"type": "row_count", "min": 1}]).check_rules()] == [
        "row_count"]
    named = contract(rules=[{"type": "row_count", "min": 1, "name": "undeclared_columns"}])
    assert [r.name for r in named.check_rules()][-2:] == ["undeclared_columns", "undeclared_columns_2"]


def test_the_rule_is_not_an_authored_rule_type():
    with pytest.raises(Exception, match="undeclared_columns"):
        contract(rules=[{"type": "undeclared_columns"}])


@pytest.mark.parametrize("policy, written", [(None, None), ("drop", "drop"), ("keep", "keep"), ("fail", "fail")])
def test_the_setting_round_trips_through_odcs(policy, written):
    c = contract(policy)
    exported = contract_to_odcs(c)
    cps = {p["property"]: p["value"] for p in exported["schema"][0].get("customProperties", [])}
    assert cps.get("undeclaredColumns") == written
    assert odcs_issues(exported) == []
    back = odcs_to_contract(yaml.safe_load(yaml.safe_dump(exported, sort_keys=False)))
    assert back == c and back.schema_.undeclared_columns == (policy or "drop")


def test_an_invalid_setting_names_the_choices():
    from dq_governance.contracts.load import check_document
    from dq_governance.contracts.source import parse_text

    text = "contract: {name: t, version: 1.0.0}\ndataset: {name: t}\nschema:\n  undeclared_columns: hide\n" \
           "  fields: [{name: id}]\n"
    (issue,) = check_document(parse_text(text, "t.yaml")).issues
    assert (issue.line, issue.column, issue.field, issue.message) == (
        4, 23, "schema.undeclared_columns", "input should be 'drop', 'keep', 'fail' or 'mask'")


# --------------------------------------------------------------------------- the check side


@pytest.mark.spark
@pytest.mark.parametrize("mode", ["split", "counts"])
@pytest.mark.parametrize("policy, fate", [(None, "left out of the outputs (undeclared_columns: drop)"),
                                          ("keep", "published as read (undeclared_columns: keep)"),
                                          ("mask", "masked in the outputs (undeclared_columns: mask)")])
def test_undeclared_columns_warn_and_never_block(spark, mode, policy, fate):
    from dq_governance.checks.engine import evaluate

    result = evaluate(spark.createDataFrame(ROWS, SCHEMA), contract(policy), mode=mode)
    try:
        rule = result.rule("undeclared_columns")
        assert (rule.passed, rule.status, rule.severity, rule.level, rule.metric_value, rule.failed_count) == (
            False, "warned", "warn", "dataset", 2.0, None)
        assert rule.message == f"2 columns not in the contract, {fate}: email, nota"
        assert rule.dimension == "validity" and rule.columns == []
        assert (result.gate.passed, result.status) == (True, "warned")  # quarantine: the bad row is routed
        assert (result.valid_rows, result.invalid_rows) == (2, 1)  # the rule touches no row
        row = [r for r in result.report_rows() if r["check_name"] == "undeclared_columns"]
        assert [(r["rule_type"], r["rule_status"], r["severity"], r["metric_value"], r["message"]) for r in row] == [
            ("undeclared_columns", "warned", "warn", 2.0, rule.message)]
        summary = json.loads(json.dumps(result.summary(), default=str))
        assert summary["rules"][-1]["name"] == "undeclared_columns"
        assert summary["rules"][-1]["message"] == rule.message
    finally:
        result.release()


@pytest.mark.spark
def test_fail_blocks_the_gate(spark):
    from dq_governance.checks.engine import evaluate

    result = evaluate(spark.createDataFrame(ROWS, SCHEMA), contract("fail"), mode="counts")
    rule = result.rule("undeclared_columns")
    assert (rule.passed, rule.status, rule.severity, rule.metric_value) == (False, "failed", "error", 2.0)
    assert rule.message == "2 columns not in the contract, refused (undeclared_columns: fail): email, nota"
    assert (result.gate.passed, result.gate.publish, result.status) == (False, False, "failed")
    assert result.gate.reasons == [
        "dataset rule undeclared_columns failed: 2 columns not in the contract, refused (undeclared_columns: fail): "
        "email, nota"]


@pytest.mark.spark
def test_every_column_declared_passes_and_one_column_is_singular(spark):
    from dq_governance.checks.engine import evaluate

    declared = evaluate(spark.createDataFrame([("1", "2.0")], "id string, valor string"), contract("fail"),
                        mode="counts")
    rule = declared.rule("undeclared_columns")
    assert (rule.passed, rule.status, rule.metric_value, rule.message) == (
        True, "passed", 0.0, "every data column is declared in the contract")
    assert declared.gate.passed and declared.status == "passed"
    one = evaluate(spark.createDataFrame([("1", "2.0", "x")], "id string, valor string, nota string"), contract(),
                   mode="counts").rule("undeclared_columns")
    assert one.message == "1 column not in the contract, left out of the outputs (undeclared_columns: drop): nota"
    # a contract that declares no fields has no such rule
    bare = evaluate(spark.createDataFrame([("1",)], "id string"), contract(fields=[], rules=[{"type": "row_count",
                                                                                          "min": 1}]), mode="counts")
    assert [r.name for r in bare.rules] == ["row_count"]


@pytest.mark.spark
def test_cli_check_exits_1_and_publishes_nothing_under_fail(spark, tmp_path, capsys):
    from dq_governance.cli import main

    data = tmp_path / "orders.csv"
    data.write_text("id,valor,email\n1,10.0,ana@example.com\n2,5.0,bruno@example.com\n")
    for policy, code in (("fail", 1), ("drop", 0)):
        path = tmp_path / f"{policy}.yaml"
        path.write_text(yaml.safe_dump({
            "contract": {"name": f"orders_{policy}", "version": "1.0.0"}, "dataset": {"name": "orders"},
            "schema": {"undeclared_columns": policy, "fields": FIELDS}}, sort_keys=False))
        out = tmp_path / policy
        args = ["check", str(path), "--input", str(data), "--output", str(out / "valid"), "--quarantine",
                str(out / "quarantine"), "--report", str(out / "report"), "--lineage", "none", "--no-listener",
                "--json"]
        assert main(args) == code, policy
        summary = json.loads(capsys.readouterr().out)
        rule = next(r for r in summary["rules"] if r["name"] == "undeclared_columns")
        assert (rule["status"], rule["metric_value"], summary["published"]) == (
            ("failed", 1.0, False) if policy == "fail" else ("warned", 1.0, True))
        assert (out / "valid").exists() == (policy != "fail")

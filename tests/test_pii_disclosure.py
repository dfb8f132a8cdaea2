"""A rule over a PII column says counts and thresholds, never a value read from the data: in its result, the
gate's reasons, the FAIL event, the logs, the exception and the report history (checks/disclosure.py)."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone

import pytest

from dq_governance import check, run
from dq_governance.checks.disclosure import reveals_pii, touches_pii
from dq_governance.checks.report_rows import report_rows
from dq_governance.checks.result import CheckResult, GateDecision, RuleResult
from dq_governance.contracts.load import load_contract
from dq_governance.errors import GateFailedError
from dq_governance.lineage.facets import metrics_facet

SALARY = 987654.32  # the one value of the PII column that must not be seen


def _people(rules: list[dict]) -> dict:
    return {"contract": {"name": "people", "version": "1.0.0"}, "dataset": {"name": "people"},
            "schema": {"fields": [
                {"name": "id", "type": "long"},
                {"name": "salario", "type": "double", "pii": True, "masking": "redact"},
                {"name": "nascimento", "type": "timestamp", "pii": True, "masking": "redact"},
                {"name": "cliente", "type": "struct<renda:double>", "pii": True, "masking": "null"}]},
            "quality": {"on_failure": "fail", "rules": rules}}


def test_nested_and_parent_columns_touch_pii():
    assert touches_pii(["cliente.renda"], ["cliente"]) and touches_pii(["cliente"], ["cliente.renda"])
    assert not touches_pii(["clientes"], ["cliente"]) and not touches_pii(["renda"], ["cliente.renda"])
    assert reveals_pii("freshness", ["nascimento"], ["nascimento"])
    assert not reveals_pii("not_null", ["nascimento"], ["nascimento"])


def test_report_rows_withhold_a_nested_pii_fields_metric():
    """A result built outside the engine (e.g. read back) still loses the value in its report row."""
    rule = RuleResult(name="renda_max", type="max", columns=["cliente.renda"], level="dataset", severity="error",
                      action=None, dimension="accuracy", passed=False, status="failed", metric_value=SALARY,
                      threshold="must_be <= 50000", message=f"max(cliente.renda) {SALARY} fails must_be <= 50000")
    moment = datetime(2026, 1, 1, tzinfo=timezone.utc)
    result = CheckResult(run_id="r", contract_name="people", contract_version="1.0.0", pipeline="p", rules=[rule],
                         total_rows=2, valid_rows=2, invalid_rows=0, status="failed",
                         gate=GateDecision(passed=False, publish=False), started_at=moment, finished_at=moment,
                         pii_columns=["cliente"])
    row = report_rows(result)[0]
    assert (row["metric_value"], row["message"]) == (None, "renda_max: metric withheld (PII column); passed=False")


@pytest.mark.spark
def test_value_revealing_rules_on_pii_columns_say_no_value(spark):
    df = spark.createDataFrame(
        [(1, 1000.0, "1987-06-05 04:03:02", (1000.0,)), (2, SALARY, "1990-01-01 00:00:00", (SALARY,))],
        "id long, salario double, nascimento string, cliente struct<renda:double>")
    rules = [{"type": "max", "column": "salario", "must_be": "<= 50000"},
             {"type": "sum", "column": "salario", "warn": "< 10"},
             {"type": "freshness", "column": "nascimento", "must_be": "< 1d"},
             {"type": "max", "column": "cliente.renda", "must_be": "<= 50000"},
             {"type": "max", "column": "id", "must_be": "<= 1"}]
    result = check(df, load_contract(_people(rules)))
    by_name = {r.name: r for r in result.rules}
    assert [(n, by_name[n].status, by_name[n].metric_value, by_name[n].message) for n in
            ("salario_max", "salario_sum", "nascimento_freshness", "cliente.renda_max", "id_max")] == [
        ("salario_max", "failed", None, "max(salario) failed (must_be <= 50000): value withheld (PII column)"),
        ("salario_sum", "warned", None, "sum(salario) outside its warn threshold (warn < 10): value withheld "
                                        "(PII column)"),
        ("nascimento_freshness", "failed", None, "freshness(nascimento) failed (must_be < 1d): value withheld "
                                                 "(PII column)"),
        ("cliente.renda_max", "failed", None, "max(cliente.renda) failed (must_be <= 50000): value withheld "
                                              "(PII column)"),
        ("id_max", "failed", 2.0, "max(id) 2 fails must_be <= 1"),  # not PII: the value stays
    ]
    text = json.dumps([r.message for r in result.rules] + result.gate.reasons)
    assert "987654" not in text and "1990" not in text and "1987" not in text
    assert metrics_facet(result.contract, result).columnMetrics["salario"].max is None
    result.release()


@pytest.mark.spark
def test_a_blocked_run_on_a_pii_max_keeps_the_value_out_of_events_logs_and_exception(spark, tmp_path, caplog):
    df = spark.createDataFrame([(1, 1000.0, None, None), (2, SALARY, None, None)],
                               "id long, salario double, nascimento string, cliente struct<renda:double>")
    contract = load_contract(_people([{"type": "max", "column": "salario", "must_be": "<= 50000"}]))
    events = tmp_path / "events.jsonl"
    with caplog.at_level(logging.INFO), pytest.raises(GateFailedError) as raised:
        run(df, contract, target=str(tmp_path / "out"), report=str(tmp_path / "report"), lineage=f"file:{events}")
    fail = [json.loads(line) for line in events.read_text().splitlines() if '"FAIL"' in line][0]
    assert fail["run"]["facets"]["errorMessage"]["message"] == (
        "quality gate blocked publication: dataset rule salario_max failed: max(salario) failed (must_be <= 50000): "
        "value withheld (PII column)")
    history = spark.read.parquet(str(tmp_path / "report")).collect()
    for text in (events.read_text(), caplog.text, str(raised.value), json.dumps([r.asDict() for r in history],
                                                                                default=str)):
        assert "987654" not in text

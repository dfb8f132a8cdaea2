"""One orchestrator run id shared by several contracts of a pipeline (`--pipeline nightly --run-id <dag run>`):
each contract keeps its own report rows and evidence. A blocked attempt of one contract is recorded even when
another contract published under the same run id, and a retry of one replaces its own rows only. Contracts that
share a quarantine path as well are refused before the check (the run's partition would hold both)."""

from __future__ import annotations

import pytest

import dq_governance
from dq_governance.contracts.model import Contract
from dq_governance.errors import ConfigError
from dq_governance.publish.report import read_history

pytestmark = pytest.mark.spark

RUN, PIPELINE = "scheduled__2026-01-01T00:00:00+00:00", "nightly"
RULES = ("amount_range", "amount_type", "id_not_null", "id_type", "undeclared_columns")


def _contract(name: str, **quality) -> Contract:
    return Contract.model_validate({
        "contract": {"name": name, "version": "1.0.0"}, "dataset": {"name": name},
        "schema": {"fields": [{"name": "id", "type": "long", "required": True},
                              {"name": "amount", "type": "long", "minimum": 0}]},
        "quality": {"on_failure": "block_publication", **quality}})  # orders.yaml's policy


def _frame(spark, rows: int, bad: int = 0):
    return spark.createDataFrame([(i, -1 if i < bad else i) for i in range(rows)], "id long, amount long")


def _history(spark, report: str) -> dict[str, set]:
    rows = read_history(report, spark=spark).collect()
    return {c: sorted((r["check_name"], r["published"], r["total_rows"], r["valid_rows"]) for r in rows
                      if r["contract"] == c)
            for c in sorted({r["contract"] for r in rows})}


def _rows(published: bool, total: int, valid: int) -> list[tuple]:
    return [(name, published, total, valid) for name in RULES]


def test_each_contract_of_a_shared_run_id_keeps_its_report_rows_and_evidence(spark, tmp_path):
    report = str(tmp_path / "report")
    shared = {"report": report, "run_id": RUN, "pipeline": PIPELINE, "lineage": "none"}
    orders, ledger = _contract("orders"), _contract("ledger", minimum_valid_ratio=0.9)
    dq_governance.run(_frame(spark, 10), orders, target=str(tmp_path / "orders"),
                      quarantine=str(tmp_path / "orders_q"), **shared)
    blocked = dq_governance.run(_frame(spark, 10, bad=5), ledger, target=str(tmp_path / "ledger"),
                                quarantine=str(tmp_path / "ledger_q"), raise_on_block=False, **shared)
    assert blocked.published is False
    history = _history(spark, report)
    assert history == {"ledger": _rows(False, 10, 5), "orders": _rows(True, 10, 10)}
    # the blocked attempt's evidence: its five invalid rows, as blocked
    evidence = spark.read.parquet(str(tmp_path / "ledger_q")).collect()
    assert sorted((r["id"], r["_dq_disposition"]) for r in evidence) == [(i, "blocked") for i in range(5)]
    assert not (tmp_path / "ledger").exists()
    # orders retried: its own rows replaced, ledger's kept
    dq_governance.run(_frame(spark, 12), orders, target=str(tmp_path / "orders"),
                      quarantine=str(tmp_path / "orders_q"), mode="overwrite", **shared)
    assert _history(spark, report) == {"ledger": _rows(False, 10, 5), "orders": _rows(True, 12, 12)}


def test_two_contracts_sharing_a_quarantine_and_a_run_id_are_refused(spark, tmp_path):
    shared = {"quarantine": str(tmp_path / "q"), "run_id": RUN, "pipeline": PIPELINE, "lineage": "none"}
    dq_governance.run(_frame(spark, 4, bad=1), _contract("orders", on_failure="quarantine"),
                      target=str(tmp_path / "orders"), **shared)
    with pytest.raises(ConfigError) as caught:
        dq_governance.run(_frame(spark, 4, bad=2), _contract("ledger", on_failure="quarantine"),
                          target=str(tmp_path / "ledger"), **shared)
    assert str(caught.value) == (
        f"quarantine {tmp_path}/q: run id {RUN} already holds rows of contract orders, which this run of contract "
        "ledger would delete; give each contract its own quarantine")
    rows = spark.read.parquet(str(tmp_path / "q")).collect()
    assert sorted((r["_dq_contract"], r["id"]) for r in rows) == [("orders", 0)]
    assert not (tmp_path / "ledger").exists()

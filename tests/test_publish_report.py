"""Report history: one row per rule per run, PII-safe rows, idempotent per run_id, partitioned by pipeline."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone

import pytest

import _publish_fixtures as fx
from dq_governance.checks.result import CheckResult, GateDecision
from dq_governance.publish.report import REPORT_COLUMNS, read_history, report_rows, run_row_counts, write_report


def _plain_result(run_id: str = "run-1", pipeline: str = "mini-pipe", total: int = 6) -> CheckResult:
    moment = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
    return CheckResult(
        run_id=run_id, contract_name="mini", contract_version="1.2.3", pipeline=pipeline, rules=fx.rules(),
        total_rows=total, valid_rows=3, invalid_rows=total - 3, status="failed",
        gate=GateDecision(False, False, ["x"]), started_at=moment, finished_at=moment, source="mem://mini",
        pii_columns=["valor"],
    )


def test_report_rows_fields_and_values():
    rows = report_rows(_plain_result(), masking="disabled")
    assert len(rows) == 6 and all(list(row) == list(REPORT_COLUMNS) for row in rows)
    first = rows[0]
    assert (first["pipeline"], first["run_id"], first["contract"], first["contract_version"]) == (
        "mini-pipe", "run-1", "mini", "1.2.3")
    assert (first["rule_type"], first["check_name"], first["column"], first["dimension"], first["severity"]) == (
        "range", "valor_range", "valor", "validity", "error")
    assert (first["passed"], first["failed_count"], first["run_status"], first["total_rows"]) == (False, 1, "failed", 6)
    assert first["quality_score"] == 0.5
    assert first["validated_at"] == datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
    assert {row["masking"] for row in rows} == {"disabled"}  # --no-mask is on record


def test_report_rows_withhold_value_revealing_metrics_of_pii_columns():
    rows = {row["check_name"]: row for row in report_rows(_plain_result())}
    # `max` returns one of the column's own values; valor is PII in this contract
    assert rows["valor_max"]["metric_value"] is None
    assert "20" not in rows["valor_max"]["message"]
    assert rows["valor_max"]["passed"] is True and rows["valor_max"]["threshold"] == "must_be < 100"
    plain = dataclasses.replace(_plain_result(), pii_columns=[])
    assert {row["check_name"]: row for row in report_rows(plain)}["valor_max"]["metric_value"] == 20.0


def test_method_on_result_matches_function():
    result = _plain_result()
    result.masking = "applied"
    assert result.report_rows() == report_rows(result)


@pytest.mark.spark
def test_write_is_idempotent_per_run_and_partitioned_by_pipeline(spark, tmp_path):
    path = str(tmp_path / "report")
    assert write_report(spark, report_rows(_plain_result("run-1")), path) == 6
    assert write_report(spark, report_rows(_plain_result("run-1")), path) == 6  # same run again
    assert read_history(path, spark=spark).count() == 6
    write_report(spark, report_rows(_plain_result("run-2", total=9)), path)
    write_report(spark, report_rows(_plain_result("run-9", pipeline="other")), path)
    assert read_history(path, spark=spark).count() == 18
    assert read_history(path, spark=spark, pipeline="mini-pipe").count() == 12
    assert sorted(p.name for p in (tmp_path / "report").iterdir() if not p.name.startswith(("_", "."))) == [
        "pipeline=mini-pipe", "pipeline=other"]
    row = read_history(path, spark=spark, pipeline="other").where("check_name = 'valor_range'").first()
    assert (row["run_id"], row["failed_count"], row["passed"], row["metric_value"]) == ("run-9", 1, False, None)
    assert row["validated_at"] == datetime(2026, 11, 29, 12, 0)  # session time zone is UTC
    counts = run_row_counts(path, pipeline="mini-pipe", spark=spark)
    assert sorted(counts) == [("run-1", 6), ("run-2", 9)]
    # one check time for both runs: the newer run id first; a run's own id is left out before the limit
    assert run_row_counts(path, pipeline="mini-pipe", spark=spark, limit=1) == [("run-2", 9)]
    assert run_row_counts(path, pipeline="mini-pipe", spark=spark, limit=1, exclude_run_id="run-2") == [("run-1", 6)]


@pytest.mark.spark
def test_write_report_rejects_rows_of_two_runs(spark, tmp_path):
    rows = report_rows(_plain_result("a")) + report_rows(_plain_result("b"))
    with pytest.raises(ValueError, match="exactly one run"):
        write_report(spark, rows, str(tmp_path / "r"))

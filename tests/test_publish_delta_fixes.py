"""Delta publication's edge cases, run once in one Delta process (`tests/publish_delta_job.py WORKDIR fixes`).

Spark 4.0 only (left out of `make test-35` for CI's time, about 140 s there): the writer's Delta paths these cases
branch from (overwrite, append and its retry, merge and its guard, the report) run on Spark 3.5 and its Delta in
tests/test_publish_delta.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from jvm_startup import long_jvm_env

pytestmark = [pytest.mark.spark, pytest.mark.integration]


@pytest.fixture(scope="module")
def fixes(repo, tmp_path_factory):
    """`publish_delta_job.py WORKDIR fixes`, run once for the tests below (one Delta session)."""
    pytest.importorskip("delta")
    proc = subprocess.run(
        [sys.executable, str(repo / "tests/publish_delta_job.py"), str(tmp_path_factory.mktemp("fixes")), "fixes"],
        capture_output=True, text=True, timeout=900, cwd=str(repo), env=long_jvm_env(),
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


NULL_KEY_REASON = ("merge keys (id) are null in 1 row(s); a Delta MERGE matches no null key, so every retry of the "
                   "run would insert those rows again")


def test_delta_merge_with_a_null_key_is_blocked_on_every_attempt(fixes):
    # an optional key left null, and (on_failure warn) a required key that does not cast: published as null
    for case in ("optional", "warn"):
        assert fixes[f"merge_null_{case}"] == [
            {"published": False, "reason": NULL_KEY_REASON, "rows": [[1, "a"]], "version_unchanged": True}] * 2


def test_delta_table_overwrite_keeps_a_delta_table(fixes):
    assert fixes["table_overwrite"] == {"provider": "delta", "partition_by": ["v"], "rows": [[1, "a"]],
                                        "operations": ["CREATE TABLE", "WRITE", "WRITE"]}


def test_delta_schema_change_is_refused_before_the_quarantine_is_promoted(fixes):
    error = fixes["type_change_error"]
    assert error.startswith("InputDataError: cannot write to ") and error.endswith(
        "/fix_type/items: schema differs from the existing Delta table (v: int in the table, string now)")
    assert fixes["type_change_target"] == [[1, 5]]
    assert fixes["type_change_quarantine"] == [["a1", "6"]]  # nothing of run a2


def test_failed_target_promotion_removes_the_runs_delta_quarantine_rows(fixes):
    assert fixes["undo_error"] == "target unavailable"
    assert fixes["undo_target"] == [[1, "a"]]
    assert fixes["undo_quarantine"] == [["u0", "u0"]]


def test_delta_replace_partitions_with_a_null_partition_value_twice(fixes):
    assert fixes["null_partition"] == [[[1, None], [2, "x"]]] * 2


def test_delta_quarantine_takes_a_new_column_and_a_colon_run_id_retry(fixes):
    assert fixes["new_column_error"] is None
    assert fixes["new_column_quarantine"] == [["2026-01-01T00:00:00Z", "bad2", "w3"], ["b1", "bad", None]]
    assert fixes["new_column_retry_quarantine"] == [["b1", "bad", None]]  # the retry had no invalid row


def test_a_run_id_shared_by_two_contracts_keeps_each_contracts_delta_report_rows(fixes):
    # the second contract's blocked attempt is recorded and keeps its evidence; the first's retry replaces its own
    # rows only (the Delta report's replaceWhere names the contract)
    shared = fixes["shared_run_id"]
    assert shared["blocked_published"] is False
    assert shared["history"] == [["items", True], ["strict", False]]
    assert shared["rows_per_contract"]["items"] > 0 and shared["rows_per_contract"]["strict"] > 0
    assert shared["strict_quarantine"] == [["x", "blocked"]]


def test_runs_of_one_pipeline_writing_a_delta_history_at_once_all_keep_their_rows(fixes):
    # Delta refuses the later of two commits to one `pipeline=` partition (and of two creating the table): the
    # report's replace of its own rows is tried again instead of losing them
    concurrent = fixes["concurrent_reports"]
    assert concurrent["errors"] == []
    assert concurrent["rows"] == [[f"r{i}{side}", 4] for i in range(3) for side in "ab"]  # one row per rule


def test_delta_retries_keep_each_contract_and_one_attempt_per_run(fixes):
    # two contracts of a pipeline sharing a run id append to one target: two runs, neither skipped
    assert fixes["shared_append_ids"] == [1, 2, 4, 5, 6]
    # a retry with other data: Delta keeps the first attempt's append, and the run keeps that attempt's quarantine
    # and report rows too (target 2 + quarantine 1 = its 3 input rows)
    assert fixes["skipped_retry"] == {"outputs": {"target": True, "quarantine": True}, "target": [[1], [2]],
                                      "quarantine": [["bad"]], "report": [[3, 2]]}
    # a retry whose target fails after an earlier attempt published leaves that attempt's quarantine rows
    assert fixes["kept_error"] == "target unavailable"
    assert fixes["kept_quarantine"] == [["k1", "bad1"]]

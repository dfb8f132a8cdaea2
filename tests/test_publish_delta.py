"""Delta targets: overwrite, append, merge on keys, the merge guard, idempotent Delta report and quarantine.

Delta needs a session with its jars and SQL extension, so the job runs in its own process
(tests/publish_delta_job.py); the jars come from Maven through spark.jars.packages.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from jvm_startup import long_jvm_env

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def test_delta_publication(repo, tmp_path):
    pytest.importorskip("delta")
    proc = subprocess.run(
        [sys.executable, str(repo / "tests/publish_delta_job.py"), str(tmp_path)],
        capture_output=True, text=True, timeout=900, cwd=str(repo), env=long_jvm_env(),
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    seen = json.loads(lines[-1][len("RESULT "):])
    assert seen["after_overwrite"] == {"1": "a", "2": "b", "3": "c"}  # the null-id row went to quarantine
    assert seen["after_append"] == {"1": "a", "2": "b", "3": "c", "4": "d"}
    # the append retried with its run id: Delta skipped the commit, the target holds 4 rows, not 5
    assert seen["append_retry_rows"] == 4 and seen["append_retry_version_unchanged"] is True
    assert seen["append_retry_skipped"] == {"target": True, "quarantine": True}  # both kept the first attempt's
    assert seen["after_merge"] == {"1": "a", "2": "b", "3": "C", "4": "d", "5": "e"}  # 3 updated, 5 inserted
    assert seen["merge_guard_rule"] == 0
    # duplicate source keys: a clear report, no MERGE attempted, no new table version
    assert seen["blocked"] is True
    assert seen["block_reasons"][-1] == (
        "merge keys (id) are not unique in the source: 2 row(s) share a key with another row; "
        "a Delta MERGE would fail with 'multiple source rows matched'")
    assert seen["version_unchanged"] is True
    assert seen["after_blocked_merge"] == seen["after_merge"]
    # one row per rule per run (3 contract rules + the derived undeclared_columns rule); r2 and r3 ran twice
    # and still have their rows; r3 and r4 have the merge guard too
    assert seen["report_rows_per_run"] == {"r1": 4, "r2": 4, "r3": 5, "r4": 5}
    assert seen["quarantine"] == [["r1", None, "quarantined"], ["r4", "6", "blocked"], ["r4", "6", "blocked"]]
    # MERGE into a catalog table (created as Delta by the first run); the null-id row was quarantined
    assert seen["table_after_merges"] == {"1": "a", "2": "B", "3": "c"}
    assert seen["table_provider"] == "delta"
    # `dqgov check --output-format delta --mode merge --merge-keys venda_id`, run twice: same 3 rows
    assert seen["cli_codes"] == [0, 0]
    assert seen["cli_sales_ids"] == [1001, 1002, 1003]
    # appends into a new Delta path: run a1 twice holds 2 rows; two runs without a run id add 2 each
    assert seen["path_retry_rows"] == 2 and seen["path_fresh_rows"] == 6
    assert seen["path_quarantine_rows"] == 3  # a1 once (replaced), then one row per fresh run
    assert seen["path_report"] == [3 * 4, 3]  # 4 rules per run (3 contract rules + undeclared_columns), 3 runs
    # a Delta catalog table: d1 twice holds 2 rows, d2 adds 2; versions: create, d1, d2 (the retry skipped)
    assert (seen["delta_table_retry_rows"], seen["delta_table_rows"], seen["delta_table_versions"]) == (2, 4, 3)

"""Wide contracts (tests/wide_job.py, 4 rules per pair of columns, each job in a JVM of its own).

No cliff: no generated method passes the JVM's 8,000-byte limit.

The JVM never compiles a method of more than 8,000 bytes of bytecode (unless started with
-XX:-DontCompileHugeMethods), so a pass whose per-row method grows with every rule would fall off a cliff
past some number of rules. The engine lays the pass out in bounded groups (checks.engine._BitLayout);
the job runs a 128-rule contract (30 pairs of columns) and reads Spark's own report of each whole-stage
function above the limit.

Bounded memory: the split's kept rows spill to disk instead of failing when memory is short.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.spark


def _job(tmp_path: Path, *args: str) -> dict:
    log = tmp_path / "job.log"
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")}
    with log.open("w") as stderr:
        proc = subprocess.run([sys.executable, str(REPO / "tests" / "wide_job.py"), args[0], str(tmp_path),
                               *args[1:]], stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=900, cwd=REPO,
                              env=env)
    assert proc.returncode == 0, log.read_text()[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_128_rule_check_generates_no_method_past_the_jit_limit(tmp_path):
    sizes = _job(tmp_path, "codegen", "30", str(tmp_path / "job.log"))
    # the detector works: one expression over all 30 pairs' flags is over the limit
    assert len(sizes["control"]) == 1 and sizes["control"][0] > 8000
    assert sizes["counts"] == [] and sizes["split"] == []


def test_the_kept_rows_spill_to_disk_when_memory_is_short(tmp_path):
    found = _job(tmp_path, "spill", "30", "200000")
    expected = found["expected"]
    assert len(expected) == 60 and all(0 < count < 200000 for count in expected.values())
    for mode in ("counts", "split"):
        assert {name: found[mode][name] for name in expected} == expected
        assert all(found[mode][f"n{i}_range"] == 0 and found[mode][f"c{i}_regex"] == 0 for i in range(30))
    total, valid, valid_read, quarantined_read, valid_counts = found["totals"]
    assert (total, valid_read + quarantined_read, valid_read) == (200000, 200000, valid) and valid == valid_counts
    assert found["disk_bytes"] > 0  # what memory could not hold went to disk

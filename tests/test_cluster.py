"""Publication, masking and lineage on `local-cluster[2,1,1024]`: two executor JVMs, the jar via spark.jars.

tests/cluster_job.py runs in a subprocess (one JVM holds one SparkContext; the suite's is local[2]), once per
module: the cluster starts in 15-40 s here, so every assertion reads that one run's observations.
The same file runs under the Spark 3.5 venv (`make test-35`): the job uses the interpreter running pytest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _hmac_oracle import pseudonym, raw_cpfs

from lineage_schema import validation_errors

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "examples" / "data"
KEY = "cluster-masking-key-3e9a71c40b5d"  # made up; every masked CPF must equal hmac(KEY, digits)

pytestmark = [pytest.mark.spark, pytest.mark.cluster]


def job_env() -> dict[str, str]:
    """The job's environment: this interpreter's PySpark as SPARK_HOME, loopback only, no inherited session mode."""
    import pyspark

    dropped = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_HOME", "PYSPARK_PYTHON", "OPENLINEAGE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped) and not k.startswith("DQGOV_")}
    env.update({
        "SPARK_HOME": str(Path(pyspark.__file__).parent),  # spark-class and jars/ of the installed wheel
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "DQGOV_MASKING_KEY": KEY,
        "PYTHONPATH": os.pathsep.join([str(REPO / "tests"), env.get("PYTHONPATH", "")]),
    })
    return env


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    work = tmp_path_factory.mktemp("cluster")
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "cluster_job.py"), str(work)], cwd=REPO,
                          env=job_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = next(x for x in reversed(proc.stdout.splitlines()) if x.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    result["stderr"] = proc.stderr
    return result


def test_tasks_ran_in_two_executor_jvms(seen):
    import pyspark

    assert seen["master"] == "local-cluster[2,1,1024]"
    assert seen["spark_version"] == pyspark.__version__  # the job ran this interpreter's Spark (4.0 or 3.5)
    assert seen["task_jvms"] == ["0", "1"]  # an 8-partition job, its tasks in both executors, none in the driver


def test_seed_lab_is_blocked_and_the_target_untouched(seen):
    seed = seen["seed"]
    assert seed["first_published"] and seed["first_target_rows"] == 1
    assert seed["counts"] == [7, 1, 6]
    assert (seed["published"], seed["status"]) == (False, "failed")
    assert seed["gate_reasons"] == ["valid ratio 0.1429 is below minimum_valid_ratio 0.99"]
    assert seed["target_unchanged"] is True  # byte for byte, after the blocked run
    assert seed["quarantine"] == {"quarantined": 6, "blocked": 6}
    assert seed["leftovers"] == []  # no staging directory left beside the outputs
    assert seed["report_rows"] == {run_id: seed["rules"] for run_id in seed["run_ids"]}


def test_sales_publishes_three_masked_rows(seen):
    sales = seen["sales"]
    assert sales["published"] and sales["counts"] == [6, 3, 3] and sales["quarantine_rows"] == 3
    raw = raw_cpfs("sales", "venda_id")
    assert sales["rows"] == {venda: pseudonym(KEY, raw[venda]) for venda in ("1001", "1002", "1003")}


@pytest.mark.parametrize("engine", ["jvm", "sha2"])
def test_masked_cpfs_equal_python_hmac(seen, engine):
    masked = seen["masks"][engine]
    raw = raw_cpfs("customers", "cliente_id")
    assert len(raw) == 7 and masked["cpf"] == {cid: pseudonym(KEY, cpf) for cid, cpf in raw.items()}
    # the JVM engine ran as the extension jar's UDF inside the executors (so the jar reached them)
    assert (masked["jvm_udf_in_plan"], masked["sha2_in_plan"]) == (engine == "jvm", engine == "sha2")


def test_events_validate_against_the_openlineage_spec(seen):
    lines = [json.loads(x) for x in Path(seen["events"]).read_text().splitlines() if x.strip()]
    by_run: dict[str, list[str]] = {}
    for event in lines:
        assert validation_errors(event) == []
        by_run.setdefault(event["run"]["runId"], []).append(event["eventType"])
    publish, blocked = seen["seed"]["run_ids"]
    assert by_run == {publish: ["START", "COMPLETE"], blocked: ["START", "FAIL"],
                      seen["sales"]["run_id"]: ["START", "COMPLETE"]}
    assert KEY not in Path(seen["events"]).read_text() and KEY not in seen["stderr"]


def test_a_jar_on_the_drivers_class_path_alone_steps_aside_instead_of_failing_tasks(tmp_path):
    """The extension and the JVM HMAC need the jar on the executors: without it each logs one line and steps aside."""
    import pyspark

    from enforce_helpers import _contract, _dqgov

    contract = _contract(tmp_path, "orders_gov", path=str(tmp_path / "orders"))
    _dqgov("manifest", str(contract), "-o", str(tmp_path / "manifest.json"), cwd=tmp_path)
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "cluster_driver_only_job.py"), str(tmp_path),
                           str(tmp_path / "manifest.json")], cwd=REPO, env=job_env(), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    seen = json.loads(next(x for x in reversed(proc.stdout.splitlines()) if x.startswith("RESULT ")).removeprefix(
        "RESULT "))
    # both writes ran ungoverned: the 7 seed orders (a failing gate in block mode) and the ungoverned path
    assert (seen["orders_rows"], seen["plain_rows"]) == (7, 10)
    assert seen["commit_protocol"] is None and seen["history_written"] is False
    lines = proc.stderr.splitlines()
    stepped_aside = [line for line in lines if "the executors cannot load this jar" in line]
    assert len(stepped_aside) == (1 if pyspark.__version__.startswith("4.") else 0), lines[-40:]  # 3.5: unsupported
    assert len([line for line in lines if "the sha2 path is used (the same bytes)" in line]) == 1, lines[-40:]
    raw = raw_cpfs("customers", "cliente_id")
    assert seen["sha2_in_plan"] and seen["cpf"] == {cid: pseudonym(KEY, cpf) for cid, cpf in raw.items()}

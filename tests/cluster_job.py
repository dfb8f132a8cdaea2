"""Run by tests/test_cluster.py in its own process: publication and masking on `local-cluster[2,1,1024]`.

Usage: python tests/cluster_job.py WORKDIR  -> prints `RESULT {json}` with what it observed.
local-cluster starts a standalone master, two workers and one executor JVM per worker, launched from the
installed PySpark's own jars (SPARK_HOME = the pyspark package); our extension jar reaches them through
spark.jars. One JVM holds one SparkContext, so this cannot share the suite's local[2] session.
DQGOV_MASKING_KEY must be set (the seed contracts mask with hmac).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import _publish_fixtures as fx
import dq_governance
from dq_governance.checks import compat
from dq_governance.contracts.load import load_contract
from dq_governance.lineage.spark import with_extension_jar
from dq_governance.masking import apply_masks
from dq_governance.publish.report import read_history

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "examples" / "data"
MASTER = "local-cluster[2,1,1024]"
EXECUTORS = 2
REGISTER_TIMEOUT_S = 180


def session(work: Path) -> SparkSession:
    """The cluster session; fails unless the extension jar is built (it must reach the executors)."""
    settings = with_extension_jar({})
    if not settings.get("spark.jars"):
        sys.exit("the extension jar is not built: run `make listener`")
    builder = SparkSession.builder.master(MASTER).appName("dqgov-cluster-test")
    for key, value in {
        **settings,
        "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
        "spark.executor.memory": "1g",  # the whole of a worker's 1024 MB
        "spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2",
        "spark.sql.session.timeZone": "UTC", "spark.sql.ansi.enabled": "true",
        compat.TIME_PARSER_POLICY_KEY: compat.TIME_PARSER_POLICY,  # as in dqgov's sessions (3.5: EXCEPTION)
        "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
        "spark.sql.warehouse.dir": str(work / "warehouse"),
    }.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def wait_for_executors(spark: SparkSession) -> float:
    """Seconds until both executor JVMs registered (the session returns before they all have)."""
    start = time.monotonic()
    tracker = spark.sparkContext._jsc.sc()
    while tracker.getExecutorMemoryStatus().size() - 1 < EXECUTORS:  # the map holds the driver too
        if time.monotonic() - start > REGISTER_TIMEOUT_S:
            sys.exit(f"only {tracker.getExecutorMemoryStatus().size() - 1} of {EXECUTORS} executors registered")
        time.sleep(0.2)
    return time.monotonic() - start


def task_jvms(spark: SparkSession) -> list[str]:
    """The executor ids whose JVMs ran the tasks of an 8-partition job (`--executor-id` of their command)."""
    commands = (spark.range(0, 8, 1, 8)
                .select(F.expr("reflect('java.lang.System', 'getProperty', 'sun.java.command')").alias("c"))
                .distinct().collect())
    return sorted(m.group(1) if (m := re.search(r"--executor-id (\S+)", r.c)) else "driver" for r in commands)


def csv(spark: SparkSession, name: str):
    return spark.read.option("header", True).csv(str(DATA / f"{name}.csv"))


def with_policy(contract, on_failure: str, ratio: float | None):
    quality = contract.quality.model_copy(update={"on_failure": on_failure, "minimum_valid_ratio": ratio})
    return contract.model_copy(update={"quality": quality})


def dispositions(spark: SparkSession, path: Path) -> dict[str, int]:
    rows = spark.read.parquet(str(path)).groupBy("_dq_disposition").count().collect()
    return {r["_dq_disposition"]: r["count"] for r in rows}


def seed_lab(spark: SparkSession, work: Path, events: str) -> dict:
    """The seed lab twice into one target: published under quarantine (1 row), then blocked by its gate."""
    orders, seed = csv(spark, "orders"), load_contract(REPO / "contracts" / "orders.yaml")
    outs = {"target": str(work / "orders"), "quarantine": str(work / "orders_quarantine"),
            "report": str(work / "report"), "lineage": events, "pipeline": "cluster_it"}
    first = dq_governance.run(orders, with_policy(seed, "quarantine", None), **outs)
    before = fx.tree(outs["target"])
    blocked = dq_governance.run(orders, seed, raise_on_block=False, **outs)
    history = read_history(outs["report"], spark=spark)
    return {
        "run_ids": [first.run_id, blocked.run_id],
        "report_rows": {r["run_id"]: r["count"] for r in history.groupBy("run_id").count().collect()},
        "rules": len(blocked.rules), "first_published": first.published,
        "first_target_rows": spark.read.parquet(outs["target"]).count(),
        "counts": [blocked.total_rows, blocked.valid_rows, blocked.invalid_rows],
        "published": blocked.published, "status": blocked.status, "gate_reasons": blocked.gate.reasons,
        "target_unchanged": fx.tree(outs["target"]) == before and bool(before),
        "quarantine": dispositions(spark, work / "orders_quarantine"),
        "leftovers": sorted(p.name for p in work.iterdir() if p.name.startswith(".")),
    }


def sales(spark: SparkSession, work: Path, events: str) -> dict:
    """The sales example published; its rows read back (reference paths are relative to the repo)."""
    result = dq_governance.run(csv(spark, "sales"), load_contract(REPO / "contracts" / "sales.yaml"),
                               target=str(work / "sales"), quarantine=str(work / "sales_quarantine"),
                               report=str(work / "report"), lineage=events, pipeline="cluster_it")
    published = spark.read.parquet(str(work / "sales")).collect()
    return {
        "run_id": result.run_id, "published": result.published,
        "counts": [result.total_rows, result.valid_rows, result.invalid_rows],
        "rows": {str(r["venda_id"]): r["cpf"] for r in published},
        "quarantine_rows": spark.read.parquet(str(work / "sales_quarantine")).count(),
    }


def masked_cpfs(spark: SparkSession) -> dict:
    """customers.csv's CPFs masked by each HMAC engine, with the marker of that engine in the executed plan."""
    contract = load_contract(REPO / "contracts" / "customers.yaml")
    out = {}
    for engine in ("jvm", "sha2"):
        masked = apply_masks(csv(spark, "customers"), contract, hmac_engine=engine).select("cliente_id", "cpf")
        rows = masked.collect()
        plan = masked._jdf.queryExecution().executedPlan().toString()
        out[engine] = {"cpf": {r["cliente_id"]: r["cpf"] for r in rows},
                       "jvm_udf_in_plan": "dqgov_hmac_cpf_hex_" in plan, "sha2_in_plan": "sha2(" in plan}
    return out


def main(work: Path) -> None:
    """Every observation as one RESULT line; the session is stopped even when one step fails."""
    started = time.monotonic()
    spark = session(work)
    spark.sparkContext.setLogLevel("ERROR")
    seen: dict = {"session_s": round(time.monotonic() - started, 1),
                  "executors_wait_s": round(wait_for_executors(spark), 1)}
    try:
        events = f"file:{work / 'events.jsonl'}"
        seen["master"] = spark.sparkContext.master
        seen["spark_version"] = spark.version
        seen["task_jvms"] = task_jvms(spark)
        seen["seed"] = seed_lab(spark, work, events)
        seen["sales"] = sales(spark, work, events)
        seen["masks"] = masked_cpfs(spark)
        seen["events"] = str(work / "events.jsonl")
    finally:
        spark.stop()
    seen["total_s"] = round(time.monotonic() - started, 1)
    print("RESULT " + json.dumps(seen, sort_keys=True))


if __name__ == "__main__":
    os.chdir(REPO)  # the sales contract's reference paths are relative to the project
    main(Path(sys.argv[1]).resolve())

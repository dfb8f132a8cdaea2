"""Run by tests/test_cluster.py in its own process: the extension jar on the driver's class path alone.

Usage: python tests/cluster_driver_only_job.py WORKDIR MANIFEST  -> prints `RESULT {json}`.
`local-cluster[1,1,1024]` with `spark.driver.extraClassPath` naming the jar (not `spark.jars`), the session
extension in block mode and a manifest governing WORKDIR/orders. The executor cannot load the jar's classes,
so the extension and the JVM HMAC must step aside (one line each) instead of failing the job's tasks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from cluster_job import DATA, REPO, csv
from dq_governance.contracts.load import load_contract
from dq_governance.lineage.enrich import find_extension_jar
from dq_governance.masking import apply_masks


def session(work: Path, manifest: str) -> SparkSession:
    """One executor JVM; the extension jar on the driver's class path only."""
    builder = SparkSession.builder.master("local-cluster[1,1,1024]").appName("dqgov-driver-only-test")
    for key, value in {
        "spark.driver.extraClassPath": find_extension_jar(),
        "spark.sql.extensions": "io.github.dqgovernance.spark.GovernanceExtensions",
        "spark.dqgov.manifest": manifest, "spark.dqgov.enforce": "block",
        "spark.dqgov.history": str(work / "history"),
        "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false", "spark.executor.memory": "1g",
        "spark.sql.shuffle.partitions": "1", "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
    }.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def main(work: Path, manifest: str) -> None:
    spark = session(work, manifest)
    seen: dict = {}
    try:
        orders = spark.read.option("header", True).csv(str(DATA / "orders.csv"))
        orders.write.mode("append").parquet(str(work / "orders"))  # governed by the manifest, gate failing
        spark.range(10).write.parquet(str(work / "plain"))  # governed by nothing
        seen["orders_rows"] = spark.read.parquet(str(work / "orders")).count()
        seen["plain_rows"] = spark.read.parquet(str(work / "plain")).count()
        seen["commit_protocol"] = spark.conf.get("spark.sql.sources.commitProtocolClass", None)
        seen["history_written"] = (work / "history").exists()
        masked = apply_masks(csv(spark, "customers"), load_contract(REPO / "contracts" / "customers.yaml"))
        seen["cpf"] = {r["cliente_id"]: r["cpf"] for r in masked.select("cliente_id", "cpf").collect()}
        seen["sha2_in_plan"] = "sha2(" in masked._jdf.queryExecution().executedPlan().toString()
    finally:
        spark.stop()
    print("RESULT " + json.dumps(seen, sort_keys=True))


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), sys.argv[2])

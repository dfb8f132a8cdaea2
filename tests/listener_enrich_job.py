"""Subprocess job for test_listener_enrich.py: the real OpenLineage listener with our transformer.

Usage: python tests/listener_enrich_job.py EVENTS_JSONL WORKDIR MANIFEST. Prints one JSON line.
WORKDIR/examples/data/orders.csv is the path contracts/orders.yaml names (compiled with --base-dir WORKDIR).
Steps: (1) write the seed orders there; (2) check it; (3) record the result through py4j; (4) read it into
another path; (5) overwrite it again. Own process: one JVM holds one SparkContext, the listener is fixed at start.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from dq_governance.api import check
from dq_governance.lineage.jvm_registry import record_results, registry
from dq_governance.lineage.spark import spark_session

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "examples" / "data" / "orders.csv"
CONTRACT = REPO / "contracts" / "orders.yaml"


def main(events: str, workdir: str, manifest: str) -> None:
    work = Path(workdir)
    governed = str(work / "examples" / "data" / "orders.csv")
    spark = spark_session(
        "dqgov enrich it", lineage=f"file:{events}", enrich=manifest, master="local[1]",
        **{"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "1", "spark.default.parallelism": "1",
           "spark.sql.session.timeZone": "UTC", "spark.sql.ansi.enabled": "true"},
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        seed = spark.read.option("header", True).csv(str(SEED))
        seed.write.mode("overwrite").option("header", True).csv(governed)  # (1)
        result = check(spark.read.option("header", True).csv(governed), str(CONTRACT))  # (2)
        recorded = record_results(spark, "file", governed, result)  # (3)
        spark.read.option("header", True).csv(governed).write.mode("overwrite").parquet(str(work / "copy"))  # (4)
        seed.write.mode("overwrite").option("header", True).csv(governed)  # (5)
        print(json.dumps({
            "recorded": recorded,
            "registry_has": bool(registry(spark).has("file", governed)),
            "valid_rows": result.valid_rows, "invalid_rows": result.invalid_rows,
            "unique_failed": result.rule("pedido_id_unique").failed_count,
        }))
    finally:
        spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:4])

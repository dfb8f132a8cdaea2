"""Subprocess job for test_lineage_listener.py: a SparkSession with the real OpenLineage listener.

Usage: python tests/listener_job.py EVENTS_JSONL WORKDIR. Prints one JSON line with the run ids.
It needs its own process: one JVM holds one SparkContext, and the listener is fixed at start-up.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from dq_governance.api import run
from dq_governance.contracts.model import Contract
from dq_governance.lineage.spark import application_run_id, spark_session

REPO = Path(__file__).resolve().parent.parent
CSV = REPO / "examples" / "data" / "orders.csv"


def main(events: str, workdir: str) -> None:
    work = Path(workdir)
    doc = yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text())
    blocking = Contract.model_validate(doc)
    # The same contract under `quarantine` with no ratio floor: the 1 valid row is published, so the run
    # COMPLETEs; the seed contract itself (blocking) gives the FAIL run.
    doc["quality"]["on_failure"] = "quarantine"
    doc["quality"].pop("minimum_valid_ratio")
    publishing = Contract.model_validate(doc)
    spark = spark_session(
        "dqgov listener it", lineage=f"file:{events}", contract=publishing, master="local[1]",
        **{"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "1", "spark.default.parallelism": "1",
           "spark.sql.session.timeZone": "UTC", "spark.sql.ansi.enabled": "true"},
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        df = spark.read.option("header", True).csv(str(CSV))
        ok = run(df, publishing, target=str(work / "target"), quarantine=str(work / "quarantine"),
                 lineage=f"file:{events}", source=str(CSV), pipeline="listener_it", raise_on_block=False)
        blocked = run(df, blocking, target=str(work / "blocked_target"), quarantine=str(work / "blocked_quarantine"),
                      lineage=f"file:{events}", source=str(CSV), pipeline="listener_it", raise_on_block=False)
        print(json.dumps({
            "application_run_id": application_run_id(spark),
            "complete_run_id": ok.run_id, "complete_published": ok.published,
            "valid_rows": ok.valid_rows, "invalid_rows": ok.invalid_rows,
            "fail_run_id": blocked.run_id, "fail_published": blocked.published, "work": str(work),
        }))
    finally:
        spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:3])

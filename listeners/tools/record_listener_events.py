"""Record the real OpenLineage Spark listener's events for the listener module's JUnit fixtures.

Usage: python listeners/tools/record_listener_events.py [OUT_DIR]
Runs three small jobs with the listener and a plain file transport (no transformer), then keeps one
COMPLETE event per job in OUT_DIR (default listeners/src/test/resources/events/):
  read_csv.json       a read of examples/data/orders.csv
  write_parquet.json  that CSV written as parquet to a path
  table_write.json    examples/data/customers.csv written with saveAsTable (symlinks to the table)
Paths in the events are under a fixed work dir, so the fixtures are stable across re-recordings.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from dq_governance.lineage.spark import spark_session

REPO = Path(__file__).resolve().parents[2]
WORK = Path("/tmp/dqgov-listener-fixtures")


def main(out_dir: str | None = None) -> None:
    out = Path(out_dir) if out_dir else REPO / "listeners" / "src" / "test" / "resources" / "events"
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    events = WORK / "events.jsonl"
    spark = spark_session(
        "dqgov listener fixtures", lineage=f"file:{events}", master="local[1]",
        **{"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "1",
           "spark.sql.warehouse.dir": str(WORK / "warehouse"), "spark.sql.session.timeZone": "UTC"},
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        orders = spark.read.option("header", True).csv(str(REPO / "examples" / "data" / "orders.csv"))
        orders.collect()
        orders.write.mode("overwrite").parquet(str(WORK / "lake" / "curated" / "orders"))
        customers = spark.read.option("header", True).csv(str(REPO / "examples" / "data" / "customers.csv"))
        customers.write.mode("overwrite").format("parquet").saveAsTable("crm_customers")
    finally:
        spark.stop()
    lines = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    complete = [e for e in lines if e["eventType"] == "COMPLETE" and (e.get("inputs") or e.get("outputs"))]

    def pick(predicate):  # the last COMPLETE event of a job carries its final datasets and facets
        found = [e for e in complete if predicate(e)]
        if not found:
            raise SystemExit(f"no matching event in {events}")
        return found[-1]

    chosen = {
        "read_csv.json": pick(lambda e: not e.get("outputs") and any(
            d["name"].endswith("orders.csv") for d in e["inputs"])),
        "write_parquet.json": pick(lambda e: any(d["name"].endswith("/lake/curated/orders") for d in e["outputs"])),
        "table_write.json": pick(lambda e: any("symlinks" in d.get("facets", {}) for d in e.get("outputs", []))),
    }
    out.mkdir(parents=True, exist_ok=True)
    for name, event in chosen.items():
        (out / name).write_text(json.dumps(event, indent=2, sort_keys=True) + "\n")
        print(out / name)


if __name__ == "__main__":
    main(*sys.argv[1:2])

"""Run by tests/test_publish_delta.py in its own process: Delta needs its own SparkSession (jars, extensions).

Usage: python tests/publish_delta_job.py WORKDIR  -> prints one JSON object with what it observed.
"""

from __future__ import annotations

import json
import os
import sys

from delta import configure_spark_with_delta_pip
from pyspark.sql import SparkSession

import dq_governance
from dq_governance.contracts.model import Contract
from dq_governance.errors import GateFailedError
from dq_governance.publish.report import read_history

work = sys.argv[1]
builder = (
    SparkSession.builder.master("local[1]").appName("dqgov-delta-test")
    .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.sql.session.timeZone", "UTC")
    .config("spark.sql.legacy.timeParserPolicy", "CORRECTED")  # Spark 4's default; 3.5 defaults to EXCEPTION
    .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    .config("spark.sql.warehouse.dir", f"{work}/warehouse")
)
spark = configure_spark_with_delta_pip(builder).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")

contract = Contract.model_validate({
    "contract": {"name": "items", "version": "1.0.0"}, "dataset": {"name": "items"},
    "schema": {"fields": [{"name": "id", "type": "long", "required": True}, {"name": "v", "type": "string"}]},
    "quality": {"on_failure": "quarantine"},
})
target, quarantine, report = f"{work}/items", f"{work}/quarantine", f"{work}/report"
common = {"target": target, "quarantine": quarantine, "report": report, "format": "delta",
          "quarantine_format": "delta", "report_format": "delta"}


def frame(rows):
    return spark.createDataFrame(rows, "id string, v string")


def table():
    return {r["id"]: r["v"] for r in spark.read.format("delta").load(target).collect()}


def version():
    return spark.sql(f"DESCRIBE HISTORY delta.`{target}`").agg({"version": "max"}).first()[0]


seen: dict = {}
dq_governance.run(frame([("1", "a"), ("2", "b"), ("3", "c"), (None, "bad")]), contract, run_id="r1", **common)
seen["after_overwrite"] = table()
dq_governance.run(frame([("4", "d")]), contract, mode="append", run_id="r2", **common)
seen["after_append"] = table()
# the append retried with the same run id: Delta skips the commit (txnAppId), no second copy, no new version
appended = version()
retried = dq_governance.run(frame([("4", "d")]), contract, mode="append", run_id="r2", **common)
seen["append_retry_rows"] = spark.read.format("delta").load(target).count()
seen["append_retry_version_unchanged"] = version() == appended
seen["append_retry_skipped"] = {o["kind"]: o["retry_skipped"] for o in retried.outputs}
merged = dq_governance.run(frame([("3", "C"), ("5", "e")]), contract, mode="merge", merge_keys=["id"],
                           run_id="r3", **common)
seen["after_merge"] = table()
seen["merge_guard_rule"] = merged.rule("merge_keys_unique").failed_count
before = version()
try:
    dq_governance.run(frame([("6", "x"), ("6", "y"), ("7", "z")]), contract, mode="merge", merge_keys=["id"],
                      run_id="r4", **common)
    seen["blocked"] = False
except GateFailedError as exc:
    seen["blocked"] = True
    seen["block_reasons"] = exc.result.gate.reasons
seen["version_unchanged"] = version() == before
seen["after_blocked_merge"] = table()
# the same run id again: report and quarantine rows are replaced, not doubled
dq_governance.run(frame([("3", "C"), ("5", "e")]), contract, mode="merge", merge_keys=["id"], run_id="r3", **common)
history = read_history(report, spark=spark, format="delta")
seen["report_rows_per_run"] = {r["run_id"]: r["count"] for r in history.groupBy("run_id").count().collect()}
q = spark.read.format("delta").load(quarantine)
seen["quarantine"] = sorted((r["_dq_run_id"], r["id"], r["_dq_disposition"]) for r in q.collect())
# a catalog table: the first merge creates it as Delta, the second updates and inserts by key
table_common = {"target": "items_tbl", "format": "table", "quarantine": quarantine, "quarantine_format": "delta"}
dq_governance.run(frame([("1", "a"), ("2", "b")]), contract, mode="merge", merge_keys=["id"], run_id="t1",
                  **table_common)
dq_governance.run(frame([("2", "B"), ("3", "c"), (None, "bad")]), contract, mode="merge", merge_keys=["id"],
                  run_id="t2", **table_common)
seen["table_after_merges"] = {r["id"]: r["v"] for r in spark.table("items_tbl").collect()}
seen["table_provider"] = spark.sql("DESCRIBE TABLE EXTENDED items_tbl").where("col_name = 'Provider'").first()[1]
# the CLI on the same session: sales merged into a Delta table on venda_id, twice
os.environ["DQGOV_MASKING_KEY"] = "delta-job-test-key"
from dq_governance.cli import main  # noqa: E402

cli = ["check", "contracts/sales.yaml", "--input", "examples/data/sales.csv", "--output", f"{work}/sales",
       "--output-format", "delta", "--mode", "merge", "--merge-keys", "venda_id", "--quarantine", f"{work}/sq",
       "--report", f"{work}/sr", "--lineage", "none", "--json"]
seen["cli_codes"] = [main(cli), main(cli)]
seen["cli_sales_ids"] = sorted(r["venda_id"] for r in spark.read.format("delta").load(f"{work}/sales").collect())
# appends into a new Delta path: a retried run id twice, then two runs without a run id
appends = f"{work}/appends"
two = [("1", "a"), ("2", "b"), (None, "bad")]
append_outs = {"target": appends, "quarantine": f"{work}/aq", "report": f"{work}/ar", "format": "delta",
               "quarantine_format": "delta", "report_format": "delta", "mode": "append"}
dq_governance.run(frame(two), contract, run_id="a1", **append_outs)  # creates the table, with the txn
dq_governance.run(frame(two), contract, run_id="a1", **append_outs)
seen["path_retry_rows"] = spark.read.format("delta").load(appends).count()
dq_governance.run(frame(two), contract, **append_outs)
dq_governance.run(frame(two), contract, **append_outs)
seen["path_fresh_rows"] = spark.read.format("delta").load(appends).count()
seen["path_quarantine_rows"] = spark.read.format("delta").load(f"{work}/aq").count()
append_history = read_history(f"{work}/ar", spark=spark, format="delta")
seen["path_report"] = [append_history.count(), append_history.select("run_id").distinct().count()]
# a Delta catalog table: append with the same run id twice, then another run id
spark.sql("CREATE TABLE items_append_tbl (id BIGINT, v STRING) USING delta")
table_outs = {"target": "items_append_tbl", "format": "table", "mode": "append"}
dq_governance.run(frame(two), contract, run_id="d1", **table_outs)
dq_governance.run(frame(two), contract, run_id="d1", **table_outs)
seen["delta_table_retry_rows"] = spark.table("items_append_tbl").count()
dq_governance.run(frame(two), contract, run_id="d2", **table_outs)
seen["delta_table_rows"] = spark.table("items_append_tbl").count()
seen["delta_table_versions"] = spark.sql("DESCRIBE HISTORY items_append_tbl").count()
print("RESULT " + json.dumps(seen, sort_keys=True))
spark.stop()

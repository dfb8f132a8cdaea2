"""Run by tests/test_publish_delta.py (`fixes`: test_publish_delta_fixes.py) in its own process.

Delta needs its own SparkSession (jars, extensions).

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
    .config("spark.databricks.delta.snapshotPartitions", "1")  # Delta's default 50 tasks per snapshot: a third of the job
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




def fixes() -> dict:
    """`publish_delta_job.py WORKDIR fixes`: null merge keys, Delta table overwrite, schema checks before any
    promotion, the quarantine undone, null partition values, a Delta quarantine gaining a column."""
    from dq_governance.publish import writer
    from dq_governance.session import CLASSIC

    out: dict = {}

    def contract_of(fields, **quality):
        return Contract.model_validate({"contract": {"name": "items", "version": "1.0.0"},
                                        "dataset": {"name": "items"}, "schema": {"fields": fields},
                                        **({"quality": quality} if quality else {})})

    def delta_rows(path, *cols):
        return sorted([[r[c] for c in cols] for r in spark.read.format("delta").load(path).collect()], key=str)

    def delta_version(path):
        return spark.sql(f"DESCRIBE HISTORY delta.`{path}`").agg({"version": "max"}).first()[0]

    def section(run) -> None:  # one section failing is reported under its name; the others still run
        try:
            run()
        except Exception as exc:  # noqa: BLE001 - the job reports what it saw
            out[f"{run.__name__}_crashed"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"

    optional_id = [{"name": "id", "type": "long"}, {"name": "v", "type": "string"}]
    required_id = [{"name": "id", "type": "long", "required": True}, {"name": "v", "type": "string"}]

    # 1. a merge publishing a null key is blocked, every attempt; the target stays as it was
    def merge_null() -> None:
        for case, fields, quality, rows in (
            ("optional", optional_id, {}, [("2", "b"), (None, "no-key")]),
            ("warn", required_id, {"on_failure": "warn"}, [("2", "b"), ("abc", "bad-key")]),
        ):
            where = f"{work}/fix_merge_{case}"
            spec = contract_of(fields, **quality)
            outs = {"target": f"{where}/items", "quarantine": f"{where}/q", "format": "delta", "lineage": None}
            dq_governance.run(frame([("1", "a")]), spec, run_id="base", mode="overwrite", **outs)
            before = delta_version(outs["target"])
            attempts = []
            for _ in range(2):
                res = dq_governance.run(frame(rows), spec, run_id="m1", mode="merge", merge_keys=["id"],
                                        raise_on_block=False, **outs)
                attempts.append({"published": res.published, "reason": res.gate.reasons[-1],
                                 "rows": delta_rows(outs["target"], "id", "v"),
                                 "version_unchanged": delta_version(outs["target"]) == before})
            out[f"merge_null_{case}"] = attempts

    section(merge_null)

    # 2. overwrite of an existing partitioned Delta catalog table: a Delta overwrite commit, layout kept
    def table_overwrite() -> None:
        spark.sql("CREATE TABLE fix_ow_tbl (id BIGINT, v STRING) USING delta PARTITIONED BY (v)")
        spark.sql("INSERT INTO fix_ow_tbl VALUES (9, 'old')")
        dq_governance.run(frame([("1", "a"), (None, "bad")]), contract, target="fix_ow_tbl", format="table",
                          mode="overwrite", quarantine=f"{work}/fix_ow_q", run_id="o1", lineage=None)
        info = writer.table_info(spark, "fix_ow_tbl")
        out["table_overwrite"] = {
            "provider": info.provider, "partition_by": info.partition_by,
            "rows": sorted([r["id"], r["v"]] for r in spark.table("fix_ow_tbl").collect()),
            "operations": [r["operation"]
                           for r in spark.sql("DESCRIBE HISTORY fix_ow_tbl").orderBy("version").collect()],
        }

    section(table_overwrite)

    # 3. a Delta overwrite changing a column's type: refused before the quarantine is promoted
    def type_change() -> None:
        v_int = contract_of([{"name": "id", "type": "long", "required": True}, {"name": "v", "type": "int"}])
        t, q = f"{work}/fix_type/items", f"{work}/fix_type/q"
        dq_governance.run(frame([("1", "5"), (None, "6")]), v_int, target=t, quarantine=q, format="delta",
                          run_id="a1", lineage=None)
        try:
            dq_governance.run(frame([("2", "x"), (None, "bad")]), contract, target=t, quarantine=q, format="delta",
                              run_id="a2", lineage=None)
            out["type_change_error"] = None
        except Exception as exc:  # noqa: BLE001 - the job reports what it saw
            out["type_change_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        out["type_change_target"] = delta_rows(t, "id", "v")
        out["type_change_quarantine"] = sorted([r["_dq_run_id"], r["v"]] for r in spark.read.parquet(q).collect())

    section(type_change)

    # 3b. a target promotion failing after the Delta quarantine was promoted: the run's quarantine rows removed
    def undo() -> None:
        t, q = f"{work}/fix_undo/items", f"{work}/fix_undo/q"
        undo = {"target": t, "quarantine": q, "format": "delta", "quarantine_format": "delta", "lineage": None}
        dq_governance.run(frame([("1", "a"), (None, "u0")]), contract, run_id="u0", **undo)
        promote_delta = writer._PROMOTERS[(CLASSIC, "delta")]

        def failing(staged):
            if staged.output.location == t:
                raise OSError("target unavailable")
            promote_delta(staged)

        writer._PROMOTERS[(CLASSIC, "delta")] = failing
        try:
            dq_governance.run(frame([("2", "b"), (None, "u1")]), contract, run_id="u1", **undo)
            out["undo_error"] = None
        except OSError as exc:
            out["undo_error"] = str(exc)
        finally:
            writer._PROMOTERS[(CLASSIC, "delta")] = promote_delta
        out["undo_target"] = delta_rows(t, "id", "v")
        out["undo_quarantine"] = delta_rows(q, "_dq_run_id", "v")

    section(undo)

    # 4. replace_partitions with a null partition value, twice
    def null_partition() -> None:
        rows = spark.createDataFrame([(1, None), (2, "x")], "id int, p string")
        nulls = writer.Output(f"{work}/fix_null_part", "delta", "replace_partitions", partition_by=["p"])
        out["null_partition"] = []
        for _ in range(2):
            try:
                writer.stage(rows, nulls, run_id="c1").promote()
                out["null_partition"].append(delta_rows(nulls.location, "id", "p"))
            except Exception as exc:  # noqa: BLE001
                out["null_partition"].append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")

    section(null_partition)

    # 5. a Delta quarantine whose input gains a column; a run id with `:` retried with corrected data
    def new_column() -> None:
        with_w = contract_of([*required_id, {"name": "w", "type": "string"}])
        q = f"{work}/fix_newcol/q"
        newcol = {"target": f"{work}/fix_newcol/items", "quarantine": q, "quarantine_format": "delta",
                  "lineage": None}
        dq_governance.run(frame([("1", "a"), (None, "bad")]), contract, run_id="b1", **newcol)
        colon = "2026-01-01T00:00:00Z"
        three = "id string, v string, w string"
        try:
            dq_governance.run(spark.createDataFrame([("2", "b", "w2"), (None, "bad2", "w3")], three), with_w,
                              run_id=colon, **newcol)
            out["new_column_error"] = None
        except Exception as exc:  # noqa: BLE001
            out["new_column_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        out["new_column_quarantine"] = delta_rows(q, "_dq_run_id", "v", "w")
        dq_governance.run(spark.createDataFrame([("2", "b", "w2"), ("3", "fixed", "w3")], three), with_w,
                          run_id=colon, **newcol)
        out["new_column_retry_quarantine"] = delta_rows(q, "_dq_run_id", "v", "w")

    section(new_column)

    # 6. one orchestrator run id shared by two contracts of a pipeline (a Delta report): each keeps its rows
    def shared_run_id() -> None:
        where = f"{work}/fix_shared"
        history = f"{where}/report"
        strict = Contract.model_validate({
            "contract": {"name": "strict", "version": "1.0.0"}, "dataset": {"name": "strict"},
            "schema": {"fields": required_id},
            "quality": {"on_failure": "block_publication", "minimum_valid_ratio": 0.9}})
        shared = {"report": history, "report_format": "delta", "run_id": "nightly-1", "pipeline": "nightly",
                  "lineage": None}
        dq_governance.run(frame([("1", "a"), ("2", "b")]), contract, target=f"{where}/items", quarantine=f"{where}/q",
                          **shared)
        blocked = dq_governance.run(frame([("1", "a"), (None, "x")]), strict, target=f"{where}/strict",
                                    quarantine=f"{where}/sq", raise_on_block=False, **shared)
        dq_governance.run(frame([("1", "a"), ("2", "b")]), contract, target=f"{where}/items", quarantine=f"{where}/q",
                          **shared)  # the first contract's retry
        rows = read_history(history, spark=spark, format="delta").collect()
        out["shared_run_id"] = {
            "blocked_published": blocked.published,
            "history": sorted({(r["contract"], r["published"]) for r in rows}),
            "rows_per_contract": {c: sum(1 for r in rows if r["contract"] == c) for c in ("items", "strict")},
            "strict_quarantine": delta_rows(f"{where}/sq", "v", "_dq_disposition")
            if writer.is_delta_table(spark, f"{where}/sq") else
            sorted([r["v"], r["_dq_disposition"]] for r in spark.read.parquet(f"{where}/sq").collect()),
        }

    section(shared_run_id)

    # 7. retries: contracts sharing a run id append to one target; an append retried with other data; a retry
    # whose target fails after an earlier attempt published
    def retries() -> None:
        where = f"{work}/fix_retries"
        other = Contract.model_validate({**contract.model_dump(exclude_none=True),
                                         "contract": {"name": "items_us", "version": "1.0.0"}})
        shared = {"target": f"{where}/both", "format": "delta", "mode": "append", "run_id": "nightly-1",
                  "pipeline": "nightly", "quarantine_format": "delta", "lineage": None}
        dq_governance.run(frame([("1", "a"), ("2", "b")]), contract, quarantine=f"{where}/q_eu", **shared)
        dq_governance.run(frame([("4", "d"), ("5", "e"), ("6", "f")]), other, quarantine=f"{where}/q_us", **shared)
        out["shared_append_ids"] = sorted(r[0] for r in delta_rows(f"{where}/both", "id"))

        again = {"target": f"{where}/items", "quarantine": f"{where}/q", "report": f"{where}/report",
                 "format": "delta", "quarantine_format": "delta", "report_format": "delta", "mode": "append",
                 "run_id": "r1", "lineage": None}
        dq_governance.run(frame([("1", "a"), ("2", "b"), (None, "bad")]), contract, **again)
        retried = dq_governance.run(frame([("1", "a"), ("2", "b"), ("3", "c")]), contract, **again)
        history = read_history(f"{where}/report", spark=spark, format="delta").collect()
        out["skipped_retry"] = {
            "outputs": {o["kind"]: o["retry_skipped"] for o in retried.outputs},
            "target": delta_rows(f"{where}/items", "id"), "quarantine": delta_rows(f"{where}/q", "v"),
            "report": sorted({(r["total_rows"], r["valid_rows"]) for r in history})}

        kept = {"target": f"{where}/kept", "quarantine": f"{where}/kq", "format": "delta",
                "quarantine_format": "delta", "run_id": "k1", "lineage": None}
        dq_governance.run(frame([("1", "a"), (None, "bad1")]), contract, **kept)
        promote_delta = writer._PROMOTERS[(CLASSIC, "delta")]

        def failing(staged):
            if staged.output.location == kept["target"]:
                raise OSError("target unavailable")
            promote_delta(staged)

        writer._PROMOTERS[(CLASSIC, "delta")] = failing
        try:
            dq_governance.run(frame([("1", "a"), (None, "bad2")]), contract, **kept)
            out["kept_error"] = None
        except OSError as exc:
            out["kept_error"] = str(exc)
        finally:
            writer._PROMOTERS[(CLASSIC, "delta")] = promote_delta
        out["kept_quarantine"] = delta_rows(f"{where}/kq", "_dq_run_id", "v")

    section(retries)

    # 8. runs of one pipeline writing one Delta history at once (threads of this driver: Delta's optimistic
    # commits refuse the later writer of the `pipeline=` partition, and of a table both found empty)
    def concurrent_reports() -> None:
        import logging
        import threading

        where = f"{work}/fix_concurrent/report"
        retried: list[str] = []

        class Count(logging.Handler):
            def emit(self, record):
                retried.append(record.getMessage())

        counter = Count(level=logging.INFO)
        writer_log = logging.getLogger("dq_governance.publish.writer")
        writer_log.addHandler(counter)
        writer_log.setLevel(logging.INFO)
        errors: list[str] = []

        def one(run_id: str, barrier: threading.Barrier) -> None:
            try:
                barrier.wait()
                dq_governance.run(frame([("1", "a"), (None, "bad")]), contract, run_id=run_id, pipeline="conc",
                                  report=where, report_format="delta", lineage=None)
            except Exception as exc:  # noqa: BLE001 — reported, and the test asserts there is none
                errors.append(f"{run_id}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")

        try:
            for round_ in range(3):  # round 0 creates the table
                barrier = threading.Barrier(2)
                threads = [threading.Thread(target=one, args=(f"r{round_}{side}", barrier)) for side in "ab"]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join(600)
        finally:
            writer_log.removeHandler(counter)
        rows = spark.read.format("delta").load(where).groupBy("run_id").count().collect()
        out["concurrent_reports"] = {"errors": errors, "rows": sorted([r["run_id"], r["count"]] for r in rows),
                                     "retried": len([m for m in retried if "trying again" in m])}

    section(concurrent_reports)
    return out


if sys.argv[2:] == ["fixes"]:
    print("RESULT " + json.dumps(fixes(), sort_keys=True))
    spark.stop()
    sys.exit(0)

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

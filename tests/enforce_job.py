"""A plain PySpark job for test_enforce.py: it imports nothing from dq_governance.

Governed only by what `spark-submit` passes (the listener, our jar, spark.sql.extensions and spark.dqgov.*).
Usage: spark-submit … tests/enforce_job.py STEP TARGET [SEED_CSV]
  append     read the seed CSV (header, every column text) and append it to TARGET as parquet
  typed      the same with the contract's types cast in Spark, appended as parquet
  overwrite  the seed, overwritten to TARGET as parquet
  dynamic    the seed, overwritten to TARGET as parquet partitioned by status, partitionOverwriteMode dynamic
  delta      the seed appended to TARGET as a Delta table (path)
  delta-table  saveAsTable TARGET (a Delta table by name), then INSERT INTO it
  delta-append  the seed appended by name (saveAsTable, mode append) to the Delta table TARGET that an
             earlier job left in the warehouse (registered here first: the session's catalog is in memory)
  delta-overwrite  the same table overwritten with the seed by INSERT OVERWRITE
  jdbc       the seed appended by name to TARGET in the session's `jdbc` catalog (Spark's JDBC table catalog)
  formats    the seed appended as csv, json and orc to TARGET_csv, TARGET_json, TARGET_orc
  table      saveAsTable TARGET (a table name), then CTAS TARGET_ctas from it
  tables     saveAsTable TARGET, a new table (mode errorifexists), then CTAS TARGET_ctas from it; prints
             `files=…` (the table's files), then saveAsTable TARGET again with mode overwrite (the existing table)
  queries    fifty plain queries, then the seed appended to TARGET as parquet; prints `results_listeners=N`, the
             session's query execution listeners of the extension
  stream     the seed, copied into TARGET_source, streamed by Structured Streaming into TARGET as parquet (the
             file sink, one availableNow trigger, checkpoint TARGET_checkpoint)
  failing    the seed appended to TARGET_commit as parquet, whose commit fails (the test made its _SUCCESS a
             directory), printing `commit_failed=<error class>`; then the seed appended to TARGET as parquet,
             where order 6 raises: a write whose job fails by itself
  local      the seed as an inline table (SELECT * FROM VALUES …) appended to TARGET as parquet; then an empty
             selection of it appended too; then the seed again, with backslashes in string literals kept as
             written (spark.sql.parser.escapedStringLiterals, a setting the SQL parser reads)
Prints one line: `rows=N` (the rows the step read), then exits 0; a failed write raises.
"""

import os
import shutil
import sys

from pyspark.sql import SparkSession


def main(step: str, target: str, seed: str) -> None:
    spark = SparkSession.builder.appName("plain_orders_job").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try:
        orders = spark.read.option("header", True).csv(seed)
        if step == "typed":
            orders = orders.selectExpr(
                "CAST(pedido_id AS BIGINT) AS pedido_id", "CAST(cliente_id AS BIGINT) AS cliente_id", "status",
                "CAST(valor AS DECIMAL(12,2)) AS valor", "TRY_CAST(data_pedido AS DATE) AS data_pedido", "email")
        if step in ("append", "typed"):
            orders.write.mode("append").parquet(target)
        elif step == "overwrite":
            orders.write.mode("overwrite").parquet(target)
        elif step == "dynamic":
            spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
            orders.write.mode("overwrite").partitionBy("status").parquet(target)
        elif step == "delta":
            orders.write.format("delta").mode("append").save(target)
        elif step == "delta-table":
            orders.write.format("delta").saveAsTable(target)
            spark.sql(f"INSERT INTO {target} SELECT * FROM {target}")
        elif step in ("delta-append", "delta-overwrite"):
            location = f"{spark.conf.get('spark.sql.warehouse.dir')}/{target}"
            spark.sql(f"CREATE TABLE {target} USING delta LOCATION '{location}'")
            if step == "delta-append":
                orders.write.format("delta").mode("append").saveAsTable(target)
            else:
                orders.createOrReplaceTempView("seed")
                spark.sql(f"INSERT OVERWRITE {target} SELECT * FROM seed")
        elif step == "jdbc":
            columns = ", ".join(f"{name} STRING" for name in orders.columns)
            spark.sql(f"CREATE TABLE jdbc.{target} ({columns})")
            orders.writeTo(f"jdbc.{target}").append()
            assert spark.table(f"jdbc.{target}").count() == orders.count()
        elif step == "formats":
            for fmt in ("csv", "json", "orc"):
                orders.write.mode("append").format(fmt).save(f"{target}_{fmt}")
        elif step == "failing":
            try:
                orders.write.mode("append").parquet(f"{target}_commit")
            except Exception as exc:  # noqa: BLE001 (the job goes on to its second write)
                print(f"commit_failed={type(exc).__name__}", flush=True)
            status = "CASE WHEN pedido_id = '6' THEN raise_error('the job failed on order 6') ELSE status END AS status"
            orders.selectExpr(*[status if c == "status" else c for c in orders.columns]).write.mode("append").parquet(target)
        elif step == "local":
            text = lambda v: "NULL" if v is None else "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"  # noqa: E731
            values = ", ".join("(" + ", ".join(text(v) for v in row) + ")" for row in orders.collect())
            local = spark.sql(f"SELECT * FROM VALUES {values} AS seed({', '.join(orders.columns)})")
            local.write.mode("append").parquet(target)
            local.where("false").write.mode("append").parquet(target)
            spark.conf.set("spark.sql.parser.escapedStringLiterals", "true")
            local.write.mode("append").parquet(target)
        elif step == "table":
            orders.write.mode("append").saveAsTable(target)
            spark.sql(f"CREATE TABLE {target}_ctas USING parquet AS SELECT * FROM {target}")
        elif step == "tables":
            orders.write.saveAsTable(target)
            spark.sql(f"CREATE TABLE {target}_ctas USING parquet AS SELECT * FROM {target}")
            print("files=" + ",".join(sorted(os.path.basename(f) for f in spark.table(target).inputFiles())), flush=True)
            orders.write.mode("overwrite").saveAsTable(target)
        elif step == "queries":
            for _ in range(50):
                spark.range(1).count()
            orders.write.mode("append").parquet(target)
            listeners = spark._jsparkSession.listenerManager().listListeners()
            ours = [x for x in listeners if x.getClass().getName().startswith("io.github.dqgovernance.")]
            print(f"results_listeners={len(ours)}")
        elif step == "stream":
            os.makedirs(f"{target}_source", exist_ok=True)
            shutil.copy(seed, f"{target}_source")
            query = (spark.readStream.schema(orders.schema).option("header", True).csv(f"{target}_source")
                     .writeStream.format("parquet").option("checkpointLocation", f"{target}_checkpoint")
                     .trigger(availableNow=True).start(target))
            query.awaitTermination()
        else:
            raise SystemExit(f"unknown step {step}")
        print(f"rows={orders.count()}")
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])

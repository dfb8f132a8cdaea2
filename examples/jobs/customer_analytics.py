"""A downstream job that reads the orders file: per-customer order counts and totals.

It imports dq_governance only to get a session with the OpenLineage Spark listener, so its lineage
(column to column: cliente_id -> cliente_id, valor -> total_valor) lands in out/lineage/spark-events.jsonl,
where `dqgov lineage ingest` and `dqgov impact` find it as a consumer of examples/data/orders.csv.
"""

from pyspark.sql import functions as F

import dq_governance

spark = dq_governance.spark_session(
    "customer_analytics",
    lineage="file:out/lineage/spark-events.jsonl",
    master="local[2]",
    **{"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
       "spark.openlineage.job.owners.TECHNICAL_OWNER": "team:marketing-analytics"},
)
orders = spark.read.option("header", True).csv("examples/data/orders.csv")
(
    orders.where(F.col("cliente_id").isNotNull())
    .groupBy("cliente_id")
    .agg(F.count("*").alias("orders"), F.sum(F.col("valor").cast("decimal(12,2)")).alias("total_valor"))
    .write.mode("overwrite").parquet("out/customer_analytics")
)
print(f"customer_analytics: wrote {spark.read.parquet('out/customer_analytics').count()} customers")
spark.stop()

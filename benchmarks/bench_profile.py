"""Benchmark `profile` (one Spark job) against a hand-written single `agg` of the basic statistics.

    python benchmarks/bench_profile.py [--rows 500000] [--repeat 3]

Six orders-like text columns (as a CSV read gives them) are generated and cached. `baseline` is one agg:
per column count, exact distinct count, min, max of the numeric cast and approximate quartiles; `profile`
adds type casts, string lengths, shapes, allowed-value candidates and 11 detector predicates per column.
Prints one JSON object: rows, seconds (median of --repeat) and profile / baseline.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any, Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from dq_governance.profile import profile


def generate(spark: SparkSession, rows: int) -> DataFrame:
    """Orders as text, cached and materialized."""
    df = spark.range(rows).select(
        F.col("id").cast("string").alias("pedido_id"),
        ((F.col("id") % 50_000) + 1).cast("string").alias("cliente_id"),
        F.element_at(F.array(F.lit("CRIADO"), F.lit("PAGO"), F.lit("CANCELADO")), (F.col("id") % 3 + 1).cast("int")).alias("status"),
        F.format_number(F.rand(1) * 1000, 2).alias("valor"),
        F.date_format(F.date_add(F.lit("2026-01-01").cast("date"), (F.col("id") % 330).cast("int")), "yyyy-MM-dd").alias("data_pedido"),
        F.concat(F.lit("user"), F.col("id"), F.lit("@example.com")).alias("email"),
    ).cache()
    df.count()
    return df


def baseline(df: DataFrame) -> None:
    """The minimum a profiler must compute, written by hand: one agg."""
    aggs = []
    for name in df.columns:
        col = F.col(name)
        number = col.try_cast("double")
        aggs += [F.count(col), F.count_distinct(col), F.min(number), F.max(number),
                 F.percentile_approx(number, [0.01, 0.25, 0.5, 0.75, 0.99], 10_000)]
    df.agg(*aggs).collect()


def timed(fn: Callable[[], Any], repeat: int) -> float:
    """Median wall seconds of `repeat` runs after one warm-up."""
    fn()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    spark = (SparkSession.builder.master("local[2]").appName("bench-profile").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        df = generate(spark, args.rows)
        base = timed(lambda: baseline(df), args.repeat)
        ours = timed(lambda: profile(df, approx_distinct=False), args.repeat)
        approx = timed(lambda: profile(df, approx_distinct=True), args.repeat)
        print(json.dumps({"rows": args.rows, "baseline_s": round(base, 3), "profile_exact_s": round(ours, 3),
                          "profile_approx_s": round(approx, 3), "profile_exact_vs_baseline": round(ours / base, 3),
                          "profile_approx_vs_baseline": round(approx / base, 3)}))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()

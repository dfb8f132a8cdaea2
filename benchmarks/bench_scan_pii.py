"""Benchmark the PII scan's hit rates against building every detector once per column, in one process.

    python benchmarks/bench_scan_pii.py [--rows 200] [--copies 1] [--repeat 5]

The table is tests/test_detect_pii.py's generated one (15 columns: CPFs, CNPJs, e-mails, phones, cards, IBANs,
IPs, dates, names, CEPs), `--copies` times side by side. Two ways over the same cached rows:
1. `lambda`: `detect.hit_rates`, the detectors built once on a lambda over every column's text;
2. `per_column`: each detector built on each column, one count_if per pair in one aggregate (the way
   `hit_rates` worked until 2026-12-07, kept here as the baseline).
Both give the same rates (checked every round). Prints one JSON object: median seconds per way and the ratio
lambda / per_column, the median of the ratio within each round.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_detect_pii import generated_table  # noqa: E402

from dq_governance.masking import detect  # noqa: E402


def per_column_rates(df: DataFrame, columns: list[detect.Leaf]) -> dict[str, dict[str, float]]:
    """The baseline: every detector's tree built on every column."""
    detectors = [det for det in detect.DETECTORS if det.values is not None]
    aggs = []
    for i, leaf in enumerate(columns):
        aggs.append(F.count_if(detect._text(leaf.column()) != "").alias(f"n{i}"))
        aggs.extend(F.count_if(det.values(leaf.column())).alias(f"h{i}_{det.pii_type}") for det in detectors)
    row = df.agg(*aggs).collect()[0].asDict()
    return {leaf.name: {det.pii_type: row[f"h{i}_{det.pii_type}"] / row[f"n{i}"] for det in detectors}
            if row[f"n{i}"] else {} for i, leaf in enumerate(columns)}


def main() -> None:
    """Time both ways and print the JSON summary."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    base = generated_table(spark, args.rows)
    df = base.select(*[F.col(c).alias(f"{c}_{k}" if k else c) for k in range(args.copies) for c in base.columns])
    df = df.cache()
    df.count()
    columns = detect._scannable(detect.leaves(df.schema))
    times: dict[str, list[float]] = {"lambda": [], "per_column": []}
    ratios = []
    for _ in range(args.repeat + 1):  # the first round warms the JVM up and is not counted
        start = time.perf_counter()
        new, _counts = detect.hit_rates(df, columns)
        middle = time.perf_counter()
        old = per_column_rates(df, columns)
        end = time.perf_counter()
        if new != old:
            raise SystemExit("the two ways disagree")
        times["lambda"].append(middle - start)
        times["per_column"].append(end - middle)
        ratios.append((middle - start) / (end - middle))
    summary = {"rows": args.rows, "columns": len(columns),
               **{way: round(statistics.median(values[1:]), 3) for way, values in times.items()},
               "ratio_lambda_to_per_column": round(statistics.median(ratios[1:]), 3)}
    print(json.dumps(summary))
    spark.stop()


if __name__ == "__main__":
    main()

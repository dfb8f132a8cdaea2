"""What the exact text-to-decimal conversion costs against the plain `try_cast` it replaced, in one process.

    python benchmarks/bench_text_decimal.py [--rows 2000000] [--repeat 5] [--type decimal(12,2)] [--millions]

Cached text rows (`1234.56`-like, or `1234567.89`-like with `--millions`, one in 100 with a third fractional
digit), then per round one aggregation of the converted values' count and sum: `baseline` converts with
`try_cast(v AS <type>)` (which rounds the third digit away), `exact` with `casting.convert` (the engine's
conversion: a wide parse, the narrow cast, a comparison, and a byte-length and exponent test that sends text the
wide parse may not have read whole to a digit count). `--millions` makes the text longer than decimal(12,2)'s
wide parse reads, so its integer digits are what lets it through. Prints one JSON object: the median seconds of
each and the median per-round ratio exact / baseline, and the rows each left null (the third-digit rows for
`exact`).
`--type double` or `--type float` times the floating conversion instead: `try_cast` and the test that sends a
value read as Infinity from text that does not spell one to null.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType


def main() -> None:
    """Time both conversions over the same cached rows and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--type", default="decimal(12,2)")
    parser.add_argument("--millions", action="store_true")
    args = parser.parse_args()

    from dq_governance.checks import casting, compat

    spark = SparkSession.builder.master("local[2]").appName("bench_text_decimal").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    cents = (F.col("id") * 7919) % 10_000_000
    whole = (cents / 100).cast("long") * (1000 if args.millions else 1) + (1_000_000 if args.millions else 0)
    third = (F.col("id") / 100 % 9 + 1).cast("long")  # a nonzero third fractional digit
    text = F.when(F.col("id") % 100 == 0, F.format_string("%d.%02d%d", whole, cents % 100, third)).otherwise(
        F.format_string("%d.%02d", whole, cents % 100))
    rows = spark.range(args.rows).select(text.alias("v")).cache()
    rows.count()
    declared = casting.parse_type(args.type)
    conversions = {"baseline": compat.try_cast("`v`", declared),
                   "exact": casting.convert("`v`", StringType(), declared).typed}

    def timed(name: str) -> tuple[float, int]:
        start = time.perf_counter()
        row = rows.agg(F.count(conversions[name]).alias("n"), F.sum(conversions[name])).first()
        return time.perf_counter() - start, args.rows - row["n"]

    for name in conversions:  # warm-up: code generation and the JIT
        timed(name)
    seconds: dict[str, list[float]] = {name: [] for name in conversions}
    nulls: dict[str, int] = {}
    for _ in range(args.repeat):
        for name in conversions:
            took, nulls[name] = timed(name)
            seconds[name].append(took)
    ratios = [e / b for e, b in zip(seconds["exact"], seconds["baseline"])]
    print(json.dumps({"rows": args.rows, "type": args.type, "millions": args.millions,
                      "seconds": {k: round(statistics.median(v), 3) for k, v in seconds.items()},
                      "ratio_exact_over_baseline": round(statistics.median(ratios), 3), "null_rows": nulls}))
    spark.stop()


if __name__ == "__main__":
    main()

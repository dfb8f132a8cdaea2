"""Masking cost against a plain select of the same columns, same process, same data.

    python benchmarks/bench_masking.py [--rows 2000000] [--repeat 3]

Data: ROWS rows with three PII string columns (punctuated CPF, mixed-case e-mail, formatted phone),
written once to parquet. Each variant reads the parquet, selects the three columns and writes to
Spark's `noop` sink (all rows computed, nothing stored); `csv_*` variants read the same rows from CSV.
`hmac_3_columns` uses the JVM UDF of the extension jar (`make listener` builds it; the session loads it
as `dqgov` sessions do), `hmac_sha2_3_columns` the built-in sha2 construction used without the jar.
`unkeyed_sha2_3_columns` (one plain SHA-256 per value, no key: not a mask) shows the floor any keyed
hash has to stay above. Printed: one JSON object with median and best seconds per variant and ratios
against the plain select of the same source. Target: hmac_3_columns <= 1.5.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from dq_governance.contracts.model import Contract
from dq_governance.lineage.spark import with_extension_jar
from dq_governance.masking import MaskingKey, apply_masks
from dq_governance.masking.jvm_hmac import available

COLUMNS = ["cpf", "email", "telefone"]
KEY = MaskingKey.from_secret("benchmark-key-0123456789abcdef0123456789", key_id="bench")


def contract(method: dict) -> Contract:
    """A contract masking the three columns with one method."""
    fields = [{"name": "cpf", "format": "cpf", "masking": method}, {"name": "email", "format": "email", "masking": method},
              {"name": "telefone", "format": "phone", "masking": method}]
    return Contract.model_validate({"contract": {"name": "bench", "version": "1.0.0"}, "dataset": {"name": "bench"},
                                    "schema": {"fields": fields}})


def generate(spark: SparkSession, rows: int, path: str) -> None:
    """Deterministic synthetic PII, written as parquet."""
    n = F.col("id")
    digits = F.lpad((n * 7919 % 1_000_000_000).cast("string"), 9, "0")
    cpf = F.concat_ws("", F.substring(digits, 1, 3), F.lit("."), F.substring(digits, 4, 3), F.lit("."),
                      F.substring(digits, 7, 3), F.lit("-"), F.lpad((n % 100).cast("string"), 2, "0"))
    email = F.concat(F.lit("User."), n.cast("string"), F.lit("@Example.COM"))
    phone = F.concat(F.lit("+55 11 9"), F.lpad((n % 10000).cast("string"), 4, "0"), F.lit("-"),
                     F.lpad((n * 31 % 10000).cast("string"), 4, "0"))
    spark.range(rows).select(cpf.alias("cpf"), email.alias("email"), phone.alias("telefone")).write.mode(
        "overwrite").parquet(path)


def timed(build, repeat: int) -> list[float]:
    """Wall seconds of `build().write.format('noop')` for `repeat` runs (after one warm-up)."""
    samples = []
    for i in range(repeat + 1):
        df: DataFrame = build()
        start = time.perf_counter()
        df.write.format("noop").mode("overwrite").save()
        if i:
            samples.append(time.perf_counter() - start)
    return samples


def run_variant(name: str, build, repeat: int) -> list[float]:
    """Time one variant, reporting progress on stderr."""
    samples = timed(build, repeat)
    print(f"{name}: {', '.join(f'{s:.2f}s' for s in samples)}", file=sys.stderr, flush=True)
    return samples


def main() -> None:
    """Run every variant and print the JSON result."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--variants", help="Comma-separated subset (plain_select always included).")
    args = parser.parse_args()
    builder = SparkSession.builder
    for key, value in with_extension_jar({}).items():
        builder = builder.config(key, value)
    spark = (builder.master(args.master).appName("bench-masking").config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "2g").config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    if not available(spark):
        sys.exit("the extension jar is not built (its HMAC UDF is what hmac_3_columns measures): run `make listener`")
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "pii.parquet")
        csv_path = str(Path(tmp) / "pii.csv")
        generate(spark, args.rows, path)
        spark.read.parquet(path).write.option("header", True).csv(csv_path)

        def read() -> DataFrame:
            return spark.read.parquet(path).select(*COLUMNS)

        def read_csv() -> DataFrame:
            return spark.read.option("header", True).csv(csv_path).select(*COLUMNS)

        variants = {
            "plain_select": lambda: read(),
            "hmac_3_columns": lambda: apply_masks(read(), contract({"method": "hmac"}), keys=KEY, hmac_engine="jvm"),
            "hmac_sha2_3_columns": lambda: apply_masks(read(), contract({"method": "hmac"}), keys=KEY,
                                                       hmac_engine="sha2"),
            "hmac_base64_3_columns": lambda: apply_masks(read(), contract({"method": "hmac", "encoding": "base64"}),
                                                         keys=KEY, hmac_engine="jvm"),
            "partial_3_columns": lambda: apply_masks(read(), contract({"method": "partial"})),
            "redact_3_columns": lambda: apply_masks(read(), contract({"method": "redact"})),
            "tokenize_3_columns": lambda: apply_masks(read(), contract({"method": "tokenize"}), keys=KEY,
                                                      hmac_engine="jvm"),
            # what a keyless (and brute-forceable) hash would cost, for scale only
            "unkeyed_sha2_3_columns": lambda: read().select(*[F.sha2(F.col(c), 256).alias(c) for c in COLUMNS]),
            # the same pair from CSV, the seed lab's input format
            "csv_plain_select": lambda: read_csv(),
            "csv_hmac_3_columns": lambda: apply_masks(read_csv(), contract({"method": "hmac"}), keys=KEY,
                                                      hmac_engine="jvm"),
        }
        chosen = list(variants)
        if args.variants:
            wanted = set(args.variants.split(",")) | {"plain_select"}
            if any(w.startswith("csv_") for w in wanted):
                wanted.add("csv_plain_select")
            chosen = [name for name in variants if name in wanted]
        samples = {name: run_variant(name, variants[name], args.repeat) for name in chosen}
    spark.stop()
    median = {k: statistics.median(v) for k, v in samples.items()}
    best = {k: min(v) for k, v in samples.items()}

    def ratios(seconds: dict[str, float]) -> dict[str, float]:
        return {k: round(v / seconds["csv_plain_select" if k.startswith("csv_") else "plain_select"], 3)
                for k, v in seconds.items()}

    print(json.dumps({
        "benchmark": "masking", "rows": args.rows, "masked_columns": len(COLUMNS), "repeat": args.repeat,
        "master": args.master, "median_seconds": {k: round(v, 3) for k, v in median.items()},
        "min_seconds": {k: round(v, 3) for k, v in best.items()},
        "ratio_vs_plain_select_median": ratios(median), "ratio_vs_plain_select_min": ratios(best),
        "target": {"hmac_3_columns": 1.5},
        "meets_target": ratios(median)["hmac_3_columns"] <= 1.5 if "hmac_3_columns" in median else None,
    }, indent=2))


if __name__ == "__main__":
    main()

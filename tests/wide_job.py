"""Subprocess jobs for test_checks_wide.py: a wide contract (4 rules per pair of columns) in a JVM of its own.

    python tests/wide_job.py codegen WORKDIR PAIRS LOG   # the job's stderr must go to LOG
    python tests/wide_job.py spill WORKDIR PAIRS ROWS

`codegen` prints one JSON line: per step, the bytecode sizes of the generated methods that passed 8,000
bytes (the size above which the JVM never compiles a method). Spark logs (at INFO, from
WholeStageCodegenExec) every whole-stage function larger than `spark.sql.codegen.hugeMethodLimit`; the job
sets that limit to the JVM's 8,000 bytes and reads its own log, which holds only its own queries.

`spill` runs the split in a session whose memory cannot hold the kept rows (`spark.memory.fraction` 0.05 of
a 1 GB driver) and prints the counts of both modes and the bytes the kept rows took in memory and on disk.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from dq_governance.checks.engine import evaluate
from dq_governance.contracts.model import Contract

CODES = ["K0", "K1", "K2", "K3", "K4"]
TOO_LONG = re.compile(r"Found too long generated codes .*? the bytecode size \((\d+)\)")


def contract(pairs: int) -> Contract:
    """4 rules per pair of columns (not_null, range, allowed values, regex)."""
    rules = [{"type": "row_count", "must_be": ">= 1"}]
    fields = [{"name": "id", "type": "long", "required": True, "unique": True}]
    for i in range(pairs):
        fields += [{"name": f"n{i}", "type": "double"}, {"name": f"c{i}", "type": "string"}]
        rules += [{"type": "not_null", "name": f"n{i}_not_null", "column": f"n{i}"},
                  {"type": "range", "name": f"n{i}_range", "column": f"n{i}", "min": 0, "max": 1000},
                  {"type": "allowed_values", "name": f"c{i}_allowed", "column": f"c{i}", "values": CODES},
                  {"type": "regex", "name": f"c{i}_regex", "column": f"c{i}", "pattern": "^K[0-9]$"}]
    return Contract.model_validate({"contract": {"name": "wide", "version": "1.0.0"}, "dataset": {"name": "wide"},
                                    "schema": {"fields": fields}, "quality": {"on_failure": "quarantine",
                                                                              "rules": rules}})


def session(**conf: str) -> SparkSession:
    builder = (SparkSession.builder.master("local[2]").appName("wide-job").config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2").config("spark.sql.ansi.enabled", "true"))
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def data(spark: SparkSession, workdir: str, pairs: int, rows: int):
    """`rows` rows: `id` and per pair `n<i>` (5% null) and `c<i>` (5% "K7"), written to parquet and read back
    (so no data expression is part of the check's pass)."""
    path = f"{workdir}/data"
    columns = [F.col("id")]
    for i in range(pairs):
        u = F.rand(i)
        columns += [F.when(u < 0.05, F.lit(None).cast("double")).otherwise(F.round(u * 1000, 2)).alias(f"n{i}"),
                    F.when(u > 0.95, F.lit("K7")).otherwise(F.lit("K1")).alias(f"c{i}")]
    spark.range(rows).select(*columns).write.parquet(path)
    return spark.read.parquet(path)


def codegen(workdir: str, pairs: int, log: str) -> None:
    spark = session()
    jvm = spark.sparkContext._jvm
    jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
        "org.apache.spark.sql.execution.WholeStageCodegenExec", jvm.org.apache.logging.log4j.Level.INFO)
    df = data(spark, workdir, pairs, 500)
    c = contract(pairs)
    # A hand-written pass of the old layout's shape: every flag summed into one expression. It must be
    # reported, or the detector reports nothing at all.
    flags = " + ".join(f"IF(n{i} IS NULL OR n{i} < 0 OR c{i} NOT IN ('K0','K1') OR NOT c{i} RLIKE '^K[0-9]$', "
                       f"{i + 1}, 0)" for i in range(pairs))
    steps = {
        "control": lambda: df.selectExpr(f"CAST({flags} AS BIGINT) AS s").agg(F.sum("s")).collect(),
        "counts": lambda: evaluate(df, c, mode="counts"),
        "split": lambda: split(df, c),
    }
    out = {}
    spark.conf.set("spark.sql.codegen.hugeMethodLimit", "8000")
    for name, step in steps.items():
        seen = len(Path(log).read_text(errors="replace"))
        step()
        text = Path(log).read_text(errors="replace")[seen:]
        out[name] = [int(size) for size in TOO_LONG.findall(text)]
    print(json.dumps(out), flush=True)
    spark.stop()


def split(df, c) -> None:
    result = evaluate(df, c, mode="split")
    result.valid_df.write.format("noop").mode("overwrite").save()
    result.quarantine_df.write.format("noop").mode("overwrite").save()
    result.release()


def spill(workdir: str, pairs: int, rows: int) -> None:
    spark = session(**{"spark.memory.fraction": "0.05"})
    df = data(spark, workdir, pairs, rows)
    c = contract(pairs)
    # the hand-written answer: count_if of each rule's violation
    expected_row = df.agg(*[F.count_if(F.col(f"n{i}").isNull()) for i in range(pairs)],
                          *[F.count_if(~F.col(f"c{i}").isin(CODES)) for i in range(pairs)]).collect()[0]
    expected = {f"n{i}_not_null": expected_row[i] for i in range(pairs)}
    expected.update({f"c{i}_allowed": expected_row[pairs + i] for i in range(pairs)})
    counts = evaluate(df, c, mode="counts")
    result = evaluate(df, c, mode="split")
    infos = spark.sparkContext._jsc.sc().getRDDStorageInfo()
    memory, disk = sum(int(i.memSize()) for i in infos), sum(int(i.diskSize()) for i in infos)
    valid, quarantined = result.valid_df.count(), result.quarantine_df.count()
    print(json.dumps({
        "expected": expected,
        "counts": {r.name: r.failed_count for r in counts.rules},
        "split": {r.name: r.failed_count for r in result.rules},
        "totals": [result.total_rows, result.valid_rows, valid, quarantined, counts.valid_rows],
        "memory_bytes": memory, "disk_bytes": disk,
    }), flush=True)
    result.release()
    spark.stop()


if __name__ == "__main__":
    if sys.argv[1] == "codegen":
        codegen(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        spill(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))

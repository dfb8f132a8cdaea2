"""Overhead of OpenLineage emission on a contract check: the same check with and without events.

Usage: python benchmarks/bench_lineage_emit.py [ROWS] [REPEATS]   (defaults 2,000,000 rows, 5 repeats)

Both variants run in this process on the same cached DataFrame, interleaved (base, emit, base, emit, ...)
so drift on the shared machine hits both. "emit" = build the emitter (file transport, JSONL), START,
the check, COMPLETE with target + quarantine outputs. Prints one JSON object; target: ratio < 1.03.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_RATIO = 1.03


def generate(spark, rows: int):
    """Orders-like rows with about 1% bad values in each checked column (CSV-like strings for the date)."""
    from pyspark.sql import functions as f

    i = f.col("id")
    return spark.range(rows).select(
        f.when(i % 200 == 0, i - 1).otherwise(i).alias("pedido_id"),  # 0.5% duplicated keys
        f.when(i % 100 == 1, f.lit(None)).otherwise(i % 50_000).alias("cliente_id"),
        f.when(i % 100 == 2, f.lit("DESCONHECIDO"))
        .otherwise(f.element_at(f.array(*[f.lit(s) for s in ("CRIADO", "PAGO", "CANCELADO")]),
                                (i % 3 + 1).cast("int"))).alias("status"),
        f.when(i % 100 == 3, f.lit(-10)).otherwise(i % 10_000 / 7).cast("decimal(12,2)").alias("valor"),
        f.when(i % 100 == 4, f.lit("data-invalida"))
        .otherwise(f.date_format(f.date_add(f.lit("2026-01-01").cast("date"), (i % 300).cast("int")), "yyyy-MM-dd"))
        .alias("data_pedido"),
        f.when(i % 100 == 5, f.lit("not-an-email")).otherwise(f.concat(f.lit("c"), i.cast("string"),
                                                                       f.lit("@example.com"))).alias("email"),
    )


def main(rows: int = 2_000_000, repeats: int = 5) -> dict:
    """Run the benchmark and return the JSON-ready measurements."""
    from pyspark.sql import SparkSession

    from dq_governance.api import check
    from dq_governance.contracts.load import load_contract
    from dq_governance.lineage.emit import build_emitter

    spark = (SparkSession.builder.master("local[2]").appName("bench-lineage-emit")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.driver.memory", "3g").config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.ansi.enabled", "true").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    contract = load_contract(str(REPO / "contracts" / "orders.yaml"))
    df = generate(spark, rows).cache()
    assert df.count() == rows
    events = Path(tempfile.mkdtemp(prefix="bench-lineage-")) / "lineage.jsonl"

    def release(result) -> None:
        frame = getattr(result, "annotated_df", None)
        if frame is not None:
            frame.unpersist()

    def base() -> float:
        start = time.perf_counter()
        result = check(df, contract, pipeline="bench")
        elapsed = time.perf_counter() - start
        release(result)
        return elapsed

    emission: list[float] = []

    def with_lineage() -> float:
        start = time.perf_counter()
        run_id = str(uuid.uuid4())
        t0 = time.perf_counter()
        emitter = build_emitter(f"file:{events}", contract, run_id=run_id, pipeline="bench", spark=spark,
                                contract_location="contracts/orders.yaml")
        emitter.start(input_namespace="memory", input_name="bench.orders")
        t1 = time.perf_counter()
        result = check(df, contract, run_id=run_id, pipeline="bench")
        t2 = time.perf_counter()
        emitter.complete(result, outputs=[
            {"namespace": "file", "name": "/lake/curated/orders", "rows": result.valid_rows, "kind": "target"},
            {"namespace": "file", "name": "/lake/quarantine/orders", "rows": result.invalid_rows, "kind": "quarantine"},
        ])
        emitter.close()
        end = time.perf_counter()
        assert emitter.failures == 0
        emission.append((t1 - t0) + (end - t2))
        release(result)
        return end - start

    base(), with_lineage()  # warm-up: JIT, code generation, Python imports
    emission.clear()
    base_times, emit_times = [], []
    for _ in range(repeats):
        base_times.append(base())
        emit_times.append(with_lineage())
    spark.stop()
    base_median, emit_median = statistics.median(base_times), statistics.median(emit_times)
    emission_median = statistics.median(emission)
    lines = events.read_text().splitlines()
    return {
        "benchmark": "lineage_emit",
        "rows": rows,
        "repeats": repeats,
        "check_seconds": [round(t, 3) for t in base_times],
        "check_with_lineage_seconds": [round(t, 3) for t in emit_times],
        "check_median_seconds": round(base_median, 3),
        "check_with_lineage_median_seconds": round(emit_median, 3),
        "ratio": round(emit_median / base_median, 4),
        "emission_only_median_seconds": round(emission_median, 4),
        "emission_only_ratio": round((base_median + emission_median) / base_median, 4),
        "events_written": len(lines),
        "event_bytes_median": int(statistics.median(len(line) for line in lines)),
        "target_ratio": TARGET_RATIO,
        "passed": emit_median / base_median < TARGET_RATIO,
    }


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    print(json.dumps(main(*args), indent=2))

"""What keyed masking costs per value in the JVM, before Spark: the floor behind bench_masking.py's target.

    python benchmarks/bench_hmac_cost.py

Runs listeners/src/test/java/.../HmacCostBenchmark.java through Maven: 3,000,000 CPF-like values through
HmacMask.call (normalise, HMAC-SHA-256 from precomputed pad states, hex), javax.crypto.Mac, and one unkeyed
SHA-256 (the baseline, in the same JVM). Prints its JSON line plus what it implies for bench_masking.py:
the CPU a 2-core machine spends hashing 3 columns of 2,000,000 rows, to set against the plain select.
"""

from __future__ import annotations

import json
import sys

from jvm_bench import run

MASKED_VALUES = 3 * 2_000_000  # bench_masking.py: 3 columns of 2M rows
CORES = 2  # its local[2] session


def main() -> int:
    """Run the benchmark and print its JSON with the implied seconds; exit 1 when it cannot run."""
    result = run("HmacCostBenchmark", "hmac_cost")
    if result is None:
        return 1
    result.pop("sink", None)
    for name in ("unkeyed_sha256", "hmac_mask"):
        result[f"{name}_seconds_for_bench_masking"] = round(result[f"{name}_ns"] * MASKED_VALUES / CORES / 1e9, 3)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

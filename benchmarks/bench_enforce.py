"""The session extension's cost on a write: the same parquet write, governed and ungoverned, in one process.

    python benchmarks/bench_enforce.py [--rows 2000000] [--repeat 5] [--warmup 1] [--source cache|parquet]
                                       [--breakdown] [--no-rules]

One session with `spark.sql.extensions=io.github.dqgovernance.spark.GovernanceExtensions` and a manifest
that governs one path: 8 same-pass rules (2 not_null, allowed_values, minimum, date format, e-mail pattern,
length, row_count) over orders-like rows (bench_checks.generate): `--source cache` writes the cached rows
(the write is all the job does), `--source parquet` reads them from parquet files first, as a job does. `plain` overwrites an ungoverned path,
`governed` the governed one, so both pay for the same scan, encode and commit; the governed write also carries
the metrics node (its tally of each row's flags) and the verdict in its commit. Two hand-written references show where the
time goes: `observe` (the same metric expressions through `Dataset.observe`, Spark's own node, on a plain write)
and `agg_then_write` (the metrics as a codegen'd aggregation of their own, then the plain write). Prints one JSON object: seconds, the median of
the per-round ratio governed / plain, and the verdict's counts (the extension did measure). `--breakdown` also
times each rule alone (an aggregation of the row count and that rule's failed count, less the row count alone,
over the same rows, as Spark runs the rule text) as a fraction of the plain write: `floor_ratio` is what a
same-pass design that runs the same text pays. The extension pays less for a pattern it runs as an automaton
(AsciiRegex: the e-mail rule; benchmarks/bench_regex.py) and for ISO dates it reads from their bytes (IsoDates:
the date rule), and the row count alone reads no column, so each
column rule's share also holds that column's read. `--no-rules` governs the path with the row_count rule alone,
so the governed write carries a metrics node with only the row and null counts: the node's own cost. Needs
`make listener`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_checks import EMAIL_RE, STATUSES, generate, paired, timed  # noqa: E402

from dq_governance.lineage.enrich import find_extension_jar  # noqa: E402

TARGET = 1.10


def bench_contract(path: str, rules: bool = True) -> dict:
    """The 8 same-pass rules (bench_checks' contract without the uniqueness rule, plus a length rule).

    `rules=False`: the same fields with no constraint and only the row_count rule, so the metrics node holds the
    row and null counts alone (its own cost, `--no-rules`).
    """
    if not rules:
        full = bench_contract(path)
        fields = [{"name": f["name"], "type": f["type"]} for f in full["schema"]["fields"]]
        return {**full, "schema": {"fields": fields},
                "quality": {"on_failure": "warn", "rules": [{"type": "row_count", "must_be": ">= 1"}]}}
    return {
        "contract": {"name": "bench_enforce", "version": "1.0.0"},
        "dataset": {"name": "bench.enforce", "path": path, "format": "parquet"},
        "schema": {"fields": [
            {"name": "pedido_id", "type": "long", "required": True},
            {"name": "cliente_id", "type": "long", "required": True},
            {"name": "status", "type": "string", "allowed_values": STATUSES},
            {"name": "valor", "type": "double", "minimum": 0},
            {"name": "data_pedido", "type": "string", "format": "date", "date_format": "yyyy-MM-dd"},
            {"name": "email", "type": "string", "pattern": EMAIL_RE},
        ]},
        "quality": {"on_failure": "warn", "rules": [
            {"type": "row_count", "must_be": ">= 1"},
            {"type": "length", "column": "status", "max": 9},
        ]},
    }


def rule_costs(df, checks: dict, plain: list[float], args: argparse.Namespace) -> dict:
    """Each typed rule's own evaluation time over `df`, as a fraction of the plain write's median time."""
    from pyspark.sql import functions as F

    def count_of(text: str | None):
        base = [F.count(F.lit(1))]
        return lambda: df.agg(*base, *([F.expr(f"count(CASE WHEN coalesce(({text}), false) THEN 1 END)")]
                                       if text else [])).collect()

    ways = {"rows": count_of(None)}
    ways.update({r["name"]: count_of(r["violation"]["typed"]) for r in checks["rules"] if r["violation"]["typed"]})
    times, _answers = timed(ways, args.repeat, args.warmup)
    median = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
    write = median(plain)
    costs = {name: round(max(0.0, median(v) - median(times["rows"])) / write, 3)
             for name, v in times.items() if name != "rows"}
    return {**costs, "sum": round(sum(costs.values()), 3), "floor_ratio": round(1 + sum(costs.values()), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--source", choices=("cache", "parquet"), default="cache")
    parser.add_argument("--breakdown", action="store_true", help="time each rule alone against the plain write")
    parser.add_argument("--no-rules", action="store_true",
                        help="govern with only the row_count rule: the metrics node's own cost (row and null counts)")
    args = parser.parse_args()
    jar = find_extension_jar()
    if jar is None:
        raise SystemExit("dq-governance listener jar not built: run `make listener`")
    from pyspark.sql import SparkSession

    with tempfile.TemporaryDirectory(prefix="bench-enforce-") as tmp:
        root = Path(tmp)
        governed, plain = str(root / "governed"), str(root / "plain")
        contract = root / "bench_enforce.yaml"
        contract.write_text(yaml.safe_dump(bench_contract(governed, rules=not args.no_rules), sort_keys=False))
        # `dqgov manifest` in its own process: this one's JVM must start with the jar on its class path
        manifest = root / "manifest.json"
        subprocess.run([str(Path(sys.executable).parent / "dqgov"), "manifest", str(contract), "-o", str(manifest)],
                       check=True, capture_output=True)
        spark = (
            SparkSession.builder.master("local[2]").appName("bench-enforce")
            .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.session.timeZone", "UTC").config("spark.jars", jar)
            .config("spark.sql.extensions", "io.github.dqgovernance.spark.GovernanceExtensions")
            .config("spark.dqgov.manifest", str(manifest)).config("spark.dqgov.enforce", "observe")
            .config("spark.dqgov.history", str(root / "history"))
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("WARN")  # the extension's one-line warnings stay visible
        df = generate(spark, args.rows)
        if args.source == "parquet":
            df.write.parquet(str(root / "source"))
            df.unpersist()
            df = spark.read.parquet(str(root / "source"))
        rules = sum(1 for r in json.loads(manifest.read_text())["contracts"][0]["checks"]["rules"]
                    if r["violation"]["typed"] or r.get("metric"))
        from pyspark.sql import functions as F

        checks = json.loads(manifest.read_text())["contracts"][0]["checks"]
        texts = [r["violation"]["typed"] for r in checks["rules"] if r["violation"]["typed"]]
        metrics = [F.expr("count(1)")] + [F.expr(f"count(CASE WHEN coalesce(({t}), false) THEN 1 END)") for t in texts]
        counter = iter(range(1_000_000))
        ways = {
            "plain": lambda: df.write.mode("overwrite").parquet(plain),
            "governed": lambda: df.write.mode("overwrite").parquet(governed),
            # where the time goes: the same metrics by hand, riding on the write (Dataset.observe builds the
            # same node) or as a codegen'd aggregation of their own before the write
            "observe": lambda: df.observe(f"m{next(counter)}", *metrics).write.mode("overwrite").parquet(plain),
            "agg_then_write": lambda: (df.agg(*metrics).collect(), df.write.mode("overwrite").parquet(plain)),
        }
        times, _answers = timed(ways, args.repeat, args.warmup)
        breakdown = rule_costs(df, checks, times["plain"], args) if args.breakdown else None
        runs = spark.read.parquet(str(root / "history"))
        verdict = {r["check_name"]: r["failed_count"] for r in runs.where(runs.rule_status != "skipped")
                   .select("check_name", "failed_count").distinct().collect()}
        ratio = paired(times, "governed", "plain")
        explain = {way: paired(times, way, "plain") for way in ("observe", "agg_then_write")}
        print(json.dumps({
            "rows": args.rows, "source": args.source, "same_pass_rules": rules, "governed_writes": runs.select("run_id").distinct().count(),
            "seconds": {k: round(sorted(v)[len(v) // 2], 3) for k, v in times.items()},
            "rounds": {k: [round(t, 3) for t in v] for k, v in times.items()},
            "ratio_governed_vs_plain": ratio, "target": TARGET, "met": ratio <= TARGET,
            "ratios_by_hand_vs_plain": explain,
            "failed_counts": verdict,
            **({"rule_cost_vs_plain": breakdown} if breakdown is not None else {}),
        }, indent=2))
        spark.stop()


if __name__ == "__main__":
    main()

"""The session extension's cost on a write: the same parquet write, governed and ungoverned, in one process.

    python benchmarks/bench_enforce.py [--rows 2000000] [--repeat 5] [--warmup 1] [--source cache|parquet]
                                       [--breakdown] [--no-rules] [--per-rule] [--target-only]

One session with `spark.sql.extensions=io.github.dqgovernance.spark.GovernanceExtensions` and a manifest
that governs one path: 8 same-pass rules (2 not_null, allowed_values, minimum, date format, e-mail pattern,
length, row_count) over orders-like rows (bench_checks.generate): `--source cache` writes the cached rows
(the write is all the job does), `--source parquet` reads them from parquet files first, as a job does. `plain` overwrites an ungoverned path,
`governed` the governed one, so both pay for the same scan, encode and commit; the governed write also carries
the metrics node (its tally of each row's flags) and the verdict in its commit. Two hand-written references show where the
time goes: `observe` (the same metric expressions through `Dataset.observe`, Spark's own node, on a plain write)
and `agg_then_write` (the metrics as a codegen'd aggregation of their own, then the plain write). Prints one JSON object: seconds, the median of
the per-round ratio governed / plain (the target), the executor CPU seconds of plain and governed writes from
Spark's task metrics with their paired ratio (steadier on a shared machine; it leaves out the driver's share),
and the verdict's counts (the extension did measure). `--breakdown` also
times each rule alone (an aggregation of the row count and that rule's failed count, less the row count alone,
over the same rows, as Spark runs the rule text) as a fraction of the plain write: `floor_ratio` is what a
same-pass design that runs the same text pays. The extension pays less for a pattern it runs as an automaton
(AsciiRegex: the e-mail rule; benchmarks/bench_regex.py) and for ISO dates it reads from their bytes (IsoDates:
the date rule), and the row count alone reads no column, so each
column rule's share also holds that column's read. `--no-rules` governs the path with the row_count rule alone,
so the governed write carries a metrics node with only the row and null counts: the node's own cost.
`--per-rule` also writes the rows to one path per rule, each governed by that rule alone on top of the row and
null counts (`none`), and prints each rule's cost inside the write (that write less `none`, as a fraction of the
plain write) in executor CPU and in wall time. `--target-only` times the plain and governed writes alone: with
`DQGOV_LISTENER_JAR` naming one jar, then another, in alternating processes, an A/B of two builds of the
extension. Needs `make listener`.
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


def rule_variants(root: Path) -> dict[str, dict]:
    """`--per-rule`'s contracts: `none` (the row and null counts alone, as `--no-rules`), then one per rule of
    the full contract, that rule on top of `none`; each governs a path of its own under `root`."""
    plain_fields = bench_contract("", rules=False)["schema"]["fields"]

    def variant(name: str, fields: list[dict], rules: list[dict]) -> dict:
        contract = bench_contract(str(root / f"rule-{name}"), rules=False)
        contract["contract"]["name"], contract["dataset"]["name"] = f"bench_rule_{name}", f"bench.rule_{name}"
        contract["schema"]["fields"] = fields
        contract["quality"]["rules"] += rules
        return contract

    full = bench_contract("")
    variants = {"none": variant("none", plain_fields, [])}
    for i, field in enumerate(full["schema"]["fields"]):
        if set(field) - {"name", "type"}:
            variants[field["name"]] = variant(field["name"], [field if j == i else f for j, f in
                                                              enumerate(plain_fields)], [])
    for rule in full["quality"]["rules"]:
        if "column" in rule:
            name = f"{rule['column']}_{rule['type']}"
            variants[name] = variant(name, plain_fields, [rule])
    return variants


def per_rule_costs(df, cpu: "ExecutorCpu", paths: dict[str, str], plain: str, args: argparse.Namespace) -> dict:
    """Each rule's cost inside a governed write: the write governed by that rule alone, less the one governed by
    `none`, as a fraction of the plain write, in executor CPU and in wall time (`none`: its own, against plain)."""
    def write(path: str):
        return lambda: df.write.mode("overwrite").parquet(path)

    ways = {"plain": cpu.metered("rule-plain", write(plain))}
    ways.update({name: cpu.metered(f"rule-{name}", write(path)) for name, path in paths.items()})
    times, _answers = timed(ways, args.repeat, args.warmup)
    median = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
    measured = {"cpu": {name: median(cpu.seconds(f"rule-{name}", 1 + args.warmup)) for name in ways},
                "wall": {name: median(v) for name, v in times.items()}}
    return {kind: {name: round((m[name] - m["plain" if name == "none" else "none"]) / m["plain"], 3)
                   for name in paths} for kind, m in measured.items()}


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


class ExecutorCpu:
    """Executor CPU seconds per call of a way, from Spark's own task metrics: steadier than wall time on a shared
    machine, and blind to the driver's share (planning, the verdict), which wall time holds."""

    def __init__(self, spark) -> None:
        self.sc = spark.sparkContext
        self.groups: dict[str, list[str]] = {}

    def metered(self, way: str, fn):
        """`fn` with its jobs in a job group of their own, one per call."""
        def call():
            groups = self.groups.setdefault(way, [])
            groups.append(f"bench-enforce-{way}-{len(groups)}")
            self.sc.setJobGroup(groups[-1], groups[-1])
            try:
                return fn()
            finally:
                self.sc.setLocalProperty("spark.jobGroup.id", None)
        return call

    def seconds(self, way: str, skip: int) -> list[float]:
        """CPU seconds of each call of `way` after the first `skip` (the untimed ones)."""
        jvm_sc = self.sc._jsc.sc()
        jvm_sc.listenerBus().waitUntilEmpty()  # the status store is fed by the listener bus
        store, tracker = jvm_sc.statusStore(), self.sc.statusTracker()
        out = []
        for group in self.groups[way][skip:]:
            stages = [s for job in tracker.getJobIdsForGroup(group) for s in tracker.getJobInfo(job).stageIds]
            out.append(sum(store.lastStageAttempt(s).executorCpuTime() for s in stages) / 1e9)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--source", choices=("cache", "parquet"), default="cache")
    parser.add_argument("--breakdown", action="store_true", help="time each rule alone against the plain write")
    parser.add_argument("--no-rules", action="store_true",
                        help="govern with only the row_count rule: the metrics node's own cost (row and null counts)")
    parser.add_argument("--per-rule", action="store_true",
                        help="also time writes governed by one rule each: each rule's cost inside the write")
    parser.add_argument("--target-only", action="store_true",
                        help="time only the plain and governed writes (not the by-hand references)")
    args = parser.parse_args()
    jar = find_extension_jar()
    if jar is None:
        raise SystemExit("dq-governance listener jar not built: run `make listener`")
    from pyspark.sql import SparkSession

    with tempfile.TemporaryDirectory(prefix="bench-enforce-") as tmp:
        root = Path(tmp)
        governed, plain = str(root / "governed"), str(root / "plain")
        contracts = root / "contracts"
        contracts.mkdir()
        (contracts / "bench_enforce.yaml").write_text(
            yaml.safe_dump(bench_contract(governed, rules=not args.no_rules), sort_keys=False))
        variants = rule_variants(root) if args.per_rule else {}
        for name, variant in variants.items():
            (contracts / f"rule_{name}.yaml").write_text(yaml.safe_dump(variant, sort_keys=False))
        # `dqgov manifest` in its own process: this one's JVM must start with the jar on its class path
        manifest = root / "manifest.json"
        subprocess.run([str(Path(sys.executable).parent / "dqgov"), "manifest", str(contracts), "-o", str(manifest)],
                       check=True, capture_output=True)
        entry = next(c for c in json.loads(manifest.read_text())["contracts"]
                     if c["contract"]["name"] == "bench_enforce")
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
        rules = sum(1 for r in entry["checks"]["rules"] if r["violation"]["typed"] or r.get("metric"))
        from pyspark.sql import functions as F

        checks = entry["checks"]
        texts = [r["violation"]["typed"] for r in checks["rules"] if r["violation"]["typed"]]
        metrics = [F.expr("count(1)")] + [F.expr(f"count(CASE WHEN coalesce(({t}), false) THEN 1 END)") for t in texts]
        counter = iter(range(1_000_000))
        cpu = ExecutorCpu(spark)
        ways = {
            "plain": cpu.metered("plain", lambda: df.write.mode("overwrite").parquet(plain)),
            "governed": cpu.metered("governed", lambda: df.write.mode("overwrite").parquet(governed)),
            # where the time goes: the same metrics by hand, riding on the write (Dataset.observe builds the
            # same node) or as a codegen'd aggregation of their own before the write
            "observe": lambda: df.observe(f"m{next(counter)}", *metrics).write.mode("overwrite").parquet(plain),
            "agg_then_write": lambda: (df.agg(*metrics).collect(), df.write.mode("overwrite").parquet(plain)),
        }
        if args.target_only:
            ways = {way: ways[way] for way in ("plain", "governed")}
        times, _answers = timed(ways, args.repeat, args.warmup)
        breakdown = rule_costs(df, checks, times["plain"], args) if args.breakdown else None
        per_rule = per_rule_costs(df, cpu, {name: v["dataset"]["path"] for name, v in variants.items()}, plain,
                                  args) if args.per_rule else None
        runs = spark.read.parquet(str(root / "history"))
        runs = runs.where(runs.contract == "bench_enforce")
        verdict = {r["check_name"]: r["failed_count"] for r in runs.where(runs.rule_status != "skipped")
                   .select("check_name", "failed_count").distinct().collect()}
        ratio = paired(times, "governed", "plain")
        cpu_seconds = {way: cpu.seconds(way, 1 + args.warmup) for way in ("plain", "governed")}
        explain = {way: paired(times, way, "plain") for way in ("observe", "agg_then_write") if way in times}
        print(json.dumps({
            "rows": args.rows, "source": args.source, "same_pass_rules": rules, "governed_writes": runs.select("run_id").distinct().count(),
            "seconds": {k: round(sorted(v)[len(v) // 2], 3) for k, v in times.items()},
            "rounds": {k: [round(t, 3) for t in v] for k, v in times.items()},
            "ratio_governed_vs_plain": ratio, "target": TARGET, "met": ratio <= TARGET,
            "ratios_by_hand_vs_plain": explain,
            "executor_cpu_seconds": {k: round(sorted(v)[len(v) // 2], 3) for k, v in cpu_seconds.items()},
            "cpu_ratio_governed_vs_plain": paired(cpu_seconds, "governed", "plain"),
            "failed_counts": verdict,
            **({"rule_cost_vs_plain": breakdown} if breakdown is not None else {}),
            **({"in_write_rule_cost_vs_plain": per_rule} if per_rule is not None else {}),
        }, indent=2))
        spark.stop()


if __name__ == "__main__":
    main()

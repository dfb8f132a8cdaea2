"""A 2M-row check per session kind, as a ratio to the classic local[2] run of the same invocation.

    python benchmarks/bench_kinds.py [--rows 2000000] [--repeat 3] [--warmup 1] [--python35 .venv35/bin/python]
                                     [--kinds classic,connect,cluster,spark35]

The data and the 8-rule contract are benchmarks/bench_checks.py's (`generate`, `contract`). What is timed is
`dq_governance.check(df, contract)` with the valid and quarantine outputs both written to the noop sink and the
result released (bench_checks.ours_split through the public API), with bench_checks.timed's rounds.

Each kind runs in a process of its own (this script re-runs itself with `--worker KIND`): a Connect session
sets a process-wide flag after which no classic session starts, and one JVM holds one SparkContext.
- `classic`  local[2], driver memory 2g (the reference: every ratio divides by it)
- `connect`  a Spark Connect client against a local[2] server (driver memory 2g) started from the same PySpark's
             jar on a free loopback port by the test suite's tests/connect_server.py
- `cluster`  local-cluster[2,1,1024]: two executor JVMs of 1 core and 1 GB each, the driver as above
- `spark35`  classic local[2] under the Spark 3.5 venv (`--python35`; skipped when it does not exist)
All sessions: shuffle partitions 8, UTC, ANSI on (bench_checks.session). `classic` runs first and again last,
and the reference is the mean of the two, so a slow stretch of the machine in between shows as their spread
(`classic_spread`). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "benchmarks"), str(REPO / "tests")]
from connect_server import ConnectServer, clean_env  # noqa: E402  (tests/: the suite's own server)
KINDS = ("classic", "connect", "cluster", "spark35")
DRIVER_MEMORY = "2g"
MASTERS = {"classic": "local[2]", "spark35": "local[2]", "cluster": "local-cluster[2,1,1024]"}


# --------------------------------------------------------------------------- one kind, in its own process


def worker(kind: str, remote: str | None, rows: int, repeat: int, warmup: int) -> dict[str, Any]:
    """Time the check on one session kind; the answer (failed rows per rule) comes back for comparison."""
    import bench_checks as bc
    import dq_governance
    from dq_governance.checks import compat

    started = time.perf_counter()
    if kind == "connect":
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.remote(remote).getOrCreate()
        spark.conf.set("spark.sql.shuffle.partitions", "8")  # the other settings are the server's, as below
    else:
        spark = bc.session(MASTERS[kind], DRIVER_MEMORY, False)
    spark.conf.set(compat.TIME_PARSER_POLICY_KEY, compat.TIME_PARSER_POLICY)  # Spark 4's default; 3.5 needs it
    session_s = time.perf_counter() - started
    contract = bc.contract()
    df = bc.generate(spark, rows)

    def check() -> dict[str, int]:
        result = dq_governance.check(df, contract)
        result.valid_df.write.format("noop").mode("overwrite").save()
        result.quarantine_df.write.format("noop").mode("overwrite").save()
        result.release()
        return {r.name: r.failed_count for r in result.rules if r.failed_count}

    # Masking: 2M CPF-shaped values masked with hmac (the path the session takes: the extension jar's UDF
    # where it is on the driver, else sha2 over broadcast pads) against a plain select of them, noop sink.
    from pyspark.sql import functions as F

    from dq_governance.masking import apply_masks
    from dq_governance.masking.jvm_hmac import HMAC_CLASS
    from dq_governance.session import java_class

    os.environ.setdefault("DQGOV_MASKING_KEY", "bench-kinds-masking-key-0123456789")
    cpfs = df.select(F.lpad((F.col("pedido_id") * 7919 % 99_999_999_999).cast("string"), 11, "0").alias("cpf"))
    masked_contract = bc.Contract.model_validate({
        "contract": {"name": "bench_mask", "version": "1.0.0"}, "dataset": {"name": "bench.mask"},
        "schema": {"fields": [{"name": "cpf", "type": "string", "pii": True, "masking": "hmac"}]}})
    ways = {
        "check": check,
        "select": lambda: cpfs.write.format("noop").mode("overwrite").save(),
        "mask": lambda: apply_masks(cpfs, masked_contract).write.format("noop").mode("overwrite").save(),
    }
    times, answers = bc.timed(ways, repeat, warmup)
    out = {"kind": kind, "spark": spark.version, "session_s": round(session_s, 1),
           "seconds": round(statistics.median(times["check"]), 3), "rounds": [round(t, 3) for t in times["check"]],
           "violations": answers["check"], "hmac_path": "jvm" if java_class(spark, HMAC_CLASS) else "sha2",
           "mask_vs_select": bc.paired(times, "mask", "select")}
    df.unpersist()
    spark.stop()
    return out


# --------------------------------------------------------------------------- the orchestrator


def run_kind(python: str, kind: str, args: argparse.Namespace, remote: str | None = None) -> dict[str, Any]:
    """One worker process; its RESULT line, or the reason it failed."""
    env = clean_env({"SPARK_LOCAL_IP": "127.0.0.1"})  # local-cluster's master and workers, the drivers: loopback
    command = [python, __file__, "--worker", kind, "--rows", str(args.rows), "--repeat", str(args.repeat),
               "--warmup", str(args.warmup), *(["--remote", remote] if remote else [])]
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    if proc.returncode or not lines:
        return {"kind": kind, "error": (proc.stderr or proc.stdout)[-1500:]}
    result = json.loads(lines[-1].removeprefix("RESULT "))
    result["process_s"] = round(time.perf_counter() - started, 1)
    return result


def orchestrate(args: argparse.Namespace) -> dict[str, Any]:
    """Every kind in its own process, classic first and last; ratios to the mean classic time."""
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise SystemExit(f"--kinds: unknown {', '.join(sorted(unknown))} (known: {', '.join(KINDS)})")
    python = sys.executable
    load = [os.getloadavg()[0]]
    runs: dict[str, Any] = {"classic_first": run_kind(python, "classic", args)}
    for kind in kinds:
        if kind == "classic":
            continue
        if kind == "spark35":
            if not Path(args.python35).exists():
                runs[kind] = {"kind": kind, "skipped": f"{args.python35} does not exist (make venv35)"}
                continue
            runs[kind] = run_kind(args.python35, "spark35", args)
        elif kind == "connect":
            with tempfile.TemporaryDirectory(prefix="bench-connect-") as tmp:
                server = ConnectServer(Path(tmp), delta=False).start()
                try:
                    runs[kind] = run_kind(python, "connect", args, remote=server.url)
                finally:
                    server.stop()
        else:
            runs[kind] = run_kind(python, kind, args)
    runs["classic_last"] = run_kind(python, "classic", args)

    classic = [runs[k]["seconds"] for k in ("classic_first", "classic_last") if "seconds" in runs[k]]
    if not classic:
        return {"error": "the classic run failed", "runs": runs}
    reference = statistics.mean(classic)
    answers = {json.dumps(r["violations"], sort_keys=True) for r in runs.values() if "violations" in r}
    return {
        "rows": args.rows, "rules": 8, "repeat": args.repeat, "warmup": args.warmup,
        "timed": "dq_governance.check + both outputs to noop + release (median of rounds)",
        "classic_seconds": round(reference, 3),
        "classic_spread": round((max(classic) - min(classic)) / reference, 3),
        "ratios_to_classic": {k: round(r["seconds"] / reference, 3) for k, r in runs.items()
                              if "seconds" in r and not k.startswith("classic")},
        "masking": {k: {"path": r.get("hmac_path"), "mask_vs_select": r.get("mask_vs_select")}
                    for k, r in runs.items() if "seconds" in r},
        "same_answers": len(answers) == 1,
        "load_avg_1m": [*load, os.getloadavg()[0]],  # at the start and at the end
        "runs": runs,
    }


def main() -> None:
    """Orchestrate (default) or run one kind (`--worker`), printing JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds per kind")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    parser.add_argument("--python35", default=str(REPO / ".venv35" / "bin" / "python"),
                        help="the Spark 3.5 venv's python (make venv35)")
    parser.add_argument("--worker", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--remote", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, args.remote, args.rows, args.repeat, args.warmup)))
        return
    print(json.dumps(orchestrate(args), indent=2))


if __name__ == "__main__":
    main()

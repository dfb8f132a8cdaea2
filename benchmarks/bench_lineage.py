"""Lineage store at scale: generate 100,000 datasets and 1,000,000 column edges as OpenLineage JSONL,
ingest them into the SQLite store, then time downstream impact queries (depth <= 10) from random columns.

Usage: python benchmarks/bench_lineage.py [--scale 1.0] [--queries 1000] [--seed 7] [--keep DIR]

The events are written to disk as they are generated and read back line by line, and the store lives
on disk; peak RSS shows that nothing is held whole. The graph is a random DAG: dataset i (after the
first 1% sources) is written by one run of job i (a START event naming its datasets, then a COMPLETE
event with the schema and columnLineage facets, as the Spark listener emits them), which reads 1-3
earlier datasets; each output column takes one
or two input columns, so every column feeds about one other column (a critical branching process:
reaches vary from nothing to hundreds of columns). 5% of the jobs carry no column lineage, so the
queries also walk coarse dataset-level fallbacks.

Prints one JSON object. Baseline, in the same process: reading + json.loads of the same JSONL file
(the floor any ingest pays); `ingest_vs_parse` is ingest time / parse time. With orjson installed (the
`fast` extra) the store parses with it, and `baseline_fast_parse_s` times that parser alone too. Events/s
are given per wall-clock second and per CPU second. A large JSONL file is ingested by two processes (a
parser process feeding the writer; `--serial` for one): CPU is reported per process and summed, and
`ingest_events_per_busiest_process_cpu_s` is the rate the pipeline reaches when each process has a core of
its own (steadier than wall time on a shared machine). Peak RSS is given for this process and the parser.
Targets: ingest >= 20,000 events/s, query median < 50 ms and p99 < 500 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dq_governance.lineage import graph as graph_module  # noqa: E402
from dq_governance.lineage.graph import LineageGraph  # noqa: E402
from dq_governance.lineage.impact import impact, resolve_target  # noqa: E402

NAMESPACE = "s3://bench-lake"
COLUMNS = 10
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark"
CL_SCHEMA = "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet"
SCHEMA_SCHEMA = "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet"
TARGET_EPS, TARGET_MEDIAN_MS, TARGET_P99_MS = 20_000, 50.0, 500.0


def dataset_name(i: int) -> str:
    """Dotted names like real warehouses: <db>.<schema>.<table>."""
    return f"lake{i % 7}.sales_{i // 1000}.table_{i}"


def peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident set size of this process (or of its largest finished child), in MiB (Linux reports KiB)."""
    return resource.getrusage(who).ru_maxrss / 1024


def children_cpu_s() -> float:
    """CPU seconds of the finished child processes (the parser process of a parallel ingest)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def generate(path: Path, datasets: int, edges: int, rng: random.Random) -> dict:
    """Write a START and a COMPLETE RunEvent per produced dataset to JSONL; return what was written."""
    sources = max(1, datasets // 100)
    produced = datasets - sources
    no_lineage = set(rng.sample(range(sources, datasets), produced // 20))
    with_lineage = produced - len(no_lineage)
    base = edges // (with_lineage * COLUMNS) if with_lineage else 0
    extra = edges - base * with_lineage * COLUMNS  # this many output columns get one more input
    written_edges = 0
    events = 0
    lineage_index = 0
    with path.open("w") as out:
        for i in range(sources, datasets):
            window_start = max(0, i - 5000)
            inputs = sorted({rng.randrange(window_start, i) for _ in range(rng.randint(1, 3))})
            output: dict = {"namespace": NAMESPACE, "name": dataset_name(i), "facets": {
                "schema": {"_producer": PRODUCER, "_schemaURL": SCHEMA_SCHEMA,
                           "fields": [{"name": f"c{c}", "type": "string"} for c in range(COLUMNS)]}}}
            if i not in no_lineage:
                fields = {}
                for c in range(COLUMNS):
                    count = base + (1 if lineage_index * COLUMNS + c < extra else 0)
                    chosen: set[tuple[int, int]] = set()
                    while len(chosen) < min(count, len(inputs) * COLUMNS):  # distinct inputs: exact edge count
                        chosen.add((inputs[rng.randrange(len(inputs))], rng.randrange(COLUMNS)))
                    picks = [{"namespace": NAMESPACE, "name": dataset_name(src), "field": f"c{col}",
                              "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}
                             for src, col in sorted(chosen)]
                    written_edges += len(picks)
                    fields[f"c{c}"] = {"inputFields": picks}
                lineage_index += 1
                output["facets"]["columnLineage"] = {"_producer": PRODUCER, "_schemaURL": CL_SCHEMA, "fields": fields}
            day, hour = 1 + i % 28, i % 24
            run = {"runId": f"00000000-0000-4000-8000-{i:012d}", "facets": {}}
            job = {"namespace": "bench", "name": f"job_{i}", "facets": {}}
            refs = [{"namespace": NAMESPACE, "name": dataset_name(j), "facets": {}} for j in inputs]
            start = {  # as the Spark listener: a START naming the datasets, then a COMPLETE with the facets
                "eventTime": f"2026-11-{day:02d}T{hour:02d}:00:00.000Z", "producer": PRODUCER,
                "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
                "eventType": "START", "run": run, "job": job, "inputs": refs,
                "outputs": [{"namespace": NAMESPACE, "name": dataset_name(i), "facets": {}}],
            }
            complete = {**start, "eventTime": f"2026-11-{day:02d}T{hour:02d}:05:00.000Z", "eventType": "COMPLETE",
                        "outputs": [output]}
            out.write(json.dumps(start, separators=(",", ":")) + "\n")
            out.write(json.dumps(complete, separators=(",", ":")) + "\n")
            events += 2
    return {"events": events, "edges": written_edges, "jobs_without_column_lineage": len(no_lineage)}


def parse_baseline(path: Path, loads=json.loads) -> float:
    """Seconds to read and parse every line (json.loads unless told): the floor of any JSONL ingest."""
    start = time.perf_counter()
    with path.open("rb") as handle:
        for line in handle:
            loads(line)
    return time.perf_counter() - start


def main() -> dict:
    """Run the benchmark; return the JSON-ready measurements."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0 = 100,000 datasets and 1,000,000 column edges")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, default=None, help="Keep the JSONL and the store in this folder.")
    parser.add_argument("--serial", action="store_true", help="Ingest in this process only (no parser process).")
    args = parser.parse_args()
    datasets, edges = int(100_000 * args.scale), int(1_000_000 * args.scale)
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-lineage-"))
    work.mkdir(parents=True, exist_ok=True)
    events_path, db_path = work / "events.jsonl", work / "lineage.db"
    for stale in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
        stale.unlink(missing_ok=True)
    rng = random.Random(args.seed)

    t0 = time.perf_counter()
    generated = generate(events_path, datasets, edges, rng)
    generate_s = time.perf_counter() - t0
    rss_after_generate = peak_rss_mb()

    parse_s = parse_baseline(events_path)
    fast_loads = graph_module._fast_loads
    fast_parse_s = parse_baseline(events_path, fast_loads) if fast_loads is not None else None

    load_before = os.getloadavg()[0]
    t0, c0, k0 = time.perf_counter(), time.process_time(), children_cpu_s()
    with LineageGraph(db_path) as graph:
        stats = graph.ingest_file(events_path, parallel=False if args.serial else None)
    ingest_s, writer_cpu_s, parser_cpu_s = time.perf_counter() - t0, time.process_time() - c0, children_cpu_s() - k0
    ingest_cpu_s = writer_cpu_s + parser_cpu_s
    busiest_cpu_s = max(writer_cpu_s, parser_cpu_s)  # on two idle cores the wall time tends to this
    rss_after_ingest = peak_rss_mb()

    timings, reached = [], []
    with LineageGraph(db_path) as graph:
        counts = graph.counts()
        # a random column = a random known field (source datasets only have the columns someone reads)
        max_field = graph.db.execute("SELECT max(id) FROM fields").fetchone()[0]
        targets = []
        while len(targets) < args.queries:
            row = graph.db.execute("SELECT d.name, f.name FROM fields f JOIN datasets d ON d.id = f.dataset_id "
                                   "WHERE f.id = ?", (rng.randint(1, max_field),)).fetchone()
            if row:
                targets.append(f"{row[0]}.{row[1]}")
        cpu_timings = []
        for target in targets:
            start, cpu = time.perf_counter(), time.process_time()
            result = impact(graph, resolve_target(graph, target, NAMESPACE), "downstream", args.depth)
            timings.append((time.perf_counter() - start) * 1000)
            cpu_timings.append((time.process_time() - cpu) * 1000)
            reached.append(len(result.hits))
    nonempty = sorted(t for t, n in zip(timings, reached) if n)
    timings.sort()
    median = statistics.median(timings)
    p99 = timings[min(len(timings) - 1, int(len(timings) * 0.99))]
    eps = stats.stored / ingest_s
    out = {
        "benchmark": "lineage_store",
        "command": "python benchmarks/bench_lineage.py " + " ".join(sys.argv[1:]),
        "scale": args.scale,
        "datasets": counts["datasets"], "fields": counts["fields"], "column_edges": counts["field_edges"],
        "events": generated["events"], "events_stored": stats.stored, "events_skipped": stats.skipped,
        "jobs_without_column_lineage": generated["jobs_without_column_lineage"],
        "jsonl_mb": round(events_path.stat().st_size / 2**20, 1),
        "store_mb": round(sum(p.stat().st_size for p in work.glob("lineage.db*")) / 2**20, 1),
        "generate_s": round(generate_s, 2),
        "json_parser": "orjson" if fast_loads is not None else "json",
        "baseline_parse_s": round(parse_s, 2),
        "baseline_fast_parse_s": round(fast_parse_s, 2) if fast_parse_s is not None else None,
        "ingest_mode": "parallel (parser process + writer)" if parser_cpu_s > 0 else "serial",
        "ingest_s": round(ingest_s, 2),
        "ingest_cpu_s": round(ingest_cpu_s, 2),
        "ingest_writer_cpu_s": round(writer_cpu_s, 2),
        "ingest_parser_cpu_s": round(parser_cpu_s, 2),
        "ingest_events_per_s": round(eps),
        "ingest_events_per_cpu_s": round(stats.stored / ingest_cpu_s),
        "ingest_events_per_busiest_process_cpu_s": round(stats.stored / busiest_cpu_s),
        "ingest_us_cpu_per_event": round(ingest_cpu_s / stats.stored * 1e6, 1),
        "ingest_us_cpu_per_event_writer": round(writer_cpu_s / stats.stored * 1e6, 1),
        "ingest_us_cpu_per_event_parser": round(parser_cpu_s / stats.stored * 1e6, 1),
        "ingest_edges_per_s": round(counts["field_edges"] / ingest_s),
        "ingest_vs_parse": round(ingest_s / parse_s, 2),
        "queries": len(timings), "depth": args.depth,
        "query_median_ms": round(median, 2), "query_p99_ms": round(p99, 2), "query_max_ms": round(timings[-1], 2),
        "query_cpu_p99_ms": round(sorted(cpu_timings)[min(len(cpu_timings) - 1, int(len(cpu_timings) * 0.99))], 2),
        "hits_median": statistics.median(reached), "hits_p99": sorted(reached)[int(len(reached) * 0.99)],
        "hits_max": max(reached), "queries_with_hits": len(nonempty),
        "query_median_ms_with_hits": round(statistics.median(nonempty), 2) if nonempty else None,
        "peak_rss_mb_after_generate": round(rss_after_generate, 1),
        "peak_rss_mb_after_ingest": round(rss_after_ingest, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "peak_rss_mb_parser_process": round(peak_rss_mb(resource.RUSAGE_CHILDREN), 1),
        "targets": {"ingest_events_per_s>=20000": eps >= TARGET_EPS,
                    "ingest_events_per_busiest_process_cpu_s>=20000": stats.stored / busiest_cpu_s >= TARGET_EPS,
                    "query_median_ms<50": median < TARGET_MEDIAN_MS, "query_p99_ms<500": p99 < TARGET_P99_MS},
        "cpu_count": os.cpu_count(), "load_avg_1m_before_ingest": round(load_before, 2),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return out


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))

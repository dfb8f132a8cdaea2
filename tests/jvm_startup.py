"""A class-data archive for the tests' JVMs: Spark's classes mapped from one file instead of parsed from its jars.

The suite starts a JVM for nearly every Spark step it takes apart from the shared session (spark-submit jobs,
dqgov subprocesses, Connect servers), and most of a short job's time is that launch. A warm-up job writes the
classes it loaded into an archive once per Spark home and JDK (-XX:ArchiveClassesAtExit); every later JVM
launched through spark-submit maps it (-XX:SharedArchiveFile in SPARK_SUBMIT_OPTS): a trivial local session
started in 11 s without it and in 6 s with it on a busy 2-core machine. A JVM whose class path differs from the
warm-up's ignores the archive silently and loads its classes as usual; classes from spark.jars and --packages
are never in it. Where the archive cannot be made, the tests run without it. Benchmarks never use it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: C1 alone, for the short jobs: their JVM exits before C2's code pays back, and C2's compiler threads compete for
#: the two cores (tests/test_enforce_trust.py: 75 s with it, 98 s without)
C1_ONLY = "-XX:TieredStopAtLevel=1"


def for_long_jvm(options: str) -> str:
    """`options` without C1_ONLY: for a JVM that runs many jobs (shared session, Delta jobs, shared Connect server).

    There C2's code pays back: the shared session's tests/test_profile.py, test_detect_pii.py and
    test_publish_run.py took 232-245 s with C2 and 297-350 s without it; tests/test_publish_delta.py 208-218 s
    against 243-255 s; tests/connect/test_connect_run.py on the shared server 76 s against 106 s.
    """
    return " ".join(part for part in options.split() if part != C1_ONLY)


def long_jvm_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default os.environ) for a subprocess whose JVM runs many jobs: its SPARK_SUBMIT_OPTS keeps C2."""
    env = dict(os.environ if env is None else env)
    env["SPARK_SUBMIT_OPTS"] = for_long_jvm(env.get("SPARK_SUBMIT_OPTS", ""))
    return env


#: a little of everything the suite's jobs do: CSV in, SQL functions, a shuffle, parquet out and back
WARM_UP = """
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
out = sys.argv[1]
with open(out + ".csv", "w") as f:
    f.write("id,name,day\\n1,Ana,2026-11-01\\n2,,2026-02-30\\n")
rows = spark.read.option("header", True).csv(out + ".csv")
rows = rows.selectExpr("CAST(id AS BIGINT) AS id", "name", "try_cast(day AS DATE) AS day",
                       "name RLIKE '^[A-Z]' AS upper")
rows.groupBy("upper").agg({"id": "count", "day": "max"}).collect()
rows.write.mode("overwrite").parquet(out + ".parquet")
spark.read.parquet(out + ".parquet").where("id > 0").count()
spark.stop()
"""


def _java() -> str | None:
    """The java spark-submit launches (bin/spark-class: JAVA_HOME's, else the one on PATH)."""
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else shutil.which("java")


def _archive_path(java: str) -> Path:
    """One archive per Spark home, its jars and the JDK: a change to any of them names a new file."""
    import pyspark

    spark_home = Path(pyspark.__file__).resolve().parent
    jars = spark_home / "jars"
    version = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    key = "|".join([str(spark_home), pyspark.__version__, str(jars.stat().st_mtime_ns) if jars.exists() else "",
                    str(Path(java).resolve()), version])
    return Path(tempfile.gettempdir()) / f"dqgov-tests-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"


def _make_archive(java: str, archive: Path, options: str) -> bool:
    """Run the warm-up with -XX:ArchiveClassesAtExit, check that a JVM starts with the result, then publish it."""
    partial = archive.with_name(f"{archive.stem}.{os.getpid()}.partial")
    scratch = tempfile.mkdtemp(prefix="dqgov-warm-up-")
    try:
        env = {**os.environ, "SPARK_SUBMIT_OPTS": f"{options} -XX:ArchiveClassesAtExit={partial}".strip()}
        proc = subprocess.run([sys.executable, "-c", WARM_UP, str(Path(scratch) / "warm")], env=env,
                              capture_output=True, text=True, timeout=600)
        # a truncated or foreign archive stops the JVM at launch: never name one that does not start
        usable = proc.returncode == 0 and partial.exists() and subprocess.run(
            [java, f"-XX:SharedArchiveFile={partial}", "-version"], capture_output=True, timeout=60).returncode == 0
        if usable:
            os.replace(partial, archive)
        return usable
    finally:
        partial.unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)


def with_class_data_archive(options: str) -> str:
    """`options` (SPARK_SUBMIT_OPTS) plus -XX:SharedArchiveFile of this Spark's archive, made first if need be."""
    java = _java()
    if java is None:
        return options
    try:
        archive = _archive_path(java)
        if not archive.exists() and not _make_archive(java, archive, options):
            print(f"tests: no class-data archive for {archive.name} (the warm-up failed); JVMs load classes from "
                  "their jars", file=sys.stderr)
            return options
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"tests: no class-data archive ({type(exc).__name__}); JVMs load classes from their jars",
              file=sys.stderr)
        return options
    return f"{options} -XX:SharedArchiveFile={archive}".strip()

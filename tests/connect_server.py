"""A local Spark Connect server for the tests, started from PySpark's own jar on a free loopback port.

`ConnectServer().start()` runs `spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer`
from the installed pyspark (its wheel has `jars/spark-connect_*.jar` but no `sbin/start-connect-server.sh`),
bound to 127.0.0.1 only (gRPC, driver RPC and block manager), in a process group of its own, and waits for
the ready line. `stop()` ends that process group. With `delta=True` the server loads delta-spark (the jar
matching the installed pip package) and the Delta SQL extension and catalog. Its working directory is the
repo (the example contracts' reference paths are relative to it); the warehouse and Derby live in `workdir`.

The server's Python worker (foreachBatch of `check_stream`) runs this venv's Python with the repo on
PYTHONPATH. `SPARK_CONNECT_MODE_ENABLED` / `SPARK_REMOTE` are stripped from the child's environment: a
remote session in the test process sets the first for the whole process, and a server started with it
could not create its own classic session.

Run directly to try it: `.venv/bin/python tests/connect_server.py` prints the sc:// URL and waits.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from jvm_startup import long_jvm_env

REPO = Path(__file__).resolve().parent.parent
READY = "Spark Connect server started at"
#: the servers started and not yet stopped, for a failed test's report (tests/connect/conftest.py)
RUNNING: list[ConnectServer] = []
#: environment a child Spark process must not inherit from a process that opened a remote session
CONNECT_ENV = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_MODE")


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """os.environ without the Connect-mode variables (for every subprocess a Connect test starts)."""
    env = {k: v for k, v in os.environ.items() if k not in CONNECT_ENV}
    env.update(extra or {})
    return env


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _delta_package() -> str:
    from importlib.metadata import version

    import pyspark

    scala = "2.12" if pyspark.__version__.startswith("3.") else "2.13"
    return f"io.delta:delta-spark_{scala}:{version('delta-spark')}"


class ConnectServer:
    """One Spark Connect server process (see the module doc)."""

    def __init__(self, workdir: Path, *, delta: bool = True, timeout: float = 240.0, cwd: Path = REPO,
                 conf: dict[str, str] | None = None, long_lived: bool = False) -> None:
        self.workdir = Path(workdir)
        # a server that runs many tests keeps C2 (tests/jvm_startup.py): its code pays back there
        self.long_lived = long_lived
        self.cwd = Path(cwd)  # the server resolves relative paths (e.g. a contract's references) against it
        self.delta = delta
        self.conf = dict(conf or {})  # more settings (e.g. the ones `dqgov listener-conf` prints), last word
        self.timeout = timeout
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log = self.workdir / "connect-server.log"

    @property
    def url(self) -> str:
        """The sc:// URL of the server."""
        return f"sc://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """The spark-submit command line."""
        import pyspark

        home = Path(pyspark.__file__).resolve().parent
        conf = {
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.ansi.enabled": "true",
            "spark.driver.memory": "2g",
            "spark.sql.warehouse.dir": str(self.workdir / "warehouse"),
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={self.workdir / 'derby'}",
        }
        args = [str(home / "bin" / "spark-submit"), "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
                "--master", "local[2]", "--name", "dqgov-connect-tests"]
        if self.delta:
            args += ["--packages", _delta_package()]
            conf["spark.sql.extensions"] = "io.delta.sql.DeltaSparkSessionExtension"
            conf["spark.sql.catalog.spark_catalog"] = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
            conf["spark.databricks.delta.snapshotPartitions"] = "1"  # Delta's default, 50 tasks per snapshot, is slow
        conf.update(self.conf)
        for key, value in conf.items():
            args += ["--conf", f"{key}={value}"]
        return [*args, "spark-internal"]

    def start(self) -> ConnectServer:
        """Start the server and wait for its ready line (raises RuntimeError with the log's tail if it dies)."""
        import pyspark

        self.workdir.mkdir(parents=True, exist_ok=True)
        home = Path(pyspark.__file__).resolve().parent
        env = clean_env({
            "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        })
        if self.long_lived:
            env = long_jvm_env(env)
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT, env=env,
                                            cwd=self.cwd, start_new_session=True)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            text = self.log.read_text(errors="replace")
            if READY in text:
                RUNNING.append(self)
                return self
            if self.process.poll() is not None:
                raise RuntimeError(f"Spark Connect server exited ({self.process.returncode}):\n{text[-3000:]}")
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"Spark Connect server not ready after {self.timeout:.0f}s:\n"
                           f"{self.log.read_text(errors='replace')[-3000:]}")

    def state(self) -> str:
        """"alive", "exited with N" or "not started"."""
        if self.process is None:
            return "not started"
        code = self.process.poll()
        return "alive" if code is None else f"exited with {code}"

    def diagnosis(self, *, log_lines: int = 40, stack_chars: int = 20000) -> str:
        """Whether the server lives, its log's last lines and (alive) its JVM's thread dump, for a failed test."""
        state = self.state()
        if self.process is None:
            return state
        tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-log_lines:])
        parts = [f"{self.url}: {state}", f"-- log tail --\n{tail}"]
        if state == "alive":  # spark-submit execs spark-class, which execs java: the pid is the server's JVM
            jstack = shutil.which("jstack") or os.path.join(os.environ.get("JAVA_HOME", ""), "bin", "jstack")
            try:
                dump = subprocess.run([jstack, str(self.process.pid)], capture_output=True, text=True, timeout=60)
                parts.append(f"-- jstack --\n{dump.stdout[:stack_chars]}{dump.stderr[-2000:]}")
            except (OSError, subprocess.SubprocessError) as exc:
                parts.append(f"-- jstack failed: {exc}")
        return "\n".join(parts)

    def stop(self) -> None:
        """Stop the server's process group (TERM, then KILL after 30 s)."""
        if self in RUNNING:
            RUNNING.remove(self)
        if self.process is None or self.process.poll() is not None:
            return
        pgid = os.getpgid(self.process.pid)
        os.killpg(pgid, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(pgid, signal.SIGKILL)
            self.process.wait(30)


if __name__ == "__main__":  # pragma: no cover - a manual helper
    import tempfile

    server = ConnectServer(Path(tempfile.mkdtemp(prefix="dqgov-connect-"))).start()
    print(server.url, flush=True)
    try:
        signal.pause()
    finally:
        server.stop()

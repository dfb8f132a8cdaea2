"""The session kind: classic (a driver JVM reached through py4j) or Spark Connect (a gRPC client, no JVM).

The one place that knows the difference. Everything else asks `kind(spark)` or `capabilities(spark)` and
takes its entry of a dispatch table, instead of probing `_jvm` / `_jdf` / `sparkContext` itself.

- The kind is decided per session, from the session object's class (`type(spark).__module__`), never with
  `pyspark.sql.utils.is_remote()`: creating one remote session sets `SPARK_CONNECT_MODE_ENABLED` for the
  whole process (and its children), so `is_remote()` then answers for every session at once.
- On Connect the client cannot rename, delete or create files: only Spark reads and writes reach storage.
  `path_exists`, `list_files` and `qualify` therefore ask Spark's `binaryFile` source (a listing, no file
  content is read); publication takes the Connect publishers of `publish.writer` (its Connect section).
- A weaker guarantee is never taken silently: `log_once` writes its line once per run.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from dq_governance.errors import ConfigError

log = logging.getLogger(__name__)

CLASSIC = "classic"
CONNECT = "connect"
KINDS = (CLASSIC, CONNECT)
#: the Spark source used to look at files from a Connect client (lists files, reads no content here)
_LISTING_FORMAT = "binaryFile"
#: how many (run, key) pairs `log_once` remembers; older ones may log again (a long-lived process)
_ONCE_LIMIT = 4096


def kind(spark: Any) -> str:
    """'connect' for a Spark Connect session, else 'classic' (decided by the session's class, per session)."""
    return CONNECT if type(spark).__module__.startswith("pyspark.sql.connect") else CLASSIC


def is_connect(spark: Any) -> bool:
    """Whether `spark` is a Spark Connect session."""
    return kind(spark) == CONNECT


@dataclass(frozen=True)
class Capabilities:
    """What a session can do beyond the DataFrame API."""

    driver_jvm: bool  # py4j gateway to the driver (our jar's classes, Hadoop FileSystem)
    hadoop_fs: bool  # rename / delete / list through the Hadoop FileSystem API
    java_udf: bool  # register a UDF object built in the JVM (the HMAC UDF holds its key in the object)
    listener_registry: bool  # hand results to the listener extension in the driver
    observation: bool  # Observation metrics on a write (Connect: 4.x client and server)
    delta_table_api: bool  # delta.tables.DeltaTable (Connect: only with the Delta Connect plugin; use SQL)


def _classic_capabilities(spark: Any) -> Capabilities:
    try:
        import delta.tables  # noqa: F401
        delta_api = True
    except ImportError:
        delta_api = False
    return Capabilities(True, True, True, True, True, delta_api)


def _connect_capabilities(spark: Any) -> Capabilities:
    import pyspark

    # Observation needs both ends: the 3.5 client raises NOT_IMPLEMENTED, a 3.5 server sends no metrics
    observation = _major(pyspark.__version__) >= 4 and _major(spark.version) >= 4
    return Capabilities(False, False, False, False, observation, False)


def _major(version: str) -> int:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else 0


_CAPABILITIES = {CLASSIC: _classic_capabilities, CONNECT: _connect_capabilities}


def capabilities(spark: Any) -> Capabilities:
    """The session's capabilities (see Capabilities)."""
    return _CAPABILITIES[kind(spark)](spark)


def deterministic(df: Any) -> bool | None:
    """Whether two reads of `df` give the same rows, as Spark's analyzed plan says; None when it cannot be asked.

    A nondeterministic expression (`rand()`, a UDF marked `asNondeterministic`) makes the plan nondeterministic.
    A Connect session has no driver JVM to ask (None); neither can tell a source whose files change between reads.
    """
    if not capabilities(df.sparkSession).driver_jvm:
        return None
    try:
        return bool(df._jdf.queryExecution().analyzed().deterministic())
    except Exception:  # noqa: BLE001 - a question, never a failure
        return None


def unsupported(what: str, instead: str) -> ConfigError:
    """The one-line error for a feature a Spark Connect session lacks, naming what to use instead."""
    return ConfigError(f"{what} needs a classic Spark session (Spark Connect has no driver JVM); use {instead}")


# --------------------------------------------------------------------------- the driver JVM (classic only)


def java_class(spark: Any, class_name: str) -> Any | None:
    """The py4j JavaClass `class_name` on the driver's classpath, or None (Connect, no gateway, jar not loaded)."""
    if is_connect(spark):
        return None
    try:
        from py4j.java_gateway import JavaClass
    except ImportError:
        return None
    try:
        jvm = getattr(spark, "_jvm", None)
        if jvm is None:
            jvm = spark.sparkContext._jvm  # classic sessions before _jvm existed on SparkSession
        if jvm is None:
            return None
        node = jvm
        for part in class_name.split("."):
            node = getattr(node, part)
    except Exception:  # a stopped gateway: nothing to talk to
        return None
    # py4j answers an unknown class with a JavaPackage: the jar is not on the driver's classpath
    return node if isinstance(node, JavaClass) else None


class HadoopFs:
    """The few Hadoop FileSystem calls publication needs on a classic session (py4j, no extra dependency)."""

    def __init__(self, spark: Any, path: str):
        self._jvm = spark._jvm
        conf = spark._jsc.hadoopConfiguration()
        self._fs = self._jvm.org.apache.hadoop.fs.Path(path).getFileSystem(conf)

    def _p(self, path: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(path)

    def qualify(self, path: str) -> str:
        """The fully qualified URI of a path (file:/abs/path for local ones)."""
        return str(self._fs.makeQualified(self._p(path)).toString())

    def exists(self, path: str) -> bool:
        """Whether the path exists."""
        return bool(self._fs.exists(self._p(path)))

    def file_ancestor(self, path: str) -> str | None:
        """The nearest existing ancestor of `path` (qualified) when it is a file, else None."""
        parent = self._fs.makeQualified(self._p(path)).getParent()
        while parent is not None and not self._fs.exists(parent):
            parent = parent.getParent()
        if parent is None or self._fs.getFileStatus(parent).isDirectory():
            return None
        return str(parent.toString())

    def delete(self, path: str) -> None:
        """Delete a file or a directory tree, if it exists."""
        if self.exists(path):
            self._fs.delete(self._p(path), True)

    def mkdirs(self, path: str) -> None:
        """Create a directory and its parents."""
        self._fs.mkdirs(self._p(path))

    def rename(self, src: str, dst: str) -> None:
        """Move src to dst (which must not exist); the parent of dst is created."""
        # Hadoop moves src *into* dst when dst is an existing directory; callers make sure it is not.
        if self.exists(dst):
            raise ConfigError(f"cannot promote {src}: {dst} already exists")
        parent = self._p(dst).getParent()
        if parent is not None and not self._fs.exists(parent):
            self._fs.mkdirs(parent)
        if not self._fs.rename(self._p(src), self._p(dst)):
            raise ConfigError(f"cannot move {src} to {dst}")

    def is_empty(self, path: str) -> bool:
        """Whether the path is an existing directory with nothing in it."""
        return self.exists(path) and len(self._fs.listStatus(self._p(path))) == 0

    def files(self, path: str) -> list[str]:
        """Relative paths of every visible file under path, at any depth (hidden directories skipped)."""
        found = []
        for name, is_dir in self.children(path):
            if is_dir:
                found.extend(f"{name}/{rel}" for rel in self.files(join(path, name)))
            else:
                found.append(name)
        return found

    def children(self, path: str) -> list[tuple[str, bool]]:
        """(name, is_dir) of visible children, by Spark's rule: `_x` and `.x` are hidden, `_k=v` is not."""
        if not self.exists(path):
            return []
        out = []
        for status in self._fs.listStatus(self._p(path)):
            name = status.getPath().getName()
            if not hidden(name):
                out.append((name, bool(status.isDirectory())))
        return out


def filesystem(spark: Any, path: str) -> HadoopFs | None:
    """The Hadoop FileSystem of `path` on a classic session; None on Connect (the client cannot move files)."""
    return None if is_connect(spark) else HadoopFs(spark, path)


def hidden(name: str) -> bool:
    """Spark's rule for names its file sources skip: `_x` and `.x`, but not partition directories `_k=v`."""
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


def join(base: str, *parts: str) -> str:
    """`base/part/...` without doubled slashes."""
    return "/".join([base.rstrip("/"), *parts])


# --------------------------------------------------------------------------- files, by session kind


def _listing(spark: Any, path: str) -> Any:
    """A frame of (path, length) of the visible files under `path`, at any depth; no file content is read."""
    return (spark.read.format(_LISTING_FORMAT).option("recursiveFileLookup", "true").load(path)
            .select("path", "length"))


def _is_missing(exc: Exception) -> bool:
    text = str(exc)
    return "PATH_NOT_FOUND" in text or "Path does not exist" in text or "FileNotFoundException" in text


def _connect_exists(spark: Any, path: str) -> bool:
    try:
        spark.read.format(_LISTING_FORMAT).load(path).schema  # analysis lists the path: one RPC
    except Exception as exc:
        if _is_missing(exc):
            return False
        raise
    return True


def _connect_files(spark: Any, path: str) -> list[str]:
    try:
        found = [row["path"] for row in _listing(spark, path).collect()]
    except Exception as exc:
        if _is_missing(exc):
            return []
        raise
    base = _qualified_base(path, found)
    return sorted(uri[len(base) + 1:] if base and uri.startswith(base + "/") else uri for uri in found)


def _qualified_base(path: str, uris: list[str]) -> str | None:
    """The qualified form of `path`, read off a listed file's URI (which is `<qualified path>/<relative>`)."""
    tail = "/" + path.strip("/") if not path.startswith("/") else path.rstrip("/")
    for uri in uris:
        at = uri.rfind(tail + "/")
        if at >= 0:
            return uri[: at + len(tail)]
    return None


def _connect_qualify(spark: Any, path: str) -> str:
    if "://" in path or path.startswith("file:"):
        return path
    try:
        uris = [row["path"] for row in _listing(spark, path).limit(1).collect()]
    except Exception as exc:
        if _is_missing(exc):
            uris = []
        else:
            raise
    return _qualified_base(path, uris) or path


_EXISTS = {CLASSIC: lambda spark, path: HadoopFs(spark, path).exists(path), CONNECT: _connect_exists}
_FILES = {CLASSIC: lambda spark, path: sorted(HadoopFs(spark, path).files(path)), CONNECT: _connect_files}
_QUALIFY = {CLASSIC: lambda spark, path: HadoopFs(spark, path).qualify(path), CONNECT: _connect_qualify}


def path_exists(spark: Any, path: str) -> bool:
    """Whether a path exists, as the session's Spark sees it (any Hadoop file system)."""
    return _EXISTS[kind(spark)](spark, path)


def list_files(spark: Any, path: str) -> list[str]:
    """Relative paths of the visible files under `path`, sorted (hidden `_x` / `.x` names skipped)."""
    return _FILES[kind(spark)](spark, path)


def qualify(spark: Any, path: str) -> str:
    """The fully qualified URI of `path` (file:/abs/path for local ones); on Connect, of an existing path."""
    return _QUALIFY[kind(spark)](spark, path)


def _connect_mark(spark: Any, path: str) -> None:
    spark.range(0).write.mode("overwrite").parquet(path)  # an empty dataset: the directory is the marker


_MARK = {CLASSIC: lambda spark, path: HadoopFs(spark, path).mkdirs(path), CONNECT: _connect_mark}


def mark(spark: Any, path: str) -> None:
    """Create a marker directory at `path` (classic: mkdirs; Connect: an empty dataset written there)."""
    _MARK[kind(spark)](spark, path)


# --------------------------------------------------------------------------- a worker's plans

_plans_isolated = False


def _connect_isolate_plans(spark: Any) -> None:
    """Start this process's plan ids at a random 62-bit offset, once.

    A Connect server caches analysed plans per session, keyed by the request's relation, plan id included
    (`spark.connect.session.planCache.*`); an analysed file read holds the files listed then, a Delta read its
    snapshot. foreachBatch runs in a new Python process on the client's session at each query start, and a new
    client numbers its plans from 0: its first `path_exists` is the very request an earlier worker sent, and
    the cache answered it with what was on disk then (a deleted marker still "existed"; a batch was skipped).
    """
    global _plans_isolated
    if _plans_isolated:
        return
    try:
        from pyspark.sql.connect.plan import LogicalPlan
    except ImportError:  # no Connect client here: nothing numbers plans
        return
    import secrets

    with LogicalPlan._lock:  # noqa: SLF001 — PySpark's plan-id counter (3.5 and 4.0 alike)
        LogicalPlan._nextPlanId = max(LogicalPlan._nextPlanId, secrets.randbits(62))  # noqa: SLF001
    _plans_isolated = True


_ISOLATE_PLANS = {CLASSIC: lambda spark: None, CONNECT: _connect_isolate_plans}


def isolate_plans(spark: Any) -> None:
    """Make this process's Connect requests unlike any request another process sent on the same session."""
    _ISOLATE_PLANS[kind(spark)](spark)


# --------------------------------------------------------------------------- analysis, conf, logs


def analyzed(df: Any) -> Any:
    """`df`, analysed now: Connect analyses lazily, so a bad column or missing table would surface later."""
    if is_connect(df.sparkSession):
        df.schema  # one AnalyzePlan RPC: raises AnalysisException here, inside the caller's try
    return df


def conf_value(spark: Any, key: str, default: str | None = None) -> str | None:
    """A Spark setting (runtime or static) as the session sees it, or `default`; works on both kinds."""
    try:
        value = spark.conf.get(key, default)
    except Exception:  # a key Connect refuses to read: treat as unset
        return default
    return default if value is None else value


def set_log_level(spark: Any, level: str) -> None:
    """Set the driver's log level on a classic session; on Connect the server owns its logging (no-op)."""
    if not is_connect(spark):
        spark.sparkContext.setLogLevel(level)


def remote(url: str) -> Any:
    """A Spark Connect session to `url` (sc://HOST:PORT), checked with one round trip."""
    if not url.startswith("sc://"):
        raise ConfigError(f"--remote {url}: a Spark Connect URL looks like sc://HOST:PORT")
    _reachable(url)
    from dq_governance.checks.compat import quiet_query_context_loggers

    quiet_query_context_loggers()  # they would print a failed check's values (lineage.spark.spark_session)
    try:
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.remote(url).getOrCreate()
    except ImportError as exc:
        raise ConfigError(f"--remote needs PySpark's Connect client ({exc.name} is missing): "
                          "pip install 'dq-governance[connect]'") from None
    try:
        spark.version  # the client connects lazily; fail here with one line, not in the middle of a run
    except Exception as exc:
        raise ConfigError(f"--remote {url}: cannot reach the Spark Connect server ({first_line(exc)})") from None
    return spark


def _reachable(url: str, timeout: float = 10.0) -> None:
    """Fail fast when nothing listens at the URL (the Connect client itself retries for minutes)."""
    import socket
    from urllib.parse import urlparse

    parsed = urlparse(url.split(";", 1)[0].replace("sc://", "http://", 1))
    host, port = parsed.hostname or "localhost", parsed.port or 15002
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise ConfigError(f"--remote {url}: cannot reach the Spark Connect server ({exc.strerror or exc})") from None


def first_line(exc: BaseException) -> str:
    """The first line of an exception's text, else its type name; for a py4j error (`An error occurred while
    calling o12.parquet.`), the Java exception's line that follows; for a failed job (`Job aborted due to stage
    failure: ... Exception thrown in awaitResult:`), the root cause's line (the last `Caused by:`)."""
    lines = str(exc).strip().splitlines()
    if len(lines) > 1 and lines[0].startswith("An error occurred while calling") and lines[1].startswith(":"):
        line = lines[1][1:].strip()
    else:
        line = lines[0] if lines else type(exc).__name__
    if "Job aborted due to stage failure" in line:
        causes = [text.strip()[len(_CAUSED_BY):] for text in lines if text.strip().startswith(_CAUSED_BY)]
        return causes[-1] if causes else line
    return line


_CAUSED_BY = "Caused by: "


_once_lock = threading.Lock()
_once_seen: dict[tuple[str, str], None] = {}


def log_once(run_id: str | None, key: str, message: str, *args: Any, level: int = logging.INFO,
             logger: logging.Logger | None = None) -> bool:
    """Log `message` the first time `key` comes up in run `run_id`; True when it was logged now."""
    with _once_lock:
        marker = (run_id or "", key)
        if marker in _once_seen:
            return False
        if len(_once_seen) >= _ONCE_LIMIT:
            _once_seen.pop(next(iter(_once_seen)))
        _once_seen[marker] = None
    (logger or log).log(level, message, *args)
    return True

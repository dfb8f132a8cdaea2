"""Reading a command's input: format guessing, text formats as strings, Delta session settings."""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from dq_governance.errors import ConfigError, InputDataError

INPUT_FORMATS = ("csv", "parquet", "json", "orc", "delta", "table")


def location(path: str) -> str:
    """A path as a comparable location: a local path resolved, a URI with its scheme and host lowercased."""
    if path.startswith("file:"):
        path = urlsplit(path).path or path.removeprefix("file:")
    if "://" not in path:
        return str(Path(path).expanduser().resolve())
    parts = urlsplit(path)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{posixpath.normpath(parts.path or '/')}"


def within(inner: str, outer: str) -> bool:
    """Whether location `inner` is `outer` or lies under it."""
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def refuse_output_in(output: str, read: str, flag: str, what: str) -> None:
    """ConfigError when the file a command writes is what it reads, or inside it (a directory it reads)."""
    target, source = location(output), location(read)
    if within(target, source):
        raise ConfigError(f"-o {output} is inside {flag} {read} ({target}): writing it would replace or break "
                          f"the {what} being read; write it somewhere else")


def guess_format(source: str, declared: str | None, *, is_table: bool) -> str:
    if is_table:
        return "table"
    suffix = Path(source).suffix.lower().lstrip(".")
    if suffix in ("csv", "json", "parquet", "orc"):
        return suffix
    if suffix in ("jsonl", "ndjson"):
        return "json"
    if declared in INPUT_FORMATS:
        return declared
    if Path(source, "_delta_log").is_dir():
        return "delta"
    return "parquet" if Path(source).is_dir() else "csv"



def read_frame(spark: Any, fmt: str, source: str) -> Any:
    """The input DataFrame, analysed; text formats read every column as a string (the contract casts them)."""
    from dq_governance.session import analyzed, conf_value, first_line

    try:
        frame = analyzed(_reader(spark, fmt, source))  # Connect analyses lazily: a missing path fails here
    except InputDataError:
        raise
    except Exception as exc:  # Spark's AnalysisException and friends: one line naming the cause, no trace
        raise InputDataError(f"{source}: cannot read as {fmt}: {first_line(exc)}") from None
    # Spark infers a lone corrupt-record column when no line parses, and refuses to query it alone later
    if fmt == "json" and frame.columns == [conf_value(spark, "spark.sql.columnNameOfCorruptRecord", "_corrupt_record")]:
        raise InputDataError(f"{source}: cannot read as json: no line holds a JSON object")
    return frame


def _table(spark: Any, source: str) -> Any:
    if not spark.catalog.tableExists(source):
        raise InputDataError(f"table {source} does not exist")
    return spark.table(source)


#: input format -> how it is read
_READERS = {
    "csv": lambda spark, source: spark.read.option("header", True).option("mode", "PERMISSIVE").csv(source),
    "json": lambda spark, source: spark.read.option("primitivesAsString", True).json(source),
    "table": _table,
    "delta": lambda spark, source: spark.read.format("delta").load(source),
    "parquet": lambda spark, source: spark.read.parquet(source),
    "orc": lambda spark, source: spark.read.orc(source),
}


def _reader(spark: Any, fmt: str, source: str) -> Any:
    return _READERS.get(fmt, _READERS["parquet"])(spark, source)


def delta_conf() -> dict[str, str]:
    """Session settings for Delta: the delta-spark jar matching the installed pip package and Scala line."""
    from dq_governance.checks.compat import delta_package

    return {
        "spark.jars.packages": delta_package(),
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    }

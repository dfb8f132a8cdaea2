"""The one place that knows Spark versions: PySpark 3.5 and 4.0, classic and Spark Connect sessions.

Two versions count. Which Python API exists depends on the installed client (`pyspark.__version__`); how SQL
behaves depends on the server (`spark.version`, the same on a classic session). SQL text works alike on both
lines and both session kinds, so it is preferred: `try_cast` builds SQL text, `struct_type` parses nothing.
The jars a session needs (OpenLineage listener, Delta) are built for the installed Spark's Scala line.
PySpark is imported only by the functions that build Spark objects, so the jar names cost no Spark import.
"""

from __future__ import annotations

import functools
import os
import re
from importlib import util as importlib_util
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dq_governance.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql import types as T

#: DataFrameWriter mode that refuses to write over an existing target (3.5 and 4.0 both take this spelling).
WRITE_MODE_ERROR = "error"

TIME_PARSER_POLICY_KEY = "spark.sql.legacy.timeParserPolicy"
#: The policy date rules need: the legacy parser accepts text (`2024-01-5 `) the contract's pattern does not,
#: and EXCEPTION aborts the job on such text instead of giving null.
TIME_PARSER_POLICY = "CORRECTED"
#: What an unset policy means per Spark major version (3.5 defaults to EXCEPTION, 4.0 to CORRECTED).
_DEFAULT_TIME_PARSER_POLICY = {3: "EXCEPTION", 4: "CORRECTED"}

#: Major Spark version -> Scala line of its PyPI wheel, for a pyspark without a jars directory.
_SCALA_OF_MAJOR = {3: "2.12", 4: "2.13"}
_SCALA_LIBRARY = re.compile(r"^scala-library-(2\.1[0-9])\.[0-9]+\.jar$")

#: The OpenLineage Spark listener release (matches openlineage-python in pyproject.toml).
OPENLINEAGE_SPARK_VERSION = "1.53.0"

#: Spark SQL type names -> pyspark.sql.types class name, for schemas built without a parser (struct_type).
_ATOMIC_TYPES: dict[str, str] = {
    "string": "StringType",
    "boolean": "BooleanType",
    "int": "IntegerType",
    "bigint": "LongType",
    "long": "LongType",
    "double": "DoubleType",
    "date": "DateType",
    "timestamp": "TimestampType",
}


# --------------------------------------------------------------------------- versions


def major_version(text: str) -> int:
    """The major number of a version string such as `3.5.9` or `4.0.1`."""
    return int(text.split(".", 1)[0])


@functools.lru_cache(maxsize=1)
def client_major() -> int:
    """The installed PySpark's major version (which Python API exists)."""
    try:
        return major_version(version("pyspark"))
    except PackageNotFoundError:  # a client-only distribution (pyspark-client) under another name
        import pyspark

        return major_version(pyspark.__version__)


def server_major(spark: Any) -> int:
    """The major Spark version a session runs (how its SQL behaves; on Connect, the server's)."""
    return major_version(spark.version)


def is_connect(spark: Any) -> bool:
    """True for a Spark Connect session (per session: `is_remote()` is process-wide)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


# --------------------------------------------------------------------------- expressions and types


def _type_text(to: str | T.DataType) -> str:
    return to if isinstance(to, str) else to.simpleString()


def try_cast(sql: str | Column, to: str | T.DataType) -> Column:
    """`try_cast(<sql> AS <to>)`: null where the value does not convert; `sql` is SQL text such as a quoted name.

    SQL text works on every version and session kind in one JVM call: prefer it. A Column is accepted for
    callers that only hold one: PySpark 3.5 has no Column.try_cast, so there it is built in the driver JVM
    (classic) or refused in one line (Connect).
    """
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    if isinstance(sql, str):
        return F.expr(f"try_cast({sql} AS {_type_text(to)})")
    if hasattr(Column, "try_cast"):  # PySpark 4.x, classic and Connect
        return sql.try_cast(to)
    return _try_cast_column_35(sql, to)


def column(sql: str | Column) -> Column:
    """The Column of SQL text (as try_cast takes it), or the Column itself."""
    from pyspark.sql import functions as F

    return F.expr(sql) if isinstance(sql, str) else sql


def _try_cast_column_35(col: Column, to: str | T.DataType) -> Column:
    """A Column's try_cast on PySpark 3.5 classic: Catalyst's Cast in TRY mode, built in the driver JVM."""
    if type(col).__module__.startswith("pyspark.sql.connect"):
        # 3.5's Connect Cast message has no eval mode, and SQL text cannot name an arbitrary Column.
        raise ConfigError(f"try_cast of a Column expression to {_type_text(to)} needs PySpark 4 on Spark Connect; "
                          "PySpark 3.5 there takes SQL text (a quoted column name)")
    from pyspark import SparkContext
    from pyspark.sql import Column

    jvm = SparkContext._active_spark_context._jvm  # type: ignore[union-attr]
    catalyst = jvm.org.apache.spark.sql.catalyst.expressions
    types = jvm.org.apache.spark.sql.types.DataType
    jtype = types.fromDDL(to) if isinstance(to, str) else types.fromJson(to.json())
    expr = catalyst.Cast(col._jc.expr(), jtype, jvm.scala.Option.empty(), catalyst.EvalMode.TRY())
    return Column(jvm.org.apache.spark.sql.Column(expr))


def parse_type(text: str, spark: Any = None) -> T.DataType:
    """The DataType of a Spark SQL type string such as `bigint` or `decimal(12,2)` (raises on bad text).

    `char(n)` and `varchar(n)` read as string, as Spark reads them outside a table's schema (a plan of them
    fails); the type rule holds the length (spark_types.char_limit)."""
    if client_major() >= 4 or not (is_connect(spark) if spark is not None else _remote()):
        parsed = _parse_locally(text)  # PySpark 4 parses on Connect too
    else:
        parsed = _parse_on_server(text, spark if spark is not None else _active_session())
    return _string_for_char(parsed)


def _string_for_char(data_type: T.DataType) -> T.DataType:
    from pyspark.sql import types as T

    return T.StringType() if isinstance(data_type, (T.CharType, T.VarcharType)) else data_type


def _remote() -> bool:
    # Only asked on PySpark 3.5 without a session at hand: there one process is classic or Connect, not both.
    from pyspark.sql.utils import is_remote

    return is_remote()


@functools.lru_cache(maxsize=256)
def _parse_locally(text: str) -> T.DataType:
    # Parsing goes through the JVM (a few py4j round trips); a run asks for the same few types again and again.
    from pyspark.sql.types import _parse_datatype_string

    return _parse_datatype_string(text)


_SERVER_TYPES: dict[tuple[str, int], T.DataType] = {}


def _parse_on_server(text: str, session: Any) -> T.DataType:
    # PySpark 3.5's _parse_datatype_string needs a classic SparkContext; a Connect server parses the DDL.
    key = (text, id(session))
    if key not in _SERVER_TYPES:
        _SERVER_TYPES[key] = session.createDataFrame([], f"`v` {text}").schema[0].dataType
    return _SERVER_TYPES[key]


def _active_session() -> Any:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def struct_type(columns: dict[str, str]) -> T.StructType:
    """A nullable StructType from {name: atomic Spark SQL type name}, without a parser (any version or kind)."""
    from pyspark.sql import types as T

    fields = []
    for name, kind in columns.items():
        cls = _ATOMIC_TYPES.get(kind)
        if cls is None:
            raise ConfigError(f"column {name!r}: type {kind!r} is not one of {', '.join(_ATOMIC_TYPES)}")
        fields.append(T.StructField(name, getattr(T, cls)(), True))
    return T.StructType(fields)


# --------------------------------------------------------------------------- session behaviour


def time_parser_policy(spark: Any) -> str:
    """The session's effective `spark.sql.legacy.timeParserPolicy` (an unset key: the server's default)."""
    value = spark.conf.get(TIME_PARSER_POLICY_KEY, None)
    return (value or _DEFAULT_TIME_PARSER_POLICY.get(server_major(spark), TIME_PARSER_POLICY)).upper()


def check_time_parser(spark: Any) -> None:
    """Raise ConfigError unless the session parses dates with the CORRECTED policy (Spark 4's default)."""
    policy = time_parser_policy(spark)
    if policy != TIME_PARSER_POLICY:
        raise ConfigError(f"{TIME_PARSER_POLICY_KEY}={policy}: date and timestamp rules need {TIME_PARSER_POLICY} "
                          f"(Spark 4's default); set {TIME_PARSER_POLICY_KEY}={TIME_PARSER_POLICY} on the session")


#: PySpark 4's loggers that print an error with a query context, its message included, to stderr
QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def quiet_query_context_loggers() -> None:
    """Silence PySpark 4's query-context loggers (3.5 has none): they print an error's message, which quotes the
    value Spark could not cast (a PII value too), where dqgov reports the error itself, its values scrubbed."""
    if client_major() < 4:
        return
    from pyspark.logger import PySparkLogger  # a plain logger here would break PySpark's own calls to it

    for name in QUERY_CONTEXT_LOGGERS:
        PySparkLogger.getLogger(name).disabled = True


# --------------------------------------------------------------------------- jars for the Scala line


@functools.lru_cache(maxsize=1)
def scala_version() -> str:
    """The Scala line ("2.12" | "2.13") of the installed Spark: SPARK_HOME's jars, else pyspark's own."""
    for jars in _jar_dirs():
        for name in sorted(os.listdir(jars)):
            match = _SCALA_LIBRARY.match(name)
            if match:
                return match.group(1)
    return _SCALA_OF_MAJOR[client_major()]  # a client-only install (pyspark-connect) has no jars


def _jar_dirs() -> list[Path]:
    """SPARK_HOME/jars (spark-submit uses it when set), then the pyspark package's jars/."""
    dirs = []
    if os.environ.get("SPARK_HOME"):
        dirs.append(Path(os.environ["SPARK_HOME"]) / "jars")
    spec = importlib_util.find_spec("pyspark")
    for location in (spec.submodule_search_locations or []) if spec else []:
        dirs.append(Path(location) / "jars")
    return [d for d in dirs if d.is_dir()]


def delta_package() -> str:
    """`io.delta:delta-spark_<scala>:<version>` for the installed delta-spark pip package."""
    try:
        delta_version = version("delta-spark")
    except PackageNotFoundError:
        raise ConfigError("Delta needs the delta-spark package: pip install 'dq-governance[delta]'") from None
    return f"io.delta:delta-spark_{scala_version()}:{delta_version}"


def openlineage_artifact() -> str:
    """The OpenLineage Spark listener's Maven artifact id for the installed Scala line."""
    return f"openlineage-spark_{scala_version()}"


def openlineage_jar_name() -> str:
    """The listener jar's file name as Maven and listeners/fetch-openlineage-spark write it."""
    return f"{openlineage_artifact()}-{OPENLINEAGE_SPARK_VERSION}.jar"


def openlineage_coordinates() -> str:
    """`io.openlineage:openlineage-spark_<scala>:<version>` for spark.jars.packages."""
    return f"io.openlineage:{openlineage_artifact()}:{OPENLINEAGE_SPARK_VERSION}"

"""dq_governance.checks.compat on the running PySpark (3.5 in .venv35, 4.0 in .venv): exact answers."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

from dq_governance.checks import compat
from dq_governance.errors import ConfigError

SPARK_MAJOR = int(version("pyspark").split(".")[0])


def _values(spark, *columns):
    df = spark.createDataFrame([("1.5",), ("7",), ("x",), (None,)], "v string")
    return [tuple(row) for row in df.select(*columns).collect()]


@pytest.mark.spark
def test_try_cast_of_sql_text_gives_null_where_the_value_does_not_convert(spark):
    from decimal import Decimal

    rows = _values(spark, compat.try_cast("`v`", "bigint"), compat.try_cast("v", "double"),
                   compat.try_cast("trim(v)", "decimal(12,2)"))
    assert rows == [(None, 1.5, Decimal("1.50")), (7, 7.0, Decimal("7.00")), (None, None, None),
                    (None, None, None)]


@pytest.mark.spark
def test_try_cast_of_a_column_or_a_datatype_gives_the_same_answers(spark):
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    rows = _values(spark, compat.try_cast(F.col("v"), "bigint"), compat.try_cast(F.trim("v"), T.DoubleType()),
                   compat.try_cast("v", T.LongType()))
    assert rows == [(None, 1.5, None), (7, 7.0, 7), (None, None, None), (None, None, None)]


@pytest.mark.spark
def test_parse_type_of_contract_types(spark):
    from pyspark.sql import types as T

    assert compat.parse_type("decimal(12,2)") == T.DecimalType(12, 2)
    assert compat.parse_type("long", spark) == T.LongType()
    assert compat.parse_type("array<string>") == T.ArrayType(T.StringType(), True)
    with pytest.raises(Exception):
        compat.parse_type("decimal(12,")


def test_struct_type_builds_the_report_schema_without_a_parser():
    from pyspark.sql import types as T

    from dq_governance.publish.report import REPORT_COLUMNS

    schema = compat.struct_type({"run_id": "string", "failed_count": "bigint", "passed": "boolean",
                                 "metric_value": "double", "validated_at": "timestamp"})
    assert schema == T.StructType([T.StructField("run_id", T.StringType()), T.StructField("failed_count", T.LongType()),
                                   T.StructField("passed", T.BooleanType()),
                                   T.StructField("metric_value", T.DoubleType()),
                                   T.StructField("validated_at", T.TimestampType())])
    report = compat.struct_type(REPORT_COLUMNS)
    assert [(f.name, f.dataType.simpleString()) for f in report.fields] == list(REPORT_COLUMNS.items())
    with pytest.raises(ConfigError, match=r"^column 'x': type 'decimal\(3,1\)' is not one of string, boolean"):
        compat.struct_type({"x": "decimal(3,1)"})


@pytest.fixture
def time_parser(spark):
    """Sets the session's time parser policy for one test, then puts the suite's value back."""
    key = compat.TIME_PARSER_POLICY_KEY
    before = spark.conf.get(key, None)
    yield lambda value: spark.conf.unset(key) if value is None else spark.conf.set(key, value)
    if before is None:
        spark.conf.unset(key)
    else:
        spark.conf.set(key, before)


@pytest.mark.spark
def test_check_time_parser_refuses_anything_but_corrected(spark, time_parser):
    time_parser("EXCEPTION")
    with pytest.raises(ConfigError) as refused:
        compat.check_time_parser(spark)
    assert str(refused.value) == (
        "spark.sql.legacy.timeParserPolicy=EXCEPTION: date and timestamp rules need CORRECTED (Spark 4's default); "
        "set spark.sql.legacy.timeParserPolicy=CORRECTED on the session")
    time_parser("legacy")
    with pytest.raises(ConfigError, match=r"^spark.sql.legacy.timeParserPolicy=LEGACY: "):
        compat.check_time_parser(spark)
    time_parser("CORRECTED")
    assert compat.check_time_parser(spark) is None


@pytest.mark.spark
@pytest.mark.parametrize("field", [{"format": "timestamp"}, {"format": "date"}])
def test_a_date_or_timestamp_format_without_a_pattern_refuses_a_legacy_session_too(spark, time_parser, field):
    """`format: timestamp` reads text with the pattern parser too: under LEGACY "2024-1-1 1:2:3" passed it."""
    from dq_governance import check

    contract = {"contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"},
                "schema": {"fields": [{"name": "ts", "type": "string", **field}]}}
    frame = spark.createDataFrame([("2024-1-1 1:2:3",)], "ts string")
    time_parser("LEGACY")
    with pytest.raises(ConfigError, match=r"^spark.sql.legacy.timeParserPolicy=LEGACY: "):
        check(frame, contract)
    time_parser("CORRECTED")
    result = check(frame, contract)
    assert (result.rule("ts_format").failed_count, result.valid_rows) == (1, 0)
    result.release()


@pytest.mark.spark
def test_an_unset_time_parser_policy_is_the_servers_default(spark, time_parser):
    time_parser(None)
    assert compat.time_parser_policy(spark) == {3: "EXCEPTION", 4: "CORRECTED"}[SPARK_MAJOR]
    if SPARK_MAJOR == 3:
        with pytest.raises(ConfigError, match=r"^spark.sql.legacy.timeParserPolicy=EXCEPTION: "):
            compat.check_time_parser(spark)
    else:
        compat.check_time_parser(spark)


def test_scala_version_is_the_one_of_the_pyspark_jars():
    import pyspark

    jars = sorted(p.name for p in (Path(pyspark.__file__).parent / "jars").glob("scala-library-*.jar"))
    assert len(jars) == 1
    assert compat.scala_version() == jars[0][len("scala-library-"):][:4]
    assert compat.scala_version() == {3: "2.12", 4: "2.13"}[SPARK_MAJOR]  # the PyPI wheels' Scala lines


def test_jar_coordinates_follow_the_scala_line():
    scala = {3: "2.12", 4: "2.13"}[SPARK_MAJOR]
    delta = version("delta-spark")
    assert int(delta.split(".")[0]) == SPARK_MAJOR  # pip took the Delta line of the installed Spark
    assert compat.delta_package() == f"io.delta:delta-spark_{scala}:{delta}"
    assert compat.openlineage_coordinates() == f"io.openlineage:openlineage-spark_{scala}:1.53.0"
    assert compat.openlineage_jar_name() == f"openlineage-spark_{scala}-1.53.0.jar"
    assert compat.WRITE_MODE_ERROR == "error"


def test_the_listener_jar_name_and_coordinates_are_the_installed_scala_lines():
    from dq_governance.lineage import spark as S

    scala = compat.scala_version()
    assert S.JAR_NAME == f"openlineage-spark_{scala}-1.53.0.jar"
    packages = S.listener_settings(packages=True)["spark.jars.packages"]
    assert packages == f"io.openlineage:openlineage-spark_{scala}:1.53.0"
    assert all(p.name == S.JAR_NAME for p in S.jar_candidates())

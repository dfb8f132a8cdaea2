"""dq_governance.session on a classic session, the one-line CLI backstop and --metrics-only's refusals.

The Connect side of the same functions is tested in tests/connect/ (its own process: DQGOV_CONNECT=1).
"""

from __future__ import annotations

import logging

import pytest

from dq_governance import session
from dq_governance.cli import _backstop, main
from dq_governance.errors import ConfigError


@pytest.mark.spark
def test_classic_session_kind_and_capabilities(spark):
    assert session.kind(spark) == "classic" and not session.is_connect(spark)
    caps = session.capabilities(spark)
    assert (caps.driver_jvm, caps.hadoop_fs, caps.java_udf, caps.listener_registry, caps.observation,
            caps.delta_table_api) == (True, True, True, True, True, True)
    assert session.java_class(spark, "java.lang.String") is not None
    assert session.java_class(spark, "io.github.dqgovernance.NotInAnyJar") is None
    assert session.filesystem(spark, "/tmp") is not None


@pytest.mark.spark
def test_classic_file_helpers(spark, tmp_path):
    data = tmp_path / "d"
    spark.range(3).selectExpr("id", "cast(id % 2 as string) AS k").write.partitionBy("k").parquet(str(data))
    assert session.path_exists(spark, str(data)) and not session.path_exists(spark, str(tmp_path / "nope"))
    files = session.list_files(spark, str(data))
    assert {f.split("/")[0] for f in files} == {"k=0", "k=1"} and all(f.endswith(".parquet") for f in files)
    assert session.qualify(spark, str(data)) == f"file:{data}"
    session.mark(spark, str(tmp_path / "m"))
    assert (tmp_path / "m").is_dir()
    assert session.analyzed(spark.range(1)).count() == 1


def test_log_once_logs_a_key_once_per_run(caplog):
    with caplog.at_level(logging.INFO, logger="dq_governance.session"):
        assert session.log_once("run-a", "k", "said %s", "once") is True
        assert session.log_once("run-a", "k", "said %s", "twice") is False
        assert session.log_once("run-b", "k", "said %s", "again") is True
    assert [r.getMessage() for r in caplog.records] == ["said once", "said again"]


def test_unsupported_is_one_config_error_line():
    error = session.unsupported("hmac_engine 'jvm'", "'auto' or 'sha2'")
    assert isinstance(error, ConfigError)
    assert str(error) == ("hmac_engine 'jvm' needs a classic Spark session (Spark Connect has no driver JVM); "
                          "use 'auto' or 'sha2'")


def test_backstop_names_escaped_spark_errors_in_one_line():
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkAttributeError, PySparkNotImplementedError

    missing = PySparkAttributeError(errorClass="JVM_ATTRIBUTE_NOT_SUPPORTED", messageParameters={"attr_name": "_jvm"})
    assert _backstop(missing) == f"not available on this Spark session: {str(missing).splitlines()[0]}"
    assert _backstop(PySparkNotImplementedError(errorClass="NOT_IMPLEMENTED",
                                                messageParameters={"feature": "x"})).startswith(
        "not available on this Spark session: [NOT_IMPLEMENTED]")
    assert _backstop(Py4JError("An error occurred while calling o1.x\nstack")) == (
        "the Spark driver failed: An error occurred while calling o1.x")
    assert _backstop(ValueError("mine")) is None  # our own bugs still show their traceback


def test_remote_needs_an_sc_url():
    with pytest.raises(ConfigError, match=r"^--remote http://x: a Spark Connect URL looks like sc://HOST:PORT$"):
        session.remote("http://x")


@pytest.mark.parametrize("flag, value", [("--output", "x"), ("--mode", "append"), ("--quarantine", "q"),
                                         ("--output-format", "delta"), ("--merge-keys", "id")])
def test_metrics_only_refuses_output_options(repo, capsys, flag, value):
    code = main(["check", str(repo / "contracts" / "orders.yaml"), "--metrics-only", flag, value])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"dqgov: error: --metrics-only writes no valid or quarantine output; drop {flag}"]


def test_remote_fails_fast_when_nothing_listens():
    from connect_server import free_port

    port = free_port()  # free: nothing listens there
    with pytest.raises(ConfigError, match=rf"^--remote sc://127.0.0.1:{port}: cannot reach the Spark Connect server"):
        session.remote(f"sc://127.0.0.1:{port}")

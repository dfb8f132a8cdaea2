"""Listener configuration: the conf keys our session helper sets, the jar lookup, and `dqgov listener-conf`.

These build a real pyspark SessionBuilder but never start a JVM; the running listener is tested in
test_lineage_listener.py.
"""

from __future__ import annotations

import logging
import uuid
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

from dq_governance.cli import main
from dq_governance.contracts.model import Contract
from dq_governance.errors import ConfigError
from dq_governance.lineage import emit as E
from dq_governance.lineage import spark as S

REPO = Path(__file__).resolve().parent.parent
#: The listener's Scala line is the installed pyspark's: 2.12 for Spark 3.5, 2.13 for Spark 4.0.
SCALA = {"3": "2.12", "4": "2.13"}[version("pyspark")[0]]
TOKEN = "s3cr3t-token-7f1c9a"


def orders() -> Contract:
    return Contract.model_validate(yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text()))


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in (E.PARENT_ENV, E.ROOT_PARENT_ENV, E.API_KEY_ENV, S.JAR_ENV, "OPENLINEAGE_NAMESPACE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_extension_jar(monkeypatch):
    """These tests are about the listener jar: the built extension jar (if any) stays out of spark.jars."""
    from dq_governance.lineage import enrich

    monkeypatch.setattr(enrich, "find_extension_jar", lambda: None)


@pytest.fixture()
def fake_jar(tmp_path, monkeypatch):
    jar = tmp_path / S.JAR_NAME
    jar.write_bytes(b"PK")  # only its presence matters here; the real jar runs in the integration test
    monkeypatch.setenv(S.JAR_ENV, str(jar))
    return str(jar)


def builder():
    from pyspark.sql import SparkSession

    return SparkSession.Builder()


def test_configure_sets_listener_jar_namespace_run_id_transport_owners_and_tags(fake_jar, tmp_path):
    events = tmp_path / "lineage.jsonl"
    b, run_id = S.configure(builder(), lineage=f"file:{events}", contract=orders())
    opts = b._options
    assert str(uuid.UUID(run_id)) == run_id
    assert opts["spark.openlineage.applicationRunId"] == run_id
    assert opts["spark.extraListeners"] == "io.openlineage.spark.agent.OpenLineageSparkListener"
    assert opts["spark.jars"] == fake_jar
    assert opts["spark.openlineage.namespace"] == "dqgov"
    assert (opts["spark.openlineage.transport.type"], opts["spark.openlineage.transport.location"]) == (
        "file", str(events))
    assert opts["spark.openlineage.job.owners.TECHNICAL_OWNER"] == "team:sales-data-team"
    assert opts["spark.openlineage.job.owners.DATA_STEWARD"] == "user:maria.silva"
    assert opts["spark.openlineage.job.tags"] == (
        "contract:orders;contract_version:1.0.0;dataset:curated.orders;domain:sales;classification:internal")
    # a second session gets a new application run
    assert S.configure(builder(), lineage="console", contract=orders())[1] != run_id


@pytest.mark.parametrize(("spec", "url", "endpoint"), [
    ("http://marquez:5000", "http://marquez:5000", "/api/v1/lineage"),
    ("https://gms:8080/openapi/openlineage/api/v1/lineage", "https://gms:8080", "/openapi/openlineage/api/v1/lineage"),
    ("https://om:8585/api/v1/openlineage/lineage", "https://om:8585", "/api/v1/openlineage/lineage"),
])
def test_http_url_and_endpoint_are_kept_apart(fake_jar, monkeypatch, spec, url, endpoint):
    monkeypatch.setenv(E.API_KEY_ENV, TOKEN)
    opts = S.configure(builder(), lineage=spec, contract=orders())[0]._options
    assert opts["spark.openlineage.transport.url"] == url
    assert opts["spark.openlineage.transport.endpoint"] == endpoint
    assert opts["spark.openlineage.transport.auth.type"] == "api_key"
    assert opts["spark.openlineage.transport.auth.apiKey"] == TOKEN  # the listener needs it ...
    assert "api[._-]?key" in opts["spark.redaction.regex"]  # ... and Spark's UI / event log redact it


def test_a_query_in_the_lineage_url_is_redacted_by_spark_and_never_printed(fake_jar, spark):
    spec = "https://fn.example/api/v1/lineage?code=Zq9f8e7dQ1w2x"
    opts = S.configure(builder(), lineage=spec, contract=orders())[0]._options
    assert opts["spark.openlineage.transport.endpoint"] == "/api/v1/lineage?code=Zq9f8e7dQ1w2x"  # the listener's
    # Spark redacts a setting whose key or value the pattern finds (Utils.redact: Regex.findFirstIn, Java's find)
    pattern = spark._jvm.java.util.regex.Pattern.compile(opts["spark.redaction.regex"])
    assert pattern.matcher(opts["spark.openlineage.transport.endpoint"]).find()
    assert not pattern.matcher("/api/v1/lineage").find() and not pattern.matcher("http://marquez:5000").find()
    printed = S.transport_settings(spec, secrets=False)
    assert printed["spark.openlineage.transport.endpoint"] == "/api/v1/lineage?<query of --transport>"


def test_orchestrator_parent_becomes_the_applications_parent(fake_jar):
    parent = str(uuid.uuid4())
    opts = S.configure(builder(), lineage="console", contract=orders(), parent_run_id=parent,
                       parent_job="airflow/orders_dag.check")[0]._options
    assert (opts["spark.openlineage.parentJobNamespace"], opts["spark.openlineage.parentJobName"],
            opts["spark.openlineage.parentRunId"]) == ("airflow", "orders_dag.check", parent)
    assert opts["spark.openlineage.rootParentRunId"] == parent


def test_missing_jar_logs_how_to_get_it_and_continues_without_listener(monkeypatch, caplog):
    monkeypatch.setattr(S, "jar_candidates", lambda: [Path("/nonexistent") / S.JAR_NAME])
    with caplog.at_level(logging.WARNING, logger="dq_governance.lineage.spark"):
        b, run_id = S.configure(builder(), lineage="console", contract=orders(), conf={"spark.ui.enabled": "false"})
    assert run_id is None
    assert "spark.extraListeners" not in b._options and b._options["spark.ui.enabled"] == "false"
    [record] = caplog.records
    assert "make listener-jar" in record.getMessage() and S.JAR_ENV in record.getMessage()
    with pytest.raises(ConfigError, match="make listener-jar"):
        S.require_listener_jar()


def test_jar_env_pointing_nowhere_is_a_config_error(monkeypatch):
    monkeypatch.setenv(S.JAR_ENV, "/nonexistent/ol.jar")
    with pytest.raises(ConfigError, match="DQGOV_OPENLINEAGE_JAR=/nonexistent/ol.jar: no such file"):
        S.configure(builder(), lineage="console")


def test_spark_jars_packages_replaces_the_local_jar(monkeypatch):
    monkeypatch.setattr(S, "jar_candidates", lambda: [])
    b, run_id = S.configure(builder(), lineage="console", conf={"spark.jars.packages": S.MAVEN_COORDINATES})
    assert run_id is not None and "spark.jars" not in b._options
    assert b._options["spark.jars.packages"] == f"io.openlineage:openlineage-spark_{SCALA}:1.53.0"


def test_extension_jar_joins_spark_jars_with_or_without_the_listener(fake_jar, tmp_path, monkeypatch):
    from dq_governance.lineage import enrich

    extension = str(tmp_path / "dq-governance-listener-0.1.0.jar")
    monkeypatch.setattr(enrich, "find_extension_jar", lambda: extension)
    b, _ = S.configure(builder(), lineage="console", contract=orders())
    assert b._options["spark.jars"] == f"{fake_jar},{extension}"
    b, run_id = S.configure(builder(), lineage="none", contract=orders(), conf={"spark.jars": "/opt/x.jar"})
    assert run_id is None and b._options["spark.jars"] == f"/opt/x.jar,{extension}"
    assert S.with_extension_jar({"spark.jars": extension}) == {"spark.jars": extension}  # never twice


def test_no_listener_and_lineage_none_leave_the_builder_plain(fake_jar):
    for kwargs in ({"listener": False, "lineage": "console"}, {"lineage": "none"}):
        b, run_id = S.configure(builder(), contract=orders(), **kwargs)
        assert run_id is None and not any(k.startswith("spark.openlineage") for k in b._options)
        assert "spark.extraListeners" not in b._options


def test_sessions_keep_job_names_stable_with_the_extension_jar(fake_jar, tmp_path, monkeypatch, caplog):
    """The job-name suffix goes through the extension's trimmer (removePath applied); RDD events are off."""
    from dq_governance.lineage import enrich
    from dq_governance.publish.staging import STAGING_REMOVE_PATTERN

    extension = str(tmp_path / "dq-governance-listener-0.1.0.jar")
    monkeypatch.setattr(enrich, "find_extension_jar", lambda: extension)
    with caplog.at_level(logging.WARNING, logger="dq_governance.lineage.spark"):
        opts = S.configure(builder(), lineage="console", contract=orders())[0]._options
    assert caplog.records == []
    assert opts["spark.openlineage.dataset.extraTrimmers"] == "io.github.dqgovernance.listener.RemovePathTrimmer"
    assert opts["spark.openlineage.dataset.removePath.pattern"] == STAGING_REMOVE_PATTERN
    assert opts["spark.openlineage.filter.rddEventsDisabled"] == "true"
    assert opts["spark.jars"] == f"{fake_jar},{extension}"
    # the caller's explicit conf still wins (RDD events back on)
    opts = S.configure(builder(), lineage="console", conf={"spark.openlineage.filter.rddEventsDisabled": False})[
        0]._options
    assert opts["spark.openlineage.filter.rddEventsDisabled"] == "False"


def test_without_the_extension_jar_one_line_says_job_names_will_carry_the_run_id(fake_jar, caplog):
    with caplog.at_level(logging.WARNING, logger="dq_governance.lineage.spark"):
        opts = S.configure(builder(), lineage="console", contract=orders())[0]._options
    [record] = caplog.records
    assert "job names for staged writes will carry the run id" in record.getMessage()
    assert "make listener" in record.getMessage()
    assert "spark.openlineage.dataset.extraTrimmers" not in opts
    assert opts["spark.openlineage.filter.rddEventsDisabled"] == "true"  # needs no jar


def test_listener_conf_names_the_trimmer_only_with_the_extension_jar(capsys):
    args = ["listener-conf", str(REPO / "contracts/orders.yaml"), "--transport", "console", "--jar", "/jars/ol.jar",
            "--format", "spark-defaults"]
    assert main([*args, "--extension-jar", "/jars/dq.jar"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "spark.jars /jars/ol.jar,/jars/dq.jar" in lines
    assert "spark.openlineage.dataset.extraTrimmers io.github.dqgovernance.listener.RemovePathTrimmer" in lines
    assert "spark.openlineage.filter.rddEventsDisabled true" in lines
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "spark.jars /jars/ol.jar" in lines and not any("extraTrimmers" in line for line in lines)
    assert lines[0] == ("# without the dq-governance extension jar (--extension-jar PATH, or --enrich) the listener "
                        "names staged writes' jobs with the run id: a new job per run")


def test_enrich_without_the_extension_says_what_is_missing(fake_jar, monkeypatch, tmp_path):
    monkeypatch.setenv("DQGOV_LISTENER_JAR", str(tmp_path / "absent.jar"))
    with pytest.raises(ConfigError, match="listener extension"):
        S.configure(builder(), lineage="console", contract=orders(), enrich=True)


def test_listener_conf_cli_prints_spark_defaults_and_submit_flags_without_the_token(monkeypatch, capsys):
    monkeypatch.setenv(E.API_KEY_ENV, TOKEN)
    code = main(["listener-conf", str(REPO / "contracts/orders.yaml"), "--transport",
                 "https://gms.example:8080/openapi/openlineage/api/v1/lineage"])
    out = capsys.readouterr().out
    assert code == 0
    assert TOKEN not in out
    lines = out.splitlines()
    for expected in (
        "spark.extraListeners io.openlineage.spark.agent.OpenLineageSparkListener",
        f"spark.jars.packages io.openlineage:openlineage-spark_{SCALA}:1.53.0",
        "spark.openlineage.transport.type http",
        "spark.openlineage.transport.url https://gms.example:8080",
        "spark.openlineage.transport.endpoint /openapi/openlineage/api/v1/lineage",
        "spark.openlineage.transport.auth.apiKey <OPENLINEAGE_API_KEY>",
        "spark.openlineage.job.owners.TECHNICAL_OWNER team:sales-data-team",
        "  --conf spark.openlineage.transport.url=https://gms.example:8080 \\",
        "  --conf 'spark.openlineage.transport.auth.apiKey=<OPENLINEAGE_API_KEY>' \\",
    ):
        assert expected in lines
    assert not any("applicationRunId" in line and not line.startswith("#") for line in lines)


def test_listener_conf_manifest_goes_with_enrich_or_enforce(capsys):
    assert main(["listener-conf", str(REPO / "contracts/orders.yaml"), "--manifest", "/elsewhere/m.json"]) == 2
    assert capsys.readouterr().err == ("dqgov: error: --manifest names the manifest of --enrich or --enforce: add one "
                                       "of them\n")


def test_listener_conf_cli_bad_contract_exits_2(capsys):
    assert main(["listener-conf", "contracts/does-not-exist.yaml"]) == 2
    assert "does-not-exist.yaml" in capsys.readouterr().err


def test_sessions_let_the_jit_compile_large_generated_methods():
    """dqgov sessions pass -XX:-DontCompileHugeMethods to driver and executors, keeping the caller's options."""
    from dq_governance.lineage.spark import _with_driver_defaults

    conf = _with_driver_defaults({"spark.executor.extraJavaOptions": "-Xss4m"})
    assert conf["spark.driver.extraJavaOptions"].split()[0] == "--add-opens=java.base/java.security=ALL-UNNAMED"
    assert conf["spark.driver.extraJavaOptions"].split()[-1] == "-XX:-DontCompileHugeMethods"
    assert conf["spark.executor.extraJavaOptions"] == "-Xss4m -XX:-DontCompileHugeMethods"
    # a caller who decided otherwise keeps the JVM's default
    own = _with_driver_defaults({"spark.driver.extraJavaOptions": "-XX:+DontCompileHugeMethods",
                                 "spark.executor.extraJavaOptions": "-XX:+DontCompileHugeMethods"})
    assert own["spark.driver.extraJavaOptions"].count("DontCompileHugeMethods") == 1
    assert own["spark.executor.extraJavaOptions"] == "-XX:+DontCompileHugeMethods"


def test_sessions_parse_dates_with_the_corrected_policy_unless_the_caller_chose():
    """Spark 3.5 defaults to EXCEPTION, which date rules refuse (compat.check_time_parser): dqgov says CORRECTED."""
    from dq_governance.lineage.spark import _with_driver_defaults

    assert _with_driver_defaults({})["spark.sql.legacy.timeParserPolicy"] == "CORRECTED"
    assert _with_driver_defaults({"spark.sql.legacy.timeParserPolicy": "LEGACY"})[
        "spark.sql.legacy.timeParserPolicy"] == "LEGACY"


def test_an_application_run_id_that_is_not_a_uuid_is_refused(fake_jar):
    """The listener cannot report a run whose applicationRunId is no UUID, so no event could link to it."""
    with pytest.raises(ConfigError, match=r"^spark.openlineage.applicationRunId 'nightly-7' is not a UUID$"):
        S.configure(builder(), lineage="console", application_run_id="nightly-7")


def test_a_session_whose_application_run_id_is_not_a_uuid_is_refused_at_run_time():
    """Set on spark-submit (`--conf spark.openlineage.applicationRunId=…`): the run stops before its START."""
    from types import SimpleNamespace

    from dq_governance.lineage import emit

    conf = {"spark.openlineage.applicationRunId": "nightly-7",
            "spark.extraListeners": "io.openlineage.spark.agent.OpenLineageSparkListener"}
    session = SimpleNamespace(conf=SimpleNamespace(get=lambda key, default=None: conf.get(key, default)))
    with pytest.raises(ConfigError, match=r"^spark.openlineage.applicationRunId 'nightly-7' is not a UUID$"):
        emit.build_emitter("console", orders(), run_id="7", pipeline="p", spark=session)
    conf["spark.openlineage.applicationRunId"] = run_id = "0f5e6f3c-3c1e-4a7a-9d43-4b1c0fb0d2a1"
    assert emit.spark_application(session) == ("default", "spark", run_id)

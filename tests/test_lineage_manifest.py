"""The governance manifest compiler, `dqgov manifest`, the enrich settings and the py4j recording helper.

The checks compile in a local session that `dqgov manifest` starts and stops itself; the last test uses the
shared session.
The JVM side of the manifest is tested by JUnit (listeners/) and end to end by test_listener_enrich.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from dq_governance.checks.report_rows import REPORT_COLUMNS
from dq_governance.cli import main
from dq_governance.contracts.load import load_contract
from dq_governance.errors import ConfigError
from dq_governance.lineage import enrich as X
from dq_governance.lineage import facets as F
from dq_governance.lineage import manifest as M
from dq_governance.lineage import spark as S

REPO = Path(__file__).resolve().parent.parent
CONTRACTS = REPO / "contracts"
#: compiling the checks starts (and stops) a session of its own: launch the JVM as the shared session would first
COMPILES_IN_ITS_OWN_SESSION = pytest.mark.usefixtures("spark_jvm")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in (X.JAR_ENV, X.MANIFEST_ENV, S.JAR_ENV, "OPENLINEAGE_NAMESPACE", "OPENLINEAGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@COMPILES_IN_ITS_OWN_SESSION
def test_orders_entry_is_exactly_what_the_listener_extension_needs(tmp_path):
    compiled = M.compile_directory(CONTRACTS, base_dir=tmp_path)
    doc = compiled.document
    assert (doc["manifestVersion"], doc["producer"], doc["contractFacetSchemaURL"]) == (
        2, F.PRODUCER, F.CONTRACT_FACET_SCHEMA_URL)
    assert doc["reportColumns"] == REPORT_COLUMNS  # the extension appends history rows with these columns
    [orders] = [c for c in doc["contracts"] if c["contract"]["name"] == "orders"]
    checks = orders.pop("checks")  # the same-pass checks: tests/test_enforce.py runs them
    assert [r["name"] for r in checks["notSamePass"]] == ["pedido_id_unique", "undeclared_columns"]
    assert len(checks["rules"]) == 15 and checks["gate"] == {"on_failure": "block_publication",
                                                           "minimum_valid_ratio": 0.99}
    [status] = [r for r in checks["rules"] if r["name"] == "status_allowed_values"]
    assert status["violation"] == {"typed": "(NOT (status IN ('CRIADO', 'PAGO', 'CANCELADO')))",
                                   "text": "(NOT (status IN ('CRIADO', 'PAGO', 'CANCELADO')))"}
    csv = str(tmp_path / "examples" / "data" / "orders.csv")
    assert orders == {
        "contract": {"name": "orders", "version": "1.0.0", "standard": "native", "enforcement": "blocking",
                     "location": (CONTRACTS / "orders.yaml").as_uri()},
        "match": {"datasets": [{"namespace": "file", "name": csv}], "globs": [csv + "/**"]},
        "owners": [{"name": "team:sales-data-team", "type": "TECHNICAL_OWNER"},
                   {"name": "user:maria.silva", "type": "DATA_STEWARD"}],
        "classification": "internal",
        "tags": [
            {"key": "classification", "value": "internal", "source": "DQGOV"},
            {"key": "domain", "value": "sales", "source": "DQGOV"},
            {"key": "pii", "value": "true", "source": "DQGOV", "field": "email"},
            {"key": "classification", "value": "restricted", "source": "DQGOV", "field": "email"},
            {"key": "masking", "value": "hmac", "source": "DQGOV", "field": "email"},
        ],
        "documentation": {"description": "Commercial orders, consolidated", "contentType": "text/plain"},
    }
    # the ODCS copy of the same contract is listed once (native first); the ODCS-only contract matches a table
    assert [c["contract"]["name"] for c in doc["contracts"]] == ["customers", "orders", "sales", "tbl"]
    assert compiled.skipped == [f"{CONTRACTS / 'orders.odcs.yaml'}: contract orders 1.0.0 already compiled "
                                f"from {CONTRACTS / 'orders.yaml'}"]
    [tbl] = [c for c in doc["contracts"] if c["contract"]["name"] == "tbl"]
    assert (tbl["match"], tbl["contract"]["standard"]) == ({"tables": ["tbl_1"]}, "odcs")


@COMPILES_IN_ITS_OWN_SESSION
def test_rules_on_a_structs_fields_are_listed_as_not_measured_in_the_write_with_their_reason(tmp_path):
    """A struct's fields' shorthands, and quality rules on them, are rules on dotted paths: the extension measures
    top-level columns, so the manifest lists them with that reason."""
    path = tmp_path / "nested.yaml"
    path.write_text(yaml.safe_dump({
        "contract": {"name": "nested", "version": "1.0.0"},
        "dataset": {"name": "nested", "path": str(tmp_path / "out"), "format": "parquet"},
        "schema": {"fields": [{"name": "id", "type": "long"}, {
            "name": "cliente", "type": "struct<email:string>", "fields": [{"name": "email", "required": True}]}]},
        "quality": {"rules": [{"type": "regex", "column": "cliente.email", "pattern": "@", "name": "has_at"}]}}))
    [entry] = M.compile_manifest([path], base_dir=tmp_path).document["contracts"]
    assert [r["name"] for r in entry["checks"]["rules"]] == ["id_type", "cliente_type"]
    reason = "a struct's field: the session extension measures top-level columns"
    assert entry["checks"]["notSamePass"] == [
        {"name": "cliente.email_not_null", "type": "not_null", "reason": f"reads cliente.email, {reason}"},
        {"name": "has_at", "type": "regex", "reason": f"reads cliente.email, {reason}"},
        {"name": "undeclared_columns", "type": "undeclared_columns",
         "reason": "judged on the input's column names by dqgov check"}]


def test_a_varchar_fields_length_is_in_its_type_rule_text_for_the_extension(tmp_path):
    """Spark reads varchar(n) as string: the engine's type rule holds n, so the extension's text does too."""
    path = tmp_path / "vc.yaml"
    path.write_text(yaml.safe_dump({
        "contract": {"name": "vc", "version": "1.0.0"},
        "dataset": {"name": "vc", "path": str(tmp_path / "out"), "format": "parquet"},
        "schema": {"fields": [{"name": "code", "type": "varchar(3)"}, {"name": "n", "type": "CHAR(2)"}]}}))
    [entry] = M.compile_manifest([path], base_dir=tmp_path).document["contracts"]
    assert [(r["name"], r["violation"]) for r in entry["checks"]["rules"]] == [
        ("code_type", {"typed": "(length(rtrim(code)) > 3)", "text": "(length(rtrim(code)) > 3)"}),
        ("n_type", {"typed": "(length(rtrim(n)) > 2)", "text": "(length(rtrim(n)) > 2)"})]


@COMPILES_IN_ITS_OWN_SESSION
def test_the_manifest_holds_pii_column_names_never_values(tmp_path):
    text = json.dumps(M.compile_directory(CONTRACTS, base_dir=tmp_path).document)  # checks included
    for raw in ("ana@example.com", "bruno@example.com", "529.982.247-25"):
        assert raw not in text
    customers = load_contract(CONTRACTS / "customers.yaml")
    doc = json.loads(text)
    [entry] = [c for c in doc["contracts"] if c["contract"]["name"] == "customers"]
    assert {t["field"] for t in entry["tags"] if t["key"] == "pii"} == set(customers.pii_columns())


def _contract_doc(name: str, path: str) -> dict:
    doc = yaml.safe_load((CONTRACTS / "orders.yaml").read_text())
    doc["contract"]["name"] = name
    doc["dataset"]["path"] = path
    return doc


def test_globs_uris_and_extra_match_options(tmp_path):
    (tmp_path / "c").mkdir()
    doc = _contract_doc("lake_orders", "s3a://lake/orders/*.parquet")
    (tmp_path / "c" / "lake.yaml").write_text(yaml.safe_dump(doc))
    compiled = M.compile_directory(tmp_path / "c", base_dir=tmp_path, checks=False,
                                   extra_globs=M.parse_match_options(["lake_orders=data/orders_*"]))
    [entry] = compiled.document["contracts"]
    assert entry["match"] == {"globs": ["s3://lake/orders/*.parquet", str(tmp_path / "data" / "orders_*")]}
    with pytest.raises(ConfigError, match=r"--match 'orders': expected CONTRACT_NAME=GLOB"):
        M.parse_match_options(["orders"])
    with pytest.raises(ConfigError, match="--match nope=…: no contract of that name"):
        M.compile_directory(tmp_path / "c", extra_globs={"nope": ["/x/*"]}, checks=False)


def test_an_unwritable_output_or_an_unknown_match_is_refused_before_spark_starts(tmp_path, capsys, monkeypatch):
    def no_session():
        raise AssertionError("a Spark session started before the bad input was refused")

    monkeypatch.setattr(M, "compile_session", no_session)
    (tmp_path / "a_dir").mkdir()
    (tmp_path / "a_file").write_text("")
    cases = [
        (["-o", str(tmp_path / "a_dir")], f"{tmp_path / 'a_dir'}: cannot write the manifest: Is a directory"),
        (["-o", str(tmp_path / "a_file" / "m.json")],
         f"{tmp_path / 'a_file' / 'm.json'}: cannot write the manifest: File exists"),
        (["-o", str(tmp_path / "m.json"), "--match", "nope=/x/*"],
         "--match nope=…: no contract of that name among the inputs"),
    ]
    for args, message in cases:
        assert main(["manifest", str(CONTRACTS / "orders.yaml"), *args]) == 2
        assert capsys.readouterr().err.strip() == f"dqgov: error: {message}"
    assert not (tmp_path / "m.json").exists()


@COMPILES_IN_ITS_OWN_SESSION
def test_two_contracts_claiming_one_dataset_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "c").mkdir()
    for name in ("a_orders", "b_orders"):
        (tmp_path / "c" / f"{name}.yaml").write_text(yaml.safe_dump(_contract_doc(name, "data/orders.csv")))
    code = main(["manifest", str(tmp_path / "c"), "--base-dir", str(tmp_path), "-o", str(tmp_path / "m.json")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == (f"dqgov: error: {tmp_path / 'c' / 'b_orders.yaml'}: dataset file {tmp_path / 'data' / 'orders.csv'}"
                   f" is already governed by contract a_orders ({tmp_path / 'c' / 'a_orders.yaml'}); "
                   "one dataset, one contract")
    assert not (tmp_path / "m.json").exists()


@COMPILES_IN_ITS_OWN_SESSION
def test_manifest_cli_writes_the_file_and_reports_skips(tmp_path, capsys):
    out = tmp_path / "deploy" / "manifest.json"
    assert main(["manifest", str(CONTRACTS), "--base-dir", str(tmp_path), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == f"{out}: 4 contracts (manifestVersion 2)"
    assert captured.err.strip() == (f"dqgov: skipped {CONTRACTS / 'orders.odcs.yaml'}: contract orders 1.0.0 "
                                    f"already compiled from {CONTRACTS / 'orders.yaml'}")
    assert json.loads(out.read_text()) == M.compile_directory(CONTRACTS, base_dir=tmp_path).document
    assert main(["manifest", str(tmp_path / "missing"), "-o", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"dqgov: error: {tmp_path / 'missing'}: no such contract file or directory"
    # contract files as well as directories
    assert main(["manifest", str(CONTRACTS / "sales.yaml"), str(CONTRACTS / "orders.yaml"), "-o", str(out)]) == 0
    assert [c["contract"]["name"] for c in json.loads(out.read_text())["contracts"]] == ["orders", "sales"]


def test_enrich_wraps_the_transport_in_the_transform_transport():
    settings = {"spark.jars": "/jars/ol.jar", "spark.openlineage.namespace": "dqgov",
                "spark.openlineage.transport.type": "http", "spark.openlineage.transport.url": "http://marquez:5000",
                "spark.openlineage.transport.endpoint": "/api/v1/lineage"}
    assert X.enrich_settings(settings, manifest="/m.json", jar="/jars/dq.jar") == {
        "spark.jars": "/jars/ol.jar,/jars/dq.jar",
        "spark.openlineage.namespace": "dqgov",
        "spark.openlineage.transport.type": "transform",
        "spark.openlineage.transport.transformerClass": "io.github.dqgovernance.listener.GovernanceTransformer",
        "spark.openlineage.transport.transformerProperties.manifest": "/m.json",
        "spark.openlineage.transport.transport.type": "http",
        "spark.openlineage.transport.transport.url": "http://marquez:5000",
        "spark.openlineage.transport.transport.endpoint": "/api/v1/lineage",
    }
    with pytest.raises(ConfigError, match="enrich needs an explicit transport"):
        X.enrich_settings({"spark.jars": "/jars/ol.jar"}, manifest="/m.json", jar="/jars/dq.jar")


@pytest.fixture()
def jars(tmp_path, monkeypatch):
    """Both jars present (only their presence matters: nothing starts a JVM here)."""
    ol, ours = tmp_path / S.JAR_NAME, tmp_path / X.JAR_NAME
    for jar in (ol, ours):
        jar.write_bytes(b"PK")
    monkeypatch.setenv(S.JAR_ENV, str(ol))
    monkeypatch.setenv(X.JAR_ENV, str(ours))
    return str(ol), str(ours)


def test_spark_session_builder_with_enrich(jars, tmp_path, monkeypatch):
    from pyspark.sql import SparkSession

    monkeypatch.chdir(tmp_path)
    events = tmp_path / "events.jsonl"
    contract = load_contract(CONTRACTS / "orders.yaml")
    # enrich=True with a contract: that contract compiled into .dqgov/manifests/ under the cwd
    b, _ = S.configure(SparkSession.Builder(), lineage=f"file:{events}", contract=contract, enrich=True,
                       conf={"spark.jars": "/extra/udfs.jar"})
    opts = b._options
    manifest = tmp_path / ".dqgov" / "manifests" / "orders-1.0.0.json"
    assert opts["spark.jars"] == f"/extra/udfs.jar,{jars[0]},{jars[1]}"
    assert opts["spark.openlineage.transport.type"] == "transform"
    assert opts["spark.openlineage.transport.transformerProperties.manifest"] == str(manifest)
    assert (opts["spark.openlineage.transport.transport.type"],
            opts["spark.openlineage.transport.transport.location"]) == ("file", str(events))
    assert "spark.openlineage.transport.location" not in opts
    assert [c["contract"]["name"] for c in json.loads(manifest.read_text())["contracts"]] == ["orders"]
    # enrich=<manifest file> is used as it is; a missing one says how to make it
    given = tmp_path / "given.json"
    shutil.copyfile(manifest, given)
    b, _ = S.configure(SparkSession.Builder(), lineage="console", enrich=str(given))
    assert b._options["spark.openlineage.transport.transformerProperties.manifest"] == str(given)
    assert b._options["spark.openlineage.transport.transport.type"] == "console"
    with pytest.raises(ConfigError, match=r"nope.json: no such manifest; compile one with `dqgov manifest"):
        S.configure(SparkSession.Builder(), lineage="console", enrich="nope.json")
    monkeypatch.setenv(X.JAR_ENV, str(tmp_path / "absent.jar"))
    with pytest.raises(ConfigError, match="listener extension jar"):
        S.configure(SparkSession.Builder(), lineage="console", contract=contract, enrich=True)


def test_listener_conf_cli_with_enrich(jars, capsys):
    code = main(["listener-conf", str(CONTRACTS / "orders.yaml"), "--transport", "file:/var/log/ol.jsonl",
                 "--enrich", "--manifest", "/dbfs/dqgov/manifest.json", "--extension-jar", "/dbfs/jars/dq.jar",
                 "--jar", "/dbfs/jars/ol.jar", "--format", "submit"])
    out = capsys.readouterr().out
    assert code == 0
    for flag in ("--conf spark.jars=/dbfs/jars/ol.jar,/dbfs/jars/dq.jar",
                 "--conf spark.openlineage.transport.type=transform",
                 "--conf spark.openlineage.transport.transformerClass="
                 "io.github.dqgovernance.listener.GovernanceTransformer",
                 "--conf spark.openlineage.transport.transformerProperties.manifest=/dbfs/dqgov/manifest.json",
                 "--conf spark.openlineage.transport.transport.type=file",
                 "--conf spark.openlineage.transport.transport.location=/var/log/ol.jsonl"):
        assert flag in out
    assert "spark.openlineage.transport.location=" not in out


@pytest.mark.spark
def test_record_results_skips_quietly_without_the_jar_or_a_gateway(spark, monkeypatch):
    from dq_governance import jvm
    from dq_governance.api import check
    from dq_governance.lineage import jvm_registry as R

    df = spark.read.option("header", True).csv(str(REPO / "examples" / "data" / "orders.csv"))
    result = check(df, str(CONTRACTS / "orders.yaml"))
    # a class py4j cannot find (what a driver without the extension jar looks like): None, nothing recorded
    assert jvm.java_class(spark, "io.github.dqgovernance.listener.NotInAnyJar") is None
    monkeypatch.setattr(R, "REGISTRY_CLASS", "io.github.dqgovernance.listener.NotInAnyJar")
    assert R.registry(spark) is None
    assert R.record_results(spark, "file", "/x", result) is False
    # no JVM gateway at all (what a Spark Connect session looks like from here)
    assert R.record_results(object(), "file", "/x", result) is False
    # what would have been sent: the seed lab's numbers, built by the same facet code as our events
    doc = R.payload(result, load_contract(CONTRACTS / "orders.yaml"))
    assertions = {a["name"]: a for a in doc["inputFacets"]["dataQualityAssertions"]["assertions"]}
    assert (assertions["pedido_id_unique"]["success"], assertions["pedido_id_unique"]["actual"]) == (False, "2")
    assert doc["inputFacets"]["dataQualityMetrics"]["rowCount"] == 7
    assert {k: doc["contract"][k] for k in ("name", "status", "valid_rows", "invalid_rows")} == {
        "name": "orders", "status": "failed", "valid_rows": 1, "invalid_rows": 6}
    assert doc["contract"]["location"] == (CONTRACTS / "orders.yaml").as_uri()
    assert "ana@example.com" not in json.dumps(doc)

"""Lineage around a whole `run()` on the shared local Spark session: FAIL on a blocked gate, and a
dead lineage endpoint never fails the data pipeline."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import responses

from dq_governance.api import run
from dq_governance.contracts.load import load_contract
from dq_governance.errors import GateFailedError, LineageError
from dq_governance.lineage import facets as F
from lineage_schema import validation_errors

REPO = Path(__file__).resolve().parent.parent
CSV = str(REPO / "examples" / "data" / "orders.csv")
pytestmark = pytest.mark.spark


@pytest.fixture()
def seed(spark, monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", "run-test-masking-key")
    for name in ("OPENLINEAGE_PARENT_ID", "OPENLINEAGE_ROOT_PARENT_ID", "OPENLINEAGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return spark.read.option("header", True).csv(CSV), load_contract(str(REPO / "contracts" / "orders.yaml"))


def test_blocked_gate_emits_fail_with_the_reason_and_publishes_nothing(seed, tmp_path):
    df, contract = seed
    events = tmp_path / "lineage.jsonl"
    with pytest.raises(GateFailedError):
        run(df, contract, target=str(tmp_path / "target"), quarantine=str(tmp_path / "quarantine"),
            lineage=f"file:{events}", source=CSV)
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["eventType"] for e in lines] == ["START", "FAIL"]
    fail = lines[1]
    assert fail["run"]["facets"]["errorMessage"]["message"].startswith("quality gate blocked publication")
    contract_facet = fail["inputs"][0]["facets"][F.CONTRACT_FACET_KEY]
    assert (contract_facet["status"], contract_facet["valid_rows"], contract_facet["invalid_rows"],
            contract_facet["enforcement"]) == ("failed", 1, 6, "blocking")
    assert "parent" not in fail["run"]["facets"]  # no listener on this session, no orchestrator: no parent
    assert all(validation_errors(e) == [] for e in lines)
    assert not (tmp_path / "target").exists()


@responses.activate
def test_a_dead_lineage_endpoint_does_not_fail_the_run(seed, tmp_path, caplog):
    df, contract = seed
    responses.add(responses.POST, "http://marquez.invalid:5000/api/v1/lineage", status=500)
    with caplog.at_level(logging.WARNING, logger="dq_governance.lineage.emit"):
        result = run(df, contract, target=str(tmp_path / "target"), quarantine=str(tmp_path / "quarantine"),
                     lineage="http://marquez.invalid:5000", source=CSV, raise_on_block=False)
    assert (result.total_rows, result.valid_rows, result.invalid_rows, result.published) == (7, 1, 6, False)
    assert len(responses.calls) >= 2  # START and FAIL were both attempted
    assert sum("not emitted" in r.getMessage() for r in caplog.records) == 2


@responses.activate
def test_lineage_strict_turns_a_dead_endpoint_into_an_error(seed, tmp_path):
    df, contract = seed
    responses.add(responses.POST, "http://marquez.invalid:5000/api/v1/lineage", status=500)
    with pytest.raises(LineageError):
        run(df, contract, target=str(tmp_path / "target"), quarantine=str(tmp_path / "quarantine"),
            lineage="http://marquez.invalid:5000", lineage_strict=True, source=CSV, raise_on_block=False)


def test_an_error_after_publication_fails_the_run_with_its_published_outputs(seed, tmp_path):
    """The report cannot be written (its path is a file), after the target and quarantine were promoted: the
    FAIL event names both outputs, since they hold the run's rows."""
    df, contract = seed
    contract.quality.on_failure = "quarantine"
    contract.quality.minimum_valid_ratio = None
    events = tmp_path / "lineage.jsonl"
    (tmp_path / "report").write_text("not a directory")
    with pytest.raises(Exception):
        run(df, contract, target=str(tmp_path / "target"), quarantine=str(tmp_path / "quarantine"),
            report=str(tmp_path / "report"), lineage=f"file:{events}", source=CSV)
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["eventType"] for e in lines] == ["START", "FAIL"]
    outputs = {o["name"].rsplit("/", 1)[-1]: o["outputFacets"]["outputStatistics"]["rowCount"]
               for o in lines[1]["outputs"]}
    assert outputs == {"target": 1, "quarantine": 6}


def test_a_uri_input_is_named_as_the_listener_and_ingest_name_it(seed):
    from dq_governance.pipeline import input_identity

    _df, contract = seed
    assert input_identity("s3a://lake/curated/orders", contract) == ("s3://lake", "curated/orders")
    assert input_identity("s3://lake/curated/orders", contract) == ("s3://lake", "curated/orders")
    assert input_identity("file:///data/orders.csv", contract) == ("file", "/data/orders.csv")
    assert input_identity("hdfs://nn:8020/data/orders", contract) == ("hdfs://nn:8020", "/data/orders")
    assert input_identity(None, contract) == (contract.dataset.namespace or "file", contract.dataset.name)


def test_a_broken_openlineage_yml_is_refused_without_quoting_it(tmp_path):
    from dq_governance.errors import ConfigError
    from dq_governance.lineage.emit import transport_config

    path = tmp_path / "openlineage.yml"
    path.write_text('transport:\n  type: http\n  url: http://lineage:5000\n'
                    '  auth: {type: api_key, apiKey: "tok-SECRET-123}\n')
    with pytest.raises(ConfigError) as caught:
        transport_config(str(path))
    assert str(caught.value) == f"{path}:5:1: OpenLineage config is not valid YAML"  # where the parser gave up
    path.write_text("- a list\n")
    with pytest.raises(ConfigError, match="has no `transport` mapping"):
        transport_config(str(path))

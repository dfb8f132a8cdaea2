"""The listener extension in a real Spark application: contract facets on the listener's own events.

The manifest is compiled by `dqgov manifest` from contracts/; tests/listener_enrich_job.py runs in a subprocess
with the real OpenLineage Spark listener, our jar and the transform transport around a file transport; the
assertions read the file the listener itself wrote. Needs `make listener-jar` and `make listener`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dq_governance.cli import main
from dq_governance.lineage import facets as F
from dq_governance.lineage.enrich import find_extension_jar
from dq_governance.lineage.spark import find_listener_jar
from lineage_schema import REGISTRY, _validator

REPO = Path(__file__).resolve().parent.parent
OURS = ("ownership", "tags", "documentation", F.CONTRACT_FACET_KEY)

pytestmark = [pytest.mark.spark, pytest.mark.integration]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if find_listener_jar() is None:
        pytest.fail("OpenLineage Spark listener jar missing: run `make listener-jar`")
    if find_extension_jar() is None:
        pytest.fail("dq-governance listener extension jar missing: run `make listener`")
    work = tmp_path_factory.mktemp("enrich")
    manifest = work / "manifest.json"
    assert main(["manifest", str(REPO / "contracts"), "--base-dir", str(work), "-o", str(manifest)]) == 0
    events = work / "lineage.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "DQGOV_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests"), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, str(REPO / "tests" / "listener_enrich_job.py"), str(events), str(work), str(manifest)],
        cwd=work, env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-4000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    lines = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    return summary, lines, work, proc.stderr


def governed(work: Path) -> str:
    return str(work / "examples" / "data" / "orders.csv")


def datasets(lines, side, name):
    """(event, dataset) for every dataset of that name on that side, in file order."""
    return [(e, d) for e in lines for d in e.get(side) or [] if d["name"] == name and d["namespace"] == "file"]


def test_the_transformer_loaded_the_manifest_and_the_result_was_recorded(run):
    summary, lines, _, stderr = run
    assert "dq-governance listener:" not in stderr  # no start-up or per-event warning line
    assert summary == {"recorded": True, "registry_has": True, "valid_rows": 1, "invalid_rows": 6,
                       "unique_failed": 2}
    assert all("/integration/spark" in e["producer"] for e in lines)  # every event is the listener's own
    assert "@example.com" not in json.dumps(lines)  # no raw value of the PII column email


def test_a_write_to_the_governed_path_carries_ownership_pii_tag_and_contract(run):
    _, lines, work, _ = run
    writes = datasets(lines, "outputs", governed(work))
    assert writes, "the listener reported no write of the governed path"
    first = writes[0][1]["facets"]
    assert [(o["name"], o["type"]) for o in first["ownership"]["owners"]] == [
        ("team:sales-data-team", "TECHNICAL_OWNER"), ("user:maria.silva", "DATA_STEWARD")]
    tags = [(t["key"], t["value"], t.get("field")) for t in first["tags"]["tags"]]
    assert ("pii", "true", "email") in tags
    assert ("classification", "restricted", "email") in tags
    assert ("classification", "internal", None) in tags
    assert first["documentation"]["description"] == "Commercial orders, consolidated"
    contract = first[F.CONTRACT_FACET_KEY]
    assert contract["_schemaURL"] == F.CONTRACT_FACET_SCHEMA_URL
    assert (contract["name"], contract["version"], contract["standard"], contract["enforcement"]) == (
        "orders", "1.0.0", "native", "blocking")
    assert contract["location"] == (REPO / "contracts" / "orders.yaml").as_uri()
    assert "status" not in contract  # written before any check
    # the listener's own facets are still there
    assert {"schema", "dataSource"} <= set(first)
    assert [f["name"] for f in first["schema"]["fields"]] == [
        "pedido_id", "cliente_id", "status", "valor", "data_pedido", "email"]


def test_a_read_after_the_check_carries_the_seed_lab_assertions(run):
    _, lines, work, _ = run
    copy = str(work / "copy")
    reads = [(e, d) for e, d in datasets(lines, "inputs", governed(work))
             if any(o["name"] == copy for o in e.get("outputs") or [])]
    assert reads, "the listener reported no read of the governed path into copy/"
    for _, dataset in reads:
        facets = dataset["inputFacets"]
        assertions = {a["name"]: a for a in facets["dataQualityAssertions"]["assertions"]}
        unique = assertions["pedido_id_unique"]
        assert (unique["assertion"], unique["column"], unique["success"], unique["actual"]) == (
            "unique", "pedido_id", False, "2")
        assert {n: a["actual"] for n, a in assertions.items() if not a["success"]} == {
            "cliente_id_not_null": "1", "status_allowed_values": "1", "valor_range": "1", "data_pedido_type": "1",
            "pedido_id_unique": "2"}
        assert facets["dataQualityMetrics"]["rowCount"] == 7
        assert "min" not in facets["dataQualityMetrics"]["columnMetrics"].get("email", {})  # PII: no values
        contract = dataset["facets"][F.CONTRACT_FACET_KEY]
        assert (contract["status"], contract["valid_rows"], contract["invalid_rows"]) == ("failed", 1, 6)
    # the copy has no contract: untouched
    for _, out in datasets(lines, "outputs", copy):
        assert not set(OURS) & set(out["facets"])


def test_part_files_of_the_governed_directory_are_governed_too(run):
    _, lines, work, _ = run
    prefix = governed(work) + "/"
    parts = [d for e in lines for d in e.get("inputs") or [] if d["name"].startswith(prefix)]
    assert parts, "expected the listener to name single part files on schema-inference reads"
    for dataset in parts:
        assert dataset["facets"][F.CONTRACT_FACET_KEY]["name"] == "orders"
        tags = [(t["key"], t["value"], t.get("field")) for t in dataset["facets"]["tags"]["tags"]]
        assert ("pii", "true", "email") in tags


def test_a_write_after_the_check_carries_the_contract_status(run):
    _, lines, work, _ = run
    last = datasets(lines, "outputs", governed(work))[-1][1]["facets"][F.CONTRACT_FACET_KEY]
    assert (last["name"], last["status"], last["valid_rows"], last["invalid_rows"]) == ("orders", "failed", 1, 6)
    assert last["quality_score"] == pytest.approx(1 / 7)


def test_unmatched_datasets_are_untouched_and_our_facets_validate(run):
    _, lines, work, _ = run
    seed = str(REPO / "examples" / "data" / "orders.csv")  # not under --base-dir: no contract matches it
    seed_reads = datasets(lines, "inputs", seed)
    assert seed_reads
    for _, dataset in seed_reads:
        assert not set(OURS) & set(dataset["facets"])
        assert "dataQualityAssertions" not in (dataset.get("inputFacets") or {})
    checked = 0
    for side in ("inputs", "outputs"):
        for _, dataset in datasets(lines, side, governed(work)):
            groups = [dataset["facets"], dataset.get("inputFacets") or {}]
            for key, facet in [(k, f) for g in groups for k, f in g.items()
                               if k in OURS or k.startswith("dataQuality")]:
                REGISTRY.resolver().lookup(facet["_schemaURL"])
                assert [e.message for e in _validator(facet["_schemaURL"]).iter_errors(facet)] == [], key
                checked += 1
    assert checked >= 8

"""Sync orchestration: dry-run files, `dqgov sync` exit codes and summary, report-history input,
`sync_run`, and no raw PII value in any payload of either catalog."""

from __future__ import annotations

import csv
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pytest
import responses

from catalog_support import DH_URL, OM_URL, TOKEN, DHServer, OMServer, OMState
from dq_governance.catalogs.sync import load_results, make_pusher, sync, sync_run
from dq_governance.catalogs.transport import Secret
from dq_governance.checks.result import CheckResult, GateDecision, RuleResult
from dq_governance.cli import main
from dq_governance.contracts.load import load_contract
from dq_governance.contracts.model import Contract

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = [str(REPO / "contracts" / n) for n in ("orders.yaml", "customers.yaml", "sales.yaml")]
T0 = datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc)


def read_files(out: Path) -> list[tuple[str, dict]]:
    return [(p.name, json.loads(p.read_text())) for p in sorted(out.iterdir())]


# --------------------------------------------------------------------------- dry run


@pytest.mark.parametrize("catalog,extra", [("openmetadata", ["--server-version", "1.9"]), ("datahub", [])])
def test_dry_run_writes_numbered_stable_request_files(tmp_path, capsys, catalog, extra):
    out = tmp_path / catalog
    args = ["sync", "--catalog", catalog, "--dry-run", "--out", str(out), "--contracts", *EXAMPLES, *extra]
    assert main(args) == 0
    first = read_files(out)
    printed = capsys.readouterr().out
    assert first, "no request files"
    for index, (name, record) in enumerate(first, start=1):
        assert re.match(rf"^{index:04d}-(GET|PUT|POST|PATCH)-[A-Za-z0-9._-]+\.json$", name), name
        assert set(record) == {"method", "path", "body"} and name.split("-")[1] == record["method"]
    assert f"{len(first)} request files written to {out}" in printed
    assert main(args) == 0  # a second dry run rewrites the same files, byte for byte
    assert read_files(out) == first
    if catalog == "openmetadata":
        assert "placeholder ids (names a server would resolve to ids):" in printed
        assert "team sales-data-team -> placeholder:team:sales-data-team" in printed
        assert "team crm-data-team -> placeholder:team:crm-data-team" in printed
        assert "dqgov sync openmetadata (dry run, server 1.9.0): " in printed
        patch = next(r for n, r in first if r["method"] == "PATCH" and "orders" in r["path"])
        assert {"op": "add", "path": "/owners/-",
                "value": {"id": "placeholder:team:sales-data-team", "type": "team"}} in patch["body"]
    else:
        props = [r for n, r in first if "datasetProperties_UPSERT" in n]
        assert len(props) == 3 and all(r["path"] == "/aspects?action=ingestProposal" for r in props)


def test_dry_run_on_the_contracts_directory_lists_unusable_contracts_and_exits_2(tmp_path, capsys):
    code = main(["sync", "--catalog", "openmetadata", "--dry-run", "--out", str(tmp_path), "--contracts",
                 str(REPO / "contracts"), "--server-version", "2.0"])
    printed = capsys.readouterr().out
    assert code == 2
    assert "FAILED contract tbl: contract tbl: dataset.catalog.openmetadata_fqn must be service.database.schema." \
           "table, got None" in printed
    assert any("lakehouse.sales.curated.sales" in r["path"] for _, r in read_files(tmp_path))


def test_missing_contract_path_is_bad_input(tmp_path, capsys):
    assert main(["sync", "--catalog", "datahub", "--dry-run", "--out", str(tmp_path), "--contracts",
                 str(tmp_path / "nope.yaml")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


# --------------------------------------------------------------------------- real URL through the CLI


@responses.activate
def test_cli_against_a_server_uses_the_env_token_and_exits_1_on_a_failure(monkeypatch, capsys):
    monkeypatch.setenv("DQGOV_OPENMETADATA_TOKEN", TOKEN)
    state = OMState(version="1.9.11")
    state.teams["sales-data-team"] = "7d5e3c8a-2f0e-4c59-9a8f-2b1f0b8f6e11"
    state.add_table("lakehouse.sales.curated.orders", [{"name": n, "dataType": "STRING"} for n in
                                                        ("pedido_id", "cliente_id", "status", "valor", "data_pedido",
                                                         "email")])
    OMServer(responses.mock, state)  # customers' table does not exist: that contract fails, orders syncs
    code = main(["sync", "--catalog", "openmetadata", "--url", OM_URL, "--contracts", EXAMPLES[0], EXAMPLES[1]])
    captured = capsys.readouterr()
    assert code == 1
    assert "FAILED contract customers: openmetadata: table lakehouse.crm.curated.customers does not exist" in captured.out
    assert "dqgov sync openmetadata (sent, server 1.9.11): " in captured.out
    assert all(c.request.headers["Authorization"] == f"Bearer {TOKEN}" for c in responses.calls)
    assert TOKEN not in captured.out + captured.err
    assert state.tables["lakehouse.sales.curated.orders"]["owners"] == [
        {"id": "7d5e3c8a-2f0e-4c59-9a8f-2b1f0b8f6e11", "type": "team"}]


# --------------------------------------------------------------------------- report history input


def write_history(path: Path) -> None:
    rows = []
    for run_id, at, failed in (("run-a", T0, 3), ("run-b", T0 + timedelta(days=1), 1)):
        for check, rule_type, column, n in (("pedido_id_not_null", "not_null", "pedido_id", 0),
                                            ("cliente_id_not_null", "not_null", "cliente_id", failed),
                                            ("status_allowed_values", "allowed_values", "status", 1)):
            rows.append({"pipeline": "orders_daily", "run_id": run_id, "contract": "orders", "contract_version": "1.0.0",
                         "rule_type": rule_type, "check_name": check, "column": column, "dimension": "completeness",
                         "severity": "error", "passed": n == 0, "failed_count": n, "metric_value": None,
                         "threshold": None, "message": "", "validated_at": at, "total_rows": 7, "valid_rows": 1,
                         "invalid_rows": 6, "run_status": "failed", "rule_status": "passed" if n == 0 else "failed"})
    table = pa.Table.from_pylist(rows)
    ds.write_dataset(table, str(path), format="parquet", partitioning=["pipeline", "run_id"],
                     partitioning_flavor="hive")


def test_load_results_takes_the_latest_run_per_contract(tmp_path):
    write_history(tmp_path / "hist")
    results = load_results(tmp_path / "hist")
    assert list(results) == ["orders"]
    res = results["orders"]
    assert res.run_id == "run-b" and res.finished_at == T0 + timedelta(days=1) and res.total_rows == 7
    assert [(r.name, r.status, r.failed_count, r.columns) for r in res.rules] == [
        ("pedido_id_not_null", "passed", 0, ["pedido_id"]), ("cliente_id_not_null", "failed", 1, ["cliente_id"]),
        ("status_allowed_values", "failed", 1, ["status"])]


def test_sync_with_results_pushes_only_the_latest_run(tmp_path, capsys):
    write_history(tmp_path / "hist")
    out = tmp_path / "dh"
    assert main(["sync", "--catalog", "datahub", "--dry-run", "--out", str(out), "--contracts", EXAMPLES[0],
                 "--results", str(tmp_path / "hist")]) == 0
    events = [json.loads(r["body"]["proposal"]["aspect"]["value"]) for n, r in read_files(out)
              if "assertionRunEvent" in n and r["method"] == "POST" and "proposal" in (r["body"] or {})]
    assert [(e["runId"], e["result"]["type"], e["result"].get("unexpectedCount")) for e in events] == [
        ("run-b", "SUCCESS", 0), ("run-b", "FAILURE", 1), ("run-b", "FAILURE", 1)]
    assert all(e["timestampMillis"] == int((T0 + timedelta(days=1)).timestamp() * 1000) for e in events)


def test_results_path_missing_is_bad_input(tmp_path, capsys):
    assert main(["sync", "--catalog", "datahub", "--dry-run", "--out", str(tmp_path / "o"), "--contracts",
                 EXAMPLES[0], "--results", str(tmp_path / "none")]) == 2
    assert "no such report history" in capsys.readouterr().err


# --------------------------------------------------------------------------- sync_run (what `check --sync` calls)


def seed_lab_result() -> CheckResult:
    """The seed lab's known answer for orders (7 rows, 1 valid) as the engine reports it."""
    def rule(name, type_, columns, failed):
        return RuleResult(name=name, type=type_, columns=columns, level="row", severity="error", action=None,
                          dimension=None, passed=failed == 0, status="passed" if failed == 0 else "failed",
                          failed_count=failed)
    rules = [rule("pedido_id_not_null", "not_null", ["pedido_id"], 0),
             rule("cliente_id_not_null", "not_null", ["cliente_id"], 1),
             rule("status_allowed_values", "allowed_values", ["status"], 1),
             rule("valor_range", "range", ["valor"], 1),
             rule("data_pedido_type", "type", ["data_pedido"], 1),
             rule("pedido_id_unique", "unique", ["pedido_id"], 2)]
    return CheckResult(run_id="11111111-2222-4333-8444-555555555555", contract_name="orders",
                       contract_version="1.0.0", pipeline="orders", rules=rules, total_rows=7, valid_rows=1,
                       invalid_rows=6, status="failed", gate=GateDecision(False, False, ["valid ratio 1/7 < 0.99"]),
                       started_at=T0, finished_at=T0)


def test_sync_run_dry_run_for_the_seed_lab(tmp_path):
    contract = load_contract(EXAMPLES[0])
    report = sync_run("openmetadata", contract, seed_lab_result(), out=tmp_path, dry_run=True, server_version="1.9")
    assert report.failed == [] and report.dry_run
    files = read_files(tmp_path)
    posted = [r["body"] for n, r in files if r["method"] == "POST" and "testCaseResults" in r["path"]]
    # five of the six seed-lab rules map to OpenMetadata tests; the type rule has no test definition
    assert [(b["testCaseStatus"], b["failedRows"], b["passedRows"]) for b in posted] == [
        ("Success", 0, 7), ("Failed", 1, 6), ("Failed", 1, 6), ("Failed", 1, 6), ("Failed", 2, 5)]
    assert [p.rsplit(".", 1)[1] for p in (r["path"] for n, r in files if r["method"] == "POST")] == [
        "orders_pedido_id_not_null", "orders_cliente_id_not_null", "orders_status_allowed_values",
        "orders_valor_range", "orders_pedido_id_unique"]
    (result_put,) = [r["body"] for n, r in files if r["path"].endswith("/results")]
    assert result_put["contractExecutionStatus"] == "Failed"


@responses.activate
def test_sync_run_against_datahub():
    DHServer(responses.mock)
    contract = load_contract(EXAMPLES[0])
    report = sync_run("datahub", contract, seed_lab_result(), url=DH_URL, token=Secret(TOKEN))
    assert report.failed == [] and not report.dry_run
    assert len([e for e in report.created if e.startswith("assertionRunEvent orders.")]) == 6


# --------------------------------------------------------------------------- PII never leaves


def pii_values() -> set[str]:
    contract = load_contract(REPO / "contracts" / "customers.yaml")
    pii = contract.pii_columns()
    with open(REPO / "examples" / "data" / "customers.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    values = {row[c] for row in rows for c in pii if row[c]}
    assert len(values) >= 35  # 7 customers, 6 PII columns, a few blanks and repeats
    return values


def leaky_result(contract: Contract, values: set[str]) -> CheckResult:
    """A result whose free text quotes raw row values and whose metric for `min` of a PII column is one."""
    text = " | ".join(sorted(values))
    rules = []
    for r in contract.rules():
        metric = 12345.0 if r.type == "min" else (3.0 if r.type in ("missing_percent", "avg") else None)
        rules.append(RuleResult(name=r.name, type=r.type, columns=r.target_columns, level=r.level,
                                severity=r.severity, action=r.action, dimension=r.dimension, passed=False,
                                status="failed", failed_count=2 if r.level == "row" else None, metric_value=metric,
                                threshold=f"must_be {getattr(r, 'must_be', None)}", message=f"bad rows: {text}"))
    return CheckResult(run_id="run-pii", contract_name=contract.name, contract_version=contract.version,
                       pipeline="crm", rules=rules, total_rows=7, valid_rows=3, invalid_rows=4, status="failed",
                       gate=GateDecision(False, False), started_at=T0, finished_at=T0)


def assert_no_pii(texts: list[str], values: set[str]) -> None:
    blob = "\n".join(texts)
    for value in values:
        assert not re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", blob), f"PII value {value!r} leaked"


@responses.activate
def test_no_raw_pii_value_in_any_payload_of_either_catalog(tmp_path):
    values = pii_values()
    doc = load_contract(REPO / "contracts" / "customers.yaml").model_dump(by_alias=True, exclude_none=True)
    doc["quality"]["rules"].append({"type": "min", "column": "telefone", "must_be": "> 0", "name": "min_phone"})
    contract = Contract.model_validate(doc)
    assert "12345" in values  # a phone number in the data, and the `min` metric we feed in
    result = leaky_result(contract, values)

    state = OMState(version="2.0.7")
    state.teams["crm-data-team"] = "7d5e3c8a-2f0e-4c59-9a8f-2b1f0b8f6e11"
    OMServer(responses.mock, state)
    DHServer(responses.mock)
    om = sync(make_pusher("openmetadata", url=OM_URL, token=Secret(TOKEN), create_tables=True), [contract],
              {contract.name: result})
    dh = sync(make_pusher("datahub", url=DH_URL, token=Secret(TOKEN)), [contract], {contract.name: result})
    assert om.failed == [] and dh.failed == []
    sent = [c.request.url + "\n" + (c.request.body.decode() if isinstance(c.request.body, bytes)
                                    else c.request.body or "") for c in responses.calls]
    assert any("testCaseResults" in s for s in sent) and any("assertionRunEvent" in s for s in sent)
    assert_no_pii(sent, values)
    # and the engine's text is not what we sent: the message is rebuilt from counts
    assert any("email_format failed: 2 of 7 rows violate it" in s for s in sent)

    dry = sync(make_pusher("datahub", dry_run=True, out=tmp_path / "dh"), [contract], {contract.name: result})
    sync(make_pusher("openmetadata", dry_run=True, out=tmp_path / "om", server_version="1.9"), [contract],
         {contract.name: result})
    assert dry.failed == []
    assert_no_pii([p.read_text() for p in sorted(tmp_path.rglob("*.json"))], values)

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
    # `tbl` (the ODCS example) names a bare table and no catalog hint: every FQN part above it is missing
    assert ("  FAILED contract tbl: tbl: OpenMetadata needs a service, a database and a schema for its table FQN: "
            "pass --service, --database and --schema, set openmetadata.service / openmetadata.database / "
            "openmetadata.schema in .dqgov/config.yaml, or dataset.catalog.openmetadata_fqn in the contract\n"
            ) in printed
    assert "None" not in printed
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


# --------------------------------------------------------------------------- catalog names without hints

SEED = str(REPO / "tests" / "fixtures" / "seed_orders.yaml")
SEED_FQN = "lakehouse.sales.curated.orders"
SEED_URN = "urn:li:dataset:(urn:li:dataPlatform:spark,curated.orders,PROD)"
MISSING_BOTH = ("curated.orders: OpenMetadata needs a service and a database for its table FQN: pass --service and "
                "--database, set openmetadata.service / openmetadata.database in .dqgov/config.yaml, or "
                "dataset.catalog.openmetadata_fqn in the contract")


def write_config(directory: Path, text: str) -> Path:
    path = directory / ".dqgov" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def seed_om_rules() -> list:
    """The seed contract's rules that OpenMetadata has a test for (its `type` rules have none): all column rules."""
    from dq_governance.catalogs.openmetadata import TEST_DEFINITIONS

    rules = [r for r in load_contract(SEED).rules() if r.type in TEST_DEFINITIONS]
    assert [r.name for r in rules] == ["pedido_id_not_null", "pedido_id_unique", "cliente_id_not_null",
                                       "status_not_null", "status_allowed_values", "valor_not_null", "valor_range",
                                       "data_pedido_not_null"]
    return rules


def seed_om_requests(fqn: str) -> list[tuple[str, str]]:
    """(method, path without query) of a dry-run sync of the seed contract into table `fqn`."""
    table_id = f"placeholder:table:{fqn}"
    out = [("GET", "/api/v1/teams/name/sales-data-team"), ("GET", f"/api/v1/tables/name/{fqn}"),
           ("PATCH", f"/api/v1/tables/{table_id}"), ("PUT", "/api/v1/dataQuality/testSuites/basic")]
    for rule in seed_om_rules():
        out += [("GET", f"/api/v1/dataQuality/testCases/name/{fqn}.{rule.target_columns[0]}.orders_{rule.name}"),
                ("PUT", "/api/v1/dataQuality/testCases")]
    return out + [("GET", "/api/v1/dataContracts/entity"), ("PUT", "/api/v1/dataContracts")]


def test_seed_contract_syncs_to_openmetadata_in_a_dry_run_with_service_and_database_options(tmp_path, capsys):
    out = tmp_path / "om"
    assert main(["sync", "--catalog", "openmetadata", "--dry-run", "--out", str(out), "--server-version", "1.9",
                 "--service", "lakehouse", "--database", "sales", SEED]) == 0
    printed = capsys.readouterr().out
    files = read_files(out)
    assert [(r["method"], r["path"].split("?")[0]) for _, r in files] == seed_om_requests(SEED_FQN)
    assert len(files) == 22 and f"22 request files written to {out}" in printed
    assert files[1][0] == "0002-GET-tables_name_lakehouse.sales.curated.orders.json"
    bodies = [r["body"] for _, r in files]
    assert bodies[3] == {"name": f"{SEED_FQN}.testSuite", "basicEntityReference": SEED_FQN}
    links = [b["entityLink"] for b in bodies if isinstance(b, dict) and "entityLink" in b]
    assert links == [f"<#E::table::{SEED_FQN}::columns::{c}>" for c in
                     ("pedido_id", "pedido_id", "cliente_id", "status", "status", "valor", "valor", "data_pedido")]
    assert bodies[-1]["entity"] == {"id": f"placeholder:table:{SEED_FQN}", "type": "table"}
    assert "None" not in printed + "".join(p.read_text() for p in out.iterdir())


def test_the_same_dry_run_from_the_project_config(tmp_path, monkeypatch, capsys):
    assert main(["sync", "--catalog", "openmetadata", "--dry-run", "--out", str(tmp_path / "by-options"),
                 "--server-version", "1.9", "--service", "lakehouse", "--database", "sales", SEED]) == 0
    project = tmp_path / "project"
    write_config(project, "openmetadata:\n  server_version: '1.9'\n  service: lakehouse\n  database: sales\n")
    monkeypatch.chdir(project)
    assert main(["sync", "--catalog", "openmetadata", "--out", str(tmp_path / "by-config"), SEED]) == 0
    assert "dqgov sync openmetadata (dry run, server 1.9.0): " in capsys.readouterr().out
    assert read_files(tmp_path / "by-config") == read_files(tmp_path / "by-options")


def test_an_option_beats_the_contract_which_beats_the_project_config(tmp_path, monkeypatch):
    def table_path(*options: str, contract: str = SEED) -> str:
        out = tmp_path / "out"
        assert main(["sync", "--catalog", "openmetadata", "--out", str(out), *options, contract]) == 0
        return read_files(out)[1][1]["path"].split("?")[0].rsplit("/", 1)[1]

    write_config(tmp_path, "openmetadata:\n  service: cfg_svc\n  database: cfg_db\n  schema: cfg_schema\n")
    monkeypatch.chdir(tmp_path)
    assert table_path() == "cfg_svc.cfg_db.curated.orders"  # the config fills in what the name leaves out
    assert table_path("--database", "cli_db") == "cfg_svc.cli_db.curated.orders"
    assert table_path("--schema", "cli_schema") == "cfg_svc.cfg_db.cli_schema.orders"
    hinted = tmp_path / "hinted.yaml"
    hinted.write_text(Path(SEED).read_text().replace(
        "  description: Pedidos",
        "  catalog:\n    openmetadata_fqn: h_svc.h_db.h_schema.h_table\n  description: Pedidos"))
    assert table_path(contract=str(hinted)) == "h_svc.h_db.h_schema.h_table"  # the hint beats the config
    assert table_path("--service", "cli_svc", contract=str(hinted)) == "cli_svc.h_db.h_schema.h_table"


def test_without_service_and_database_the_error_names_options_and_config_keys(tmp_path, capsys):
    code = main(["sync", "--catalog", "openmetadata", "--dry-run", "--out", str(tmp_path / "o"), SEED])
    printed = capsys.readouterr().out
    assert code == 2
    assert f"  FAILED contract orders: {MISSING_BOTH}\n" in printed
    assert "None" not in printed and "0 request files written" in printed


def test_a_missing_database_alone_names_its_option_and_the_config_file_used(tmp_path, capsys):
    config = write_config(tmp_path / "elsewhere", "openmetadata:\n  service: lakehouse\n")
    code = main(["sync", "--catalog", "openmetadata", "--out", str(tmp_path / "o"), "--project-config", str(config),
                 SEED])
    assert code == 2
    assert (f"  FAILED contract orders: curated.orders: OpenMetadata needs a database for its table FQN: pass "
            f"--database, set openmetadata.database in {config}, or dataset.catalog.openmetadata_fqn in the "
            "contract\n") in capsys.readouterr().out


def with_dataset(tmp_path: Path, name: str, catalog: str = "") -> str:
    path = tmp_path / f"contract-{len(list(tmp_path.iterdir()))}.yaml"
    path.write_text(Path(SEED).read_text().replace("  name: curated.orders\n", f"  name: {name}\n{catalog}"))
    return str(path)


@pytest.mark.parametrize("name,options,fqn", [
    ("orders", ["--schema", "curated"], "lakehouse.sales.curated.orders"),  # a bare table takes the schema too
    ("main.curated.orders", [], "lakehouse.main.curated.orders"),  # Spark's catalog.schema.table: the database
    ("main.curated.orders", ["--database", "sales"], "lakehouse.sales.curated.orders"),
])
def test_how_one_and_three_part_dataset_names_map(tmp_path, name, options, fqn):
    out = tmp_path / "out"
    contract = with_dataset(tmp_path, name)
    assert main(["sync", "--catalog", "openmetadata", "--out", str(out), "--service", "lakehouse",
                 *(options if name != "orders" else ["--database", "sales", *options]), contract]) == 0
    assert read_files(out)[1][1]["path"].split("?")[0] == f"/api/v1/tables/name/{fqn}"


def test_a_service_with_a_dot_is_quoted_in_the_fqn(tmp_path):
    out = tmp_path / "out"
    assert main(["sync", "--catalog", "openmetadata", "--out", str(out), "--service", "lake.house", "--database",
                 "sales", SEED]) == 0
    assert read_files(out)[3][1]["body"]["basicEntityReference"] == '"lake.house".sales.curated.orders'


@pytest.mark.parametrize("name,catalog,message", [
    ("bronze.sales.curated.orders", "", "dataset.name: `bronze.sales.curated.orders` is not table, schema.table or "
     "database.schema.table; name the OpenMetadata table in dataset.catalog.openmetadata_fqn "
     "(service.database.schema.table)"),
    ("s3://lake/orders", "", "dataset.name: `s3://lake/orders` is not table, schema.table or database.schema.table; "
     "name the OpenMetadata table in dataset.catalog.openmetadata_fqn (service.database.schema.table)"),
    ("curated.orders", "  catalog:\n    openmetadata_fqn: curated.orders\n",
     "dataset.catalog.openmetadata_fqn: 'curated.orders' must be service.database.schema.table"),
])
def test_names_no_catalog_can_take_are_refused(tmp_path, capsys, name, catalog, message):
    contract = with_dataset(tmp_path, name, catalog)
    assert main(["sync", "--catalog", "openmetadata", "--out", str(tmp_path / "o"), "--service", "lakehouse",
                 "--database", "sales", contract]) == 2
    assert f"  FAILED contract orders: {message}\n" in capsys.readouterr().out


@pytest.mark.parametrize("option,value,problem", [
    ("--env", "prod", "must be a DataHub environment in capitals, e.g. PROD, DEV or QA"),
    ("--platform-instance", "eu,1", "must be one word without spaces, commas or parentheses (they delimit a "
     "DataHub URN)"),
    ("--service", "", "must not be empty"),
])
def test_a_bad_option_value_is_bad_input_naming_the_option(tmp_path, capsys, option, value, problem):
    assert main(["sync", "--catalog", "datahub", "--out", str(tmp_path), option, value, SEED]) == 2
    assert capsys.readouterr().err == f"dqgov: error: {option} {value}: {problem}\n"


def test_options_of_the_other_catalog_are_noted_as_ignored(tmp_path, capsys):
    assert main(["sync", "--catalog", "datahub", "--out", str(tmp_path), "--service", "x", "--database", "y",
                 SEED]) == 0
    assert "  note: --service, --database: not used by datahub; ignored\n" in capsys.readouterr().out
    assert main(["sync", "--catalog", "datahub", "--out", str(tmp_path), "--create-tables", "--server-version", "1.9",
                 SEED]) == 0
    out = capsys.readouterr().out
    assert "  note: --server-version applies to OpenMetadata only; ignored\n" in out
    assert "  note: --create-tables applies to OpenMetadata only; ignored\n" in out


# DataHub has defaults (spark, PROD) so it never failed; the same options and config keys set its URN.


def dataset_urns(out: Path) -> set[str]:
    return {r["body"]["proposal"]["entityUrn"] for _, r in read_files(out)
            if r["method"] == "POST" and r["body"]["proposal"]["entityType"] == "dataset"}


def test_seed_contract_datahub_urn_defaults_and_options(tmp_path):
    assert main(["sync", "--catalog", "datahub", "--out", str(tmp_path / "default"), SEED]) == 0
    assert dataset_urns(tmp_path / "default") == {SEED_URN}
    assert not [n for n, _ in read_files(tmp_path / "default") if "dataset_dataPlatformInstance" in n]
    assert main(["sync", "--catalog", "datahub", "--out", str(tmp_path / "set"), "--platform", "hive",
                 "--platform-instance", "cluster1", "--env", "DEV", SEED]) == 0
    assert dataset_urns(tmp_path / "set") == {"urn:li:dataset:(urn:li:dataPlatform:hive,cluster1.curated.orders,DEV)"}
    (instance,) = [r for n, r in read_files(tmp_path / "set") if "dataset_dataPlatformInstance" in n]
    assert json.loads(instance["body"]["proposal"]["aspect"]["value"]) == {
        "platform": "urn:li:dataPlatform:hive",
        "instance": "urn:li:dataPlatformInstance:(urn:li:dataPlatform:hive,cluster1)"}


def test_datahub_names_from_the_project_config_and_their_precedence(tmp_path, monkeypatch):
    write_config(tmp_path, "datahub:\n  platform: delta-lake\n  platform_instance: eu1\n  env: QA\n")
    monkeypatch.chdir(tmp_path)
    assert main(["sync", "--catalog", "datahub", "--out", "a", SEED]) == 0
    assert dataset_urns(tmp_path / "a") == {"urn:li:dataset:(urn:li:dataPlatform:delta-lake,eu1.curated.orders,QA)"}
    hinted = with_dataset(tmp_path, "curated.orders", "  catalog:\n    datahub_platform: hive\n")
    assert main(["sync", "--catalog", "datahub", "--out", "b", "--env", "DEV", hinted]) == 0
    assert dataset_urns(tmp_path / "b") == {"urn:li:dataset:(urn:li:dataPlatform:hive,eu1.curated.orders,DEV)"}


def test_sync_run_takes_the_naming_options_and_the_project_config(tmp_path):
    """What `dqgov check --sync` calls: names and config are passed in, never read from the current directory."""
    from dq_governance.catalogs.naming import NameSettings
    from dq_governance.project_config import load_project_config

    project = load_project_config(write_config(tmp_path, "openmetadata:\n  service: cfg_svc\n  database: sales\n"))
    report = sync_run("openmetadata", load_contract(SEED), seed_lab_result(), out=tmp_path / "om", dry_run=True,
                      server_version="1.9", names=NameSettings(service="lakehouse"), project=project)
    assert report.invalid == [] and report.failed == []
    posted = [r["path"] for _, r in read_files(tmp_path / "om") if r["method"] == "POST"]
    assert posted == [f"/api/v1/dataQuality/testCases/testCaseResults/{SEED_FQN}.{column}.orders_{rule}"
                      for column, rule in (("pedido_id", "pedido_id_not_null"), ("cliente_id", "cliente_id_not_null"),
                                           ("status", "status_allowed_values"), ("valor", "valor_range"),
                                           ("pedido_id", "pedido_id_unique"))]  # in result order; `type` has no test
    bare = sync_run("openmetadata", load_contract(SEED), None, out=tmp_path / "bare", dry_run=True)
    assert bare.invalid == [("contract orders", MISSING_BOTH)] and bare.exit_code == 2


# --------------------------------------------------------------------------- a live sync from the project config


@responses.activate
def test_seed_contract_syncs_to_a_live_openmetadata_named_by_the_project_config(tmp_path, monkeypatch, capsys):
    from catalog_support import assert_fields, body_of, om_fixture

    monkeypatch.setenv("OM_BOT_TOKEN", TOKEN)
    monkeypatch.delenv("DQGOV_OPENMETADATA_URL", raising=False)
    write_config(tmp_path, f"openmetadata:\n  url: {OM_URL}\n  token_env: OM_BOT_TOKEN\n  service: lakehouse\n"
                           "  database: sales\n")
    monkeypatch.chdir(tmp_path)
    state = OMState(version="1.9.11")
    state.teams["sales-data-team"] = "7d5e3c8a-2f0e-4c59-9a8f-2b1f0b8f6e11"
    state.add_table(SEED_FQN, [{"name": n, "dataType": "STRING"} for n in
                               ("pedido_id", "cliente_id", "status", "valor", "data_pedido")])
    OMServer(responses.mock, state)
    assert main(["sync", "--catalog", "openmetadata", SEED]) == 0
    captured = capsys.readouterr()
    assert "dqgov sync openmetadata (sent, server 1.9.11): " in captured.out and TOKEN not in captured.out
    assert all(c.request.headers["Authorization"] == f"Bearer {TOKEN}" for c in responses.calls)
    assert sorted(state.test_cases) == sorted(f"{SEED_FQN}.{r.target_columns[0]}.orders_{r.name}"
                                              for r in seed_om_rules())
    suite = next(c for c in responses.calls if c.request.url.endswith("/dataQuality/testSuites/basic"))
    assert_fields(body_of(suite), om_fixture("createBasicTestSuite"),
                  differ={"$.name": f"{SEED_FQN}.testSuite", "$.basicEntityReference": SEED_FQN})
    case = next(body_of(c) for c in responses.calls if c.request.url.endswith("/dataQuality/testCases")
                and c.request.method == "PUT" and body_of(c)["name"] == "orders_cliente_id_not_null")
    assert_fields(case, om_fixture("createTestCase_1.8plus"), differ={
        "$.name": "orders_cliente_id_not_null", "$.entityLink": f"<#E::table::{SEED_FQN}::columns::cliente_id>",
        "$.description": "from contract orders v1.0.0"})
    (data_contract,) = state.contracts.values()
    assert data_contract["entity"] == {"id": state.tables[SEED_FQN]["id"], "type": "table"}


@responses.activate
def test_seed_contract_syncs_to_a_live_datahub_named_by_the_project_config(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DH_BOT_TOKEN", TOKEN)
    monkeypatch.delenv("DQGOV_DATAHUB_URL", raising=False)
    write_config(tmp_path, f"datahub:\n  url: {DH_URL}\n  token_env: DH_BOT_TOKEN\n  env: DEV\n")
    monkeypatch.chdir(tmp_path)
    server = DHServer(responses.mock)
    assert main(["sync", "--catalog", "datahub", SEED]) == 0
    assert TOKEN not in capsys.readouterr().out
    assert all(c.request.headers["Authorization"] == f"Bearer {TOKEN}" for c in responses.calls)
    urn = "urn:li:dataset:(urn:li:dataPlatform:spark,curated.orders,DEV)"
    assert sorted(a for u, a in server.state.aspects if u == urn) == [
        "datasetProperties", "ownership", "schemaMetadata", "status"]
    assert {u for u, _ in server.state.aspects if u.startswith("urn:li:dataset:")} == {urn}


def test_a_token_env_that_is_not_set_is_bad_input(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OM_BOT_TOKEN", raising=False)
    monkeypatch.delenv("OM_BOT_TOKEN_FILE", raising=False)
    write_config(tmp_path, f"openmetadata:\n  url: {OM_URL}\n  token_env: OM_BOT_TOKEN\n")
    monkeypatch.chdir(tmp_path)
    assert main(["sync", "--catalog", "openmetadata", "--service", "s", "--database", "d", SEED]) == 2
    assert capsys.readouterr().err == ("dqgov: error: .dqgov/config.yaml: openmetadata.token_env names OM_BOT_TOKEN, "
                                       "which is not set (nor OM_BOT_TOKEN_FILE)\n")


DATE_RANGES = """
contract: {name: events, version: 1.0.0}
dataset: {name: curated.events}
schema:
  fields:
    - {name: id, type: long, required: true}
    - {name: day, type: date, minimum: "2024-01-01", maximum: 2024-12-31}
quality:
  rules:
    - {type: range, column: day, min: "2024-03-01", max: "2024-04-01", max_exclusive: true}
"""


def test_date_range_bounds_reach_both_catalogs_as_iso_text(tmp_path, capsys):
    contract = tmp_path / "events.yaml"
    contract.write_text(DATE_RANGES, encoding="utf-8")
    assert main(["sync", "--catalog", "datahub", "--dry-run", "--out", str(tmp_path / "dh"), str(contract)]) == 0
    infos = [json.loads(r["body"]["proposal"]["aspect"]["value"]) for n, r in read_files(tmp_path / "dh")
             if "assertionInfo" in n and r["method"] == "POST"]
    ranges = {i["customProperties"]["rule"]: i["datasetAssertion"] for i in infos
              if i["datasetAssertion"]["nativeType"] == "range"}
    assert ranges["day_range"]["operator"] == "BETWEEN"  # the field's inclusive bounds
    assert ranges["day_range"]["parameters"] == {"maxValue": {"value": "2024-12-31", "type": "STRING"},
                                                 "minValue": {"value": "2024-01-01", "type": "STRING"}}
    # the rule excludes its maximum, which BETWEEN cannot say: it goes as written, with the ISO bounds
    assert (ranges["day_range_2"]["operator"], ranges["day_range_2"]["nativeParameters"]) == (
        "_NATIVE_", {"column": "day", "min": "2024-03-01", "max": "2024-04-01", "max_exclusive": "true"})
    assert main(["sync", "--catalog", "openmetadata", "--dry-run", "--out", str(tmp_path / "om"), "--service", "s",
                 "--database", "d", str(contract)]) == 0
    cases = [r["body"] for n, r in read_files(tmp_path / "om") if n.endswith("PUT-dataQuality_testCases.json")]
    values = sorted((p["name"], p["value"]) for case in cases for p in case.get("parameterValues", []))
    assert values == [("maxValue", "2024-12-31"), ("minValue", "2024-01-01")]
    assert ("  note: events: rule day_range_2 not pushed to OpenMetadata, nor its results: columnValuesToBeBetween "
            "is inclusive and the rule excludes its maximum\n") in capsys.readouterr().out


@pytest.mark.parametrize("url", ["", "  "])
def test_a_blank_url_is_refused_not_taken_for_a_dry_run(tmp_path, capsys, url):
    """`--url "$UNSET_VAR"` fell through to a dry run: nothing was pushed, and the run looked finished."""
    assert main(["sync", "--catalog", "datahub", "--url", url, SEED]) == 2
    assert capsys.readouterr().err == "dqgov: error: the datahub URL given is blank; leave it out for a dry run\n"
    assert not list(tmp_path.iterdir())

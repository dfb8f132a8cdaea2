"""`dqgov check`: the seed lab's known answer, exit codes 0 / 1 / 2, defaults under out/, lineage events."""

from __future__ import annotations

import json

import pytest

from dq_governance.cli import main

pytestmark = pytest.mark.spark


@pytest.fixture(autouse=True)
def masking_key(monkeypatch, tmp_path_factory):
    key = tmp_path_factory.mktemp("key") / "demo.key"
    key.write_bytes(b"cli-test-masking-key-not-a-secret")
    monkeypatch.setenv("DQGOV_MASKING_KEY_FILE", str(key))
    monkeypatch.delenv("DQGOV_MASKING_KEY", raising=False)


def _args(repo, tmp_path, contract="orders", data=None):
    return [
        "check", str(repo / f"contracts/{contract}.yaml"), "--input", str(data or repo / f"examples/data/{contract}.csv"),
        "--output", str(tmp_path / "valid"), "--quarantine", str(tmp_path / "quarantine"),
        "--report", str(tmp_path / "report"), "--lineage", f"file:{tmp_path / 'events.jsonl'}",
    ]


def test_seed_lab_json(spark, repo, tmp_path, capsys):
    run_id = "6f1c9a8e-2b1d-4c53-9a0e-1f2d3c4b5a69"
    code = main([*_args(repo, tmp_path), "--json", "--run-id", run_id, "--pipeline", "seed-lab"])
    out = capsys.readouterr().out
    assert code == 1
    summary = json.loads(out)  # exactly one JSON object on stdout
    assert (summary["total_rows"], summary["valid_rows"], summary["invalid_rows"]) == (7, 1, 6)
    assert summary["quality_score"] == pytest.approx(0.142857, abs=1e-6)
    assert summary["status"] == "failed" and summary["published"] is False
    assert summary["gate"]["publish"] is False
    assert summary["gate"]["reasons"] == ["valid ratio 0.1429 is below minimum_valid_ratio 0.99"]
    assert (summary["run_id"], summary["pipeline"], summary["masking"]) == (run_id, "seed-lab", "applied")
    failed = {rule["name"]: rule["failed_count"] for rule in summary["rules"]}
    assert {name: failed[name] for name in (
        "pedido_id_not_null", "cliente_id_not_null", "status_allowed_values", "valor_range", "data_pedido_type",
        "pedido_id_unique")} == {
        "pedido_id_not_null": 0, "cliente_id_not_null": 1, "status_allowed_values": 1, "valor_range": 1,
        "data_pedido_type": 1, "pedido_id_unique": 2}
    assert {r["name"]: r["column"] for r in summary["rules"]}["valor_range"] == "valor"
    assert not (tmp_path / "valid").exists()
    assert [o["kind"] for o in summary["outputs"]] == ["quarantine"]
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    ours = [e for e in events if e["run"]["runId"] == run_id]
    assert [e["eventType"] for e in ours] == ["START", "FAIL"]


def test_seed_lab_table(spark, repo, tmp_path, capsys):
    code = main(_args(repo, tmp_path))
    out = capsys.readouterr().out
    assert code == 1
    lines = out.splitlines()
    unique = next(line for line in lines if line.startswith("pedido_id_unique "))
    assert unique.split()[-3:] == ["2", "2", "FAILED"]
    assert "rows: total 7  valid 1  invalid 6  quality_score 0.1429" in out
    assert "gate: BLOCKED" in out and "published: no" in out
    assert f"wrote quarantine: {tmp_path / 'quarantine'} (6 rows, parquet)" in out


def test_publishing_run_exits_0_with_defaults_under_out(spark, repo, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["check", str(repo / "contracts/sales.yaml"), "--input", str(repo / "examples/data/sales.csv"),
                 "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["published"] is True
    assert (summary["total_rows"], summary["valid_rows"], summary["invalid_rows"]) == (6, 3, 3)
    assert {o["kind"]: (o["location"], o["rows"]) for o in summary["outputs"]} == {
        "target": (str(tmp_path / "out/sales/valid"), 3), "quarantine": (str(tmp_path / "out/sales/quarantine"), 3)}
    assert spark.read.parquet(str(tmp_path / "out/sales/valid")).count() == 3
    assert (tmp_path / "out/report").is_dir()
    events = [json.loads(line) for line in (tmp_path / "out/lineage/events.jsonl").read_text().splitlines()]
    ours = [e for e in events if e["run"]["runId"] == summary["run_id"]]
    assert [e["eventType"] for e in ours] == ["START", "COMPLETE"]
    outputs = {o["name"]: o["outputFacets"]["outputStatistics"]["rowCount"] for o in ours[-1]["outputs"]}
    assert outputs == {str(tmp_path / "out/sales/valid"): 3, str(tmp_path / "out/sales/quarantine"): 3}


def test_missing_contract_column_exits_2_naming_it(spark, repo, tmp_path, capsys):
    data = tmp_path / "orders.csv"
    data.write_text("pedido_id,cliente_id,status,data_pedido,email\n1,101,PAGO,2026-11-01,a@b.com\n")
    code = main(_args(repo, tmp_path, data=data))
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "valor" in err and "Traceback" not in err
    assert not (tmp_path / "valid").exists() and not (tmp_path / "quarantine").exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--run-id", "../escape"], "--run-id: run id '../escape': use 1-128 characters"),
        (["--no-mask"], "add --i-know-this-publishes-unmasked-data"),
        (["--mode", "merge"], "--mode merge needs --merge-keys"),
        (["--merge-keys", "pedido_id"], "--merge-keys only go with --mode merge (the target's mode is overwrite)"),
        (["--sync-url", "http://om:8585"], "--sync-url and --sync-out go with --sync openmetadata|datahub"),
    ],
)
def test_bad_options_exit_2(spark, repo, tmp_path, capsys, extra, message):
    code = main([*_args(repo, tmp_path), *extra])
    captured = capsys.readouterr()
    assert code == 2 and message in captured.err + captured.out
    assert not (tmp_path / "quarantine").exists()


def test_missing_input_and_bad_contract_exit_2(spark, repo, tmp_path, capsys):
    assert main(_args(repo, tmp_path, data=tmp_path / "nope.csv")) == 2
    assert "nope.csv: no such file or directory" in capsys.readouterr().err
    broken = tmp_path / "broken.yaml"
    broken.write_text("contract: {name: x, version: '1'}\ndataset: {name: x}\n")
    assert main(["check", str(broken), "--input", str(repo / "examples/data/orders.csv")]) == 2
    err = capsys.readouterr().err
    assert "broken.yaml" in err and "version" in err


def test_no_mask_with_confirmation_is_recorded(spark, repo, tmp_path, capsys):
    code = main([*_args(repo, tmp_path, contract="sales"), "--no-mask", "--i-know-this-publishes-unmasked-data",
                 "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["masking"] == "disabled"
    cpfs = {r["cpf"] for r in spark.read.parquet(str(tmp_path / "valid")).collect()}
    assert "52998224725" in cpfs  # published unmasked, as asked
    masking = {r["masking"] for r in spark.read.parquet(str(tmp_path / "report")).collect()}
    assert masking == {"disabled"}


def test_sync_pushes_the_run_as_datahub_requests(spark, repo, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DQGOV_DATAHUB_URL", raising=False)
    out_dir = tmp_path / "catalog"
    run_id = "0b7e3c52-8f7a-4d8e-bd1f-3a6f0c9d2e11"
    code = main([*_args(repo, tmp_path), "--run-id", run_id, "--sync", "datahub", "--sync-out", str(out_dir)])
    printed = capsys.readouterr().out
    assert code == 1  # the gate still blocks; the catalog gets the failing results all the same
    assert f"catalog datahub (dry run, requests in {out_dir})" in printed
    requests = [json.loads(p.read_text()) for p in sorted(out_dir.glob("*.json"))]
    proposals = [r["body"]["proposal"] for r in requests if "proposal" in (r["body"] or {})]
    run_events = [json.loads(p["aspect"]["value"]) for p in proposals if p["aspectName"] == "assertionRunEvent"]
    assert len(run_events) == 16  # one per rule of the seed contract
    assert sorted(e["result"]["type"] for e in run_events).count("FAILURE") == 5
    assert sorted(e["result"].get("unexpectedCount") for e in run_events if e["result"]["type"] == "FAILURE") == [
        1, 1, 1, 1, 2]
    assert {e["runId"] for e in run_events} == {run_id}
    sent = json.dumps(requests)
    for raw in ("ana@example.com", "bruno@example.com", "carla@example.com", "fabio@example.com"):
        assert raw not in sent  # no raw value of the PII email column in any payload


def test_sync_takes_catalog_names_from_the_project_config(spark, repo, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DQGOV_OPENMETADATA_URL", raising=False)
    (tmp_path / ".dqgov").mkdir()
    (tmp_path / ".dqgov" / "config.yaml").write_text(
        "openmetadata:\n  server_version: \"1.9\"\n  service: lakehouse\n  database: sales\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out_dir = tmp_path / "catalog"
    args = _args(repo, tmp_path)
    args[1] = str(repo / "tests" / "fixtures" / "seed_orders.yaml")  # names only dataset.name: curated.orders
    code = main([*args, "--sync", "openmetadata", "--sync-out", str(out_dir)])
    printed = capsys.readouterr().out
    assert code == 1  # the seed lab's gate blocks; the catalog still gets the results
    assert f"catalog openmetadata (dry run, requests in {out_dir})" in printed and " 0 failed" in printed
    paths = [json.loads(p.read_text())["path"] for p in sorted(out_dir.glob("*.json"))]
    assert any("lakehouse.sales.curated.orders" in path for path in paths), paths


@pytest.mark.parametrize("flag, used", [([], "packed"), (["--split-storage", "cache"], "cache")])
def test_split_storage_option(spark, repo, tmp_path, capsys, flag, used):
    # the test session has no listener, so "auto" packs each kept row into one struct column
    code = main([*_args(repo, tmp_path), "--json", *flag])
    summary = json.loads(capsys.readouterr().out)
    assert (code, summary["split_storage"], summary["valid_rows"], summary["invalid_rows"]) == (1, used, 1, 6)


def test_help_says_flags_override_a_pipeline_config(capsys):
    assert main(["check", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Usage: dqgov check [OPTIONS] [CONTRACT]" in out
    assert "a flag given explicitly overrides the one setting it names" in out
    assert "a path without `/` (such as silver.orders_ok) is a catalog table, written as Delta" in out
    assert "--config PIPELINE_JSON A seed-001 pipeline JSON" in out


TINY_CONTRACT = """contract: {name: tiny, version: "1.0.0", owner: "team:data"}
dataset: {name: curated.tiny}
schema:
  fields:
    - {name: id, type: long, required: true}
"""


def test_sync_failure_sets_the_exit_code_and_sync_out_is_a_dry_run(spark, tmp_path, capsys, monkeypatch):
    import responses

    from catalog_support import DH_URL, DHServer

    class RefusingGms(DHServer):
        def batch(self, request):
            return 422, {"Content-Type": "application/json"}, json.dumps({"message": "Failed to validate record"})

    contract, data = tmp_path / "tiny.yaml", tmp_path / "tiny.csv"
    contract.write_text(TINY_CONTRACT, encoding="utf-8")
    data.write_text("id\n1\n2\n3\n", encoding="utf-8")
    monkeypatch.setenv("DQGOV_DATAHUB_URL", DH_URL)
    monkeypatch.delenv("DQGOV_DATAHUB_TOKEN", raising=False)
    monkeypatch.chdir(tmp_path)  # no project config
    args = ["check", str(contract), "--input", str(data), "--output", str(tmp_path / "valid"), "--quarantine",
            str(tmp_path / "q"), "--report", str(tmp_path / "report"), "--lineage", "none", "--sync", "datahub"]

    # the gate passes and the data is published, but GMS refuses the write: exit 1, said on stderr and in the JSON
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        RefusingGms(rsps)
        code = main([*args, "--json"])
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert code == 1 and summary["published"] is True and summary["gate"]["publish"] is True
    sync = summary["catalog_sync"]
    assert (sync["catalog"], sync["dry_run"], sync["created"], sync["updated"], sync["failed"], sync["writes"]) == (
        "datahub", False, 0, 0, 5, 0)
    refused = ("datahub rejected POST /aspects?action=ingestProposalBatch for 10 aspects of assertion "
               "tiny.id_not_null, assertion tiny.id_type, dataContract tiny...: HTTP 422: Failed to validate record")
    assert sync["failures"][-1] == {"what": "contract tiny", "error": refused}
    assert [f["what"] for f in sync["failures"][:-1]] == [
        "dataset urn:li:dataset:(urn:li:dataPlatform:spark,curated.tiny,PROD)", "assertion tiny.id_type",
        "assertion tiny.id_not_null", "dataContract tiny"]
    assert f"catalog datahub ({DH_URL}): 0 created, 0 updated, 0 unchanged, 5 failed\n" in captured.err
    assert f"  FAILED contract tiny: {refused}\n" in captured.err

    # --sync-out is a dry run even with a URL set: nothing is sent, the requests are files
    out_dir = tmp_path / "requests"
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        code = main([*args, "--sync-out", str(out_dir)])
        sent = len(rsps.calls)
    printed = capsys.readouterr().out
    assert (code, sent) == (0, 0)
    assert len(list(out_dir.glob("*.json"))) > 0
    assert f"catalog datahub (dry run, requests in {out_dir}): " in printed and " 0 failed\n" in printed
    assert "  note: dry run: nothing was sent to the catalog URL that is set\n" in printed


def test_an_empty_pipeline_name_is_refused_before_any_work(repo, tmp_path, capsys):
    """`--pipeline ""` would otherwise fall back to the contract's name without a word."""
    assert main([*_args(repo, tmp_path), "--pipeline", " "]) == 2
    assert "Invalid value for '--pipeline': is empty" in capsys.readouterr().err
    assert not (tmp_path / "report").exists() and not (tmp_path / "events.jsonl").exists()

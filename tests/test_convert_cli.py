"""`dqgov convert`: format detection, both directions, warnings and errors (no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dq_governance.cli import main
from dq_governance.contracts.model import Contract
from dq_governance.contracts.odcs import odcs_issues, odcs_to_contract

REPO = Path(__file__).resolve().parent.parent
CONTRACTS = REPO / "contracts"


def native(path: Path) -> Contract:
    return Contract.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", ["orders.yaml", "customers.yaml", "sales.yaml"])
def test_native_to_odcs_and_back(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(CONTRACTS / name)]) == 0
    out = capsys.readouterr().out
    doc = yaml.safe_load(out)
    assert (doc["apiVersion"], doc["kind"]) == ("v3.1.0", "DataContract")
    assert odcs_issues(doc) == []
    odcs_file = tmp_path / "c.odcs.yaml"
    odcs_file.write_text(out, encoding="utf-8")
    back = tmp_path / "back.yaml"
    assert main(["convert", str(odcs_file), "-o", str(back)]) == 0
    err = capsys.readouterr().err
    assert err == f"dqgov convert: {odcs_file} (odcs) -> {back} (native)\n"
    assert native(back) == native(CONTRACTS / name)


def test_full_example_to_native_and_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "full.yaml"
    assert main(["convert", str(CONTRACTS / "full-example.odcs.yaml"), "-o", str(out)]) == 0
    contract = native(out)
    assert contract.extensions["odcs"]["objects"][0]["name"] == "receivers"
    assert main(["convert", str(out)]) == 0
    doc = yaml.safe_load(capsys.readouterr().out)
    assert odcs_issues(doc) == []
    assert odcs_to_contract(doc) == contract


def test_to_flag_overrides_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(CONTRACTS / "orders.yaml"), "--to", "native"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("contract:\n  name: orders\n  version: 1.0.0\n")
    assert Contract.model_validate(yaml.safe_load(text)) == native(CONTRACTS / "orders.yaml")
    assert main(["convert", str(CONTRACTS / "orders.odcs.yaml"), "--to", "odcs"]) == 0
    assert odcs_issues(yaml.safe_load(capsys.readouterr().out)) == []


def test_dqx_unmapped_functions_are_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checks = tmp_path / "checks.yml"
    checks.write_text(
        "- criticality: warn\n"
        "  check:\n"
        "    function: is_not_null\n"
        "    arguments:\n"
        "      column: id\n"
        "- check:\n"
        "    function: is_valid_ipv6_address\n"
        "    arguments:\n"
        "      column: ip\n",
        encoding="utf-8",
    )
    assert main(["convert", str(checks)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"{checks}:7:15: warning: [1].check.function: DQX function `is_valid_ipv6_address` has no equivalent rule; "
        "not imported"]
    doc = yaml.safe_load(captured.out)
    assert doc["quality"]["rules"] == [{"type": "not_null", "column": "id", "severity": "warn"}]
    assert doc["extensions"]["dqx"]["unmapped"] == [
        {"check": {"function": "is_valid_ipv6_address", "arguments": {"column": "ip"}}}]


def test_seed_json_to_native(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "orders.json"
    source.write_text(json.dumps({"validations": {"on_failure": "warn", "rules": [
        {"type": "row_count", "min": 1}, {"type": "unique", "columns": ["id"]}]}}), encoding="utf-8")
    assert main(["convert", str(source)]) == 0
    doc = yaml.safe_load(capsys.readouterr().out)
    assert doc == {
        "contract": {"name": "orders", "version": "1.0.0", "description": "Imported from a validations block"},
        "dataset": {"name": "orders"},
        "quality": {"on_failure": "warn", "rules": [{"type": "row_count", "min": 1},
                                                    {"type": "unique", "columns": ["id"]}]},
    }


def test_errors_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(tmp_path / "missing.yaml")]) == 2
    assert capsys.readouterr().err == f"dqgov: error: {tmp_path / 'missing.yaml'}: no such file\n"

    broken = tmp_path / "broken.odcs.yaml"
    text = (CONTRACTS / "orders.odcs.yaml").read_text(encoding="utf-8").replace("status: active\n", "")
    broken.write_text(text, encoding="utf-8")
    assert main(["convert", str(broken)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert err.startswith(f"dqgov: error: {broken}:3:1: ")
    assert "'status' is a required property" in err

    odd = tmp_path / "odd.yaml"
    odd.write_text("just: text\n", encoding="utf-8")
    assert main(["convert", str(odd)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dqgov: error: {odd}:1:1: not a data contract")

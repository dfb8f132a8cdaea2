"""`dqgov mask` and `dqgov scan-pii` through `main([...])`."""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil

import pytest
import yaml

from dq_governance.cli import main
from dq_governance.contracts.model import Contract

pytestmark = pytest.mark.spark

KEY = "cli-masking-key-0123456789abcdef01"


def h(value: str) -> str:
    return hmac.new(KEY.encode(), value.encode(), hashlib.sha256).hexdigest()


def test_mask_writes_parquet(spark, repo, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    out = tmp_path / "masked"
    code = main(["mask", str(repo / "contracts" / "customers.yaml"), "--input",
                 str(repo / "examples" / "data" / "customers.csv"), "--output", str(out), "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary == {
        "contract": "customers", "output": str(out), "format": "parquet", "rows": 7, "key_id": "k2026-01",
        "masked": {"nome": "redact", "cpf": "hmac", "email": "partial", "telefone": "tokenize",
                   "data_nascimento": "generalize", "cep": "generalize"},
    }
    got = {r.cliente_id: r.cpf for r in spark.read.parquet(str(out)).collect()}
    assert got["101"] == got["107"] == h("52998224725") and got["102"] == h("11144477735")
    assert spark.read.parquet(str(out)).schema["cpf"].metadata == {"dqgov.masking": "hmac",
                                                                   "dqgov.masking.key_id": "k2026-01"}
    # an existing output is not replaced without --overwrite
    code = main(["mask", str(repo / "contracts" / "customers.yaml"), "--input",
                 str(repo / "examples" / "data" / "customers.csv"), "--output", str(out)])
    assert code == 2 and "exists; pass --overwrite" in capsys.readouterr().err


def test_mask_without_key_writes_nothing(spark, repo, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DQGOV_MASKING_KEY", raising=False)
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)
    out = tmp_path / "masked"
    code = main(["mask", str(repo / "contracts" / "sales.yaml"), "--input",
                 str(repo / "examples" / "data" / "sales.csv"), "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [
        "dqgov: error: masking key missing: set env var DQGOV_MASKING_KEY (or DQGOV_MASKING_KEY_FILE to a key "
        "file, or masking.key_file in the contract); refusing to mask without a key"
    ]
    assert not out.exists()


def test_mask_missing_input(repo, tmp_path, monkeypatch, capsys, spark):
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    code = main(["mask", str(repo / "contracts" / "sales.yaml"), "--input", str(tmp_path / "nope.csv"),
                 "--output", str(tmp_path / "o")])
    assert code == 2 and f"{tmp_path / 'nope.csv'}: no such file or directory" in capsys.readouterr().err


def test_scan_pii_against_a_contract_warns_and_proposes(spark, repo, capsys):
    code = main(["scan-pii", "--input", str(repo / "examples" / "data" / "customers.csv"),
                 "--contract", str(repo / "contracts" / "customers.yaml"), "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sampled_rows"] == report["total_rows"] == 7
    assert [(f["column"], f["pii_type"]) for f in report["findings"]] == [
        ("nome", "PERSON"), ("cpf", "BR_CPF"), ("email", "EMAIL_ADDRESS"), ("telefone", "PHONE_NUMBER"),
        ("data_nascimento", "DATE_OF_BIRTH"), ("cep", "ZIP_CODE")]
    assert report["warnings"] == []  # customers declares all of them
    # only the classification the CEP field lacks is proposed; nothing the author wrote is overridden
    patch = yaml.safe_load(report["patch"])
    assert patch == {"schema": {"fields": [{"name": "cep", "classification": "confidential"}]}}
    # no sampled value leaves in the report
    text = json.dumps(report)
    for raw in ("529.982.247-25", "ana@example.com", "98765-4321", "Ana Souza", "01310-100", "1990-04-12"):
        assert raw not in text


def test_scan_pii_flags_undeclared_pii(spark, repo, capsys):
    args = ["scan-pii", "--input", str(repo / "examples" / "data" / "customers.csv"),
            "--contract", str(repo / "contracts" / "sales.yaml")]
    assert main(args) == 0
    captured = capsys.readouterr()
    warnings = captured.err.strip().splitlines()
    assert len(warnings) == 5 and all(w.endswith("but is not in the contract [pii-undeclared]") for w in warnings)
    assert warnings[1].startswith(f"{repo / 'contracts' / 'sales.yaml'}: warning: column 'email' looks like PII "
                                  "(EMAIL_ADDRESS, confidence 0.93;")
    patch = captured.out[captured.out.index("# dqgov scan-pii"):]
    doc = yaml.safe_load(patch)
    assert [f["name"] for f in doc["schema"]["fields"]] == ["nome", "email", "telefone", "data_nascimento", "cep"]
    assert doc["schema"]["fields"][1] == {"name": "email", "pii": True, "classification": "restricted",
                                          "masking": "hmac", "format": "email"}  # hmac needs it to normalise
    assert main([*args, "--strict"]) == 1
    assert "dqgov: error: 5 PII column(s) undeclared" in capsys.readouterr().err


def test_scan_pii_write_edits_the_contract_keeping_comments(spark, repo, tmp_path, capsys):
    text = (repo / "contracts" / "customers.yaml").read_text()
    # the author forgot to declare the e-mail as PII
    text = text.replace(
        "    - name: email\n      type: string\n      format: email\n      pii: true\n      classification: restricted\n"
        "      masking: { method: partial, domain_only: true }\n",
        "    - name: email\n      type: string\n      format: email\n      pii: false\n",
    )
    contract_path = tmp_path / "customers.yaml"
    contract_path.write_text(text)
    code = main(["scan-pii", "--input", str(repo / "examples" / "data" / "customers.csv"),
                 "--contract", str(contract_path), "--write"])
    captured = capsys.readouterr()
    assert code == 0 and "wrote 2 change(s)" in captured.out  # email, and the CEP's missing classification
    assert "column 'email' looks like PII" in captured.err and "is not declared pii: true" in captured.err
    new_text = contract_path.read_text()
    assert new_text.startswith("# Customers of the seed lab")  # comments survive
    assert "    - name: email\n      classification: restricted\n      masking: hmac\n      type: string\n" \
           "      format: email\n      pii: true\n" in new_text
    email = Contract.model_validate(yaml.safe_load(new_text)).field("email")
    assert (email.pii, email.classification, email.masking.method) == (True, "restricted", "hmac")
    assert "    - name: cep\n      classification: confidential\n      type: string\n" in new_text
    assert new_text.count("\n") == text.count("\n") + 3


def test_scan_pii_write_appends_missing_columns(spark, repo, tmp_path, capsys):
    contract_path = tmp_path / "sales.yaml"
    shutil.copy(repo / "contracts" / "sales.yaml", contract_path)
    code = main(["scan-pii", "--input", str(repo / "examples" / "data" / "customers.csv"),
                 "--contract", str(contract_path), "--write"])
    assert code == 0
    contract = Contract.model_validate(yaml.safe_load(contract_path.read_text()))
    assert contract.column_names()[-5:] == ["nome", "email", "telefone", "data_nascimento", "cep"]
    assert contract.field("cep").masking.prefix_length == 5 and contract.field("cep").pii
    assert contract_path.read_text().startswith("# Sales lines")


def test_scan_pii_proposes_the_format_a_keyed_mask_needs(spark, repo, tmp_path, capsys):
    text = (repo / "contracts" / "customers.yaml").read_text()
    # the author left out the formats: hmac and tokenize would hash each spelling apart
    for fmt in ("cpf", "phone"):
        assert f"      format: {fmt}\n" in text
        text = text.replace(f"      format: {fmt}\n", "", 1)
    contract_path = tmp_path / "customers.yaml"
    contract_path.write_text(text)
    from dq_governance.contracts.lint import lint_path

    assert [(i.severity, i.field, i.message.split(":")[0]) for i in lint_path(contract_path)] == [
        ("warning", "schema.fields[2]", "cpf"), ("warning", "schema.fields[4]", "telefone")]
    args = ["scan-pii", "--input", str(repo / "examples" / "data" / "customers.csv"), "--contract", str(contract_path)]
    assert main([*args, "--json"]) == 0
    patch = yaml.safe_load(json.loads(capsys.readouterr().out)["patch"])
    assert patch == {"schema": {"fields": [{"name": "cpf", "format": "cpf"}, {"name": "telefone", "format": "phone"},
                                           {"name": "cep", "classification": "confidential"}]}}
    assert main([*args, "--write"]) == 0
    assert "wrote 3 change(s)" in capsys.readouterr().out
    written = contract_path.read_text()
    assert "    - name: cpf\n      format: cpf\n      type: string\n" in written
    assert lint_path(contract_path) == []  # the normalisation warnings are gone
    again = Contract.model_validate(yaml.safe_load(written))
    assert (again.field("cpf").format, again.field("telefone").format) == ("cpf", "phone")


def test_scan_pii_write_needs_a_contract(repo, capsys):
    code = main(["scan-pii", "--input", str(repo / "examples" / "data" / "customers.csv"), "--write"])
    assert code == 2 and "--write needs --contract" in capsys.readouterr().err

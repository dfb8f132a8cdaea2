"""`dqgov scan-pii` keeps the author's masking decisions, counts blanks as missing and names the columns it skips."""

from __future__ import annotations

import json

import pytest
import yaml

from dq_governance.cli import main
from dq_governance.contracts.model import Contract

pytestmark = pytest.mark.spark

CONTRACT = """contract:
  name: people
  version: "1.0.0"
dataset:
  name: people
  path: people.json
  format: json
schema:
  fields:
    - name: id
      type: long
    - name: email
      type: string
      format: email
      pii: true
      classification: restricted   # masked by the policy below (partial)
    - name: backup_email
      type: string
      format: email
      classification: restricted   # not declared pii, but masked by the same policy
    - name: contact
      type: string
masking:
  key_env: DQGOV_MASKING_KEY
  by_classification:
    restricted: { method: partial, domain_only: true }
"""


def _people(tmp_path, blanks: bool = False):
    """Ten rows: e-mails in every text column (`contact` blank from row 4 on with `blanks`), a struct of e-mails."""
    path = tmp_path / "people.json"
    rows = [{"id": i, "email": f"person{i}@example.com", "backup_email": f"backup{i}@example.com",
             "contact": "" if blanks and i >= 4 else f"user{i}@example.com",
             "cliente": {"mail": f"nested{i}@example.com"}} for i in range(10)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_write_keeps_the_masking_the_contract_already_decides(spark, tmp_path, capsys):
    """`email` is declared PII and masked by `by_classification`, `backup_email` is masked by it too: neither gets
    a `masking` (or anything else); only `contact`, unmasked and undeclared, gets pii, classification and masking.
    The struct `cliente`, not in the contract, is added with its type and its e-mail field under `fields`."""
    data = _people(tmp_path)
    contract_path = tmp_path / "people.yaml"
    contract_path.write_text(CONTRACT)
    assert main(["scan-pii", "--input", str(data), "--contract", str(contract_path), "--write"]) == 0
    captured = capsys.readouterr()
    assert "wrote 3 change(s)" in captured.out
    assert contract_path.read_text() == CONTRACT.replace(
        "    - name: backup_email\n", "    - name: backup_email\n      pii: true\n",
    ).replace(
        "    - name: contact\n      type: string\n",
        "    - name: contact\n      pii: true\n      classification: restricted\n      masking: hmac\n"
        "      format: email\n      type: string\n    - name: cliente\n      type: struct<mail:string>\n"
        "      fields:\n        - name: mail\n          pii: true\n          classification: restricted\n"
        "          masking: hmac\n          format: email\n",
    )
    written = Contract.model_validate(yaml.safe_load(contract_path.read_text()))
    assert (written.field("email").masking, written.field("backup_email").masking) == (None, None)
    assert written.pii_columns() == ["email", "backup_email", "contact", "cliente.mail"]


def test_a_column_masked_as_undeclared_is_proposed_pii_only(spark, tmp_path, capsys):
    """Under `undeclared_columns: mask` a column the contract does not list is masked by the PII default already:
    the patch declares it `pii: true` (same mask) and proposes no classification or masking to replace that. The
    struct `cliente`, masked whole the same way, is declared `pii: true` whole for its e-mail field."""
    data = _people(tmp_path)
    contract_path = tmp_path / "people.yaml"
    contract_path.write_text(CONTRACT.replace("schema:\n", "schema:\n  undeclared_columns: mask\n").replace(
        "    - name: contact\n      type: string\n", ""))
    assert main(["scan-pii", "--input", str(data), "--contract", str(contract_path), "--json"]) == 0
    patch = yaml.safe_load(json.loads(capsys.readouterr().out)["patch"])
    assert patch == {"schema": {"fields": [{"name": "backup_email", "pii": True},
                                           {"name": "cliente", "type": "struct<mail:string>", "pii": True},
                                           {"name": "contact", "pii": True, "format": "email"}]}}


def test_blank_values_do_not_dilute_the_hit_rate(spark, tmp_path, capsys):
    """4 e-mails and 6 empty strings: 100% of the 4 present values match (was 40% of 10, under the threshold)."""
    data = _people(tmp_path, blanks=True)
    assert main(["scan-pii", "--input", str(data), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    contact = [f for f in report["findings"] if f["column"] == "contact"]
    assert contact == [{"column": "contact", "pii_type": "EMAIL_ADDRESS", "confidence": 1.0, "hit_rate": 1.0,
                        "non_null": 4, "name_match": False}]


def test_struct_fields_are_scanned_and_arrays_named_as_not_scanned(spark, tmp_path, capsys):
    """Fields inside structs, at any depth, are scanned by dotted name; an array inside a struct is named as not
    scanned."""
    path = tmp_path / "nested.json"
    rows = [{"id": i, "cliente": {"mail": f"nested{i}@example.com", "doc": {"cpf": "529.982.247-25"},
                                  "telefones": ["11987654321"], "nota": "ok"}} for i in range(10)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["scan-pii", "--input", str(path)]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if "not scanned" in line] == [
        "not scanned: cliente.telefones (array)"]
    assert main(["scan-pii", "--input", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["not_scanned"] == [{"column": "cliente.telefones", "type": "array"}]
    found = [(f["column"], f["pii_type"], f["hit_rate"], f["non_null"], f["name_match"]) for f in report["findings"]]
    assert found == [("cliente.doc.cpf", "BR_CPF", 1.0, 10, True), ("cliente.mail", "EMAIL_ADDRESS", 1.0, 10, False)]

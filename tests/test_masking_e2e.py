"""Seed-lab customers end to end: check -> mask -> publish; masked CPFs still join customers to sales."""

from __future__ import annotations

import csv
import hashlib
import hmac
import re

import pytest
import yaml

from dq_governance.contracts.model import Contract
from dq_governance.masking import apply_masks

pytestmark = pytest.mark.spark

KEY = "e2e-masking-key-0123456789abcdef0123"


def h(value: str) -> str:
    return hmac.new(KEY.encode(), value.encode(), hashlib.sha256).hexdigest()


def load(repo, name):
    return Contract.model_validate(yaml.safe_load((repo / "contracts" / f"{name}.yaml").read_text()))


def rows(repo, name):
    with open(repo / "examples" / "data" / f"{name}.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def read_csv(spark, repo, name):
    return spark.read.option("header", True).csv(str(repo / "examples" / "data" / f"{name}.csv"))


def raw_pii(repo) -> set[str]:
    """Every raw CPF, e-mail and phone of customers.csv, as written and as digits only."""
    out = set()
    for row in rows(repo, "customers"):
        for column in ("cpf", "email", "telefone", "nome"):
            if row[column]:
                out.add(row[column])
                if column in ("cpf", "telefone"):
                    out.add(re.sub(r"\D", "", row[column]))
    return out


def test_join_on_masked_cpf_matches(spark, repo):
    customers = apply_masks(read_csv(spark, repo, "customers"), load(repo, "customers"), keys=KEY)
    sales = apply_masks(read_csv(spark, repo, "sales"), load(repo, "sales"), keys=KEY)
    pairs = sorted(
        (r.venda_id, r.cliente_id)
        for r in sales.alias("s").join(customers.alias("c"), "cpf").select("s.venda_id", "c.cliente_id").collect()
    )
    # 1001's CPF belongs to customers 101 and 107 (a duplicated CPF in the seed data); 1004 has no CPF
    assert pairs == [("1001", "101"), ("1001", "107"), ("1002", "102"), ("1003", "103"), ("1005", "105"),
                     ("1006", "106")]
    # punctuated in one file, bare in the other, same pseudonym
    assert customers.where("cliente_id = '101'").first().cpf == sales.where("venda_id = '1001'").first().cpf == h(
        "52998224725")


def test_masked_customers_carry_no_raw_pii(spark, repo):
    masked = apply_masks(read_csv(spark, repo, "customers"), load(repo, "customers"), keys=KEY).collect()
    values = {v for r in masked for v in r.asDict().values() if v is not None}
    assert values & raw_pii(repo) == set()
    by_id = {r.cliente_id: r for r in masked}
    assert by_id["101"].email == "***@example.com" and by_id["103"].email is None
    assert by_id["101"].nome == "[REDACTED]" and by_id["101"].data_nascimento == "1990"
    assert by_id["107"].data_nascimento is None  # "nao-sei" is not echoed
    assert by_id["101"].cep == "01310" and by_id["106"].cep == "3011"
    assert re.fullmatch(r"\+\d\d \d\d \d{5}-\d{4}", by_id["101"].telefone)


def test_check_mask_publish(spark, repo, tmp_path, monkeypatch):
    """The whole policy through the public API: curated and quarantine outputs hold pseudonyms only."""
    from dq_governance.api import run

    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    target, quarantine = tmp_path / "curated", tmp_path / "quarantine"
    contract = load(repo, "customers")
    # the seed data has 1 valid row in 7, below the contract's 0.5: lower the bar to reach publication
    contract = contract.model_copy(update={"quality": contract.quality.model_copy(update={"minimum_valid_ratio": 0.1})})
    result = run(read_csv(spark, repo, "customers"), contract, target=str(target),
                 quarantine=str(quarantine), report=str(tmp_path / "report"), lineage="none",
                 raise_on_block=False)
    assert result.published and result.masking == "applied"
    curated = spark.read.parquet(str(target))
    quarantined = spark.read.parquet(str(quarantine))
    assert curated.count() + quarantined.count() == 7
    found = set()
    for frame in (curated, quarantined):
        for row in frame.collect():
            for value in row.asDict(recursive=True).values():
                found |= {str(v) for v in (value if isinstance(value, list) else [value]) if v is not None}
    leaked = {v for v in raw_pii(repo) if any(v in text for text in found)}
    assert leaked == set()
    # published customers still join the masked sales on the masked CPF, to the same customer
    sales = apply_masks(read_csv(spark, repo, "sales"), load(repo, "sales"), keys=KEY)
    published = {str(r.cliente_id): r.cpf for r in curated.select("cliente_id", "cpf").collect()}
    expected = sorted(
        (s["venda_id"], s["cliente_id"]) for s in rows(repo, "sales")
        if s["cliente_id"] in published and s["cpf"]
    )
    joined = sorted(
        (r.venda_id, str(r.cliente_id))
        for r in sales.alias("s").join(curated.alias("c"), "cpf").select("s.venda_id", "c.cliente_id").collect()
    )
    assert expected and joined == expected
    assert all(cpf == h(re.sub(r"\D", "", next(c["cpf"] for c in rows(repo, "customers") if c["cliente_id"] == cid)))
               for cid, cpf in published.items())

"""Masking policies and keys: which columns are masked and how, where the key comes from (no Spark)."""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import sys

import pytest
import yaml

from dq_governance.contracts.model import Contract, MaskingPolicy
from dq_governance.errors import ConfigError, ContractError
from dq_governance.masking import (
    MaskingKey,
    effective_policy,
    load_policy_file,
    masked_columns,
    needs_key,
    resolve_key,
)

KEY = "unit-test-masking-key-0123456789abcdef"


def _contract(repo, name: str) -> Contract:
    return Contract.model_validate(yaml.safe_load((repo / "contracts" / f"{name}.yaml").read_text()))


def _mini(fields: list[dict], masking: dict | None = None) -> Contract:
    doc = {"contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"}, "schema": {"fields": fields}}
    if masking is not None:
        doc["masking"] = masking
    return Contract.model_validate(doc)


def test_masking_package_does_not_import_spark():
    code = (
        "import sys; from dq_governance.masking import masked_columns, resolve_key; "
        "from dq_governance.masking import proposals; "
        "sys.exit(1 if any(m.startswith('pyspark') for m in sys.modules) else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_customers_masked_columns(repo):
    specs = masked_columns(_contract(repo, "customers"))
    assert {k: v.method for k, v in specs.items()} == {
        "nome": "redact", "cpf": "hmac", "email": "partial", "telefone": "tokenize",
        "data_nascimento": "generalize", "cep": "generalize",
    }
    assert specs["email"].domain_only is True
    assert specs["data_nascimento"].granularity == "year"
    assert specs["cep"].prefix_length == 5
    assert needs_key(specs)


def test_sales_masks_only_the_cpf(repo):
    specs = masked_columns(_contract(repo, "sales"))
    assert {k: v.method for k, v in specs.items()} == {"cpf": "hmac"}


def test_orders_masks_its_email(repo):
    specs = masked_columns(_contract(repo, "orders"))
    assert {k: v.method for k, v in specs.items()} == {"email": "hmac"}


def test_nothing_to_mask_needs_no_key():
    specs = masked_columns(_mini([{"name": "a"}, {"name": "b", "classification": "public"}]))
    assert specs == {}
    assert not needs_key(specs)


def test_precedence_field_then_classification_then_pii_then_builtin():
    contract = _mini(
        [
            {"name": "own", "pii": True, "classification": "restricted", "masking": "redact"},
            {"name": "by_class", "classification": "restricted"},
            {"name": "pii_default", "pii": True, "classification": "unlisted"},
            {"name": "plain"},
            {"name": "opt_out", "pii": True, "masking": "none"},
        ],
        {"by_classification": {"restricted": {"method": "partial", "show_last": 2}}, "pii": "null"},
    )
    specs = masked_columns(contract)
    assert {k: v.method for k, v in specs.items()} == {"own": "redact", "by_class": "partial", "pii_default": "null"}
    assert specs["by_class"].show_last == 2


def test_pii_without_any_policy_defaults_to_hmac():
    specs = masked_columns(_mini([{"name": "cpf", "pii": True}, {"name": "x"}]))
    assert {k: v.method for k, v in specs.items()} == {"cpf": "hmac"}


def test_nested_paths_and_a_masked_struct_hides_its_children():
    contract = _mini([
        {"name": "contact", "type": "struct<email:string,phone:string>", "fields": [
            {"name": "email", "pii": True, "masking": "hmac"}, {"name": "phone"}]},
        {"name": "blob", "type": "struct<a:string>", "masking": "null", "fields": [{"name": "a", "pii": True}]},
    ])
    assert {k: v.method for k, v in masked_columns(contract).items()} == {"contact.email": "hmac", "blob": "null"}


def test_project_policy_under_contract_policy():
    project = MaskingPolicy.model_validate(
        {"key_env": "PROJECT_KEY", "key_id": "p1", "pii": "redact",
         "by_classification": {"restricted": "hmac", "internal": "null"}}
    )
    contract = _mini(
        [{"name": "a", "classification": "internal"}, {"name": "b", "classification": "restricted"},
         {"name": "c", "pii": True}],
        {"key_id": "c7", "by_classification": {"restricted": "tokenize"}},
    )
    merged = effective_policy(contract, project)
    assert merged.key_env == "PROJECT_KEY" and merged.key_id == "c7"
    specs = masked_columns(contract, project)
    assert {k: v.method for k, v in specs.items()} == {"a": "null", "b": "tokenize", "c": "redact"}


def test_load_policy_file(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text("masking:\n  key_env: ORG_KEY\n  pii: redact\n")
    policy = load_policy_file(path)
    assert policy.key_env == "ORG_KEY" and policy.pii.method == "redact"
    path.write_text("masking:\n  pii: scramble\n")
    with pytest.raises(ContractError) as err:
        load_policy_file(path)
    assert str(err.value).startswith(f"{path}: pii.method:")
    path.write_bytes(b"masking:\n  pii: r\xe9dact\n")
    with pytest.raises(ContractError) as err:
        load_policy_file(path)
    assert str(err.value) == f"{path}: masking policy is not UTF-8 text"


# --------------------------------------------------------------------------- keys


def test_key_from_default_env(monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    key = resolve_key(MaskingPolicy(key_id="k1"))
    assert key.key_id == "k1"
    assert key.hmac_hex("x") == hmac.new(KEY.encode(), b"x", hashlib.sha256).hexdigest()


def test_key_from_named_env_and_file(monkeypatch, tmp_path):
    monkeypatch.delenv("DQGOV_MASKING_KEY", raising=False)
    monkeypatch.setenv("OTHER_KEY", KEY + "-other")
    assert resolve_key(MaskingPolicy(key_env="OTHER_KEY")).hmac_hex("x") == hmac.new(
        (KEY + "-other").encode(), b"x", hashlib.sha256).hexdigest()
    key_file = tmp_path / "k.key"
    key_file.write_bytes(KEY.encode() + b"\n")  # the trailing newline is not key material
    by_file = resolve_key(MaskingPolicy(key_file="k.key", key_id="f1"), base_dir=tmp_path)
    assert by_file.hmac_hex("x") == hmac.new(KEY.encode(), b"x", hashlib.sha256).hexdigest()
    monkeypatch.setenv("DQGOV_MASKING_KEY_FILE", str(key_file))
    assert resolve_key().hmac_hex("y") == hmac.new(KEY.encode(), b"y", hashlib.sha256).hexdigest()


def test_missing_key_is_a_clear_config_error(monkeypatch, tmp_path):
    monkeypatch.delenv("DQGOV_MASKING_KEY", raising=False)
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)
    with pytest.raises(ConfigError, match="masking key missing: set env var DQGOV_MASKING_KEY"):
        resolve_key()
    with pytest.raises(ConfigError, match="cannot read key file"):
        resolve_key(MaskingPolicy(key_file=str(tmp_path / "absent.key")))


def test_short_key_refused_without_echoing_it(monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", "short-secret")
    with pytest.raises(ConfigError) as err:
        resolve_key()
    assert "short-secret" not in str(err.value)
    assert "12 bytes" in str(err.value)


def test_key_repr_and_fingerprint_hide_the_secret():
    key = MaskingKey.from_secret(KEY)
    assert KEY not in repr(key) and KEY not in str(key)
    assert key.key_id.startswith("fp-") and len(key.key_id) == 15
    assert key.key_id == MaskingKey.from_secret(KEY).key_id != MaskingKey.from_secret(KEY + "2").key_id


def test_pads_follow_rfc2104():
    key = MaskingKey.from_secret(KEY)
    ipad, opad = key.pads()
    inner = hashlib.sha256(ipad + b"msg").digest()
    assert hashlib.sha256(opad + inner).hexdigest() == hmac.new(KEY.encode(), b"msg", hashlib.sha256).hexdigest()
    long_key = MaskingKey.from_secret("k" * 100)  # longer than a block: hashed first
    ipad, opad = long_key.pads()
    inner = hashlib.sha256(ipad + b"msg").digest()
    assert hashlib.sha256(opad + inner).hexdigest() == hmac.new(b"k" * 100, b"msg", hashlib.sha256).hexdigest()

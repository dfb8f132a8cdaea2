"""Failed-row samples (API and `dqgov check --show-failed`): masked like the outputs, never raw PII."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from dq_governance.errors import ConfigError

pytestmark = pytest.mark.spark

KEY = "sample-masking-key-0123456789abcdef"
RAW_CPFS = {"529.982.247-25", "11144477735", "390.533.447-05", "123.456.789-00", "98765432100", "246.813.579-28"}


def _customers(spark, repo):
    return spark.read.option("header", True).csv(str(repo / "examples" / "data" / "customers.csv"))


def _hmac(value: str) -> str:
    return hmac.new(KEY.encode(), value.encode(), hashlib.sha256).hexdigest()


def test_sample_is_masked_and_annotated(spark, repo, monkeypatch):
    from dq_governance import check

    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    result = check(_customers(spark, repo), str(repo / "contracts" / "customers.yaml"))
    try:
        rows = result.failed_sample(limit=10)
        assert sorted(r["cliente_id"] for r in rows) == ["101", "103", "104", "105", "106", "107"]
        by_id = {r["cliente_id"]: r for r in rows}
        assert by_id["101"]["cpf"] == by_id["107"]["cpf"] == _hmac("52998224725")  # same person, same pseudonym
        assert by_id["101"]["nome"] == "[REDACTED]" and by_id["104"]["email"] == "***@example"
        assert by_id["105"]["_dq_errors"] == ["telefone_format", "segmento_allowed_values"]
        assert by_id["105"]["_dq_warnings"] == ["invalid_phone"]
        shown = json.dumps(rows, default=str)
        assert not any(cpf in shown for cpf in RAW_CPFS) and "Ana Souza" not in shown
        # one rule's rows, warn rules included; the limit holds
        assert [r["cliente_id"] for r in result.failed_sample(rule="invalid_phone")] == ["105"]
        assert len(result.failed_sample(limit=2)) == 2 and result.failed_sample(limit=0) == []
        with pytest.raises(ConfigError, match="no rule named 'nope' in contract customers"):
            result.failed_sample(rule="nope")
        monkeypatch.delenv("DQGOV_MASKING_KEY")
        with pytest.raises(ConfigError, match="masking key missing"):
            result.failed_sample()
    finally:
        result.release()


def test_counts_mode_keeps_no_rows(spark, repo):
    from dq_governance.checks.engine import evaluate
    from dq_governance.contracts.load import load_contract

    result = evaluate(_customers(spark, repo), load_contract(repo / "contracts" / "customers.yaml"), mode="counts")
    with pytest.raises(ConfigError, match="only kept by a split check"):
        result.failed_sample()


def test_cli_show_failed(spark, repo, tmp_path, capsys, monkeypatch):
    from dq_governance.cli import main

    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    args = ["check", str(repo / "contracts" / "customers.yaml"), "--input", str(repo / "examples/data/customers.csv"),
            "--output", str(tmp_path / "valid"), "--quarantine", str(tmp_path / "quarantine"),
            "--report", str(tmp_path / "report"), "--lineage", "none", "--show-failed", "3"]
    assert main([*args, "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert len(summary["failed_sample"]) == 3
    assert all(len(r["cpf"]) == 64 and r["_dq_errors"] for r in summary["failed_sample"])
    assert not any(cpf in json.dumps(summary) for cpf in RAW_CPFS)
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "failed rows (first 3, PII masked):" in out
    assert not any(cpf in out for cpf in RAW_CPFS)

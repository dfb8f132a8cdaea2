"""The example contracts on their CSV data (read as strings): every count is known by hand."""

from __future__ import annotations

import pytest
import yaml

from dq_governance.contracts.model import Contract

pytestmark = pytest.mark.spark


def _load(repo, name):
    return Contract.model_validate(yaml.safe_load((repo / "contracts" / f"{name}.yaml").read_text()))


def _read(spark, repo, name):
    return spark.read.option("header", "true").csv(str(repo / "examples" / "data" / f"{name}.csv"))


def _failed(result):
    return {rule.name: rule.failed_count for rule in result.rules if rule.failed_count}


@pytest.mark.parametrize("mode", ["split", "counts"])
def test_seed_lab_orders(spark, repo, mode):
    from dq_governance.checks.engine import evaluate

    result = evaluate(_read(spark, repo, "orders"), _load(repo, "orders"), mode=mode)
    try:
        assert (result.total_rows, result.valid_rows, result.invalid_rows) == (7, 1, 6)
        assert result.quality_score == pytest.approx(1 / 7)
        counts = {r.name: r.failed_count for r in result.rules}
        assert counts["pedido_id_not_null"] == 0
        assert counts["cliente_id_not_null"] == 1
        assert counts["status_allowed_values"] == 1
        assert counts["valor_range"] == 1
        assert counts["data_pedido_type"] == 1
        assert counts["pedido_id_unique"] == 2
        # A malformed date is a type violation only, not also a missing value.
        assert _failed(result) == {"pedido_id_unique": 2, "cliente_id_not_null": 1, "status_allowed_values": 1,
                                   "valor_range": 1, "data_pedido_type": 1}
        assert result.rule("row_count").passed and result.rule("row_count").metric_value == 7
        assert not result.gate.passed and result.status == "failed"
        assert result.gate.reasons == ["valid ratio 0.1429 is below minimum_valid_ratio 0.99"]
        if mode == "counts":
            assert result.valid_df is None and result.annotated_df is None
    finally:
        result.release()


def test_seed_lab_outputs(spark, repo):
    from dq_governance.checks.engine import evaluate

    result = evaluate(_read(spark, repo, "orders"), _load(repo, "orders"))
    try:
        valid = result.valid_df.collect()
        quarantine = {(r["pedido_id"], tuple(r["_dq_errors"])) for r in result.quarantine_df.collect()}
        assert len(valid) + result.quarantine_df.count() == result.total_rows == result.annotated_df.count() == 7
        assert [r["pedido_id"] for r in valid] == [1]
        assert dict(result.valid_df.dtypes) == {"pedido_id": "bigint", "cliente_id": "bigint", "status": "string",
                                                "valor": "decimal(12,2)", "data_pedido": "date", "email": "string"}
        assert result.valid_df.columns == ["pedido_id", "cliente_id", "status", "valor", "data_pedido", "email"]
        assert quarantine == {("2", ("pedido_id_unique",)), ("3", ("cliente_id_not_null",)),
                              ("4", ("status_allowed_values",)), ("5", ("valor_range",)),
                              ("6", ("data_pedido_type",))}
        raw = result.quarantine_df.where("pedido_id = '6'").first()
        assert raw["data_pedido"] == "data-invalida" and raw["valor"] == "80.00"  # original text kept
        assert result.quarantine_df.columns[-2:] == ["_dq_errors", "_dq_warnings"]
        assert result.annotated_df.where("size(_dq_warnings) > 0").count() == 0
        metrics = result.column_metrics
        assert (metrics["cliente_id"].null_count, metrics["cliente_id"].count) == (1, 6)
        assert (metrics["valor"].min, metrics["valor"].max, metrics["valor"].sum) == (-100.0, 230.0, 739.9)
        assert metrics["email"].min is None  # PII: no value-revealing metrics
    finally:
        result.release()
    assert not result.cached


@pytest.mark.parametrize("mode", ["split", "counts"])
def test_customers(spark, repo, mode):
    from dq_governance.checks.engine import evaluate

    result = evaluate(_read(spark, repo, "customers"), _load(repo, "customers"), mode=mode)
    try:
        assert (result.total_rows, result.valid_rows, result.invalid_rows) == (7, 1, 6)
        assert _failed(result) == {
            "cpf_unique": 2,  # 101 and 107 share a CPF
            "cpf_format": 1,  # 123.456.789-00: wrong check digit
            "email_format": 1,  # davi@example
            "telefone_format": 1,  # 12345
            "data_nascimento_type": 1,  # nao-sei
            "cep_regex": 1,  # 3011
            "segmento_allowed_values": 1,  # GOLD
            "limite_credito_range": 1,  # -5.00
            "atualizado_em_type": 1,  # ontem
            "missing_email": 1,  # 103 has no e-mail
            "invalid_phone": 1,
            "premium_needs_credit": 1,  # 106: PREMIUM with 200.00
            "nome_length": 1,  # Gi
        }
        missing = result.rule("missing_email")
        assert (missing.passed, missing.status, missing.threshold) == (True, "warned", "warn = 0")
        assert missing.metric_value == pytest.approx(100 / 7)
        phone = result.rule("invalid_phone")
        assert (phone.passed, phone.status, phone.severity, phone.metric_value) == (True, "passed", "warn", 1.0)
        assert result.rule("limite_credito_avg").metric_value == pytest.approx(23295 / 7)
        assert result.rule("nome_data_nascimento_duplicate_count").failed_count == 0
        assert result.rule("schema").passed and result.rule("volume_sla").passed
        assert result.rule("freshness_sla").passed
        pii = result.rule("pii_undeclared")  # every PII-looking column is declared
        assert (pii.status, pii.metric_value, pii.message) == ("passed", 0.0, "no undeclared PII in 7 sampled row(s)")
        assert not result.gate.passed  # 1/7 valid < 0.5
        if mode == "split":
            rows = {r["cliente_id"]: (r["_dq_errors"], r["_dq_warnings"]) for r in result.quarantine_df.collect()}
            assert rows["105"] == (["telefone_format", "segmento_allowed_values"], ["invalid_phone"])
            assert rows["103"] == (["missing_email"], [])
            assert sorted(rows) == ["101", "103", "104", "105", "106", "107"]
    finally:
        result.release()


def test_sales_foreign_key_reconcile_sql(spark, repo, monkeypatch):
    from dq_governance.checks.engine import evaluate

    monkeypatch.chdir(repo)  # the contract's reference paths are relative to the project
    result = evaluate(_read(spark, repo, "sales"), _load(repo, "sales"))
    try:
        assert (result.total_rows, result.valid_rows, result.invalid_rows) == (6, 3, 3)
        assert _failed(result) == {"cliente_id_foreign_key": 1, "produto_regex": 1, "quantidade_range": 1}
        reconcile = result.rule("reconcile")
        assert (reconcile.passed, reconcile.metric_value) == (True, 0.0)
        assert result.rule("one_sale_per_day_at_least").passed
        assert result.rule("one_sale_per_day_at_least").content.startswith("SELECT COUNT(DISTINCT")
        assert result.rule("valor_total_sum").metric_value == 780.0
        assert result.rule("row_count").metric_value == 6.0
        assert result.gate.passed and result.status == "warned"  # quarantine policy: rows routed, run goes on
        assert sorted(r["venda_id"] for r in result.quarantine_df.collect()) == ["1004", "1005", "1006"]
        assert not [t for t in spark.catalog.listTables() if t.name.startswith("_validation_df")]
    finally:
        result.release()

"""`dq_governance.run` end to end on the seed data: each policy's exact counts, the gate, staging, report."""

from __future__ import annotations

import pytest

import _publish_fixtures as fx
import dq_governance
from dq_governance.contracts.load import load_contract
from dq_governance.errors import ConfigError, GateFailedError
from dq_governance.publish.report import read_history

pytestmark = pytest.mark.spark


@pytest.fixture(autouse=True)
def masking_key(monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", "test-only-masking-key-0123456789")


@pytest.fixture(scope="module")
def orders_df(spark, repo):
    return spark.read.option("header", True).csv(str(repo / "examples/data/orders.csv"))


@pytest.fixture(scope="module")
def seed(repo):
    return load_contract(repo / "contracts/orders.yaml")


def _policy(contract, on_failure, ratio=None, extra_rules=()):
    quality = contract.quality.model_copy(update={
        "on_failure": on_failure, "minimum_valid_ratio": ratio, "rules": [*contract.quality.rules, *extra_rules]})
    return contract.model_copy(update={"quality": quality})


def _outs(tmp_path):
    return {"target": str(tmp_path / "valid"), "quarantine": str(tmp_path / "quarantine"),
            "report": str(tmp_path / "report")}


def _count(spark, path):
    return spark.read.parquet(path).count()


def _dispositions(spark, path):
    rows = spark.read.parquet(path).groupBy("_dq_disposition").count().collect()
    return {r["_dq_disposition"]: r["count"] for r in rows}


def test_seed_lab_blocks_and_leaves_existing_target_untouched(spark, orders_df, seed, tmp_path):
    outs = _outs(tmp_path)
    first = dq_governance.run(orders_df, _policy(seed, "quarantine"), run_id="run-a", **outs)
    assert first.published and _count(spark, outs["target"]) == 1
    before = fx.tree(outs["target"])

    with pytest.raises(GateFailedError, match="valid ratio 0.1429 is below minimum_valid_ratio 0.99") as caught:
        dq_governance.run(orders_df, seed, run_id="run-b", **outs)
    result = caught.value.result
    assert (result.total_rows, result.valid_rows, result.invalid_rows) == (7, 1, 6)
    assert result.quality_score == pytest.approx(1 / 7)
    assert not result.published and result.status == "failed"
    assert fx.tree(outs["target"]) == before  # byte for byte
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quarantine", "report", "valid"]  # no staging left
    # block_publication keeps the evidence: run-b's six rows, marked blocked, beside run-a's
    assert _dispositions(spark, outs["quarantine"]) == {"quarantined": 6, "blocked": 6}
    history = read_history(outs["report"], spark=spark)
    assert history.count() == 2 * len(result.rules)
    row = history.where("run_id = 'run-b' AND check_name = 'pedido_id_unique'").first()
    assert (row["failed_count"], row["passed"], row["published"], row["run_status"]) == (2, False, False, "failed")


def test_quarantine_policy(spark, orders_df, seed, tmp_path):
    outs = _outs(tmp_path)
    result = dq_governance.run(orders_df, _policy(seed, "quarantine"), **outs)
    assert result.published and result.gate.publish
    assert _count(spark, outs["target"]) == 1 and _count(spark, outs["quarantine"]) == 6
    assert _dispositions(spark, outs["quarantine"]) == {"quarantined": 6}
    kinds = {o["kind"]: o["rows"] for o in result.outputs}
    assert kinds == {"target": 1, "quarantine": 6}
    target = spark.read.parquet(outs["target"])
    assert target.schema.simpleString() == (
        "struct<pedido_id:bigint,cliente_id:bigint,status:string,valor:decimal(12,2),data_pedido:date,email:string>")
    only = target.first()
    assert only["pedido_id"] == 1 and only["email"] != "ana@example.com"  # masked (hmac)
    quarantined = spark.read.parquet(outs["quarantine"])
    assert "bruno@example.com" not in {r["email"] for r in quarantined.collect()}
    assert {r["data_pedido"] for r in quarantined.collect()} >= {"data-invalida"}  # raw value kept


def test_warn_policy_writes_all_rows(spark, orders_df, seed, tmp_path):
    outs = _outs(tmp_path)
    result = dq_governance.run(orders_df, _policy(seed, "warn", ratio=0.99), **outs)
    assert result.published and result.status == "warned"
    assert _count(spark, outs["target"]) == 7
    assert _dispositions(spark, outs["quarantine"]) == {"published": 6}
    dates = {r["pedido_id"]: r["data_pedido"] for r in spark.read.parquet(outs["target"]).collect()}
    assert dates[6] is None  # 'data-invalida' has no date; the quarantine keeps the text


def test_skip_policy_writes_all_rows(spark, orders_df, seed, tmp_path):
    outs = _outs(tmp_path)
    result = dq_governance.run(orders_df, _policy(seed, "skip", ratio=0.99), **outs)
    assert result.published and _count(spark, outs["target"]) == 7


def test_drop_action_under_warn(spark, orders_df, seed, tmp_path):
    from dq_governance.contracts.model import ExpressionRule

    drop = ExpressionRule(type="expression", name="no_refunds", expression="valor >= 0", action="drop")
    outs = _outs(tmp_path)
    result = dq_governance.run(orders_df, _policy(seed, "warn", extra_rules=[drop]), **outs)
    assert result.rule("no_refunds").failed_count == 1
    assert _count(spark, outs["target"]) == 6  # order 5 (-100.00) is dropped, the rest written
    assert _dispositions(spark, outs["quarantine"]) == {"dropped": 1, "published": 5}


def test_a_rules_own_drop_action_routes_its_rows_under_the_fail_policy(spark, tmp_path):
    """Under `on_failure: fail` a failed row rule blocks, unless its own `action` says what to do with its rows."""
    df = spark.createDataFrame([(1, 10.0), (2, -5.0), (3, None)], "id long, valor double")

    def contract(action: str | None) -> dict:
        rule = {"type": "expression", "name": "no_refunds", "expression": "valor >= 0"}
        return {"contract": {"name": "refunds", "version": "1.0.0"}, "dataset": {"name": "refunds"},
                "schema": {"fields": [{"name": "id", "type": "long"}, {"name": "valor", "type": "double"}]},
                "quality": {"on_failure": "fail", "rules": [{**rule, "action": action} if action else rule]}}

    outs = _outs(tmp_path / "drop")
    result = dq_governance.run(df, load_contract(contract("drop")), **outs)
    assert (result.published, result.rule("no_refunds").failed_count) == (True, 1)
    assert sorted(r.id for r in spark.read.parquet(outs["target"]).collect()) == [1, 3]
    assert _dispositions(spark, outs["quarantine"]) == {"dropped": 1}
    with pytest.raises(GateFailedError, match="row rule no_refunds failed on 1 row"):
        dq_governance.run(df, load_contract(contract(None)), **_outs(tmp_path / "policy"))


def test_fail_policy_writes_nothing_but_the_report(spark, orders_df, seed, tmp_path):
    outs = _outs(tmp_path)
    with pytest.raises(GateFailedError, match="row rule pedido_id_unique failed on 2 row"):
        dq_governance.run(orders_df, _policy(seed, "fail"), **outs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
    assert read_history(outs["report"], spark=spark).where("published").count() == 0


def test_block_publication_without_raise(spark, orders_df, seed, tmp_path):
    outs = _outs(tmp_path)
    result = dq_governance.run(orders_df, _policy(seed, "block_publication"), raise_on_block=False, **outs)
    assert not result.published and not (tmp_path / "valid").exists()
    assert _dispositions(spark, outs["quarantine"]) == {"blocked": 6}


def test_empty_dataset(spark, seed, tmp_path):
    empty = spark.createDataFrame([], ", ".join(f"{c} string" for c in seed.column_names()))
    outs = _outs(tmp_path)
    with pytest.raises(GateFailedError, match="row_count") as caught:
        dq_governance.run(empty, seed, **outs)  # row_count must_be >= 1 fails: a dataset rule blocks
    assert caught.value.result.total_rows == 0 and caught.value.result.quality_score is None
    assert not (tmp_path / "valid").exists()
    no_count = seed.model_copy(update={"quality": seed.quality.model_copy(update={"rules": [], "on_failure": "quarantine"})})
    result = dq_governance.run(empty, no_count, **outs)
    assert result.published and spark.read.parquet(outs["target"]).count() == 0


def test_nulls_in_unique_keys_are_not_duplicates(spark, seed, tmp_path):
    rows = [(None, "a"), (None, "b"), ("1", "c"), ("1", "d"), ("2", "e")]
    df = spark.createDataFrame(rows, "k string, v string")
    contract = fx.Contract.model_validate({
        "contract": {"name": "keys", "version": "1.0.0"}, "dataset": {"name": "keys"},
        "schema": {"fields": [{"name": "k", "type": "long", "unique": True}, {"name": "v"}]},
    })
    outs = _outs(tmp_path)
    result = dq_governance.run(df, contract, **outs)
    assert result.rule("k_unique").failed_count == 2
    assert sorted(r["v"] for r in spark.read.parquet(outs["target"]).collect()) == ["a", "b", "e"]
    assert sorted(r["v"] for r in spark.read.parquet(outs["quarantine"]).collect()) == ["c", "d"]


def test_missing_masking_key_fails_before_any_write(spark, orders_df, seed, tmp_path, monkeypatch):
    monkeypatch.delenv("DQGOV_MASKING_KEY")
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)
    with pytest.raises(ConfigError, match="masking key missing"):
        dq_governance.run(orders_df, _policy(seed, "quarantine"), **_outs(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_no_mask_publishes_raw_and_says_so(spark, orders_df, seed, tmp_path, monkeypatch):
    monkeypatch.delenv("DQGOV_MASKING_KEY")
    outs = _outs(tmp_path)
    result = dq_governance.run(orders_df, _policy(seed, "quarantine"), mask=False, **outs)
    assert spark.read.parquet(outs["target"]).first()["email"] == "ana@example.com"
    assert {r["masking"] for r in read_history(outs["report"], spark=spark).collect()} == {"disabled"}
    assert result.masking == "disabled"


def test_report_is_idempotent_for_the_same_run_id(spark, orders_df, seed, tmp_path):
    outs = _outs(tmp_path)
    contract = _policy(seed, "quarantine")
    dq_governance.run(orders_df, contract, run_id="same", **outs)
    dq_governance.run(orders_df, contract, run_id="same", **outs)
    rules = len(contract.check_rules())  # what a check evaluates: rules() plus the derived undeclared_columns
    assert read_history(outs["report"], spark=spark).count() == rules
    assert _count(spark, outs["quarantine"]) == 6  # the run's quarantine partition was replaced, not doubled


def test_report_rows_hold_no_pii_values(spark, repo):
    from dq_governance.api import check

    df = spark.read.option("header", True).csv(str(repo / "examples/data/customers.csv"))
    contract = load_contract(repo / "contracts/customers.yaml")
    result = check(df, contract)
    try:
        text = repr(result.report_rows()) + repr(result.summary())
        for row in df.collect():
            for column in contract.pii_columns():
                value = row[column]
                if value and len(value) > 3:
                    assert value not in text, f"{column} value leaked into the report"
    finally:
        result.release()


def test_merge_on_parquet_is_refused_before_work(orders_df, seed, tmp_path):
    with pytest.raises(ConfigError, match="mode merge needs format delta"):
        dq_governance.run(orders_df, seed, mode="merge", merge_keys=["pedido_id"], **_outs(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_check_on_any_dataframe(spark, orders_df, repo):
    result = dq_governance.check(orders_df.where("pedido_id <> '6'"), str(repo / "contracts/orders.yaml"))
    try:
        assert (result.total_rows, result.valid_rows) == (6, 1)
        assert result.valid_df.count() == 1 and result.quarantine_df.count() == 5
        assert result.contract_location == str(repo / "contracts/orders.yaml")
        assert len(result.report_rows()) == len(result.rules)
    finally:
        result.release()


ITEMS = {
    "contract": {"name": "items", "version": "2.0.0"}, "dataset": {"name": "items"},
    "schema": {"fields": [{"name": "id", "type": "long", "required": True}, {"name": "v", "type": "string"}]},
}


def _items(spark, rows):
    return spark.createDataFrame(rows, "id string, v string")


def _quarantined(spark, path):
    return sorted((r["_dq_run_id"], r["id"], r["_dq_disposition"]) for r in spark.read.parquet(path).collect())


def test_append_schema_mismatch_publishes_nothing_not_even_the_quarantine(spark, tmp_path):
    from dq_governance.contracts.model import Contract
    from dq_governance.errors import InputDataError

    outs = _outs(tmp_path)
    spark.createDataFrame([(9, 1)], "id long, v int").write.parquet(outs["target"])  # an older contract's data
    target_before = fx.tree(outs["target"])
    with pytest.raises(InputDataError, match=r"cannot append to .*/valid: schema differs from the existing data"):
        dq_governance.run(_items(spark, [("1", "a"), (None, "bad")]), Contract.model_validate(ITEMS), mode="append",
                          run_id="r1", **outs)
    assert fx.tree(outs["target"]) == target_before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["valid"]  # no quarantine, no report, no staging


def test_failed_target_promotion_removes_the_runs_quarantine(spark, tmp_path, monkeypatch):
    from dq_governance.contracts.model import Contract
    from dq_governance.publish import writer
    from dq_governance.session import CLASSIC

    outs, contract = _outs(tmp_path), Contract.model_validate(ITEMS)
    dq_governance.run(_items(spark, [("1", "a"), (None, "r0-bad")]), contract, run_id="r0", **outs)
    dq_governance.run(_items(spark, [("1", "a"), (None, "r1-bad")]), contract, run_id="r1", **outs)
    assert _quarantined(spark, outs["quarantine"]) == [("r0", None, "quarantined"), ("r1", None, "quarantined")]
    target_before = fx.tree(outs["target"])
    promote_parquet = writer._PROMOTERS[(CLASSIC, "parquet")]

    def failing(staged):
        if staged.output.location == outs["target"]:
            raise OSError("disk full")
        promote_parquet(staged)

    monkeypatch.setitem(writer._PROMOTERS, (CLASSIC, "parquet"), failing)
    with pytest.raises(OSError, match="disk full"):  # a new run r2: its quarantine is promoted, then the target fails
        dq_governance.run(_items(spark, [("2", "b"), (None, "r2-bad")]), contract, run_id="r2", **outs)
    assert fx.tree(outs["target"]) == target_before
    assert _quarantined(spark, outs["quarantine"]) == [("r0", None, "quarantined"), ("r1", None, "quarantined")]
    assert sorted(p.name for p in (tmp_path / "quarantine").iterdir() if p.is_dir()) == [
        "_dq_run_id=r0", "_dq_run_id=r1"]
    # r1 retried: its partition holds the published attempt's rows, so the target goes first and its failure leaves
    # them as they were (replaced, then removed, they could not be put back)
    with pytest.raises(OSError, match="disk full"):
        dq_governance.run(_items(spark, [("2", "b"), (None, "r1-retry")]), contract, run_id="r1", **outs)
    assert fx.tree(outs["target"]) == target_before
    assert sorted(r["v"] for r in spark.read.parquet(outs["quarantine"]).collect()) == ["r0-bad", "r1-bad"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".dqgov-staging")]


def test_a_retry_with_a_colon_in_the_run_id_replaces_its_quarantine(spark, tmp_path):
    from dq_governance.contracts.model import Contract

    outs, contract, run_id = _outs(tmp_path), Contract.model_validate(ITEMS), "2026-01-01T00:00:00Z"
    dq_governance.run(_items(spark, [("1", "a"), (None, "bad")]), contract, run_id=run_id, **outs)
    assert [p.name for p in (tmp_path / "quarantine").iterdir() if p.is_dir()] == [
        "_dq_run_id=2026-01-01T00%3A00%3A00Z"]
    retry = dq_governance.run(_items(spark, [("1", "a"), ("2", "fixed")]), contract, run_id=run_id, **outs)
    assert (retry.valid_rows, retry.invalid_rows) == (2, 0)
    assert _count(spark, outs["target"]) == 2
    assert [p.name for p in (tmp_path / "quarantine").iterdir() if p.is_dir()] == []  # the first attempt's row left


def test_an_orchestrator_run_id_publishes_and_a_bad_one_is_refused_before_any_work(spark, tmp_path):
    from dq_governance.contracts.model import Contract

    outs, contract = _outs(tmp_path), Contract.model_validate(ITEMS)
    frame = _items(spark, [("1", "a"), (None, "bad")])
    for bad in ("a/b", "run*1", "run[1]", ".hidden", "x" * 129, "tab\there", "50%"):
        with pytest.raises(ConfigError, match="run id .*: use 1-128 characters"):
            dq_governance.run(frame, contract, run_id=bad, **outs)
        assert list(tmp_path.iterdir()) == []  # nothing staged, nothing written
    airflow = "scheduled__2026-01-01T00:00:00+00:00"
    result = dq_governance.run(frame, contract, run_id=airflow, **outs)
    assert result.published and _count(spark, outs["target"]) == 1
    assert _quarantined(spark, outs["quarantine"]) == [(airflow, None, "quarantined")]
    assert [p.name for p in (tmp_path / "quarantine").iterdir() if p.is_dir()] == [
        "_dq_run_id=scheduled__2026-01-01T00%3A00%3A00+00%3A00"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quarantine", "report", "valid"]

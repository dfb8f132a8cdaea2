"""Lakeflow-style decorators: expect / expect_or_drop / expect_or_fail / expect_all / contract on the same engine,
and the same masks as run()."""

from __future__ import annotations

import hashlib
import hmac

import pytest

import dq_governance
from dq_governance.contracts.model import Contract
from dq_governance.errors import ConfigError, ContractError, GateFailedError

pytestmark = pytest.mark.spark

ROWS = [(1, 101, 150.0), (2, None, 20.0), (3, 103, -5.0), (4, 104, 0.0)]
KEY = "decorator-masking-key-0123456789abcdef"
# cpf: hmac of the digits (format cpf); email: no masking of its own, so pii's default, hmac of lower(trim)
PEOPLE = Contract.model_validate({
    "contract": {"name": "people", "version": "1.0.0"}, "dataset": {"name": "people"},
    "schema": {"fields": [
        {"name": "id", "type": "long", "required": True},
        {"name": "cpf", "type": "string", "format": "cpf", "pii": True, "masking": "hmac"},
        {"name": "email", "type": "string", "format": "email", "pii": True},
    ]},
    "quality": {"on_failure": "quarantine"},
})
PEOPLE_ROWS = [("1", "529.982.247-25", "Ana@Example.com"), ("2", "11144477735", "bruno@example.com"),
               (None, "390.533.447-05", "carla@example.com")]


def h(value: str) -> str:
    return hmac.new(KEY.encode(), value.encode(), hashlib.sha256).hexdigest()


@pytest.fixture()
def orders_frame(spark):
    return lambda: spark.createDataFrame(ROWS, "pedido_id long, cliente_id long, valor double")


def test_expect_keeps_rows_and_expect_or_drop_leaves_them_out(orders_frame):
    @dq_governance.expect("non_negative", "valor >= 0")
    @dq_governance.expect_or_drop("has_customer", "cliente_id IS NOT NULL")
    def orders():
        return orders_frame()

    out = orders()
    result = orders.last_result
    assert sorted(r["pedido_id"] for r in out.collect()) == [1, 3, 4]  # order 2 dropped, order 3 kept
    assert [r.name for r in result.rules] == ["non_negative", "has_customer"]  # source order
    assert (result.rule("non_negative").failed_count, result.rule("non_negative").status) == (1, "warned")
    assert (result.rule("has_customer").failed_count, result.rule("has_customer").action) == (1, "drop")
    assert (result.total_rows, result.valid_rows, result.invalid_rows) == (4, 3, 1)
    assert result.quarantine_df.select("pedido_id").collect()[0]["pedido_id"] == 2
    rows = result.report_rows()
    assert [(r["check_name"], r["failed_count"], r["severity"]) for r in rows] == [
        ("non_negative", 1, "warn"), ("has_customer", 1, "error")]
    assert orders.__name__ == "orders"
    result.release()


def test_expect_all_and_expect_or_fail(orders_frame):
    @dq_governance.expect_or_fail("positive_id", "pedido_id > 0")
    @dq_governance.expect_all({"small": "valor < 1000", "customer_known": "cliente_id IS NOT NULL"})
    def ok():
        return orders_frame()

    assert ok().count() == 4  # expect_all only records
    assert ok.last_result.rule("customer_known").failed_count == 1
    ok.last_result.release()

    @dq_governance.expect_or_fail("non_negative", "valor >= 0")
    def strict():
        return orders_frame()

    with pytest.raises(GateFailedError, match="rule non_negative failed with action fail") as caught:
        strict()
    assert caught.value.result is strict.last_result
    assert strict.last_result.rule("non_negative").failed_count == 1
    strict.last_result.release()


def test_contract_decorator_checks_the_whole_contract(spark, repo, monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)  # both contracts mask a column, as run() would
    @dq_governance.contract(str(repo / "contracts/orders.yaml"))
    def seed_orders():
        return spark.read.option("header", True).csv(str(repo / "examples/data/orders.csv"))

    with pytest.raises(GateFailedError, match="minimum_valid_ratio 0.99") as caught:
        seed_orders()
    result = caught.value.result
    assert (result.total_rows, result.valid_rows, result.invalid_rows) == (7, 1, 6)
    result.release()

    @dq_governance.expect("cheap", "valor_total < 200")
    @dq_governance.contract(str(repo / "contracts/sales.yaml"))
    def sales():
        return spark.read.option("header", True).csv(str(repo / "examples/data/sales.csv"))

    out = sales()
    assert out.count() == 3 and sales.last_result.rule("cheap").failed_count == 2
    assert sales.last_result.contract_name == "sales"
    sales.last_result.release()


def test_bad_expectations_are_contract_errors(repo):
    with pytest.raises(ContractError, match="needs a name and a SQL boolean"):
        dq_governance.expect("x", "  ")

    @dq_governance.expect("pedido_id_unique", "true")
    @dq_governance.contract(str(repo / "contracts/orders.yaml"))
    def clash():
        raise AssertionError("not called")

    with pytest.raises(ContractError, match="already a rule of contract orders"):
        clash.build_contract()


def _people(spark):
    return spark.createDataFrame(PEOPLE_ROWS, "id string, cpf string, email string")


def test_decorated_rows_are_masked_like_run_target(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)

    @dq_governance.expect("short_email", "length(email) < 40")
    @dq_governance.contract(PEOPLE)
    def people():
        return _people(spark)

    out = people()
    result = people.last_result
    assert (result.total_rows, result.valid_rows, result.masking) == (3, 2, "applied")
    assert sorted((r["id"], r["cpf"], r["email"]) for r in out.collect()) == [
        (1, h("52998224725"), h("ana@example.com")), (2, h("11144477735"), h("bruno@example.com"))]
    # the quarantine as run() writes it: masked, with the run's metadata
    [bad] = result.quarantine_df.collect()
    assert (bad["id"], bad["cpf"], bad["email"], bad["_dq_disposition"], bad["_dq_run_id"]) == (
        None, h("39053344705"), h("carla@example.com"), "quarantined", result.run_id)
    result.release()

    ran = dq_governance.run(_people(spark), people.build_contract(), target=str(tmp_path / "t"),
                            quarantine=str(tmp_path / "q"))
    published = spark.read.parquet(str(tmp_path / "t"))
    assert sorted(tuple(r) for r in published.collect()) == sorted(tuple(r) for r in out.collect())
    quarantined = spark.read.parquet(str(tmp_path / "q")).select("id", "cpf", "email").collect()
    assert [tuple(r) for r in quarantined] == [(None, h("39053344705"), h("carla@example.com"))]
    assert ran.masking == "applied"


def test_decorator_without_a_key_raises_before_returning(spark, monkeypatch):
    monkeypatch.delenv("DQGOV_MASKING_KEY", raising=False)
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)

    @dq_governance.contract(PEOPLE)
    def people():
        return _people(spark)

    with pytest.raises(ConfigError, match="masking key missing"):
        people()


def test_blocked_call_keeps_masked_evidence(spark, monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    strict = PEOPLE.model_copy(update={"quality": PEOPLE.quality.model_copy(update={"on_failure": "fail"})})

    @dq_governance.contract(strict)
    def people():
        return _people(spark)

    with pytest.raises(GateFailedError, match="row rule id_not_null failed on 1 row"):
        people()
    [bad] = people.last_result.quarantine_df.collect()  # run() writes no quarantine under fail; the result keeps it
    assert (bad["cpf"], bad["email"], bad["_dq_disposition"]) == (h("39053344705"), h("carla@example.com"), "blocked")
    people.last_result.release()


# --------------------------------------------------------------------------- options refused, not silently replaced


def test_second_contract_decorator_is_refused(repo):
    with pytest.raises(ContractError) as caught:
        @dq_governance.contract(str(repo / "contracts/orders.yaml"), pipeline="outer")
        @dq_governance.expect("cheap", "valor_total < 200")
        @dq_governance.contract(str(repo / "contracts/sales.yaml"), pipeline="inner", source_name="s3://b/sales.csv")
        def two():
            raise AssertionError("not called")
    assert str(caught.value) == f"two: one @contract per function; it already has {repo / 'contracts/sales.yaml'}"

    with pytest.raises(ContractError) as caught:
        @dq_governance.contract(str(repo / "contracts/orders.yaml"))
        @dq_governance.contract(PEOPLE)
        def people_twice():
            raise AssertionError("not called")
    assert str(caught.value) == "people_twice: one @contract per function; it already has contract people"


def test_repeated_expectation_name_is_refused():
    with pytest.raises(ContractError) as caught:
        @dq_governance.expect("x", "CAST(valor AS DECIMAL(12,2)) >= 0")
        @dq_governance.expect_or_drop("x", "cliente_id IS NOT NULL")
        def dupe():
            raise AssertionError("not called")
    assert str(caught.value) == "expectation name 'x' is already an expectation of dupe"

    with pytest.raises(ContractError) as caught:
        @dq_governance.expect_all_or_fail({"a": "true", "b": "true"})
        @dq_governance.expect_or_drop("b", "cliente_id IS NOT NULL")
        def dupe_all():
            raise AssertionError("not called")
    assert str(caught.value) == "expectation name 'b' is already an expectation of dupe_all"


# cliente_id required: order 2 (no customer) is invalid, so 3 of 4 rows are valid, below 0.9
GATED_ORDERS = Contract.model_validate({
    "contract": {"name": "gated_orders", "version": "1.0.0"}, "dataset": {"name": "gated_orders"},
    "schema": {"fields": [{"name": "pedido_id", "type": "long"},
                          {"name": "cliente_id", "type": "long", "required": True},
                          {"name": "valor", "type": "double"}]},
    "quality": {"on_failure": "quarantine", "minimum_valid_ratio": 0.9},
})


def test_contract_gate_block_is_not_blamed_on_expectations(orders_frame):
    @dq_governance.contract(GATED_ORDERS)
    def plain():
        return orders_frame()

    with pytest.raises(GateFailedError) as caught:
        plain()
    assert str(caught.value) == ("plain: quality gate blocked the output: valid ratio 0.7500 is below "
                                 "minimum_valid_ratio 0.9")
    plain.last_result.release()

    @dq_governance.contract(GATED_ORDERS)
    @dq_governance.expect_or_fail("non_negative", "valor >= 0")
    def mixed():
        return orders_frame()

    with pytest.raises(GateFailedError) as caught:
        mixed()
    assert str(caught.value) == ("mixed: quality gate blocked the output: valid ratio 0.5000 is below "
                                 "minimum_valid_ratio 0.9; expectations blocked the output: rule non_negative "
                                 "failed with action fail")
    mixed.last_result.release()


def test_expect_or_fail_block_still_names_expectations_regression_guard(orders_frame):
    """Regression guard (passes on the old code too): an expect_or_fail block alone keeps its wording."""
    @dq_governance.expect_or_fail("non_negative", "valor >= 0")
    def strict():
        return orders_frame()

    with pytest.raises(GateFailedError) as caught:
        strict()
    assert str(caught.value) == "strict: expectations blocked the output: rule non_negative failed with action fail"
    strict.last_result.release()

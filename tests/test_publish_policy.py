"""Routing under each on_failure policy and rule action, on hand-built results with known answers."""

from __future__ import annotations

import pytest

import _publish_fixtures as fx
from dq_governance.publish import policy


def _dispositions(frame) -> dict[str, str]:
    return {r["pedido_id"]: r["_dq_disposition"] for r in frame.select("pedido_id", "_dq_disposition").collect()}


def _ids(frame) -> list[int]:
    return sorted(r["pedido_id"] for r in frame.select("pedido_id").collect())


def test_effective_action_table():
    assert policy.effective_action(None, "quarantine") == "quarantine"
    assert policy.effective_action(None, "fail") == "quarantine"
    assert policy.effective_action(None, "block_publication") == "quarantine"
    assert policy.effective_action(None, "warn") == "warn"
    assert policy.effective_action("drop", "warn") == "drop"
    assert policy.effective_action("drop", "skip") == "warn"  # skip: evaluated and reported, nothing routed
    assert policy.effective_action("fail", "quarantine") == "fail"


@pytest.mark.spark
def test_quarantine_policy_routes_invalid_rows(spark):
    result = fx.result(spark, "quarantine")
    routing = policy.route(result, fx.contract("quarantine"))
    assert not routing.blocked
    # valid 1, 2 and 6 (its only failure is an action-warn rule, i.e. a warning)
    assert _ids(routing.target_df) == [1, 2, 6]
    assert routing.quarantine_df.count() == 3
    assert _dispositions(routing.quarantine_df) == {"3": "quarantined", "4": "quarantined", "5": "dropped"}
    assert sorted(routing.excluded_rules) == ["id_drop", "valor_range", "valor_type"]
    assert routing.kept_error_rules == []


@pytest.mark.spark
def test_warn_policy_writes_all_rows_except_explicit_drops(spark):
    result = fx.result(spark, "warn")
    routing = policy.route(result, fx.contract("warn"))
    assert _ids(routing.target_df) == [1, 2, 3, 4, 6]
    typed = {r["pedido_id"]: r["valor"] for r in routing.target_df.collect()}
    assert str(typed[3]) == "-5.00"
    assert typed[4] is None  # 'abc' does not cast; the quarantine keeps the original text
    assert routing.target_df.schema.simpleString() == result.valid_df.schema.simpleString()
    assert _dispositions(routing.quarantine_df) == {"3": "published", "4": "published", "5": "dropped"}
    raw = {r["pedido_id"]: r["valor"] for r in routing.quarantine_df.collect()}
    assert raw["4"] == "abc"


@pytest.mark.spark
def test_skip_policy_publishes_every_row(spark):
    routing = policy.route(fx.result(spark, "skip"), fx.contract("skip"))
    assert _ids(routing.target_df) == [1, 2, 3, 4, 5, 6]
    assert set(_dispositions(routing.quarantine_df).values()) == {"published"}


@pytest.mark.spark
def test_fail_policy_blocked_writes_nothing(spark):
    result = fx.result(spark, "fail")
    assert not result.gate.publish  # failed error row rules block under fail without a ratio
    routing = policy.route(result, fx.contract("fail"))
    assert routing.blocked and routing.target_df is None and routing.quarantine_df is None


@pytest.mark.spark
def test_block_publication_blocked_keeps_evidence_in_quarantine(spark):
    result = fx.result(spark, "block_publication")
    routing = policy.route(result, fx.contract("block_publication"))
    assert routing.blocked and routing.target_df is None
    assert routing.quarantine_df.count() == 3
    assert set(_dispositions(routing.quarantine_df).values()) == {"blocked"}


@pytest.mark.spark
def test_minimum_valid_ratio_blocks_quarantine_policy(spark):
    # 3 of 6 valid = 0.5 < 0.6
    result = fx.result(spark, "quarantine", minimum_valid_ratio=0.6)
    assert not result.gate.publish
    routing = policy.route(result, fx.contract("quarantine", 0.6))
    assert routing.blocked and routing.target_df is None and routing.quarantine_df.count() == 3


@pytest.mark.spark
def test_quarantine_rows_carry_run_metadata(spark):
    routing = policy.route(fx.result(spark, "quarantine", run_id="r-42"), fx.contract(), source="in.csv")
    row = routing.quarantine_df.where("pedido_id = '3'").first().asDict()
    assert row["_dq_errors"] == ["valor_range"] and row["_dq_warnings"] == []
    assert (row["_dq_run_id"], row["_dq_pipeline"], row["_dq_contract"], row["_dq_contract_version"],
            row["_dq_source"]) == ("r-42", "mini-pipe", "mini", "1.2.3", "in.csv")
    assert row["_dq_quarantined_at"] is not None
    assert row["valor"] == "-5.00"  # raw value kept


@pytest.mark.spark
def test_conservation_counts_and_violation(spark):
    result = fx.result(spark)
    assert policy.conservation_counts(result) == (3, 3)
    result.total_rows = 7  # an engine that lost a row
    with pytest.raises(policy.ConservationError, match="valid 3 \\+ quarantined 3 != input 7"):
        policy.conservation_counts(result)
    with pytest.raises(policy.ConservationError, match="staged target has 2 rows, expected 3"):
        policy.check_staged("target", 2, 3, "r")


def test_merge_guard_added_unless_a_unique_rule_excludes_duplicates():
    plain = fx.contract("quarantine")
    guarded, name = policy.with_merge_guard(plain, ["pedido_id"])
    assert name == "merge_keys_unique"
    guard = guarded.rules()[-1]
    assert (guard.type, guard.target_columns, guard.action) == ("unique", ["pedido_id"], "fail")
    assert plain.rules()[-1].name != "merge_keys_unique"  # the caller's contract is not changed

    unique = plain.model_copy(deep=True)
    unique.schema_.fields[0].unique = True
    same, none = policy.with_merge_guard(unique, ["pedido_id"])
    assert none is None and same is unique
    # under warn the existing unique rule lets duplicates through, so the guard is still added
    warn = unique.model_copy(update={"quality": unique.quality.model_copy(update={"on_failure": "warn"})})
    assert policy.with_merge_guard(warn, ["pedido_id"])[1] == "merge_keys_unique"


def test_merge_guard_rejects_unknown_keys():
    from dq_governance.errors import ConfigError

    with pytest.raises(ConfigError, match="merge_keys nope are not columns of contract mini"):
        policy.with_merge_guard(fx.contract(), ["nope"])

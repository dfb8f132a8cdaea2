"""Undeclared columns: the seed contract on orders.csv, whose `email` column it does not declare.

The seed lab's contract (seed 000, section 13) declares pedido_id, cliente_id, status, valor and
data_pedido; examples/data/orders.csv also has `email`. Whatever `schema.undeclared_columns` says, an
e-mail never leaves raw unless the contract says `keep`. Under `on_failure: quarantine` the seed data
publishes 1 order and quarantines 6.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil

import pytest
import yaml

import dq_governance
from dq_governance.contracts.model import Contract
from dq_governance.errors import ConfigError, GateFailedError
from dq_governance.publish.report import read_history

pytestmark = pytest.mark.spark

KEY = "undeclared-columns-test-key-0123456789"
DECLARED = ["pedido_id", "cliente_id", "status", "valor", "data_pedido"]
# the seed's text, less `service_level.freshness_minutes: 60` (a freshness level without a column is a lint
# error of its own, not this test's subject)
SEED = """
contract:
  name: orders
  version: "1.0.0"
  owner: sales-data-team
dataset:
  name: curated.orders
  description: Pedidos comerciais consolidados
schema:
  fields:
    - {name: pedido_id, type: long, required: true, unique: true}
    - {name: cliente_id, type: long, required: true}
    - {name: status, type: string, required: true, allowed_values: [CRIADO, PAGO, CANCELADO]}
    - {name: valor, type: "decimal(12,2)", required: true, minimum: 0}
    - {name: data_pedido, type: date, required: true}
quality:
  minimum_valid_ratio: 0.99
  on_failure: block_publication
"""


def h(value: str) -> str:
    return hmac.new(KEY.encode(), value.encode(), hashlib.sha256).hexdigest()


@pytest.fixture(autouse=True)
def masking_key(monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)


@pytest.fixture(scope="module")
def orders(spark, repo):
    return spark.read.option("header", True).csv(str(repo / "examples/data/orders.csv"))


@pytest.fixture(scope="module")
def emails(repo):
    lines = (repo / "examples/data/orders.csv").read_text().splitlines()[1:]
    return {int(line.split(",")[0]): line.split(",")[-1] for line in lines}


def seed(policy: str | None = None, publishing: bool = True) -> Contract:
    """The seed contract; `publishing` routes bad rows to quarantine instead of blocking at 0.99."""
    doc = yaml.safe_load(SEED)
    if publishing:
        doc["quality"] = {"on_failure": "quarantine"}
    if policy is not None:
        doc["schema"]["undeclared_columns"] = policy
    return Contract.model_validate(doc)


def _outs(tmp_path, **extra):
    return {"target": str(tmp_path / "valid"), "quarantine": str(tmp_path / "quarantine"),
            "report": str(tmp_path / "report"), **extra}


def _written_bytes(path) -> bytes:
    return b"".join(p.read_bytes() for p in path.rglob("*.parquet"))


def test_default_leaves_the_email_out_of_target_and_quarantine(spark, orders, tmp_path):
    events = tmp_path / "events.jsonl"
    result = dq_governance.run(orders, seed(), lineage=f"file:{events}", **_outs(tmp_path))
    assert (result.total_rows, result.valid_rows, result.invalid_rows, result.published) == (7, 1, 6, True)
    target = spark.read.parquet(str(tmp_path / "valid"))
    quarantine = spark.read.parquet(str(tmp_path / "quarantine"))
    assert target.columns == DECLARED and target.count() == 1
    assert quarantine.count() == 6
    assert "email" not in quarantine.columns and quarantine.columns[:5] == DECLARED
    for folder in ("valid", "quarantine"):
        assert b"example.com" not in _written_bytes(tmp_path / folder)
    # the report says what happened to the column; the lineage event's output schema is the published one
    row = read_history(str(tmp_path / "report"), spark=spark).where("check_name = 'undeclared_columns'").first()
    assert (row["rule_status"], row["passed"], row["metric_value"]) == ("warned", False, 1.0)
    assert "left out of the outputs" in row["message"] and row["message"].endswith(": email")
    complete = [json.loads(line) for line in events.read_text().splitlines()][-1]
    fields = {o["name"].rsplit("/", 1)[-1]: [f["name"] for f in o["facets"]["schema"]["fields"]]
              for o in complete["outputs"]}
    assert fields["valid"] == DECLARED and "email" not in fields["quarantine"]


def test_the_seed_as_written_blocks_and_its_quarantine_holds_no_email(spark, orders, tmp_path):
    with pytest.raises(GateFailedError, match="minimum_valid_ratio 0.99"):
        dq_governance.run(orders, seed(publishing=False), **_outs(tmp_path))
    quarantine = spark.read.parquet(str(tmp_path / "quarantine"))
    assert quarantine.count() == 6 and "email" not in quarantine.columns
    assert not (tmp_path / "valid").exists()


def test_keep_publishes_the_column_as_read(spark, orders, emails, tmp_path):
    dq_governance.run(orders, seed("keep"), **_outs(tmp_path))
    target = spark.read.parquet(str(tmp_path / "valid"))
    assert target.columns == [*DECLARED, "email"]
    assert [(r["pedido_id"], r["email"]) for r in target.collect()] == [(1, "ana@example.com")]
    quarantined = spark.read.parquet(str(tmp_path / "quarantine")).collect()
    assert sorted((int(r["pedido_id"]), r["email"]) for r in quarantined) == sorted(
        [(k, v) for k, v in emails.items() if k != 1] + [(2, emails[2])])  # order 2 is there twice


def test_mask_publishes_hmac_values(spark, orders, emails, tmp_path):
    dq_governance.run(orders, seed("mask"), **_outs(tmp_path))
    target = spark.read.parquet(str(tmp_path / "valid"))
    assert [(r["pedido_id"], r["email"]) for r in target.collect()] == [(1, h("ana@example.com"))]
    assert target.schema["email"].metadata["dqgov.masking"] == "hmac"
    quarantined = spark.read.parquet(str(tmp_path / "quarantine")).collect()
    assert sorted((int(r["pedido_id"]), r["email"]) for r in quarantined) == sorted(
        [(k, h(v)) for k, v in emails.items() if k != 1] + [(2, h(emails[2]))])
    for folder in ("valid", "quarantine"):
        assert b"example.com" not in _written_bytes(tmp_path / folder)


def test_mask_without_a_key_fails_before_any_write(orders, tmp_path, monkeypatch):
    monkeypatch.delenv("DQGOV_MASKING_KEY")
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)
    with pytest.raises(ConfigError, match="masking key missing"):
        dq_governance.run(orders, seed("mask"), **_outs(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_fail_blocks_and_publishes_no_email(spark, orders, tmp_path):
    with pytest.raises(GateFailedError, match="undeclared_columns") as caught:
        dq_governance.run(orders, seed("fail"), **_outs(tmp_path))
    assert not caught.value.result.published
    assert not (tmp_path / "valid").exists()
    quarantine = spark.read.parquet(str(tmp_path / "quarantine"))  # on_failure quarantine keeps evidence
    assert quarantine.count() == 6 and "email" not in quarantine.columns
    assert {r["_dq_disposition"] for r in quarantine.collect()} == {"blocked"}


def test_check_returns_the_frames_as_read(orders):
    result = dq_governance.check(orders, seed())
    try:
        assert result.valid_df.columns == [*DECLARED, "email"]
        assert "email" in result.quarantine_df.columns
    finally:
        result.release()


def test_failed_sample_follows_the_policy(orders, emails, tmp_path):
    result = dq_governance.run(orders, seed(), failed_sample=3, **_outs(tmp_path))
    assert len(result.failed_rows) == 3 and all("email" not in row for row in result.failed_rows)
    masked = dq_governance.run(orders, seed("mask"), failed_sample=6, **_outs(tmp_path / "m"))
    assert sorted(row["email"] for row in masked.failed_rows) == sorted(
        [h(v) for k, v in emails.items() if k != 1] + [h(emails[2])])


def test_decorators_follow_the_policy(spark, repo, emails):
    path = str(repo / "examples/data/orders.csv")

    @dq_governance.contract(seed())
    def default():
        return spark.read.option("header", True).csv(path)

    out = default()
    assert out.columns == DECLARED and out.count() == 1
    assert "email" not in default.last_result.quarantine_df.columns
    assert default.last_result.quarantine_df.count() == 6
    default.last_result.release()

    @dq_governance.contract(seed("mask"))
    def masked():
        return spark.read.option("header", True).csv(path)

    assert [(r["pedido_id"], r["email"]) for r in masked().collect()] == [(1, h("ana@example.com"))]
    assert sorted(r["email"] for r in masked.last_result.quarantine_df.collect()) == sorted(
        [h(v) for k, v in emails.items() if k != 1] + [h(emails[2])])
    masked.last_result.release()


def test_check_stream_follows_the_policy(spark, repo, tmp_path):
    source = tmp_path / "in"
    source.mkdir()
    shutil.copy(repo / "examples/data/orders.csv", source / "orders.csv")
    out = tmp_path / "out"
    stream = spark.readStream.schema(", ".join(f"{c} string" for c in [*DECLARED, "email"])).option(
        "header", True).csv(str(source))
    handle = dq_governance.check_stream(stream, seed(), target=str(out / "valid"), quarantine=str(out / "quarantine"),
                                        checkpoint=str(out / "checkpoint"), trigger={"availableNow": True})
    handle.await_termination(240)
    handle.stop()
    assert [(b["total_rows"], b["valid_rows"]) for b in handle.batches] == [(7, 1)]
    target = spark.read.parquet(str(out / "valid"))
    quarantine = spark.read.parquet(str(out / "quarantine"))
    assert target.columns == [*DECLARED, "_dq_stream", "_dq_batch_id"] and target.count() == 1
    assert "email" not in quarantine.columns and quarantine.count() == 6
    for folder in ("valid", "quarantine"):
        assert b"example.com" not in _written_bytes(out / folder)

"""check_stream: 3 file micro-batches, one retried, exactly-once valid / quarantine outputs, per-batch reports."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import dq_governance
from _stream_batches import BATCHES, HEADER, SCHEMA
from dq_governance.contracts.load import load_contract
from dq_governance.observe.history import read_history_rows, runs
from dq_governance.streaming import batch_run_id

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.spark


def _contract():
    contract = load_contract(REPO / "contracts" / "orders.yaml")
    contract.quality.on_failure = "quarantine"  # per-batch routing; the seed's 0.99 gate would block every batch
    contract.quality.minimum_valid_ratio = None
    return contract


def _write_batches(folder: Path) -> list[Path]:
    folder.mkdir()
    files = []
    for i, lines in enumerate(BATCHES):
        path = folder / f"part-{i}.csv"
        path.write_text(HEADER + "\n".join(lines) + "\n")
        os.utime(path, (1_700_000_000 + i * 100, 1_700_000_000 + i * 100))  # the file source orders by mtime
        files.append(path)
    return files


def _outputs(spark, out: Path) -> tuple[list[tuple[int, int]], list[tuple[int, str]], int]:
    target = spark.read.parquet(str(out / "valid"))
    quarantine = spark.read.parquet(str(out / "quarantine"))
    valid = sorted((int(r["pedido_id"]), int(r["_dq_batch_id"])) for r in target.collect())
    bad = sorted((int(r["pedido_id"]), r["_dq_errors"][0]) for r in quarantine.collect())
    return valid, bad, quarantine.select("_dq_run_id").distinct().count()


def test_three_batches_one_retried_exactly_once(spark, tmp_path):
    files = _write_batches(tmp_path / "in")
    out = tmp_path / "out"
    events = tmp_path / "lineage" / "events.jsonl"
    stream = (spark.readStream.schema(SCHEMA).option("header", True).option("maxFilesPerTrigger", 1)
              .csv(str(tmp_path / "in")))
    handle = dq_governance.check_stream(
        stream, _contract(), target=str(out / "valid"), quarantine=str(out / "quarantine"),
        report=str(out / "report"), checkpoint=str(out / "checkpoint"), key_table=str(out / "keys"),
        lineage=f"file:{events}", mask=False, trigger={"availableNow": True})
    handle.await_termination(240)

    assert [(b["batch_id"], b["total_rows"], b["valid_rows"], b["invalid_rows"]) for b in handle.batches] == [
        (0, 3, 1, 2), (1, 3, 1, 2), (2, 3, 2, 1)]
    expected_valid = [(1, 0), (7, 1), (8, 2), (9, 2)]
    expected_bad = [(1, "pedido_id_unique_across_batches"), (2, "pedido_id_unique"), (2, "pedido_id_unique"),
                    (3, "cliente_id_not_null"), (5, "valor_range")]
    assert _outputs(spark, out) == (expected_valid, expected_bad, 3)

    # Retry batch 1 after it committed: a no-op.
    replay = spark.read.schema(SCHEMA).option("header", True).csv(str(files[1]))
    handle.process_batch(replay, 1)
    assert handle.batches[-1] == {"batch_id": 1, "skipped": True}
    assert _outputs(spark, out) == (expected_valid, expected_bad, 3)

    # Retry batch 1 as after a crash before its commit marker: rewrites the same partitions, nothing twice.
    shutil.rmtree(out / "checkpoint" / "dq_commits" / "batch=1")
    handle.process_batch(replay, 1)
    assert handle.batches[-1]["skipped"] is False and handle.batches[-1]["valid_rows"] == 1
    assert _outputs(spark, out) == (expected_valid, expected_bad, 3)

    history = runs(read_history_rows(out / "report"))
    stream_key = f"orders@{(out / 'checkpoint').resolve()}"
    assert sorted((r.run_id, r.total_rows, r.valid_rows) for r in history) == sorted(
        (batch_run_id(stream_key, i), 3, v) for i, v in enumerate([1, 1, 2]))
    rules = {r["check_name"] for r in history[0].rules}
    assert {"pedido_id_unique", "cliente_id_not_null", "valor_range"} <= rules
    assert sum(1 for run in history for r in run.rules if r["check_name"] == "pedido_id_unique_across_batches") == 2

    handle.stop()
    sent = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    states = [(e["eventType"], e["run"]["facets"].get("dqgov_microBatch", {}).get("batchId")) for e in sent]
    assert states == [("RUNNING", 0), ("RUNNING", 1), ("RUNNING", 2), ("RUNNING", 1), ("COMPLETE", None)]
    assert len({e["run"]["runId"] for e in sent}) == 1  # one OpenLineage run for the streaming query
    batch2 = sent[2]
    assertions = batch2["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"]
    assert {a["name"]: a["success"] for a in assertions}["valor_range"] is False
    facet = batch2["run"]["facets"]["dqgov_microBatch"]
    assert (facet["batchId"], facet["totalRows"], facet["validRows"]) == (2, 3, 2)
    assert facet["checkRunId"] == batch_run_id(stream_key, 2)
    schema = json.loads((REPO / "docs" / "facets" / "MicroBatchRunFacet.json").read_text())
    assert facet["_schemaURL"] == schema["$id"]
    assert set(schema["required"]) <= set(facet)
    rows = {o["name"].rsplit("/", 1)[-1]: o["outputFacets"]["outputStatistics"]["rowCount"] for o in batch2["outputs"]}
    assert rows == {"quarantine": 1, "valid": 2}


def test_without_key_table_uniqueness_is_per_batch(spark, tmp_path):
    _write_batches(tmp_path / "in")
    out = tmp_path / "out"
    stream = (spark.readStream.schema(SCHEMA).option("header", True).option("maxFilesPerTrigger", 1)
              .csv(str(tmp_path / "in")))
    handle = dq_governance.check_stream(
        stream, _contract(), target=str(out / "valid"), quarantine=str(out / "quarantine"),
        checkpoint=str(out / "checkpoint"), mask=False, trigger={"availableNow": True})
    handle.await_termination(240)
    handle.stop()
    valid, bad, _runs = _outputs(spark, out)
    assert valid == [(1, 0), (1, 1), (7, 1), (8, 2), (9, 2)]  # order 1 again in batch 1: no cross-batch state
    assert len(bad) == 4


def test_key_table_keeps_pii_keys_as_keyed_pseudonyms(spark, tmp_path, monkeypatch):
    """A unique key declared PII is remembered as its keyed HMAC (normalised by its format), never as read; a
    later batch's key written another way (`529.982.247-25`) is still found published."""
    import hashlib
    import hmac as hmac_lib

    key = "stream-masking-key-0123456789abcdef"
    monkeypatch.setenv("DQGOV_MASKING_KEY", key)
    contract = load_contract({
        "contract": {"name": "clientes", "version": "1.0.0"}, "dataset": {"name": "clientes"},
        "schema": {"fields": [{"name": "id", "type": "long"},
                              {"name": "cpf", "type": "string", "unique": True, "pii": True, "format": "cpf",
                               "masking": "hmac"}]}})
    out = tmp_path / "out"
    first = spark.createDataFrame([(1, "52998224725"), (2, "11144477735")], "id long, cpf string")
    handle = dq_governance.check_stream(
        first, contract, target=str(out / "valid"), quarantine=str(out / "quarantine"),
        checkpoint=str(out / "checkpoint"), key_table=str(out / "keys"), start=False)
    handle.process_batch(first, 0)
    second = spark.createDataFrame([(3, "529.982.247-25"), (4, "39053344705")], "id long, cpf string")
    handle.process_batch(second, 1)

    def pseudonym(digits: str) -> str:
        return hmac_lib.new(key.encode(), digits.encode(), hashlib.sha256).hexdigest()

    stored = sorted((r.cpf, r._dq_batch_id) for r in spark.read.parquet(str(out / "keys" / "cpf_unique")).collect())
    assert stored == sorted([(pseudonym("52998224725"), 0), (pseudonym("11144477735"), 0),
                             (pseudonym("39053344705"), 1)])
    assert sorted(r.id for r in spark.read.parquet(str(out / "valid")).collect()) == [1, 2, 4]
    quarantined = spark.read.parquet(str(out / "quarantine")).collect()
    assert [(r.id, list(r._dq_errors)) for r in quarantined] == [(3, ["cpf_unique_across_batches"])]


def test_a_new_checkpoint_on_the_same_target_keeps_the_first_querys_batches(spark, tmp_path):
    """Batch ids restart at 0 with a new checkpoint: the second query writes partitions of its own instead of
    replacing the first query's batch 0, and the key table they share finds the first query's keys."""
    contract = load_contract({
        "contract": {"name": "ids", "version": "1.0.0"}, "dataset": {"name": "ids"},
        "schema": {"fields": [{"name": "id", "type": "long", "unique": True}]},
        "quality": {"on_failure": "quarantine"}})
    out = tmp_path / "out"
    for checkpoint, ids in (("ck1", [1, 2, 3]), ("ck2", [3, 4, 5, 6, 7])):
        frame = spark.createDataFrame([(i,) for i in ids], "id long")
        handle = dq_governance.check_stream(
            frame, contract, target=str(out / "valid"), quarantine=str(out / "quarantine"),
            checkpoint=str(out / checkpoint), key_table=str(out / "keys"), start=False)
        handle.process_batch(frame, 0)
    target = spark.read.parquet(str(out / "valid"))
    assert sorted(r.id for r in target.collect()) == [1, 2, 3, 4, 5, 6, 7]
    assert target.select("_dq_stream").distinct().count() == 2
    assert [(r.id, list(r._dq_errors)) for r in spark.read.parquet(str(out / "quarantine")).collect()] == [
        (3, ["id_unique_across_batches"])]


def test_blocked_batch_stops_the_query_and_is_replayed_after_the_fix(spark, tmp_path):
    """A batch the gate blocks is not committed: the query fails on it, its rows are not lost, and a restart
    on the same checkpoint (the contract fixed) replays it, replacing its evidence and report rows."""
    from dq_governance.errors import GateFailedError

    _write_batches(tmp_path / "in")
    out = tmp_path / "out"
    events = tmp_path / "events.jsonl"
    blocking = _contract()
    blocking.quality.on_failure = "block_publication"  # batch 0 repeats order 2: a failed error row rule blocks

    def start(contract):
        stream = (spark.readStream.schema(SCHEMA).option("header", True).option("maxFilesPerTrigger", 1)
                  .csv(str(tmp_path / "in")))
        return dq_governance.check_stream(
            stream, contract, target=str(out / "valid"), quarantine=str(out / "quarantine"),
            report=str(out / "report"), checkpoint=str(out / "checkpoint"), lineage=f"file:{events}", mask=False,
            trigger={"availableNow": True})

    handle = start(blocking)
    with pytest.raises(GateFailedError, match="micro-batch 0 blocked by the quality gate"):
        handle.await_termination(240)
    handle.stop()
    assert [(b["batch_id"], b["status"], b["published"]) for b in handle.batches] == [(0, "failed", False)]
    assert not (out / "valid").exists()
    assert not (out / "checkpoint" / "dq_commits").exists()
    assert not (out / "checkpoint" / "commits" / "0").exists()  # Spark did not commit the batch's offsets
    evidence = spark.read.parquet(str(out / "quarantine")).collect()
    assert sorted((r["pedido_id"], r["_dq_disposition"]) for r in evidence) == [("2", "blocked"), ("2", "blocked")]
    sent = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    assert [(e["eventType"], e["run"]["facets"].get("dqgov_microBatch", {}).get("batchId")) for e in sent] == [
        ("RUNNING", 0), ("FAIL", None)]
    assert sent[1]["run"]["facets"]["errorMessage"]["message"].startswith(
        "orders: micro-batch 0 blocked by the quality gate, the query stops: row rule")

    handle = start(_contract())  # fixed: routes per batch instead of blocking
    handle.await_termination(240)
    handle.stop()
    assert [(b["batch_id"], b["valid_rows"], b["invalid_rows"]) for b in handle.batches] == [
        (0, 1, 2), (1, 2, 1), (2, 2, 1)]
    valid, bad, runs_written = _outputs(spark, out)
    assert valid == [(1, 0), (1, 1), (7, 1), (8, 2), (9, 2)]
    assert (bad, runs_written) == ([(2, "pedido_id_unique"), (2, "pedido_id_unique"), (3, "cliente_id_not_null"),
                                    (5, "valor_range")], 3)
    dispositions = {r["_dq_disposition"] for r in spark.read.parquet(str(out / "quarantine")).collect()}
    assert dispositions == {"quarantined"}  # batch 0's blocked evidence was replaced, not kept beside
    history = runs(read_history_rows(out / "report"))
    assert sorted((r.total_rows, r.valid_rows) for r in history) == [(3, 1), (3, 2), (3, 2)]


def test_blocked_batch_under_fail_writes_no_row_and_no_marker(spark, tmp_path):
    from dq_governance.errors import GateFailedError

    contract = _contract()
    contract.quality.on_failure = "fail"
    out = tmp_path / "out"
    batch = spark.createDataFrame([row.split(",") for row in BATCHES[0]], SCHEMA)
    handle = dq_governance.check_stream(
        batch, contract, target=str(out / "valid"), quarantine=str(out / "quarantine"),
        checkpoint=str(out / "checkpoint"), mask=False, start=False)
    with pytest.raises(GateFailedError, match=r"micro-batch 0 blocked .*: row rule pedido_id_unique failed on 2 row"):
        handle.process_batch(batch, 0)
    assert [(b["total_rows"], b["valid_rows"], b["published"]) for b in handle.batches] == [(3, 1, False)]
    assert sorted(p.name for p in out.glob("*")) == []  # neither output, and no commit marker


def test_a_blank_pipeline_is_refused_before_the_query_starts(spark, tmp_path):
    from dq_governance.errors import ConfigError

    batch = spark.createDataFrame([row.split(",") for row in BATCHES[0]], SCHEMA)
    with pytest.raises(ConfigError, match="pipeline ' ': expected a non-blank name"):
        dq_governance.check_stream(batch, _contract(), target=str(tmp_path / "v"), quarantine=str(tmp_path / "q"),
                                   checkpoint=str(tmp_path / "c"), pipeline=" ", start=False)


def test_a_streaming_frame_given_to_check_run_or_a_decorator_is_refused_in_one_line(spark, tmp_path):
    # Spark's own error ("Queries with streaming sources must be executed with writeStream.start()") came from
    # deep in the pass and named no way out
    from dq_governance.errors import InputDataError

    _write_batches(tmp_path / "in")
    stream = spark.readStream.schema(SCHEMA).option("header", True).csv(str(tmp_path / "in"))
    expected = ("df: a streaming DataFrame (readStream) is checked per micro-batch by dq_governance.check_stream(df, "
                "contract, target=..., quarantine=..., checkpoint=...), not by check(), run() or the decorators")

    @dq_governance.contract(_contract())
    def orders():
        return stream

    calls = [lambda: dq_governance.check(stream, _contract()),
             lambda: dq_governance.run(stream, _contract(), target=str(tmp_path / "v"),
                                       quarantine=str(tmp_path / "q")),
             orders]
    for call in calls:
        with pytest.raises(InputDataError) as refused:
            call()
        assert str(refused.value) == expected
    assert not (tmp_path / "v").exists() and not (tmp_path / "q").exists()

"""check_stream's masking key on Spark Connect: the server's worker must mask with the client's key.

foreachBatch runs in the server's Python worker, which resolves the key from its own environment and files.
The client resolves its key before the query starts and hands the worker its fingerprint only; a batch whose
worker holds no key, or another one, is refused (one-line ConfigError, fingerprints only, nothing written).

Run: DQGOV_CONNECT=1 .venv/bin/python -m pytest -q tests/connect
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest

import dq_governance
from dq_governance.contracts.model import Contract, MaskingPolicy
from dq_governance.errors import ConfigError
from dq_governance.masking.keys import fingerprint, resolve_key

pytestmark = pytest.mark.spark

KEY = "connect-stream-trust-key-3e8a1f60"
#: an env var the test server never has (it inherits this process's environment when the fixture starts it)
CLIENT_ONLY_ENV = "DQGOV_STREAM_TRUST_CLIENT_KEY"
SCHEMA = "id long, name string, cpf string, amount int"
ROW = {"id": 1, "name": "a", "cpf": "52998224725", "amount": 10}


def _server_key_state() -> str:
    """What the server's worker resolves for the default key env: its fingerprint, or the missing-key error.

    Read at import, before the session fixture starts the server with this process's environment."""
    try:
        return resolve_key(MaskingPolicy()).fingerprint
    except ConfigError as exc:
        return f"missing: {exc}"


SERVER_KEY = _server_key_state()


def _contract(masking: dict | None = None) -> Contract:
    doc = {"contract": {"name": "ppl", "version": "1.0.0"}, "dataset": {"name": "ppl"},
           "schema": {"fields": [{"name": "id", "type": "long", "required": True},
                                 {"name": "name", "type": "string"},
                                 {"name": "cpf", "type": "string", "pii": True, "masking": "hmac"},
                                 {"name": "amount", "type": "int", "minimum": 0}]},
           "quality": {"on_failure": "quarantine"}}
    if masking:
        doc["masking"] = masking
    return Contract.model_validate(doc)


def _start(spark, tmp_path: Path, contract: Contract):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "p.json").write_text(json.dumps(ROW) + "\n")
    stream = spark.readStream.schema(SCHEMA).json(str(folder))
    out = tmp_path / "out"
    return dq_governance.check_stream(stream, contract, target=str(out / "valid"), quarantine=str(out / "quarantine"),
                                      checkpoint=str(out / "checkpoint"), trigger={"availableNow": True}), out


def _refused(handle) -> ConfigError:
    from pyspark.errors import StreamingQueryException

    with pytest.raises(ConfigError) as raised:
        handle.await_termination(300)
    handle.stop()
    assert isinstance(raised.value.__cause__, StreamingQueryException)
    assert KEY not in str(raised.value) and KEY not in str(raised.value.__cause__)
    return raised.value


def test_worker_without_the_clients_key_refuses_the_batch(spark, tmp_path, monkeypatch):
    monkeypatch.setenv(CLIENT_ONLY_ENV, KEY)
    handle, out = _start(spark, tmp_path, _contract({"key_env": CLIENT_ONLY_ENV}))
    error = _refused(handle)
    monkeypatch.delenv(CLIENT_ONLY_ENV)
    monkeypatch.delenv(f"{CLIENT_ONLY_ENV}_FILE", raising=False)
    with pytest.raises(ConfigError) as missing:  # what the worker's own resolution says
        resolve_key(MaskingPolicy(key_env=CLIENT_ONLY_ENV))
    assert str(error) == (
        f"ppl: micro-batch 0 refused: the Spark Connect server's Python worker has no usable masking key "
        f"({missing.value}), the client masks with key {fingerprint(KEY.encode())}; give the server's worker the "
        f"client's key (env var {CLIENT_ONLY_ENV} or {CLIENT_ONLY_ENV}_FILE)")
    assert not (out / "valid").exists() and not (out / "quarantine").exists()
    assert not (out / "checkpoint" / "commits" / "0").exists()  # not committed: a restart replays the batch


def test_worker_with_the_server_environments_key_is_refused_unless_it_is_the_clients(spark, tmp_path, monkeypatch):
    """The default key env: the server holds another key (refused, both fingerprints) or none (refused)."""
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)
    handle, out = _start(spark, tmp_path, _contract())
    error = _refused(handle)
    fix = "give the server's worker the client's key (env var DQGOV_MASKING_KEY or DQGOV_MASKING_KEY_FILE)"
    client = fingerprint(KEY.encode())
    if SERVER_KEY.startswith("missing: "):
        assert str(error) == (f"ppl: micro-batch 0 refused: the Spark Connect server's Python worker has no usable "
                              f"masking key ({SERVER_KEY[9:]}), the client masks with key {client}; {fix}")
    else:
        assert str(error) == (f"ppl: micro-batch 0 refused: the Spark Connect server's Python worker masks with key "
                              f"{SERVER_KEY}, the client with key {client}; {fix}")
    assert not (out / "valid").exists() and not (out / "quarantine").exists()


def test_no_client_key_refuses_before_the_query_starts(spark, tmp_path, monkeypatch):
    monkeypatch.delenv(CLIENT_ONLY_ENV, raising=False)
    monkeypatch.delenv(f"{CLIENT_ONLY_ENV}_FILE", raising=False)
    with pytest.raises(ConfigError) as missing:
        resolve_key(MaskingPolicy(key_env=CLIENT_ONLY_ENV))
    active = len(spark.streams.active)
    with pytest.raises(ConfigError) as raised:
        _start(spark, tmp_path, _contract({"key_env": CLIENT_ONLY_ENV}))
    assert str(raised.value) == str(missing.value)  # as run() says it
    assert len(spark.streams.active) == active and not (tmp_path / "out").exists()


def test_worker_reading_the_clients_key_file_publishes_runs_pseudonyms(spark, tmp_path, monkeypatch):
    """A key both ends read (the same file) passes the guard: the stream's pseudonym is run()'s."""
    key_file = tmp_path / "masking.key"
    key_file.write_text(KEY + "\n")
    contract = _contract({"key_file": str(key_file)})
    batch = dq_governance.run(spark.createDataFrame([tuple(ROW.values())], SCHEMA), contract,
                              target=str(tmp_path / "batch"), run_id="batch-1")
    assert batch.published
    handle, out = _start(spark, tmp_path, contract)
    handle.await_termination(300)
    handle.stop()
    expected = hmac.new(KEY.encode(), b"52998224725", hashlib.sha256).hexdigest()
    assert [r["cpf"] for r in spark.read.parquet(str(tmp_path / "batch")).collect()] == [expected]
    assert [r["cpf"] for r in spark.read.parquet(str(out / "valid")).collect()] == [expected]


def test_a_restarted_query_sees_the_disk_as_it_is_not_as_an_earlier_worker_saw_it(spark, tmp_path):
    """Each query start runs foreachBatch in a new worker process on the client's session; the server caches
    analysed plans by request, plan id included, so a worker numbering its plans from 0 again got an earlier
    worker's answers: after a reset (checkpoint and outputs deleted), batch 0's marker still "existed", the batch
    was skipped and its rows were lost while Spark committed its offsets."""
    import shutil

    contract = Contract.model_validate({  # no keyed mask, so no key is needed: this is about the markers
        "contract": {"name": "ppl", "version": "1.0.0"}, "dataset": {"name": "ppl"},
        "schema": {"fields": [{"name": "id", "type": "long", "required": True}, {"name": "amount", "type": "int",
                                                                                "minimum": 0}]},
        "quality": {"on_failure": "quarantine"}})

    def start(reset: bool):
        if reset:
            shutil.rmtree(tmp_path / "in", ignore_errors=True)
            shutil.rmtree(tmp_path / "out", ignore_errors=True)
            (tmp_path / "in").mkdir()
            (tmp_path / "in" / "p.json").write_text('{"id": 1, "amount": 1}\n{"id": 2, "amount": -1}\n')
        stream = spark.readStream.schema("id long, amount int").json(str(tmp_path / "in"))
        out = tmp_path / "out"
        handle = dq_governance.check_stream(stream, contract, target=str(out / "valid"),
                                            quarantine=str(out / "quarantine"), checkpoint=str(out / "checkpoint"),
                                            trigger={"availableNow": True})
        handle.await_termination(300)
        handle.stop()
        return [(b["batch_id"], b["skipped"], b.get("valid_rows"), b.get("invalid_rows")) for b in handle.batches]

    assert start(reset=True) == [(0, False, 1, 1)]
    # the query died after our marker, before Spark's commit: the replay is skipped (this query's entry only)
    for name in ("0", ".0.crc"):
        (tmp_path / "out" / "checkpoint" / "commits" / name).unlink(missing_ok=True)
    assert start(reset=False) == [(0, True, None, None)]
    assert start(reset=True) == [(0, False, 1, 1)]  # the reset: the batch is checked and published again
    assert spark.read.parquet(str(tmp_path / "out" / "valid")).count() == 1
    assert spark.read.parquet(str(tmp_path / "out" / "quarantine")).count() == 1

"""check_stream's errors and masking key on a classic session: one-line errors, the worker's key guard.

The Connect side (the client's key handed to the server's worker as a fingerprint) is
tests/connect/test_connect_stream_trust.py; here the guard a Connect worker runs is driven in-process.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest

import dq_governance
from dq_governance.contracts.model import Contract, MaskingPolicy
from dq_governance.errors import ConfigError, GateFailedError
from dq_governance.masking.keys import fingerprint, resolve_key

pytestmark = pytest.mark.spark

KEY = "stream-trust-client-key-5d1c9a7e"
OTHER_KEY = "stream-trust-worker-key-0b3f6e28"
SCHEMA = "id long, name string, cpf string, amount int"
ROW = {"id": 1, "name": "a", "cpf": "52998224725", "amount": 10}


def _contract(on_failure: str = "quarantine") -> Contract:
    return Contract.model_validate({
        "contract": {"name": "ppl", "version": "1.0.0"}, "dataset": {"name": "ppl"},
        "schema": {"fields": [{"name": "id", "type": "long", "required": True},
                              {"name": "name", "type": "string"},
                              {"name": "cpf", "type": "string", "pii": True, "masking": "hmac"},
                              {"name": "amount", "type": "int", "minimum": 0}]},
        "quality": {"on_failure": on_failure}})


def _stream(spark, folder: Path, rows: list[dict]):
    folder.mkdir()
    (folder / "p.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return spark.readStream.schema(SCHEMA).json(str(folder))


def _start(stream, contract, out: Path):
    return dq_governance.check_stream(stream, contract, target=str(out / "valid"), quarantine=str(out / "quarantine"),
                                      checkpoint=str(out / "checkpoint"), trigger={"availableNow": True})


def test_blocked_batch_raises_one_line_gate_failed_error(spark, tmp_path, monkeypatch):
    from pyspark.errors import StreamingQueryException

    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    out = tmp_path / "out"
    handle = _start(_stream(spark, tmp_path / "in", [ROW, {**ROW, "id": 2, "amount": -1}]), _contract("fail"), out)
    with pytest.raises(GateFailedError) as raised:
        handle.await_termination(240)
    handle.stop()
    assert str(raised.value) == ("ppl: micro-batch 0 blocked by the quality gate, the query stops: "
                                 "row rule amount_range failed on 1 row(s)")
    assert isinstance(raised.value.__cause__, StreamingQueryException)  # Spark's error stays as the cause
    assert not (out / "valid").exists() and not (out / "checkpoint" / "commits" / "0").exists()


def test_config_error_in_a_batch_is_one_line_config_error(spark, tmp_path, monkeypatch):
    """Classic keeps resolving the key in the batch (same process): a missing key fails the batch, in one line."""
    from pyspark.errors import StreamingQueryException

    monkeypatch.delenv("DQGOV_MASKING_KEY", raising=False)
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)
    with pytest.raises(ConfigError) as missing:
        resolve_key(MaskingPolicy())
    out = tmp_path / "out"
    handle = _start(_stream(spark, tmp_path / "in", [ROW]), _contract(), out)
    with pytest.raises(ConfigError) as raised:
        handle.await_termination(240)
    handle.stop()
    assert str(raised.value) == str(missing.value) and len(str(raised.value).splitlines()) == 1
    assert isinstance(raised.value.__cause__, StreamingQueryException)
    assert not (out / "valid").exists()


def test_worker_key_guard_refuses_another_or_no_key_and_passes_the_clients(spark, tmp_path, monkeypatch):
    """What a Connect worker does with the client's fingerprint, run here: only the client's key publishes."""
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    out = tmp_path / "out"
    handle = dq_governance.check_stream(_stream(spark, tmp_path / "in", [ROW]), _contract(), target=str(out / "valid"),
                                        quarantine=str(out / "quarantine"), checkpoint=str(out / "checkpoint"),
                                        start=False)
    checker = handle.process_batch
    assert checker.key_fingerprint is None  # classic: the batches run in this process, with this process's key
    checker.key_fingerprint = fingerprint(KEY.encode())  # as check_stream hands it to a Connect worker
    batch = spark.createDataFrame([tuple(ROW.values())], SCHEMA)
    fix = "give the server's worker the client's key (env var DQGOV_MASKING_KEY or DQGOV_MASKING_KEY_FILE)"

    monkeypatch.setenv("DQGOV_MASKING_KEY", OTHER_KEY)
    with pytest.raises(ConfigError) as other:
        checker(batch, 0)
    assert str(other.value) == (
        f"ppl: micro-batch 0 refused: the Spark Connect server's Python worker masks with key "
        f"{fingerprint(OTHER_KEY.encode())}, the client with key {fingerprint(KEY.encode())}; {fix}")

    monkeypatch.delenv("DQGOV_MASKING_KEY")
    with pytest.raises(ConfigError) as missing:
        resolve_key(MaskingPolicy())
    with pytest.raises(ConfigError) as absent:
        checker(batch, 0)
    assert str(absent.value) == (
        f"ppl: micro-batch 0 refused: the Spark Connect server's Python worker has no usable masking key "
        f"({missing.value}), the client masks with key {fingerprint(KEY.encode())}; {fix}")
    for error in (other.value, absent.value):
        assert KEY not in str(error) and OTHER_KEY not in str(error)
    assert not (out / "valid").exists() and not (out / "quarantine").exists()  # a refused batch writes nothing

    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    checker(batch, 0)
    published = [r["cpf"] for r in spark.read.parquet(str(out / "valid")).collect()]
    assert published == [hmac.new(KEY.encode(), b"52998224725", hashlib.sha256).hexdigest()]

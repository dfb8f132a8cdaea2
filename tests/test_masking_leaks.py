"""The masking key never reaches a Spark plan, explain output, the conf, logs, the event log or the output."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dq_governance.contracts.model import Contract
from dq_governance.masking import MaskingKey, apply_masks

pytestmark = pytest.mark.spark

KEY = "leak-probe-key-7f3a9c2e5b1d4f60a8c3"
EXPLAIN_MODES = ("simple", "extended", "codegen", "cost", "formatted")


def secrets_of(key: str) -> list[str]:
    """Every textual form of key material that a leak could take."""
    ipad, opad = MaskingKey.from_secret(key).pads()
    forms = [key, key.encode().hex(), key.encode().hex().upper(), ipad.hex(), opad.hex(), ipad.hex().upper(),
             opad.hex().upper(), ipad.decode("latin-1"), opad.decode("latin-1")]
    import base64

    forms += [base64.b64encode(key.encode()).decode(), base64.b64encode(ipad).decode(), base64.b64encode(opad).decode()]
    # the pads' first bytes as Spark prints binary literals: [6A 61 ...]
    forms += [" ".join(f"{b:X}" for b in pad[:8]) for pad in (ipad, opad)]
    return forms


def leaks(text: str, key: str = KEY) -> list[str]:
    return [form for form in secrets_of(key) if form in text]


def plan_texts(df) -> str:
    parts = [df._jdf.queryExecution().toString()]
    for mode in EXPLAIN_MODES:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            df.explain(mode=mode)
        parts.append(buffer.getvalue())
    return "\n".join(parts)


def customers_contract(repo) -> Contract:
    import yaml

    return Contract.model_validate(yaml.safe_load((repo / "contracts" / "customers.yaml").read_text()))


def test_search_finds_a_naive_literal_key(spark):
    """Control: the same search does flag the naive sha2(concat(key, value)) approach."""
    from pyspark.sql import functions as F

    df = spark.createDataFrame([("52998224725",)], "cpf string")
    naive = df.select(F.sha2(F.concat(F.lit(KEY), F.col("cpf")), 256).alias("cpf"))
    assert KEY in leaks(plan_texts(naive))


def test_key_not_in_plans_explain_conf_or_logs(spark, repo, monkeypatch, caplog):
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    df = spark.read.option("header", True).csv(str(repo / "examples" / "data" / "customers.csv"))
    masked = apply_masks(df, customers_contract(repo))
    before = plan_texts(masked)
    rows = masked.collect()
    after = plan_texts(masked)  # after execution: the adaptive final plan
    assert len(rows) == 7
    assert leaks(before) == [] and leaks(after) == []
    # `SET` lists the session's SQL conf on Spark 3.5 and 4.0 alike (4.0's spark.conf.getAll does not exist on 3.5)
    conf = json.dumps(spark.sparkContext.getConf().getAll()) + json.dumps(spark.sql("SET").collect())
    assert leaks(conf) == []
    assert leaks(caplog.text) == []
    assert "__dqgov_mask_ipad" not in masked.columns and masked.columns == df.columns


@pytest.mark.parametrize("engine", ["jvm", "sha2"])
def test_key_not_in_event_log_or_written_files(tmp_path, repo, engine):
    """A separate JVM with the Spark event log on (what the Spark UI and history server read)."""
    from dq_governance.lineage.spark import with_extension_jar

    jars = with_extension_jar({}).get("spark.jars", "") if engine == "jvm" else ""
    assert jars or engine == "sha2", "the extension jar is not built: run `make listener`"
    events = tmp_path / "events"
    events.mkdir()
    out = tmp_path / "curated"
    script = textwrap.dedent(f"""
        import os, yaml
        os.environ["DQGOV_MASKING_KEY"] = {KEY!r}
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                 .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", {str(events)!r})
                 .config("spark.eventLog.compress", "false").config("spark.jars", {jars!r})
                 .config("spark.sql.shuffle.partitions", "1").getOrCreate())
        from dq_governance.contracts.model import Contract
        from dq_governance.masking import apply_masks
        contract = Contract.model_validate(yaml.safe_load(open({str(repo / "contracts" / "customers.yaml")!r})))
        df = spark.read.option("header", True).csv({str(repo / "examples" / "data" / "customers.csv")!r})
        apply_masks(df, contract, hmac_engine={engine!r}).write.parquet({str(out)!r})
        spark.stop()
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    log_files = [p for p in events.rglob("*") if p.is_file()]
    assert log_files, "no event log written"
    event_text = "\n".join(p.read_bytes().decode("latin-1") for p in log_files)
    assert "SparkListenerSQLExecutionStart" in event_text
    assert ("dqgov_hmac_cpf_hex_" if engine == "jvm" else "BroadcastNestedLoopJoin") in event_text
    assert leaks(event_text) == []
    assert leaks(proc.stdout + proc.stderr) == []
    written = b"".join(p.read_bytes() for p in Path(out).rglob("*.parquet")).decode("latin-1")
    assert written and leaks(written) == []

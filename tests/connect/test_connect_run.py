"""check, run, masking, lineage and publication on a Spark Connect session (a local server from PySpark's jar).

Every count is the seed lab's known answer. Run: DQGOV_CONNECT=1 .venv/bin/python -m pytest -q tests/connect
"""

from __future__ import annotations

import json
import logging
from decimal import Decimal
from pathlib import Path

import pytest

from _hmac_oracle import pseudonym, raw_cpfs

import _publish_fixtures as fx
import dq_governance
from dq_governance.contracts.load import load_contract
from dq_governance.errors import ConfigError, GateFailedError, InputDataError
from lineage_schema import validation_errors

REPO = Path(__file__).resolve().parent.parent.parent
DATA = REPO / "examples" / "data"
KEY = "connect-masking-key-5b1e0c7d9a42"  # made up; masked CPFs must equal hmac(KEY, digits)

pytestmark = pytest.mark.spark


@pytest.fixture(autouse=True)
def masking_key(monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY)
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)


def read_csv(spark, name):
    return spark.read.option("header", True).csv(str(DATA / f"{name}.csv"))


def contract(name, **quality):
    loaded = load_contract(REPO / "contracts" / f"{name}.yaml")
    if quality:
        loaded = loaded.model_copy(update={"quality": loaded.quality.model_copy(update=quality)})
    return loaded


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_session_is_connect(spark):
    from dq_governance import session

    assert session.kind(spark) == "connect"
    caps = session.capabilities(spark)
    assert (caps.driver_jvm, caps.hadoop_fs, caps.java_udf, caps.listener_registry, caps.delta_table_api) == (
        False, False, False, False, False)
    assert caps.observation is True  # 4.0 client and server
    assert session.java_class(spark, "io.github.dqgovernance.masking.HmacMask") is None


def test_check_gives_the_seed_lab_answers(spark):
    result = dq_governance.check(read_csv(spark, "orders"), contract("orders"))
    try:
        assert (result.total_rows, result.valid_rows, result.invalid_rows) == (7, 1, 6)
        assert result.gate.reasons == ["valid ratio 0.1429 is below minimum_valid_ratio 0.99"]
        assert [r["pedido_id"] for r in result.valid_df.collect()] == [1]
        failed = {r.name: r.failed_count for r in result.rules if r.failed_count}
        assert failed == {"pedido_id_unique": 2, "cliente_id_not_null": 1, "status_allowed_values": 1,
                          "valor_range": 1, "data_pedido_type": 1}
        sample = result.failed_sample(10)
        assert sorted((row["pedido_id"], tuple(row["_dq_errors"])) for row in sample) == [
            ("2", ("pedido_id_unique",)), ("2", ("pedido_id_unique",)), ("3", ("cliente_id_not_null",)),
            ("4", ("status_allowed_values",)), ("5", ("valor_range",)), ("6", ("data_pedido_type",))]
    finally:
        result.release()


def test_a_year_the_pattern_parser_overflows_on_is_invalid_on_connect_too(spark):
    from dq_governance.contracts.model import Contract

    rows = [("01/11/2026 10:00:00", "1/11/2026"), ("01/01/+999999 00:00:00", "1/1/999999"),
            ("01/01/+99999 00:00:00", "5/5/99999"), ("31/02/2026 10:00:00", "x")]
    df = spark.createDataFrame(rows, "stamp string, born string")
    doc = Contract.model_validate({"contract": {"name": "dates", "version": "1.0.0"}, "dataset": {"name": "dates"},
                                   "schema": {"fields": [
                                       {"name": "stamp", "type": "timestamp", "date_format": "dd/MM/yyyy HH:mm:ss"},
                                       {"name": "born", "type": "string", "format": "date", "date_format": "d/M/y"}]}})
    result = dq_governance.check(df, doc)  # the parser alone overflows on row 2 and fails the whole pass
    try:
        found = {r.name: r.failed_count for r in result.rules if r.name in ("stamp_type", "born_format")}
        assert found == {"stamp_type": 2, "born_format": 2}
    finally:
        result.release()


def test_structs_convert_by_field_name_and_elements_one_by_one_on_connect(spark):
    from dq_governance.contracts.model import Contract

    # decimal text judged on all its digits: an exponent form (row 1) and a fraction past the wide parse (row 3)
    df = spark.sql("select * from values (1, named_struct('first', 'Ana', 'last', 'Lima'), array('1', 'x'), "
                   "map('1', '2'), '1.5E-20'), (2, named_struct('first', 'Rui', 'last', 'Dias'), array('3'), "
                   "map('4', '5'), '12345678.50'), (3, null, null, map('6', 'y'), '9.9999999999') "
                   "as t(id, person, texts, pairs, price)")
    doc = Contract.model_validate({"contract": {"name": "nested", "version": "1.0.0"}, "dataset": {"name": "n"},
                                   "schema": {"fields": [
                                       {"name": "id", "type": "int"},
                                       {"name": "person", "type": "struct<last:string,first:string>"},
                                       {"name": "texts", "type": "array<int>"},
                                       {"name": "pairs", "type": "map<int,int>"},
                                       {"name": "price", "type": "decimal(12,2)"}]}})
    result = dq_governance.check(df, doc)
    try:
        found = {r.name: r.failed_count for r in result.rules if r.name.endswith("_type") and r.name != "id_type"}
        assert found == {"person_type": 0, "texts_type": 1, "pairs_type": 1, "price_type": 2}
        valid = result.valid_df.collect()
        assert [(r["id"], r["person"].asDict(), r["texts"], r["pairs"], r["price"]) for r in valid] == [
            (2, {"last": "Dias", "first": "Rui"}, [3], {4: 5}, Decimal("12345678.50"))]
    finally:
        result.release()


def test_numbers_are_judged_as_written_on_connect(spark):
    """A float bound beside a decimal or long is a decimal literal on Connect too (as doubles, row 1 passes), and
    text past a double's range does not convert to Infinity."""
    from dq_governance.contracts.model import Contract

    rows = [("1234567890123456.51", "9007199254740993", "1e309"), ("1234567890123456.50", "9007199254740992", "-inf")]
    df = spark.createDataFrame(rows, "amount string, units string, ratio string")
    doc = Contract.model_validate({"contract": {"name": "bounds", "version": "1.0.0"}, "dataset": {"name": "b"},
                                   "schema": {"fields": [
                                       {"name": "amount", "type": "decimal(20,2)", "maximum": 1234567890123456.5},
                                       {"name": "units", "type": "long", "allowed_values": [9007199254740992.0]},
                                       {"name": "ratio", "type": "double"}]}})
    result = dq_governance.check(df, doc)
    try:
        assert [result.rule(n).failed_count for n in ("amount_range", "units_allowed_values", "ratio_type")] == [1] * 3
        assert [(r["amount"], r["units"], r["ratio"]) for r in result.valid_df.collect()] == [
            (Decimal("1234567890123456.50"), 9007199254740992, float("-inf"))]
    finally:
        result.release()


def test_a_varchar_length_and_a_bound_past_a_long_are_checked_on_connect(spark):
    """varchar(n) reads as string on Connect too, its length held by the type rule; an integer bound past a long
    is an exact decimal literal there as well."""
    from dq_governance.contracts.model import Contract

    df = spark.createDataFrame([("abcd", str(10**20 + 1)), ("ab   ", str(10**20))], "code string, big string")
    doc = Contract.model_validate({"contract": {"name": "vc", "version": "1.0.0"}, "dataset": {"name": "vc"},
                                   "schema": {"fields": [{"name": "code", "type": "varchar(3)"},
                                                         {"name": "big", "type": "decimal(25,0)", "maximum": 10**20}]}})
    result = dq_governance.check(df, doc)
    try:
        assert [result.rule(n).failed_count for n in ("code_type", "big_range")] == [1, 1]
        assert (result.valid_rows, result.invalid_rows) == (1, 1)
    finally:
        result.release()


def test_references_and_wall_clock_text_are_read_as_written_on_connect(spark):
    """A reference 1.234 is not the key 1.23, a decimal(12,4) source is summed in its own type, and text declared
    timestamp_ntz keeps its wall clock in New York's spring gap, on Connect as on a classic session."""
    from datetime import datetime

    from dq_governance.contracts.model import Contract

    spark.createDataFrame([(1.234, Decimal("1.0040")), (2.0, Decimal("1.0040"))], "id double, amount decimal(12,4)") \
        .createOrReplaceTempView("dqgov_connect_ref")
    df = spark.createDataFrame([("2.00", "1.00", "10/03/2024 02:30"), ("1.23", "1.00", "x")],
                               "k string, amount string, ts string")
    doc = Contract.model_validate({
        "contract": {"name": "refs", "version": "1.0.0"}, "dataset": {"name": "r"},
        "schema": {"fields": [{"name": "k", "type": "decimal(10,2)"}, {"name": "amount", "type": "decimal(10,2)"},
                              {"name": "ts", "type": "timestamp_ntz", "date_format": "dd/MM/yyyy HH:mm"}]},
        "quality": {"rules": [
            {"type": "foreign_key", "column": "k", "reference": {"table": "dqgov_connect_ref", "column": "id"}},
            {"type": "reconcile", "name": "rec", "source": {"table": "dqgov_connect_ref"}, "sum_columns": ["amount"]}]}})
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        result = dq_governance.check(df, doc)
        assert [result.rule(n).failed_count for n in ("k_foreign_key", "ts_type")] == [1, 1]
        assert result.rule("rec").message == "sum(amount) differs from source by 0.008 (tolerance 0)"
        assert [r["ts"] for r in result.valid_df.collect()] == [datetime(2024, 3, 10, 2, 30)]  # row 2 breaks both
        result.release()
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
        spark.catalog.dropTempView("dqgov_connect_ref")


def test_run_seed_lab_blocked_leaves_the_target_untouched(spark, tmp_path):
    events_file = tmp_path / "events.jsonl"
    outs = {"target": str(tmp_path / "orders"), "quarantine": str(tmp_path / "quarantine"),
            "report": str(tmp_path / "report"), "lineage": f"file:{events_file}", "pipeline": "connect_it"}
    # blocked into a new target: nothing is created
    with pytest.raises(GateFailedError) as caught:
        dq_governance.run(read_csv(spark, "orders"), contract("orders"), **outs)
    blocked = caught.value.result
    assert (blocked.total_rows, blocked.valid_rows, blocked.invalid_rows) == (7, 1, 6)
    assert not (tmp_path / "orders").exists() and blocked.published is False
    quarantined = spark.read.parquet(outs["quarantine"])
    assert quarantined.where(f"_dq_run_id = '{blocked.run_id}'").count() == 6
    # published under a quarantine policy, then blocked again: the target stays byte for byte
    first = dq_governance.run(read_csv(spark, "orders"), contract("orders", on_failure="quarantine",
                                                                  minimum_valid_ratio=None), **outs)
    assert first.published and spark.read.parquet(outs["target"]).count() == 1
    before = fx.tree(outs["target"])
    again = dq_governance.run(read_csv(spark, "orders"), contract("orders"), raise_on_block=False, **outs)
    assert again.published is False and fx.tree(outs["target"]) == before and before
    # one quarantine partition and one report partition per run; the retry-safe layout of a classic run
    runs = {r["_dq_run_id"]: r["count"] for r in
            spark.read.parquet(outs["quarantine"]).groupBy("_dq_run_id").count().collect()}
    assert runs == {blocked.run_id: 6, first.run_id: 6, again.run_id: 6}
    history = spark.read.parquet(outs["report"]).groupBy("run_id").count().collect()
    assert {r["run_id"]: r["count"] for r in history} == {run.run_id: len(run.rules) for run in (blocked, first, again)}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # nothing staged beside
    sent = events(events_file)
    for event in sent:
        assert validation_errors(event) == []
    by_run: dict[str, list[str]] = {}
    for event in sent:
        by_run.setdefault(event["run"]["runId"], []).append(event["eventType"])
    assert by_run == {blocked.run_id: ["START", "FAIL"], first.run_id: ["START", "COMPLETE"],
                      again.run_id: ["START", "FAIL"]}
    output = next(o for o in sent if o["eventType"] == "COMPLETE")["outputs"]
    names = {o["name"] for o in output}
    assert str(tmp_path / "orders") in names and all(o["namespace"] == "file" for o in output)
    assert KEY not in events_file.read_text()


def test_a_rerun_of_the_same_run_replaces_its_quarantine_and_report(spark, tmp_path):
    outs = {"target": str(tmp_path / "orders"), "quarantine": str(tmp_path / "quarantine"),
            "report": str(tmp_path / "report"), "lineage": "none", "raise_on_block": False,
            "run_id": "4d1b7f0e-9c2a-4e55-8f1d-2a3b4c5d6e7f"}
    for _ in range(2):
        result = dq_governance.run(read_csv(spark, "orders"), contract("orders"), **outs)
    assert spark.read.parquet(outs["quarantine"]).count() == 6
    assert spark.read.parquet(outs["report"]).count() == len(result.rules)


def test_a_rerun_that_quarantines_nothing_empties_the_runs_quarantine(spark, tmp_path, caplog):
    """A dynamic overwrite of no rows replaces no partition: the first attempt's six rows stayed beside the
    rerun's report of none (valid + quarantined = 6 + 6 for 6 input rows). They are emptied, as on classic."""
    outs = {"target": str(tmp_path / "orders"), "quarantine": str(tmp_path / "quarantine"),
            "report": str(tmp_path / "report"), "lineage": "none", "raise_on_block": False,
            "run_id": "5e2c8a1f-0d3b-4f66-9a2e-3b4c5d6e7f80"}
    other = dq_governance.run(read_csv(spark, "orders"), contract("orders"), **{**outs, "run_id": "other-run"})
    first = dq_governance.run(read_csv(spark, "orders"), contract("orders"), **outs)
    assert (first.invalid_rows, other.invalid_rows) == (6, 6)
    clean = spark.read.option("header", True).csv(str(REPO / "tests" / "fixtures" / "orders_clean.csv"))
    with caplog.at_level(logging.WARNING):
        rerun = dq_governance.run(clean, contract("orders"), **outs)
    assert rerun.published and rerun.invalid_rows == 0 and rerun.valid_rows == rerun.total_rows > 0
    counts = {r["_dq_run_id"]: r["count"] for r in
              spark.read.parquet(outs["quarantine"]).groupBy("_dq_run_id").count().collect()}
    assert counts == {"other-run": 6}  # the rerun's run holds none; another run's rows are kept
    assert spark.read.parquet(outs["target"]).count() == rerun.valid_rows
    assert [r.getMessage() for r in caplog.records if "earlier attempt" in r.getMessage()] == []


def test_sales_publishes_three_masked_rows(spark, tmp_path):
    result = dq_governance.run(read_csv(spark, "sales"), contract("sales"), target=str(tmp_path / "sales"),
                               quarantine=str(tmp_path / "sales_quarantine"), report=str(tmp_path / "report"),
                               lineage="none")
    assert result.published and (result.total_rows, result.valid_rows, result.invalid_rows) == (6, 3, 3)
    rows = {str(r["venda_id"]): r["cpf"] for r in spark.read.parquet(str(tmp_path / "sales")).collect()}
    raw = raw_cpfs("sales", "venda_id")
    assert rows == {venda: pseudonym(KEY, raw[venda]) for venda in ("1001", "1002", "1003")}
    assert spark.read.parquet(str(tmp_path / "sales_quarantine")).count() == 3
    assert [o["rows"] for o in result.outputs] == [3, 3]


def test_masked_cpfs_equal_python_hmac_and_no_key_in_the_plan(spark, capsys):
    from dq_governance.masking import apply_masks

    customers = contract("customers")
    masked = apply_masks(read_csv(spark, "customers"), customers).select("cliente_id", "cpf")
    raw = raw_cpfs("customers", "cliente_id")
    assert len(raw) == 7 and {r["cliente_id"]: r["cpf"] for r in masked.collect()} == {
        cid: pseudonym(KEY, cpf) for cid, cpf in raw.items()}
    for mode in ("simple", "extended", "codegen", "cost", "formatted"):
        masked.explain(mode=mode)
    plans = capsys.readouterr().out
    assert "sha2(" in plans and "dqgov_hmac_" not in plans  # the sha2 path: no JVM UDF on Connect
    from dq_governance.masking.keys import MaskingKey

    key = MaskingKey.from_secret(KEY, "k")
    for secret in (KEY, KEY.encode().hex(), *(pad.hex() for pad in key.pads())):
        assert secret not in plans
    with pytest.raises(ConfigError, match=r"^hmac_engine 'jvm' needs a classic Spark session .*'auto' or 'sha2'"):
        apply_masks(read_csv(spark, "customers"), customers, hmac_engine="jvm")


def test_listener_registry_is_skipped_with_one_info_line(spark, caplog):
    from dq_governance.lineage.jvm_registry import record_results

    seed = contract("orders")
    result = dq_governance.check(read_csv(spark, "orders"), seed)
    with caplog.at_level(logging.INFO, logger="dq_governance.lineage.jvm_registry"):
        assert record_results(spark, "file", "/x", result, contract=seed) is False
        assert record_results(spark, "file", "/x", result, contract=seed) is False  # once per run
    lines = [r for r in caplog.records if r.name == "dq_governance.lineage.jvm_registry"]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO and "Spark Connect" in lines[0].getMessage()
    result.release()


def test_delta_publication_is_atomic_idempotent_and_merges(spark, tmp_path):
    target, report = str(tmp_path / "orders_delta"), str(tmp_path / "report_delta")
    quick = contract("orders", on_failure="quarantine", minimum_valid_ratio=None)
    common = {"quarantine": str(tmp_path / "q"), "lineage": "none", "format": "delta", "report": report,
              "report_format": "delta", "quarantine_format": "delta"}
    first = dq_governance.run(read_csv(spark, "orders"), quick, target=target, **common)
    assert first.published and spark.read.format("delta").load(target).count() == 1
    # append with the same run id twice: Delta skips the retry (txnAppId), rows are not doubled
    run_id = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
    appended = dq_governance.run(read_csv(spark, "orders"), quick, target=target, mode="append", run_id=run_id,
                                 **common)
    retried = dq_governance.run(read_csv(spark, "orders"), quick, target=target, mode="append", run_id=run_id,
                                **common)
    assert [o["retry_skipped"] for o in appended.outputs if o["kind"] == "target"] == [False]
    assert [o["retry_skipped"] for o in retried.outputs if o["kind"] == "target"] == [True]
    assert spark.read.format("delta").load(target).count() == 2
    # merge on the key: the valid row updates in place
    merged = dq_governance.run(read_csv(spark, "orders"), quick, target=target, mode="merge",
                               merge_keys=["pedido_id"], **common)
    assert merged.published and spark.read.format("delta").load(target).count() == 2
    history = spark.sql(f"DESCRIBE HISTORY delta.`{target}`").select("operation").collect()
    assert [r["operation"] for r in history][0] == "MERGE"
    # blocked: no new commit
    versions = spark.sql(f"DESCRIBE HISTORY delta.`{target}`").count()
    dq_governance.run(read_csv(spark, "orders"), contract("orders"), target=target, raise_on_block=False, **common)
    assert spark.sql(f"DESCRIBE HISTORY delta.`{target}`").count() == versions
    # four runs in the Delta history; the retried run's rows replaced (replaceWhere), not doubled
    history_rows = {r["run_id"]: r["count"] for r in
                    spark.read.format("delta").load(report).groupBy("run_id").count().collect()}
    assert len(history_rows) == 4 and history_rows[run_id] == len(retried.rules)


def test_plain_parquet_append_is_refused_before_any_write(spark, tmp_path):
    target = tmp_path / "orders"
    with pytest.raises(ConfigError, match=r"append to a plain parquet path .*use format delta"):
        dq_governance.run(read_csv(spark, "orders"), contract("orders", on_failure="quarantine",
                                                              minimum_valid_ratio=None),
                          target=str(target), quarantine=str(tmp_path / "q"), mode="append", lineage="none")
    assert not target.exists() and not (tmp_path / "q").exists()


def test_parquet_overwrite_says_once_that_it_is_not_atomic(spark, tmp_path, caplog):
    quick = contract("orders", on_failure="quarantine", minimum_valid_ratio=None)
    with caplog.at_level(logging.WARNING, logger="dq_governance.publish.writer"):
        result = dq_governance.run(read_csv(spark, "orders"), quick, target=str(tmp_path / "t"), lineage="none")
    lines = [r.getMessage() for r in caplog.records if r.name == "dq_governance.publish.writer"]
    assert len(lines) == 1 and "not atomic" in lines[0] and "use format delta" in lines[0]
    assert result.published and spark.read.parquet(str(tmp_path / "t")).count() == 1


def test_conservation_is_checked_on_what_the_write_reports(spark, tmp_path, monkeypatch):
    """A write that lands fewer rows than were counted raises ConservationError (a real short write)."""
    from dq_governance.publish import writer as connect  # the Connect section of the writer
    from dq_governance.publish.policy import ConservationError

    real = connect.publish_parquet

    def short_write(write):  # the write the server runs loses one row
        write.frame = write.frame.limit(max(write.rows - 1, 0))
        real(write)

    monkeypatch.setattr(connect, "promoter", lambda kind, fmt: short_write)
    with pytest.raises(ConservationError, match=r"staged written .* has 2 rows, expected 3"):
        dq_governance.run(read_csv(spark, "sales"), contract("sales"), target=str(tmp_path / "s"), lineage="none")


def test_lazy_analysis_errors_are_one_line(spark, tmp_path):
    from dq_governance.cli.inputs import read_frame

    with pytest.raises(InputDataError, match=r"cannot read as parquet: \[PATH_NOT_FOUND\]"):
        read_frame(spark, "parquet", str(tmp_path / "nope"))


def test_session_file_helpers_on_connect(spark, tmp_path):
    from dq_governance import session

    data = tmp_path / "d"
    spark.range(3).selectExpr("id", "cast(id % 2 as string) AS k").write.partitionBy("k").parquet(str(data))
    assert session.path_exists(spark, str(data)) and not session.path_exists(spark, str(tmp_path / "nope"))
    files = session.list_files(spark, str(data))
    assert {f.split("/")[0] for f in files} == {"k=0", "k=1"} and all(f.endswith(".parquet") for f in files)
    assert session.qualify(spark, str(data)) == f"file:{data}"
    session.mark(spark, str(tmp_path / "m"))
    assert session.path_exists(spark, str(tmp_path / "m"))


def test_a_streaming_frame_given_to_check_or_run_is_refused_in_one_line(spark, tmp_path):
    # isStreaming is an analysis round trip on Connect; the refusal must come before any pass or write
    stream = spark.readStream.schema("venda_id long, cpf string").option("header", True).csv(str(DATA))
    expected = ("df: a streaming DataFrame (readStream) is checked per micro-batch by dq_governance.check_stream(df, "
                "contract, target=..., quarantine=..., checkpoint=...), not by check(), run() or the decorators")
    for call in (lambda: dq_governance.check(stream, contract("sales")),
                 lambda: dq_governance.run(stream, contract("sales"), target=str(tmp_path / "v"),
                                           quarantine=str(tmp_path / "q"))):
        with pytest.raises(InputDataError) as refused:
            call()
        assert str(refused.value) == expected
    assert not (tmp_path / "v").exists() and not (tmp_path / "q").exists()


def test_a_pii_scan_on_connect_finds_what_a_classic_scan_finds(spark):
    # the detectors run as one lambda over every column's text (masking/detect.hit_rates), nested lambdas included
    from test_detect_pii import GENERATED_FINDINGS, generated_table

    from dq_governance.masking.detect import scan_pii

    report = scan_pii(generated_table(spark))
    found = {f.column: (f.pii_type, f.confidence, f.hit_rate, f.name_match) for f in report.findings}
    assert (report.sampled_rows, report.total_rows) == (200, 200) and found == GENERATED_FINDINGS

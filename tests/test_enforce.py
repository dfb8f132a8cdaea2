"""Contracts enforced by configuration alone: the session extension in real `spark-submit` and `spark-sql` runs.

Every run is a subprocess of PySpark's own launchers with the settings `dqgov listener-conf --enforce` printed,
the real OpenLineage Spark listener and our jar. The job (tests/enforce_job.py) imports nothing from
dq_governance. The assertions read what the listener itself wrote, the report history the extension appended,
and the target's files; the expected counts come from `dq_governance.check` on the same rows.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pyspark
import pytest
import yaml

from dq_governance.api import check
from dq_governance.lineage.enrich import find_extension_jar
from dq_governance.publish.report import read_history
from enforce_helpers import _contract, _dqgov, _env, _events, _flags, _governed_outputs, _tree_digest, require_extension
from lineage_schema import _validator

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "examples" / "data" / "orders.csv"
JOB = REPO / "tests" / "enforce_job.py"
SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPARK_40 = pyspark.__version__.startswith("4.0")

pytestmark = [pytest.mark.spark, pytest.mark.integration]

#: same-pass rule types on the edge cases the engine's tests use (nulls, blanks, bad dates, non-ASCII text)
PARITY_CSV = """id,name,email,cpf,amount,day,code,note,stamp,born,price
1,Ana,ana@example.com,529.982.247-25,10.5,2026-11-01,K1,ok,01/11/2026 10:00:00,1/11/2026,10.50
2,  ,bad-email,111.111.111-11,-3,2026-02-30,K9,,01/01/+999999 00:00:00,1/1/999999,1.234
3,,,,,,,,,,
4,José Ñandú,jose@exemplo.com.br,12345678909,1e3,01/11/2026,k1,çãõ,31/02/2026 10:00:00,31/2/2026,1.5E-20
5,Zoë,zoe@@x.org,529.982.247-2X,abc,2026-13-01,K0,   ,01/01/+99999 00:00:00,5/5/99999,1.230000000000000001
6,Łukasz,lukasz@example.pl,52998224725,1e309,2026-11-31,K2,ok,1/1/2026 10:00:00,x,-1.5E1
"""
PARITY_CONTRACT = {
    "contract": {"name": "parity", "version": "1.0.0", "owner": "team:qa"},
    "dataset": {"name": "parity", "format": "parquet"},
    "schema": {"fields": [
        {"name": "id", "type": "long", "required": True},
        {"name": "name", "type": "string", "required": True},
        {"name": "email", "type": "string", "format": "email"},
        {"name": "cpf", "type": "string", "format": "cpf"},
        # row 6's 1e309 reads as Infinity, which try_cast would keep: a type violation (casting._text_floating)
        {"name": "amount", "type": "double", "minimum": 0, "maximum": 999},
        {"name": "day", "type": "date", "date_format": "yyyy-MM-dd"},
        {"name": "code", "type": "string", "allowed_values": ["K0", "K1", "K2"]},
        {"name": "note", "type": "string"},
        # a year past the pattern parser's range (row 2) aborted the user's write through the compiled checks
        {"name": "stamp", "type": "timestamp", "date_format": "dd/MM/yyyy HH:mm:ss"},
        {"name": "born", "type": "string", "format": "date", "date_format": "d/M/y"},
        # decimal text with digits past the scale: a long fraction (row 5) or an exponent form (row 4)
        # a fractional bound beside a decimal is a decimal literal (a double comparison loses digits past the 16th)
        {"name": "price", "type": "decimal(10,2)", "minimum": 0.5},
    ]},
    "quality": {"on_failure": "warn", "rules": [
        {"type": "regex", "column": "code", "pattern": "^K[0-9]$"},
        # classes Java reads faster spelled out (checks/regex_text.py); Y-b holds [ \\ ] ^ _ `, escaped in the SQL text
        {"type": "regex", "name": "name_letters", "column": "name", "pattern": "^[A-Za-z_.-]+$"},
        {"type": "regex", "name": "note_shape", "column": "note", "pattern": "^[a-z_Y-b]+$"},
        {"type": "length", "column": "name", "min": 3, "max": 6},
        {"type": "expression", "name": "amount_below_id", "expression": "amount IS NULL OR amount > id"},
        {"type": "not_null", "name": "note_when_ok", "columns": ["note"], "filter": "code = 'K1'"},
        {"type": "missing_count", "column": "note", "must_be": "<= 1"},
        {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "< 10%"},
        {"type": "row_count", "must_be": ">= 6"},
        # current_date() and current_user() are replaced before a query runs; in the write's own pass too (they
        # failed the user's write). Row 1's day is before today: one row.
        {"type": "expression", "name": "day_not_past", "expression": "day >= current_date() OR current_user() IS NULL"},
        # more values than Spark's IN-to-hash-set threshold (10): the extension runs it as INSET, as the engine does
        {"type": "allowed_values", "name": "code_listed", "column": "code", "values": [f"K{i}" for i in range(12)]},
    ]},
}






def _submit(work: Path, flags: list[str], *args: str, tool: str = "spark-submit") -> subprocess.CompletedProcess:
    cmd = [str(SPARK_HOME / "bin" / tool), "--master", "local[1]", *flags,
           "--conf", f"spark.sql.warehouse.dir={work / 'warehouse'}", "--conf", "spark.ui.enabled=false",
           "--driver-java-options", f"-Dderby.system.home={work}"]
    cmd += [*args] if tool == "spark-sql" else [str(JOB), *args]
    return subprocess.run(cmd, cwd=work, env=_env(), capture_output=True, text=True, timeout=300)




def _files(path: Path) -> list[tuple]:
    import pyarrow.parquet as pq

    out = []
    for p in sorted(path.iterdir()):
        shape = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<job>", p.name)
        if p.suffix == ".crc":  # a checksum of those bytes: present on both sides is all that can match
            out.append((shape,))
        elif p.suffix == ".parquet":
            meta = pq.ParquetFile(p).metadata
            out.append((shape, pq.read_table(p).to_pylist(), meta.num_row_groups, meta.serialized_size, meta.metadata))
        else:
            out.append((shape, p.read_bytes()))
    return out



STATUS_FAIL = {"type": "allowed_values", "name": "status_fail", "column": "status",
               "values": ["CRIADO", "PAGO", "CANCELADO"], "action": "fail"}


#: under ANSI mode (Spark 4's default) this cast raises on every status of the seed
ANSI_RAISING = {"type": "expression", "name": "status_is_a_positive_number", "expression": "CAST(status AS INT) > 0"}


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    require_extension("test_extension_on_spark_35_logs_one_line_and_steps_aside")
    work = tmp_path_factory.mktemp("enforce")
    (work / "parity.csv").write_text(PARITY_CSV, encoding="utf-8")
    (work / "good.csv").write_text("\n".join(SEED.read_text().splitlines()[:3]) + "\n")
    contracts = [
        _contract(work, "orders", path=str(work / "orders")),
        _contract(work, "orders_block", path=str(work / "blocked")),
        _contract(work, "orders_drop", path=str(work / "dropped"), extra_rules=[
            {"type": "allowed_values", "name": "status_known", "column": "status",
             "values": ["CRIADO", "PAGO", "CANCELADO"], "action": "drop"}]),
        _contract(work, "orders_sql", table="orders_sql"),
        _contract(work, "orders_tbl", table="orders_tbl"),
        _contract(work, "orders_tbl_ctas", table="orders_tbl_ctas"),
        *[_contract(work, f"orders_{fmt}", path=str(work / f"fmt_{fmt}")) for fmt in ("csv", "json", "orc")],
        _contract(work, "orders_dt", table="orders_dt", extra_rules=[STATUS_FAIL]),
        _contract(work, "orders_jdbc", table="jdbc.APP.orders_jdbc"),  # another catalog: named in full
        _contract(work, "orders_delta", path=str(work / "delta_orders"), extra_rules=[STATUS_FAIL]),
        _contract(work, "orders_ansi", path=str(work / "ansi"), extra_rules=[ANSI_RAISING]),
        _contract(work, "orders_dpo", path=str(work / "dpo")),
        _contract(work, "orders_local", path=str(work / "local")),
        *[_contract(work, name, table=name) for name in ("orders_new", "orders_new_ctas", "orders_new_bad")],
        _contract(work, "orders_queries", path=str(work / "queries")),
        _contract(work, "orders_stream", path=str(work / "stream")),
        *[_contract(work, name, table=name) for name in ("orders_hive", "orders_hive_ctas")],
    ]
    # a warn policy: only the job's own failure can make its run failed
    fails = _contract(work, "orders_fails", path=str(work / "failing"))
    doc = yaml.safe_load(fails.read_text())
    doc["quality"] = {**{k: v for k, v in doc["quality"].items() if k != "minimum_valid_ratio"}, "on_failure": "warn"}
    fails.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    contracts.append(fails)
    commit_fails = work / "orders_commit_fails.yaml"
    commit_fails.write_text(yaml.safe_dump({**doc, "contract": {**doc["contract"], "name": "orders_commit_fails"},
                                            "dataset": {**doc["dataset"], "path": str(work / "failing_commit")}},
                                           sort_keys=False, allow_unicode=True))
    contracts.append(commit_fails)
    parity = work / "parity.yaml"
    parity.write_text(yaml.safe_dump({**PARITY_CONTRACT, "dataset": {**PARITY_CONTRACT["dataset"],
                                                                     "path": str(work / "parity")}},
                                     sort_keys=False, allow_unicode=True), encoding="utf-8")
    contracts.append(parity)
    # contract files named one by one (a directory works too)
    _dqgov("manifest", *map(str, contracts), "-o", str(work / "manifest.json"), cwd=work)
    return work


@pytest.fixture(scope="module")
def observed(work):
    """The seed lab's seven orders appended to parquet by a plain job, in observe mode."""
    events = work / "observe.jsonl"
    proc = _submit(work, _flags(work, work / "orders.yaml", events, "observe", work / "manifest.json"),
                   "append", str(work / "orders"), str(SEED))
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc, _events(events)


def _expected(spark, contract: Path, csv: Path):
    result = check(spark.read.option("header", True).csv(str(csv)), str(contract))
    return result


def test_the_listener_event_has_the_engine_s_count_for_every_same_pass_rule(spark, work, observed):
    proc, events = observed
    assert "rows=7" in proc.stdout
    governed = _governed_outputs(events, "/orders")
    assert [e["eventType"] for e, _d in governed][-1] == "COMPLETE"
    event, dataset = governed[-1]
    facet = dataset["facets"]["dqgov_dataContract"]
    expected = _expected(spark, work / "orders.yaml", SEED)
    same_pass = {r["name"]: r["failed_count"] for r in facet["rules"] if "failed_count" in r}
    assert same_pass == {r.name: r.failed_count for r in expected.rules
                         if r.name in same_pass}
    assert {k: v for k, v in same_pass.items() if v} == {
        "cliente_id_not_null": 1, "status_allowed_values": 1, "valor_range": 1, "data_pedido_type": 1}
    assert len(same_pass) == 14  # every row rule of the contract but the uniqueness one
    assert (facet["status"], facet["valid_rows"], facet["invalid_rows"], facet["written_rows"], facet["vetoed"],
            facet["enforce"], facet["row_outputs"]) == ("failed", 3, 4, 7, False, "observe", "write")
    metrics = dataset["facets"]["dataQualityMetrics"]
    assert metrics["rowCount"] == 7
    assert {c: m["nullCount"] for c, m in metrics["columnMetrics"].items()} == {
        "pedido_id": 0, "cliente_id": 1, "status": 0, "valor": 0, "data_pedido": 0, "email": 0}
    for key in ("dqgov_dataContract", "dataQualityMetrics"):
        facet_json = dataset["facets"][key]
        errors = list(_validator(facet_json["_schemaURL"]).iter_errors(facet_json))
        assert errors == [], (key, errors[:1])
    assert "ana@example.com" not in json.dumps(events)  # no value of the PII column leaves


def test_rules_that_cannot_run_in_the_write_pass_are_listed_with_their_reason(work, observed):
    _proc, events = observed
    _event, dataset = _governed_outputs(events, "/orders")[-1]
    manifest = json.loads((work / "manifest.json").read_text())
    orders = next(c for c in manifest["contracts"] if c["contract"]["name"] == "orders")
    reasons = {r["name"]: r["reason"] for r in orders["checks"]["notSamePass"]}
    assert reasons == {
        "pedido_id_unique": "needs every row's key at once (an aggregation and a join beside the write)",
        "undeclared_columns": "judged on the input's column names by dqgov check"}
    assert dataset["facets"]["dqgov_dataContract"]["not_evaluated"] == orders["checks"]["notSamePass"]


def test_the_report_history_has_the_rows_under_the_application_name(spark, work, observed):
    rows = {r["check_name"]: r for r in read_history(str(work / "history"), spark=spark, contract="orders").collect()}
    expected = _expected(spark, work / "orders.yaml", SEED)
    assert {r["pipeline"] for r in rows.values()} == {"plain_orders_job"}
    assert set(rows) == {r.name for r in expected.rules}  # the same-pass rules and the two not evaluated
    for rule in expected.rules:
        row = rows[rule.name]
        if row["rule_status"] == "skipped":
            assert rule.name in ("pedido_id_unique", "undeclared_columns")
            assert row["message"].startswith("not evaluated in the write pass: ")
        else:
            assert (row["failed_count"], row["rule_status"]) == (rule.failed_count, rule.status), rule.name
    assert {(r["total_rows"], r["valid_rows"], r["published"], r["row_outputs"]) for r in rows.values()} == {
        (7, 3, True, "write")}
    # written under a hidden name and renamed: only the finished file and its checksum are left
    [run_id] = {r["run_id"] for r in rows.values()}
    run_dir = work / "history" / "pipeline=plain_orders_job" / f"run_id={run_id}"
    names = sorted(p.name for p in run_dir.iterdir())
    assert len(names) == 2 and names[0].startswith(".part-00000-") and names[0].endswith(".parquet.crc")
    assert names[1] == names[0][1:-4]


def test_the_spark_sql_cli_insert_into_a_governed_table_is_measured(work):
    events = work / "sql.jsonl"
    flags = _flags(work, work / "orders_sql.yaml", events, "observe", work / "manifest.json")
    sql = ("CREATE TABLE orders_sql (pedido_id BIGINT, cliente_id BIGINT, status STRING, valor DECIMAL(12,2), "
           "data_pedido DATE, email STRING) USING parquet; "
           "INSERT INTO orders_sql VALUES (1, 101, 'PAGO', 150.00, DATE'2026-11-01', 'ana@example.com'), "
           "(4, 104, 'DESCONHECIDO', -5.00, NULL, 'x')")
    proc = _submit(work, flags, "-e", sql, tool="spark-sql")
    assert proc.returncode == 0, proc.stderr[-4000:]
    governed = _governed_outputs(_events(events), "/orders_sql")
    assert governed, "no event for the INSERT carried the contract's results"
    facet = governed[-1][1]["facets"]["dqgov_dataContract"]
    failed = {r["name"]: r["failed_count"] for r in facet["rules"] if r.get("failed_count")}
    assert failed == {"status_allowed_values": 1, "valor_range": 1, "data_pedido_not_null": 1, "email_format": 1}
    assert (facet["name"], facet["written_rows"], facet["valid_rows"]) == ("orders_sql", 2, 1)


def test_block_mode_vetoes_an_append_that_fails_the_gate_and_keeps_the_target(work):
    events = work / "block.jsonl"
    flags = _flags(work, work / "orders_block.yaml", events, "block", work / "manifest.json")
    first = _submit(work, flags, "append", str(work / "blocked"), str(work / "good.csv"))
    assert first.returncode == 0, first.stderr[-4000:]
    before = _tree_digest(work / "blocked")
    second = _submit(work, flags, "append", str(work / "blocked"), str(SEED))
    assert second.returncode != 0
    lines = [line for line in second.stderr.splitlines() if "GovernanceVetoException: " in line]
    message = lines[0].split("GovernanceVetoException: ", 1)[1]
    assert message == (f"dq-governance: write to file:{work / 'blocked'} blocked by contract orders_block "
                       "(valid ratio 0.4286 is below minimum_valid_ratio 0.99); 7 row(s) checked, 3 valid; "
                       "nothing was committed")
    assert _tree_digest(work / "blocked") == before  # listed and hashed: byte for byte as it was
    governed = _governed_outputs(_events(events), "/blocked")
    assert [(e["eventType"], d["facets"]["dqgov_dataContract"]["vetoed"]) for e, d in governed
            if e["eventType"] in ("COMPLETE", "FAIL")] == [("COMPLETE", False), ("FAIL", True)]


def test_block_mode_vetoes_a_dynamic_partition_overwrite_and_keeps_every_partition(work):
    events = work / "dpo.jsonl"
    flags = _flags(work, work / "orders_dpo.yaml", events, "block", work / "manifest.json")
    target = work / "dpo"
    first = _submit(work, flags, "dynamic", str(target), str(work / "good.csv"))
    assert first.returncode == 0, first.stderr[-4000:]
    before = _tree_digest(target)
    assert any(name.startswith("status=") for name in before)  # partitions the seed overwrites too
    second = _submit(work, flags, "dynamic", str(target), str(SEED))
    assert second.returncode != 0
    lines = [line for line in second.stderr.splitlines() if "GovernanceVetoException: " in line]
    assert lines[0].split("GovernanceVetoException: ", 1)[1] == (
        f"dq-governance: write to file:{target} blocked by contract orders_dpo (valid ratio 0.4286 is below "
        "minimum_valid_ratio 0.99); 7 row(s) checked, 3 valid; nothing was committed")
    # listed and hashed: every partition as it was, and no staging directory left behind
    assert _tree_digest(target) == before and not list(target.glob(".spark-staging*"))
    governed = _governed_outputs(_events(events), "/dpo")
    assert [(e["eventType"], d["facets"]["dqgov_dataContract"]["vetoed"]) for e, d in governed
            if e["eventType"] in ("COMPLETE", "FAIL")] == [("COMPLETE", False), ("FAIL", True)]


def test_block_mode_refuses_a_static_overwrite_up_front(work):
    events = work / "overwrite.jsonl"
    flags = _flags(work, work / "orders_block.yaml", events, "block", work / "manifest.json")
    target = work / "blocked"
    before = _tree_digest(target)
    proc = _submit(work, flags, "overwrite", str(target), str(work / "good.csv"))
    assert proc.returncode != 0
    assert "block mode refuses a static overwrite of file:" in proc.stderr
    assert _tree_digest(target) == before


def test_block_mode_creates_new_tables_of_valid_rows_and_refuses_to_overwrite_an_existing_one(work):
    # saveAsTable and CTAS of a new table write in Overwrite mode to a location that holds nothing: measured and
    # judged before their commit, as an append is. Overwriting the existing table would delete its files first.
    events = work / "new_tables.jsonl"
    flags = _flags(work, work / "orders_new.yaml", events, "block", work / "manifest.json")
    proc = _submit(work, flags, "tables", "orders_new", str(work / "good.csv"))
    assert proc.returncode != 0
    for table in ("orders_new", "orders_new_ctas"):
        governed = [d for e, d in _governed_outputs(_events(events), f"/warehouse/{table}")
                    if e["eventType"] == "COMPLETE"]
        assert governed, table
        facet = governed[-1]["facets"]["dqgov_dataContract"]
        assert (facet["name"], facet["written_rows"], facet["valid_rows"], facet["vetoed"]) == (table, 2, 2, False)
    assert ("block mode refuses a static overwrite of spark_catalog.default.orders_new (contract orders_new)"
            in proc.stderr)
    files = [line.split("=", 1)[1].split(",") for line in proc.stdout.splitlines() if line.startswith("files=")]
    assert files and files[0] == sorted(p.name for p in (work / "warehouse" / "orders_new").glob("part-*"))


def test_block_mode_vetoes_a_new_table_that_fails_the_gate_and_creates_nothing(work):
    events = work / "new_bad.jsonl"
    flags = _flags(work, work / "orders_new_bad.yaml", events, "block", work / "manifest.json")
    proc = _submit(work, flags, "tables", "orders_new_bad", str(SEED))
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if "GovernanceVetoException: " in line]
    assert lines[0].split("GovernanceVetoException: ", 1)[1] == (
        "dq-governance: write to spark_catalog.default.orders_new_bad blocked by contract orders_new_bad (valid "
        "ratio 0.4286 is below minimum_valid_ratio 0.99); 7 row(s) checked, 3 valid; nothing was committed")
    assert "files=" not in proc.stdout  # the job stopped at the first write: no CTAS, no overwrite
    assert not [p for p in (work / "warehouse").glob("orders_new_bad*/**/*") if p.is_file()]


def test_the_results_listener_is_registered_once_per_session_however_many_queries(work):
    events = work / "queries.jsonl"
    proc = _submit(work, _flags(work, work / "orders_queries.yaml", events, "observe", work / "manifest.json"),
                   "queries", str(work / "queries"), str(SEED))
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "results_listeners=1" in proc.stdout.splitlines()  # not one more per query the session planned
    facet = _governed_outputs(_events(events), "/queries")[-1][1]["facets"]["dqgov_dataContract"]
    assert (facet["name"], facet["written_rows"], facet["valid_rows"]) == ("orders_queries", 7, 3)


def test_a_streaming_file_sink_into_a_governed_path_says_in_one_line_that_it_is_not_measured(work):
    target = work / "stream"
    flags = _flags(work, work / "orders_stream.yaml", work / "stream.jsonl", "block", work / "manifest.json")
    proc = _submit(work, flags, "stream", str(target), str(SEED))
    assert proc.returncode == 0, proc.stderr[-4000:]  # block mode too: not measured, so never blocked
    ours = [line.split("dq-governance extension: ", 1)[1] for line in proc.stderr.splitlines()
            if "dq-governance extension: " in line]
    assert ours == [f"contract orders_stream: streaming writes ({target}, FileStreamSink) are not measured by "
                    "this release; they proceed ungoverned"]
    import pyarrow.parquet as pq

    assert sum(pq.read_table(p).num_rows for p in target.glob("part-*.parquet")) == 7


def test_a_hive_format_table_says_in_one_line_that_it_is_not_measured(work):
    # the spark-sql CLI's session has Hive support: a text table is written through Hive's serde (InsertIntoHiveTable,
    # also the nested write of a Hive CTAS), past the writer the extension measures
    flags = _flags(work, work / "orders_hive.yaml", work / "hive.jsonl", "block", work / "manifest.json")
    sql = ("CREATE TABLE orders_hive (pedido_id BIGINT, cliente_id BIGINT, status STRING, valor DECIMAL(12,2), "
           "data_pedido STRING, email STRING) STORED AS TEXTFILE; "
           "INSERT INTO orders_hive VALUES (4, NULL, 'DESCONHECIDO', -5.00, 'x', 'x'); "
           "CREATE TABLE orders_hive_ctas STORED AS TEXTFILE AS SELECT * FROM orders_hive; "
           "SELECT COUNT(*) FROM orders_hive_ctas")
    proc = _submit(work, flags, "-e", sql, tool="spark-sql")
    assert proc.returncode == 0, proc.stderr[-4000:]
    ours = [line.split("dq-governance extension: ", 1)[1] for line in proc.stderr.splitlines()
            if "dq-governance extension: " in line]
    assert ours == [f"contract {name}: Hive-format table writes (spark_catalog.default.{name}, InsertIntoHiveTable) "
                    "are not measured by this release; they proceed ungoverned"
                    for name in ("orders_hive", "orders_hive_ctas")]
    assert proc.stdout.split()[-1] == "1"  # the CTAS wrote the inserted row


def test_a_drop_rule_writes_exactly_the_rows_that_pass_it(spark, work):
    events = work / "drop.jsonl"
    proc = _submit(work, _flags(work, work / "orders_drop.yaml", events, "observe", work / "manifest.json"),
                   "append", str(work / "dropped"), str(SEED))
    assert proc.returncode == 0, proc.stderr[-4000:]
    written = spark.read.parquet(str(work / "dropped"))
    assert sorted(r["pedido_id"] for r in written.collect()) == ["1", "2", "2", "3", "5", "6"]
    facet = _governed_outputs(_events(events), "/dropped")[-1][1]["facets"]["dqgov_dataContract"]
    assert (facet["dropped_rows"], facet["written_rows"]) == (1, 6)
    assert {r["name"]: r.get("failed_count") for r in facet["rules"]}["status_known"] == 1


def test_writes_of_local_rows_and_of_no_rows_are_measured(work):
    # Spark's optimizer evaluates a filter over inline rows while it plans, and drops one over no rows: the checks
    # ride on a metrics node that it leaves in place, so both writes are counted in their own jobs
    events, event_log = work / "local.jsonl", work / "local-eventlog"
    event_log.mkdir()
    flags = [*_flags(work, work / "orders_local.yaml", events, "observe", work / "manifest.json"),
             "--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir={event_log}",
             "--conf", "spark.eventLog.compress=false"]
    proc = _submit(work, flags, "local", str(work / "local"), str(SEED))
    assert proc.returncode == 0, proc.stderr[-4000:]
    governed = [(e, d) for e, d in _governed_outputs(_events(events), "/local") if e["eventType"] == "COMPLETE"]
    assert len(governed) == 3
    (_seven, first), (_none, second), (_again, third) = governed
    # the checks' text is parsed once per session (CheckTexts), until a setting the parser reads changes: the
    # third write's e-mail pattern keeps the manifest's escaped backslashes as written, so each e-mail now needs
    # a backslash before its last dot, and all seven fail
    patterns = [re.findall(r"ascii_regex\(\^\[[A-Za-z0-9]+\._%\+(\\+)-\]", plan) for plan in _tally_plans(event_log)]
    assert patterns == [["\\"], ["\\"], ["\\\\"]]
    # inline rows have whole-stage code: the tally runs inside it (TallyExec), on the row the stage builds for the
    # write; the parity tests count through its own iterator (a CSV scan) and through interpreted code
    assert _tally_runners(event_log) == {"WholeStageCodegen"}
    before, after = ({r["name"]: r.get("failed_count") for r in d["facets"]["dqgov_dataContract"]["rules"]}
                     for d in (first, third))
    assert after == {**before, "email_format": 7} and before["email_format"] == 0
    facet = first["facets"]["dqgov_dataContract"]
    assert {r["name"]: r["failed_count"] for r in facet["rules"] if r.get("failed_count")} == SEED_FAILED
    assert (facet["valid_rows"], facet["written_rows"]) == (3, 7)
    assert first["facets"]["dataQualityMetrics"]["rowCount"] == 7
    facet = second["facets"]["dqgov_dataContract"]
    assert (facet["valid_rows"], facet["written_rows"], facet["dropped_rows"]) == (0, 0, 0)
    assert {r.get("failed_count") for r in facet["rules"]} <= {0, None}
    assert second["facets"]["dataQualityMetrics"]["rowCount"] == 0


def test_a_write_whose_job_or_commit_fails_is_recorded_as_a_failed_run(spark, work):
    (work / "failing_commit" / "_SUCCESS").mkdir(parents=True)  # the committer cannot write its marker there
    events = work / "failing.jsonl"
    proc = _submit(work, _flags(work, work / "orders_fails.yaml", events, "observe", work / "manifest.json"),
                   "failing", str(work / "failing"), str(SEED))
    assert proc.returncode != 0 and "the job failed on order 6" in proc.stderr
    assert "commit_failed=" in proc.stdout
    assert not list((work / "failing").glob("*.parquet"))
    # the commit's failure: every task finished, so the counts are whole; the run failed all the same
    runs = read_history(str(work / "history"), spark=spark, contract="orders_commit_fails").collect()
    assert {(r["run_status"], r["published"], r["gate_passed"], r["total_rows"]) for r in runs} == {
        ("failed", False, False, 7)}
    assert len(runs) == 17
    # the counts of the tasks that finished (none here: 0 rows) would have read as a pass
    runs = read_history(str(work / "history"), spark=spark, contract="orders_fails").collect()
    assert {(r["run_status"], r["published"], r["gate_passed"], r["total_rows"]) for r in runs} == {
        ("failed", False, False, 0)}
    assert len(runs) == 17 and {r["check_name"] for r in runs} >= {"status_allowed_values", "pedido_id_unique"}


def test_an_expression_rule_that_raises_under_ansi_never_fails_the_users_write(spark, work):
    from dq_governance.errors import InputDataError

    assert spark.conf.get("spark.sql.ansi.enabled") == "true"
    with pytest.raises(InputDataError, match="CAST_INVALID_INPUT"):  # dqgov check says so in one line
        _expected(spark, work / "orders_ansi.yaml", SEED)
    events = work / "ansi.jsonl"
    proc = _submit(work, _flags(work, work / "orders_ansi.yaml", events, "observe", work / "manifest.json"),
                   "append", str(work / "ansi"), str(SEED))
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "rows=7" in proc.stdout and spark.read.parquet(str(work / "ansi")).count() == 7
    event, dataset = _governed_outputs(_events(events), "/ansi")[-1]
    rules = {r["name"]: r.get("failed_count") for r in dataset["facets"]["dqgov_dataContract"]["rules"]}
    # the rule is null on every row with ANSI off (not counted), the seed's own four failures are
    assert event["eventType"] == "COMPLETE" and rules["status_is_a_positive_number"] == 0
    assert {k: v for k, v in rules.items() if v} == {
        "cliente_id_not_null": 1, "status_allowed_values": 1, "valor_range": 1, "data_pedido_type": 1}


def test_an_ungoverned_write_is_the_same_with_and_without_the_extension(work):
    with_ext = work / "plain_with.jsonl"
    flags = _flags(work, work / "orders.yaml", with_ext, "observe", work / "manifest.json")
    without = work / "plain_without.jsonl"
    printed = _flags(work, work / "orders.yaml", without, "observe", work / "manifest.json")
    pairs = [printed[i:i + 2] for i in range(0, len(printed), 2)]  # ["--conf", "key=value"]
    plain = [part for pair in pairs if not pair[1].startswith(("spark.sql.extensions=", "spark.dqgov."))
             for part in pair]
    for flag_set, name in ((flags, "free_with"), (plain, "free_without")):
        proc = _submit(work, flag_set, "append", str(work / name), str(SEED))
        assert proc.returncode == 0, proc.stderr[-4000:]
    # The same files: names (but the random job id), rows, schema and footer metadata. Not raw bytes: parquet-mr
    # lists each column's encodings from a hash set, whose order changes from one JVM to the next.
    assert _files(work / "free_with") == _files(work / "free_without")

    def shape(path: Path, name: str) -> list:
        out = []
        for event in _events(path):
            for d in event.get("outputs") or []:
                if d["name"].endswith(name):
                    out.append((event["eventType"], sorted(d.get("facets") or {}),
                                {k: v for k, v in (d.get("facets") or {}).get("schema", {}).items() if k != "_producer"}))
        return out
    assert shape(with_ext, "/free_with") == shape(without, "/free_without")
    assert shape(with_ext, "/free_with")  # the listener did report the write


def test_a_broken_manifest_lets_the_job_finish_with_one_warning(work):
    broken = work / "broken.json"
    broken.write_text('{"manifestVersion": 2, "contracts": [')
    flags = _flags(work, work / "orders.yaml", work / "broken.jsonl", "block", broken)
    # a misspelt key, our prefix in other letters (Spark's keys are case-sensitive) and a blank pipeline: each is
    # a line, never silent
    proc = _submit(work, [*flags, "--conf", "spark.dqgov.enforc=observe", "--conf", "spark.DQGOV.enforce=block",
                          "--conf", "spark.dqgov.pipeline= "], "append", str(work / "orders_broken"), str(SEED))
    assert proc.returncode == 0, proc.stderr[-4000:]
    keys = ("spark.dqgov.commitProtocolClass.delegate, spark.dqgov.enforce, spark.dqgov.history, "
            "spark.dqgov.manifest, spark.dqgov.pipeline")
    assert _extension_lines(proc) == [
        f"manifest {broken}: invalid JSON at line 1, column 38: unexpected end of input; writes proceed ungoverned",
        f"spark.DQGOV.enforce is not a setting of this extension ({keys}); it is ignored",
        f"spark.dqgov.enforc is not a setting of this extension ({keys}); it is ignored",
        "spark.dqgov.pipeline is blank; reports go under the application's name, plain_orders_job"]
    assert len(list((work / "orders_broken").glob("*.parquet"))) == 1


def _extension_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return sorted(line.split("dq-governance extension: ", 1)[1] for line in proc.stderr.splitlines()
                  if "dq-governance extension: " in line)


def test_block_mode_with_no_manifest_says_so_in_one_line(work):
    """The extension in block mode with nothing to enforce committed a failing write without a word."""
    flags = _flags(work, work / "orders.yaml", work / "unset.jsonl", "block", work / "manifest.json")
    pairs = [flags[i:i + 2] for i in range(0, len(flags), 2)]  # ["--conf", "key=value"]
    unset = [part for pair in pairs if "manifest=" not in pair[1] for part in pair]
    proc = _submit(work, unset, "append", str(work / "orders_unset"), str(SEED))
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert _extension_lines(proc) == [
        "no manifest is set (spark.dqgov.manifest): writes proceed ungoverned, although spark.dqgov.enforce=block"]
    assert len(list((work / "orders_unset").glob("*.parquet"))) == 1


def _tally_nodes(event_log: Path) -> list[tuple[dict, dict]]:
    """Each governed write's metrics node in the Spark event log's plans, in order, with the node that runs it."""
    found: list[tuple[dict, dict]] = []

    def walk(node: dict, parent: dict | None) -> None:
        if node["simpleString"].startswith("Tally dqgov_tally(RowTally(dqgov:") and parent:
            found.append((node, parent))
        for child in node["children"]:
            walk(child, node)

    for log in sorted(event_log.rglob("events_*")):
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if "sparkPlanInfo" in event:
                walk(event["sparkPlanInfo"], None)
    return found


def _tally_plans(event_log: Path) -> list[str]:
    """The metrics node of each governed write, as the Spark event log shows its plan, in order."""
    return list(dict.fromkeys(node["simpleString"] for node, _runner in _tally_nodes(event_log)))


def _tally_runners(event_log: Path) -> set[str]:
    """The nodes that run the metrics nodes: "WholeStageCodegen" where the tally runs inside the stage's code."""
    return {runner["nodeName"].split(" (")[0] for _node, runner in _tally_nodes(event_log)}


def _parity_run(spark, work, flags, events):
    """The parity edge cases appended by a plain job: (its per-rule results, the engine's, its contract facet)."""
    proc = _submit(work, flags, "append", str(work / "parity"), str(work / "parity.csv"))
    assert proc.returncode == 0, proc.stderr[-4000:]
    facet = _governed_outputs(_events(events), "/parity")[-1][1]["facets"]["dqgov_dataContract"]
    ours = {r["name"]: (r.get("failed_count"), r["status"], r.get("metric_value")) for r in facet["rules"]}
    expected = _expected(spark, work / "parity.yaml", work / "parity.csv")
    engine = {r.name: (r.failed_count, r.status, r.metric_value if r.type in ("row_count", "missing_count",
                                                                               "invalid_percent") else None)
              for r in expected.rules if r.name in ours}
    assert ours.keys() == engine.keys()
    return ours, engine, facet


def test_the_interpreted_path_counts_as_the_generated_code_does(spark, work):
    # Spark falls back to interpreting an expression whose generated code does not compile: the tally's counts
    # must not depend on which path ran (spark.sql.codegen.factoryMode is Spark's own switch between them)
    events = work / "parity-interpreted.jsonl"
    flags = [*_flags(work, work / "parity.yaml", events, "observe", work / "manifest.json"),
             "--conf", "spark.sql.codegen.factoryMode=NO_CODEGEN", "--conf", "spark.sql.codegen.wholeStage=false"]
    ours, engine, _facet = _parity_run(spark, work, flags, events)
    assert ours == engine
    assert sum(1 for v in ours.values() if v[0]) >= 10


def test_parity_every_same_pass_rule_type_counts_as_the_engine_does(spark, work):
    events, event_log = work / "parity.jsonl", work / "parity-eventlog"
    event_log.mkdir()
    flags = [*_flags(work, work / "parity.yaml", events, "observe", work / "manifest.json"),
             "--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir={event_log}",
             "--conf", "spark.eventLog.compress=false"]
    ours, engine, facet = _parity_run(spark, work, flags, events)
    assert {"regex", "length", "expression", "not_null", "missing_count", "invalid_percent", "row_count", "format",
            "range", "allowed_values", "type"} <= {r["type"] for r in facet["rules"]}
    assert ours == engine
    assert sum(1 for v in ours.values() if v[0]) >= 10  # the edge cases do fail most rules
    # rows 2, 4 and 6 each: an overflowing year, an impossible date, a day of one digit / no date
    assert (ours["stamp_type"][0], ours["born_format"][0]) == (3, 3)
    assert (ours["price_type"][0], ours["price_range"][0]) == (3, 1)  # rows 2, 4, 5; row 6 is -15
    assert "(price < CAST(0.5BD AS DECIMAL(10,2)))" in (work / "manifest.json").read_text()  # a decimal, not 0.5D
    assert ours["day_not_past"][0] == 1  # row 1's day, 2026-11-01
    assert (ours["amount_type"][0], ours["amount_range"][0]) == (2, 2)  # rows 5 and 6; rows 2 (-3) and 4 (1e3)
    assert ours["code_listed"][0] == 1  # row 4's lower-case k1
    # blanks and non-ASCII letters: rows 2, 4, 5, 6 for name; rows 4 and 5 for note
    assert (ours["name_letters"][0], ours["note_shape"][0]) == (4, 2)
    # the patterns ran as automata over the bytes (AsciiRegex), so the counts above are theirs, non-ASCII rows
    # included (those go to Java's own Pattern). Only the CPF's repeated-digit test, a back reference, is rlike.
    plans = _tally_plans(event_log)
    # a CSV scan has no whole-stage code here: the tally runs its predicate in an iterator of its own (TallyExec)
    assert _tally_runners(event_log) == {"WriteFiles"}
    assert "ascii_regex(^K[0-9]$).find(cast(code" in plans[-1]
    # eight pattern rules, and two patterns in each of the price's type and range rules (its decimal text is
    # checked for a digit past the scale, and an exponent form's digits counted: casting._text_decimal); the
    # amount's text is tested for an infinity's spelling wherever its double is used (type, range min and max,
    # the expression's two uses), and only on a value that read as an infinity (casting._text_floating)
    infinity = r"ascii_regex(^\s*[+-]?[iI][nN][fF](?:[iI][nN][iI][tT][yY])?\s*$).find(amount#"
    assert (plans[-1].count("ascii_regex("), plans[-1].count(infinity)) == (8 + 2 * 2 + 5, 5)
    assert plans[-1].count("RLIKE(") == plans[-1].count(r"^(.)\1*$)") == 1
    # a length bound is tried on the text's byte length first (LengthRewrite): the names' count above includes
    # "Łukasz", 7 bytes and 6 letters, within max 6
    name = r"cast\(name#\d+ as string\)"
    assert re.search(rf"\(octet_length\({name}\) > 6\) AND \(length\({name}\) > 6\)", plans[-1])
    assert re.search(rf"\(octet_length\({name}\) < 3\) OR \(length\({name}\) < 3\)", plans[-1])
    # the twelve allowed codes are one hash set lookup, as in the engine's optimized plan
    assert re.search(r"code#\d+ INSET K0, K1, K10, K11, K2", plans[-1])
    # the day's ISO date parse ran as a byte reading where its text is plain (IsoDates), every time it occurs;
    # where a rule only asks whether the text parses (the format rule), plain text answers without a day
    parses = len(re.findall(r"\(length\(day#\d+\) = 10\)", plans[-1]))
    plain_tests = plans[-1].count("IsoDates.isPlainDayOrFalse(day#")
    assert plain_tests >= 1 and parses >= 2
    assert plans[-1].count("IsoDates.isPlainDay(day#") + plain_tests == parses


@pytest.mark.skipif(SPARK_40, reason="Spark 3.5 only")
def test_extension_on_spark_35_logs_one_line_and_steps_aside(tmp_path):
    jar = find_extension_jar()
    assert jar, "run `make listener`"
    proc = subprocess.run(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--master", "local[1]", "--conf", f"spark.jars={jar}",
         "--conf", "spark.sql.extensions=io.github.dqgovernance.spark.GovernanceExtensions",
         "--conf", f"spark.dqgov.manifest={tmp_path / 'none.json'}", "--conf", "spark.ui.enabled=false",
         str(JOB), "append", str(tmp_path / "out"), str(SEED)],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    ours = [line for line in proc.stderr.splitlines() if "dq-governance extension: " in line]
    assert len(ours) == 1 and ours[0].endswith(
        f"Spark {pyspark.__version__} is not supported (Spark 4.0 only); the session is left as it was")
    assert "rows=7" in proc.stdout


def test_the_run_is_ingested_by_dqgov_lineage_ingest_like_any_other_event(work, observed, capsys):
    from dq_governance.cli import main

    _proc, events = observed
    db = work / "lineage.db"
    assert main(["lineage", "ingest", str(work / "observe.jsonl"), "--db", str(db)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"ingested {len(events)} event(s) into {db}: {len(events)} stored, 0 duplicate(s), 0 skipped")
    assert err == ""


SEED_FAILED = {"cliente_id_not_null": 1, "status_allowed_values": 1, "valor_range": 1, "data_pedido_type": 1}


def test_csv_json_and_orc_writes_are_measured(work):
    events = work / "formats.jsonl"
    proc = _submit(work, _flags(work, work / "orders_csv.yaml", events, "observe", work / "manifest.json"),
                   "formats", str(work / "fmt"), str(SEED))
    assert proc.returncode == 0, proc.stderr[-4000:]
    for fmt in ("csv", "json", "orc"):
        facet = _governed_outputs(_events(events), f"/fmt_{fmt}")[-1][1]["facets"]["dqgov_dataContract"]
        assert facet["name"] == f"orders_{fmt}"
        assert {r["name"]: r["failed_count"] for r in facet["rules"] if r.get("failed_count")} == SEED_FAILED, fmt


def test_save_as_table_and_ctas_are_measured_in_their_nested_executions(work):
    events = work / "tables.jsonl"
    proc = _submit(work, _flags(work, work / "orders_tbl.yaml", events, "observe", work / "manifest.json"),
                   "table", "orders_tbl", str(SEED))
    assert proc.returncode == 0, proc.stderr[-4000:]
    for table in ("orders_tbl", "orders_tbl_ctas"):
        governed = _governed_outputs(_events(events), f"/warehouse/{table}")
        assert governed, table
        facet = governed[-1][1]["facets"]["dqgov_dataContract"]
        assert (facet["name"], facet["written_rows"]) == (table, 7)
        assert {r["name"]: r["failed_count"] for r in facet["rules"] if r.get("failed_count")} == SEED_FAILED, table


def _with_delta(flags: list[str]) -> list[str]:
    """The printed flags plus Delta: its package, its catalog, and its session extension before ours."""
    from importlib.metadata import version

    out = [f.replace("spark.sql.extensions=", "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension,")
           for f in flags]
    return [*out, "--packages", f"io.delta:delta-spark_2.13:{version('delta-spark')}",
            "--conf", "spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "--conf", "spark.databricks.delta.snapshotPartitions=1"]  # Delta's default, 50 tasks per snapshot, is slow


def test_delta_writes_are_measured_and_a_fail_rule_aborts_them_in_block_mode(work):
    target = work / "delta_orders"
    events = work / "delta.jsonl"
    observe = _with_delta(_flags(work, work / "orders_delta.yaml", events, "observe", work / "manifest.json"))
    first = _submit(work, observe, "delta", str(target), str(SEED))
    assert first.returncode == 0, first.stderr[-4000:]
    governed = _governed_outputs(_events(events), "/delta_orders")
    facet = governed[-1][1]["facets"]["dqgov_dataContract"]
    assert governed[-1][0]["eventType"] == "COMPLETE"
    assert {r["name"]: r["failed_count"] for r in facet["rules"] if r.get("failed_count")} == {
        **SEED_FAILED, "status_fail": 1}  # observe: the fail rule counts, the write proceeds
    assert (facet["written_rows"], facet["vetoed"]) == (7, False)

    log = _tree_digest(target / "_delta_log")
    block = _with_delta(_flags(work, work / "orders_delta.yaml", events, "block", work / "manifest.json"))
    second = _submit(work, block, "delta", str(target), str(SEED))
    assert second.returncode != 0
    assert (f"dq-governance: write to {target} blocked by contract orders_delta (rule status_fail failed with "
            "action fail); nothing was committed") in second.stderr
    assert _tree_digest(target / "_delta_log") == log  # no new commit
    last = _governed_outputs(_events(events), "/delta_orders")[-1]
    assert (last[0]["eventType"], last[1]["facets"]["dqgov_dataContract"]["vetoed"]) == ("FAIL", True)
    # the aborted tasks' counts are lost, so the facet cannot show the rule failing; the run is failed all the same
    assert last[1]["facets"]["dqgov_dataContract"]["status"] == "failed"


def test_a_delta_table_written_by_name_is_measured_and_a_fail_rule_aborts_it_in_block_mode(spark, work):
    events = work / "dt.jsonl"
    observe = _with_delta(_flags(work, work / "orders_dt.yaml", events, "observe", work / "manifest.json"))
    first = _submit(work, observe, "delta-table", "orders_dt", str(SEED))  # saveAsTable, then INSERT INTO
    assert first.returncode == 0, first.stderr[-4000:]
    assert "dq-governance extension: " not in first.stderr
    governed = _governed_outputs(_events(events), "/warehouse/orders_dt")
    # the CTAS's COMPLETE and the INSERT's: the listener's own COMPLETE of a write by name names no output, and
    # the transformer gives it back the output its START named. No START carries results (the write it starts
    # is not measured yet; never the previous write's results)
    assert [event["eventType"] for event, _dataset in governed] == ["COMPLETE", "COMPLETE"]
    for _event, dataset in governed:
        facet = dataset["facets"]["dqgov_dataContract"]
        assert {r["name"]: r["failed_count"] for r in facet["rules"] if r.get("failed_count")} == {
            **SEED_FAILED, "status_fail": 1}
        assert (facet["written_rows"], facet["vetoed"]) == (7, False)
    runs = read_history(str(work / "history"), spark=spark, contract="orders_dt").where("check_name = 'row_count'")
    assert sorted(r.total_rows for r in runs.collect()) == [7, 7]  # the CTAS, and the INSERT of its 7 rows

    table = work / "warehouse" / "orders_dt"
    log = _tree_digest(table / "_delta_log")
    block = _with_delta(_flags(work, work / "orders_dt.yaml", events, "block", work / "manifest.json"))
    for step in ("delta-append", "delta-overwrite"):  # AppendData, OverwriteByExpression
        second = _submit(work, block, step, "orders_dt", str(SEED))
        assert second.returncode != 0, step
        assert ("dq-governance: write to spark_catalog.default.orders_dt blocked by contract orders_dt (rule "
                "status_fail failed with action fail); nothing was committed") in second.stderr, step
        assert _tree_digest(table / "_delta_log") == log, step  # no new commit: the 14 rows are all still there
        last = _governed_outputs(_events(events), "/warehouse/orders_dt")[-1]
        assert (last[0]["eventType"], last[1]["facets"]["dqgov_dataContract"]["vetoed"]) == ("FAIL", True), step


def test_another_catalogs_table_says_in_one_line_that_it_is_not_measured_and_is_written(work):
    # Spark's JDBC table catalog over the Derby PySpark ships: a DSv2 table that is neither Delta nor a file source
    jdbc = ["--conf", "spark.sql.catalog.jdbc=org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog",
            "--conf", "spark.sql.catalog.jdbc.url=jdbc:derby:memory:orders;create=true",
            "--conf", "spark.sql.catalog.jdbc.driver=org.apache.derby.jdbc.EmbeddedDriver"]
    flags = _flags(work, work / "orders_jdbc.yaml", work / "jdbc.jsonl", "block", work / "manifest.json")
    proc = _submit(work, [*flags, *jdbc], "jdbc", "APP.orders_jdbc", str(SEED))
    assert proc.returncode == 0, proc.stderr[-4000:]  # neither measured nor broken: the write proceeds
    assert "rows=7" in proc.stdout
    ours = [line.split("dq-governance extension: ", 1)[1] for line in proc.stderr.splitlines()
            if "dq-governance extension: " in line]
    assert ours == ["contract orders_jdbc: DSv2 table writes (jdbc.APP.orders_jdbc, JDBCTable) are not measured by "
                    "this release; they proceed ungoverned (Delta tables and file-source tables are measured)"]

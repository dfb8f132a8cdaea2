"""The session extension governs what the manifest says it governs: object-store paths named as the manifest names
them, typed writes whose columns only widen the contract's types, quarantine rules in block mode, and unqualified
contract tables in the current database only. Each Spark job is a small spark-submit (local[1])."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from dq_governance.lineage import facets as F
from dq_governance.lineage import manifest as M
from dq_governance.publish.report import read_history
from enforce_helpers import SPARK_HOME, _contract, _dqgov, _env, _events, _flags, _governed_outputs, require_extension

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "examples" / "data" / "orders.csv"
FIXTURES = REPO / "listeners" / "src" / "test" / "resources" / "manifests"

JOB = '''
import sys
from pyspark.sql import SparkSession

step, target = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.appName("trust_job").getOrCreate()
spark.sparkContext.setLogLevel("WARN")
seed = "{seed}"
if step == "infer":
    df = spark.read.option("header", True).option("inferSchema", True).csv(seed)
    print("types=" + ",".join(t for _, t in df.dtypes))
    df.write.mode("append").parquet(target)
elif step == "append":
    spark.read.option("header", True).csv(seed).write.mode("append").parquet(target)
elif step == "tables":
    df = spark.read.option("header", True).csv(seed)
    spark.sql("CREATE DATABASE scratch")
    df.write.saveAsTable("scratch." + target)
    print("scratch_rows=%d" % spark.table("scratch." + target).count(), flush=True)
    df.write.saveAsTable(target)
print("done")
'''


def _submit(work: Path, flags: list[str], *args: str) -> subprocess.CompletedProcess:
    cmd = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", "local[1]", *flags,
           "--conf", f"spark.sql.warehouse.dir={work / 'warehouse'}", "--conf", "spark.ui.enabled=false",
           "--driver-java-options", f"-Dderby.system.home={work}", str(work / "trust_job.py"), *args]
    return subprocess.run(cmd, cwd=work, env=_env(), capture_output=True, text=True, timeout=300)


def _veto(stderr: str) -> str:
    return [line for line in stderr.splitlines() if "GovernanceVetoException: " in line][0].split(
        "GovernanceVetoException: ", 1)[1]


def _ours(stderr: str) -> list[str]:
    return [line.split("dq-governance extension: ", 1)[1] for line in stderr.splitlines()
            if "dq-governance extension: " in line]


def _with(path: Path, *, types: dict[str, str] | None = None, quality: dict | None = None,
          rules: list[dict] | None = None) -> Path:
    doc = yaml.safe_load(path.read_text())
    for field in doc["schema"]["fields"]:
        field["type"] = (types or {}).get(field["name"], field["type"])
    doc["quality"] = {k: v for k, v in {**doc["quality"], **(quality or {})}.items() if v is not None}
    doc["quality"]["rules"] = [r for r in doc["quality"]["rules"] if r.get("type") == "row_count"] + (rules or [])
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return path


STATUS_KNOWN = {"type": "allowed_values", "name": "status_known", "column": "status",
                "values": ["CRIADO", "PAGO", "CANCELADO"], "action": "quarantine"}


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    require_extension()
    work = tmp_path_factory.mktemp("trust")
    (work / "trust_job.py").write_text(JOB.replace("{seed}", str(SEED)))
    contracts = [
        _with(_contract(work, "orders_int", path=str(work / "int_orders")), types={"valor": "double"}),
        _contract(work, "orders_dec", path=str(work / "dec_orders")),  # valor decimal(12,2): double is no widening
        # the reviewer's case: on_failure quarantine (the default) and a rule of action quarantine
        _with(_contract(work, "q_orders", path=str(work / "q_orders")),
              quality={"on_failure": "quarantine", "minimum_valid_ratio": None}, rules=[STATUS_KNOWN]),
        # a warn policy: only the rule of action quarantine leaves rows out
        _with(_contract(work, "q_warn", path=str(work / "q_warn")),
              quality={"on_failure": "warn", "minimum_valid_ratio": None}, rules=[STATUS_KNOWN]),
        # block_publication (orders.yaml's policy) whose minimum_valid_ratio passes: the rows it routes stay out
        _with(_contract(work, "bp_orders", path=str(work / "bp_orders")), quality={"minimum_valid_ratio": 0.4}),
        _contract(work, "orders_t", table="orders_t"),
    ]  # quality None: the key is left out
    _dqgov("manifest", *map(str, contracts), "-o", str(work / "manifest.json"), cwd=work)
    return work


OBJECT_STORE_PATHS = [
    "s3a://lake/orders", "s3a://lake/orders/", "s3n://old/legacy", "s3://lake/sales/day=1",
    "gs://bkt/events", "abfss://ct@acct.dfs.core.windows.net/cust", "wasbs://ct@acct.blob.core.windows.net/w/x",
    "hdfs://nn:8020/lake/h", "file:/data/local/t", "/data/local/t/", "abfs://c@a.dfs.core.windows.net/keep",
]


@pytest.mark.spark
def test_the_extension_names_a_written_path_as_the_manifest_does(spark):
    jvm = spark._jvm
    for path in OBJECT_STORE_PATHS:
        java = list(jvm.io.github.dqgovernance.listener.DatasetIdentity.of(jvm.org.apache.hadoop.fs.Path(path).toUri()))
        assert tuple(java) == M.path_identity(path), path
    assert M.path_identity("s3a://lake/orders") == F.dataset_identity("s3://lake/orders") == ("s3://lake", "orders")


def test_the_java_object_store_fixture_is_what_dqgov_manifest_compiles():
    # DatasetIdentityTest matches writes against this committed manifest: it must be dqgov's own output
    files = sorted((FIXTURES / "object_stores").glob("*.yaml"))
    compiled = M.compile_manifest(files, extra_globs={"os_daily": ["s3a://lake/daily/**"]}, checks=False).document
    committed = json.loads((FIXTURES / "object_stores.json").read_text())
    assert {c["contract"]["name"]: c["match"] for c in compiled["contracts"]} == {
        c["contract"]["name"]: c["match"] for c in committed["contracts"]}
    assert {c["contract"]["name"]: c["match"] for c in compiled["contracts"]}["os_s3a"] == {
        "datasets": [{"namespace": "s3://lake", "name": "orders"}], "globs": ["s3://lake/orders/**"]}


def test_block_mode_judges_int_ids_written_for_a_bigint_contract_and_blocks_them(work):
    target = work / "int_orders"
    flags = _flags(work, work / "orders_int.yaml", work / "int.jsonl", "block", work / "manifest.json")
    proc = _submit(work, flags, "infer", str(target))
    assert "types=int,int,string,double,string,string" in proc.stdout
    assert proc.returncode != 0
    assert _veto(proc.stderr) == (
        f"dq-governance: write to file:{target} blocked by contract orders_int (valid ratio 0.4286 is below "
        "minimum_valid_ratio 0.99); 7 row(s) checked, 3 valid; nothing was committed")
    assert _ours(proc.stderr) == []
    assert not list(target.glob("*.parquet"))


def test_block_mode_lets_a_write_of_an_incompatible_type_through_with_one_line(work):
    target = work / "dec_orders"
    flags = _flags(work, work / "orders_dec.yaml", work / "dec.jsonl", "block", work / "manifest.json")
    proc = _submit(work, flags, "infer", str(target))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _ours(proc.stderr) == [
        f"contract orders_dec, write to file:{target}: column valor is written as double, the contract declares "
        "decimal(12,2); the write proceeds ungoverned"]
    assert len(list(target.glob("*.parquet"))) == 1


def _quarantine_run(spark, work: Path, name: str):
    events = work / f"{name}.jsonl"
    flags = _flags(work, work / f"{name}.yaml", events, "block", work / "manifest.json")
    proc = _submit(work, flags, "append", str(work / name))
    assert proc.returncode == 0, proc.stderr[-3000:]
    written = sorted(int(r["pedido_id"]) for r in spark.read.parquet(str(work / name)).collect())
    facet = _governed_outputs(_events(events), f"/{name}")[-1][1]["facets"]["dqgov_dataContract"]
    history = read_history(str(work / "history"), spark=spark, contract=name).collect()
    return written, facet, history


@pytest.mark.spark
def test_block_mode_leaves_a_quarantine_rules_failing_rows_out_of_the_write(spark, work):
    written, facet, history = _quarantine_run(spark, work, "q_warn")
    [entry] = [c for c in json.loads((work / "manifest.json").read_text())["contracts"]
               if c["contract"]["name"] == "q_warn"]
    assert entry["checks"]["notes"] == [
        "quarantine rules (status_known): in block mode the session extension leaves their failing rows out of the "
        "write and keeps no copy of them (the source still has them); observe mode only counts them"]
    assert written == [1, 2, 2, 3, 5, 6]  # order 4, status DESCONHECIDO, is not written
    assert (facet["written_rows"], facet["quarantined_rows"], facet["dropped_rows"]) == (6, 1, 0)
    rows = {r["check_name"]: r for r in history}
    assert (rows["status_known"]["failed_count"], rows["status_known"]["message"]) == (
        1, "1 of 7 row(s) violate the rule; those rows were left out of the write (quarantine; the extension "
           "keeps no copy)")
    assert {(r["published"], r["total_rows"], r["valid_rows"]) for r in history} == {(True, 7, 3)}


@pytest.mark.spark
def test_block_mode_leaves_every_row_the_default_quarantine_policy_routes_out_of_the_write(spark, work):
    # on_failure: quarantine routes each failing error row rule's rows, as the engine's split does: the four rows
    # that fail (no cliente_id, unknown status, negative valor, bad date) are left out; the valid three are written
    written, facet, history = _quarantine_run(spark, work, "q_orders")
    assert written == [1, 2, 2]
    assert (facet["written_rows"], facet["quarantined_rows"], facet["valid_rows"]) == (3, 4, 3)
    assert {(r["published"], r["total_rows"], r["valid_rows"], r["invalid_rows"]) for r in history} == {
        (True, 7, 3, 4)}


@pytest.mark.spark
def test_block_mode_leaves_out_the_rows_block_publication_routes_when_its_valid_ratio_passes(spark, work):
    # the engine publishes the valid rows and quarantines the rest once minimum_valid_ratio (0.4286 >= 0.4)
    # passes; the extension wrote all seven before
    written, facet, history = _quarantine_run(spark, work, "bp_orders")
    assert written == [1, 2, 2]
    assert (facet["status"], facet["written_rows"], facet["quarantined_rows"], facet["valid_rows"]) == (
        "warned", 3, 4, 3)
    assert {(r["published"], r["gate_passed"], r["valid_rows"], r["invalid_rows"]) for r in history} == {
        (True, True, 3, 4)}


@pytest.mark.parametrize("quality, routed", [
    ({"on_failure": "block_publication", "minimum_valid_ratio": 0.4}, ["status_checked"]),
    ({"on_failure": "fail", "minimum_valid_ratio": 0.4}, ["status_checked"]),
    ({"on_failure": "block_publication", "minimum_valid_ratio": None}, []),  # any failing row blocks: none routed
    ({"on_failure": "warn", "minimum_valid_ratio": 0.4}, []),
])
def test_the_manifest_note_names_the_rules_whose_rows_the_policy_routes(quality, routed):
    rule = {"name": "status_checked", "level": "row", "blocks": True, "metric": None, "action": None}
    note = M.quarantine_note({"gate": quality, "rules": [rule]})
    assert (note.split(":", 1)[0] if note else None) == (f"quarantine rules ({', '.join(routed)})" if routed else None)


def test_an_unqualified_contract_table_governs_the_current_databases_table_only(work):
    flags = _flags(work, work / "orders_t.yaml", work / "tables.jsonl", "block", work / "manifest.json")
    proc = _submit(work, flags, "tables", "orders_t")
    assert "scratch_rows=7" in proc.stdout  # another database's orders_t: not governed, committed
    assert proc.returncode != 0
    assert _veto(proc.stderr) == (
        "dq-governance: write to spark_catalog.default.orders_t blocked by contract orders_t (valid ratio 0.4286 "
        "is below minimum_valid_ratio 0.99); 7 row(s) checked, 3 valid; nothing was committed")
    governed = {d["name"] for _e, d in _governed_outputs(_events(work / "tables.jsonl"), "orders_t")}
    assert all("scratch.db" not in name for name in governed) and governed
    # nor does the transformer give the other database's table the contract's facets (owners, contract)
    scratch = [d for e in _events(work / "tables.jsonl") for d in e.get("outputs") or [] if "scratch.db" in d["name"]]
    assert scratch and not any({"dqgov_dataContract", "ownership"} & set(d.get("facets") or {}) for d in scratch)

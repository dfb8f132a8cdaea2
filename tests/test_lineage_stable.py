"""Stable lineage: job names that do not change from run to run, contracts on the node they describe, aliases.

The Spark tests run this file as a script in a subprocess (its own JVM with the real OpenLineage listener):
`python tests/test_lineage_stable.py EVENTS_JSONL WORKDIR RUNS` runs the same check RUNS times in one session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from graph_events import column_lineage, ds, owners, run_event

from dq_governance.cli import main
from dq_governance.contracts.load import load_contract
from dq_governance.lineage.graph import LineageGraph
from dq_governance.lineage.impact import impact, resolve_target

REPO = Path(__file__).resolve().parent.parent
CSV = str(REPO / "examples" / "data" / "orders.csv")
MASKING_KEY = "stable-masking-key-8c41e2"  # made up
APP = "dqgov stable it"
PIPELINE = "stable_it"


# --------------------------------------------------------------------------- the subprocess job


def _job(events: str, workdir: str, runs: str) -> None:
    """RUNS identical runs of the orders check (target, quarantine, report) in one listener session."""
    from dq_governance.api import run
    from dq_governance.contracts.model import Contract
    from dq_governance.lineage.spark import application_run_id, spark_session

    out = Path(workdir) / "out"
    doc = yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text())
    doc["quality"]["on_failure"] = "quarantine"  # the 1 valid row is published: a target write every run
    doc["quality"].pop("minimum_valid_ratio")
    contract = Contract.model_validate(doc)
    spark = spark_session(APP, lineage=f"file:{events}", contract=contract, master="local[1]",
                          **{"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "1",
                             "spark.default.parallelism": "1", "spark.sql.session.timeZone": "UTC"})
    spark.sparkContext.setLogLevel("ERROR")
    try:
        run_ids = []
        for _ in range(int(runs)):
            df = spark.read.option("header", True).csv(CSV)
            result = run(df, contract, target=str(out / "orders" / "valid"),
                         quarantine=str(out / "orders" / "quarantine"), report=str(out / "report"),
                         lineage=f"file:{events}", source=CSV, pipeline=PIPELINE)
            assert result.published and (result.valid_rows, result.invalid_rows) == (1, 6)
            run_ids.append(result.run_id)
        print(json.dumps({"application_run_id": application_run_id(spark), "run_ids": run_ids}))
    finally:
        spark.stop()


# --------------------------------------------------------------------------- helpers


def write_jsonl(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def jobs(db: Path) -> set[tuple[str, str]]:
    with LineageGraph(db, create=False) as g:
        return {tuple(r) for r in g.db.execute("SELECT namespace, name FROM jobs")}


def datasets(db: Path) -> set[tuple[str, str]]:
    with LineageGraph(db, create=False) as g:
        return {tuple(r) for r in g.db.execute("SELECT namespace, name FROM datasets")}


def contracts_glob() -> list[str]:
    """`contracts/*.yaml` as the shell expands it (run from the repository root)."""
    return sorted(str(p) for p in Path("contracts").glob("*.yaml"))


# --------------------------------------------------------------------------- 1. stable job names (real Spark)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Process A runs the check once, process B twice (one session): same contract, same paths, two event files."""
    from dq_governance.lineage.enrich import find_extension_jar
    from dq_governance.lineage.spark import find_listener_jar

    if find_listener_jar() is None or find_extension_jar() is None:
        pytest.fail("listener jars missing: run `make listener-jar listener`")
    work = tmp_path_factory.mktemp("stable")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE")}
    env["DQGOV_MASKING_KEY"] = MASKING_KEY
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests"), env.get("PYTHONPATH", "")])
    out = {}
    for name, runs in (("a", 1), ("b", 2)):
        events = work / f"{name}.jsonl"
        proc = subprocess.run([sys.executable, __file__, str(events), str(work), str(runs)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-4000:]
        out[name] = (events, json.loads(proc.stdout.strip().splitlines()[-1]))
    return work, out


STABLE_JOBS = {
    ("dqgov", "dqgov_stable_it"),  # the application
    ("dqgov", "dqgov_stable_it.adaptive_spark_plan.orders_valid"),  # the staged writes, named as their targets
    ("dqgov", "dqgov_stable_it.adaptive_spark_plan.orders_quarantine"),
    ("dqgov", "dqgov_stable_it.execute_insert_into_hadoop_fs_relation_command.out_report"),
    ("dqgov", "dqgov_stable_it.collect_limit"),  # reading the CSV header
    ("dqgov", "dqgov_stable_it.deserialize_to_object"),
    ("dqgov", f"{PIPELINE}.curated.orders.contract_check"),  # our own check-run job
}


@pytest.mark.spark
@pytest.mark.integration
def test_identical_runs_leave_one_job_set(two_runs, tmp_path, capsys):
    work, out = two_runs
    (a, a_ids), (b, b_ids) = out["a"], out["b"]
    once, both = tmp_path / "once.db", tmp_path / "both.db"
    assert main(["lineage", "ingest", str(a), "--db", str(once)]) == 0
    assert main(["lineage", "ingest", str(a), str(b), "--db", str(both)]) == 0
    assert jobs(once) == STABLE_JOBS
    assert jobs(both) == STABLE_JOBS  # three runs in two applications: not one job more
    run_ids = [*a_ids["run_ids"], *b_ids["run_ids"], a_ids["application_run_id"], b_ids["application_run_id"]]
    assert len(set(run_ids)) == 5
    for _, name in jobs(both):
        assert "staging" not in name and not any(r in name or r.replace("-", "_") in name for r in run_ids)
    # the staged writes' datasets are the targets too (removePath), and so is every input
    base = str(work / "out")
    assert datasets(both) == {("file", CSV), ("file", f"{base}/orders/valid"), ("file", f"{base}/orders/quarantine"),
                              ("file", f"{base}/report")}
    with LineageGraph(both, create=False) as g:
        # each stable job has the runs of both applications: 3 check runs, 2 applications
        per_job = dict(g.db.execute(
            "SELECT j.name, count(*) FROM runs r JOIN jobs j ON j.id = r.job_id GROUP BY j.name"))
    assert per_job[f"{PIPELINE}.curated.orders.contract_check"] == 3
    assert per_job["dqgov_stable_it.adaptive_spark_plan.orders_valid"] == 3
    assert per_job["dqgov_stable_it"] == 2


@pytest.mark.spark
@pytest.mark.integration
def test_impact_by_contract_name_after_the_readme_flow(two_runs, tmp_path, monkeypatch, capsys):
    """Events of a real check, then `lineage ingest EVENTS contracts/*.yaml`: the contract's dataset.name resolves."""
    work, out = two_runs
    events, _ = out["a"]
    monkeypatch.chdir(REPO)
    db = tmp_path / "lineage.db"
    assert main(["lineage", "ingest", str(events), *contracts_glob(), "--db", str(db)]) == 0
    ingest_out = capsys.readouterr().out
    assert f"  contracts/orders.yaml: contract orders 1.0.0 -> file:{CSV} (alias curated.orders)\n" in ingest_out
    assert ("file", "curated.orders") not in datasets(db)  # no second node for the contract

    def query(target: str) -> dict:
        assert main(["impact", target, "--db", str(db), "--format", "json"]) == 0
        return json.loads(capsys.readouterr().out)

    by_name, by_path = query("curated.orders.cliente_id"), query("examples/data/orders.csv.cliente_id")
    assert by_name == by_path
    assert by_name["target"] == {"namespace": "file", "dataset": CSV, "column": "cliente_id"}
    base = str(work / "out")
    assert {(h["dataset"], h["column"], tuple(h["jobs"])) for h in by_name["hits"]} == {
        (f"{base}/orders/valid", "cliente_id", ("dqgov:stable_it.curated.orders.contract_check",)),
        (f"{base}/orders/quarantine", "cliente_id", ("dqgov:stable_it.curated.orders.contract_check",)),
        # the listener's column lineage of the quarantine write: the error columns are computed from the checks
        (f"{base}/orders/quarantine", "_dq_errors", ("dqgov:dqgov_stable_it.adaptive_spark_plan.orders_quarantine",)),
        (f"{base}/orders/quarantine", "_dq_disposition",
         ("dqgov:dqgov_stable_it.adaptive_spark_plan.orders_quarantine",)),
        # the error and warning name arrays are slices of one array per chunk of rules (engine._BitLayout.arrays:
        # each chunk used twice gets a generated method of its own), so Spark sees the warnings read them too
        (f"{base}/orders/quarantine", "_dq_warnings", ("dqgov:dqgov_stable_it.adaptive_spark_plan.orders_quarantine",)),
        (f"{base}/orders/quarantine", None, ("dqgov:dqgov_stable_it.adaptive_spark_plan.orders_quarantine",)),
        (f"{base}/orders/valid", None, ("dqgov:dqgov_stable_it.adaptive_spark_plan.orders_valid",)),
    }
    assert main(["impact", "curated.orders.cliente_id", "--db", str(db)]) == 0
    table = capsys.readouterr().out
    assert "no datasets reached" not in table
    assert table.splitlines()[0] == f"impact of file:{CSV}.cliente_id (downstream)"


# --------------------------------------------------------------------------- 2. contracts attach to their node

CUSTOMER_ANALYTICS = ("customer_analytics", "cliente_id", ["team:marketing-analytics"],
                      ["spark:build_customer_analytics"])


def spark_named_events() -> list[dict]:
    """tests/test_diff.py's scenario, with the orders dataset named as the Spark listener names it: by absolute path."""
    return [
        run_event("build_customer_analytics", [ds(CSV)], [ds("customer_analytics", {
            "ownership": owners("team:marketing-analytics"),
            "columnLineage": column_lineage({"cliente_id": [(CSV, "cliente_id", "DIRECT", "IDENTITY")],
                                             "total_gasto": [(CSV, "valor", "DIRECT", "AGGREGATION")]})})]),
        run_event("build_status_report", [ds(CSV)], [ds("status_report", {
            "ownership": owners("team:ops"),
            "columnLineage": column_lineage({"status": [(CSV, "status", "DIRECT", "IDENTITY")]})})]),
    ]


def orders_without_cliente_id(tmp_path: Path) -> Path:
    doc = yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text())
    doc["schema"]["fields"] = [f for f in doc["schema"]["fields"] if f["name"] != "cliente_id"]
    doc["contract"]["version"] = "2.0.0"
    path = tmp_path / "orders_v2.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def removed_consumers(new: Path, db: Path, capsys) -> list[tuple]:
    assert main(["diff", "contracts/orders.yaml", str(new), "--lineage", str(db), "--format", "json"]) == 0
    [removed] = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "S6"]
    return [(c["dataset"], c["column"], c["owners"], c["jobs"]) for c in removed["consumers"]]


def test_diff_names_the_same_consumers_before_and_after_contracts_are_ingested(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    db = tmp_path / "lineage.db"
    assert main(["lineage", "ingest", str(write_jsonl(tmp_path / "e.jsonl", spark_named_events())),
                 "--db", str(db)]) == 0
    capsys.readouterr()
    new = orders_without_cliente_id(tmp_path)
    before = removed_consumers(new, db, capsys)
    assert before == [CUSTOMER_ANALYTICS]
    nodes_before = datasets(db)
    assert main(["lineage", "ingest", *contracts_glob(), "--db", str(db)]) == 0
    capsys.readouterr()
    assert removed_consumers(new, db, capsys) == before
    # the orders contracts (native and ODCS) added no node: they attached to the listener's
    added = datasets(db) - nodes_before
    assert ("file", "curated.orders") not in added and ("file", CSV) in nodes_before
    with LineageGraph(db, create=False) as g:
        node = g.dataset(g.find_datasets(CSV, "file")[0][0])
        assert (node["contract"]["name"], node["contract"]["version"]) == ("orders", "1.0.0")
        assert node["owners"] == ["sales-data-team", "maria.silva"]
        assert [f["name"] for f in g.fields_of(node["id"]) if f["pii"]] == ["email"]
        assert g.find_aliases("curated.orders") == [(node["id"], "file", CSV)]
    # the table form names the consumer and its owner
    assert main(["diff", "contracts/orders.yaml", str(new), "--lineage", str(db)]) == 0
    assert ("consumer file:customer_analytics.cliente_id via spark:build_customer_analytics; "
            "owners: team:marketing-analytics") in capsys.readouterr().out


def test_a_contract_before_any_event_creates_the_node_the_listener_will_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    db = tmp_path / "lineage.db"
    assert main(["lineage", "ingest", "contracts/orders.yaml", "--db", str(db)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        f"  contracts/orders.yaml: contract orders 1.0.0 -> file:{CSV} (alias curated.orders); "
        "a new node: no event names it yet")
    assert datasets(db) == {("file", CSV)}
    # the listener's events, ingested later, meet that node: one node, contract and lineage together
    assert main(["lineage", "ingest", str(write_jsonl(tmp_path / "e.jsonl", spark_named_events())),
                 "--db", str(db)]) == 0
    capsys.readouterr()
    assert datasets(db) == {("file", CSV), ("file", "customer_analytics"), ("file", "status_report")}
    assert removed_consumers(orders_without_cliente_id(tmp_path), db, capsys) == [CUSTOMER_ANALYTICS]


def test_a_store_with_a_contract_only_node_heals_when_the_contract_is_ingested_again(tmp_path, monkeypatch):
    """Stores written before aliases hold `file:curated.orders` beside the listener's node; re-ingest removes it."""
    monkeypatch.chdir(REPO)
    db = tmp_path / "lineage.db"
    contract = load_contract("contracts/orders.yaml")
    with LineageGraph(db) as g:
        g.ingest_events((f"e{i}", e) for i, e in enumerate(spark_named_events()))
        stale = g.dataset_id("file", "curated.orders")  # what the old attach created
        for name in ("pedido_id", "cliente_id"):
            g.field_id(stale, name)
        # the contract's dataset is the node with lineage, not the one only a contract named
        assert g.contract_dataset(contract) == (g.find_datasets(CSV)[0][0], "file", CSV)
        where = g.attach_contract(contract, "contracts/orders.yaml")
        assert (where.namespace, where.name, where.created) == ("file", CSV, False)
        assert g.find_datasets("curated.orders") == []
        assert g.db.execute("SELECT count(*) FROM fields WHERE dataset_id = ?", (stale,)).fetchone()[0] == 0
        target = resolve_target(g, "curated.orders.cliente_id")
        assert (target.name, target.column) == (CSV, "cliente_id")
        assert [h.dataset for h in impact(g, target).hits] == ["customer_analytics"]
        # ids handed out after the removal are real rows (the caches were dropped)
        again = g.attach_contract(contract)
        assert again.dataset_id == where.dataset_id and g.dataset(again.dataset_id)["name"] == CSV


def test_a_node_named_like_the_contract_with_lineage_keeps_the_contract(tmp_path, monkeypatch):
    """Events that name the dataset `curated.orders` (tests/test_diff.py's store): name first, no alias, no removal."""
    monkeypatch.chdir(REPO)
    with LineageGraph(tmp_path / "l.db") as g:
        g.ingest_event(run_event("build", [ds("curated.orders")], [ds("customer_analytics", {
            "columnLineage": column_lineage(
                {"cliente_id": [("curated.orders", "cliente_id", "DIRECT", "IDENTITY")]})})]))
        where = g.attach_contract(load_contract("contracts/orders.yaml"))
        assert (where.namespace, where.name, where.created) == ("file", "curated.orders", False)
        assert g.find_aliases("curated.orders") == []
        assert g.find_datasets(CSV) == []


def test_a_new_contract_version_replaces_the_owners_an_earlier_one_wrote_but_never_an_events(tmp_path):
    from dq_governance.contracts.model import Contract

    def version(number: str, owner: str) -> Contract:
        return Contract.model_validate({"contract": {"name": "stg", "version": number},
                                        "dataset": {"name": "stg.orders", "namespace": "file"},
                                        "schema": {"fields": [{"name": "id", "type": "string"}]},
                                        "roles": {"owner": owner}})

    with LineageGraph(tmp_path / "l.db") as g:
        node = g.attach_contract(version("1.0.0", "team-a")).dataset_id
        g.attach_contract(version("1.1.0", "team-b"))
        # impact named team-a, the first version's owner, beside contract 1.1.0
        assert (g.dataset(node)["owners"], g.dataset(node)["contract"]["version"]) == (["team-b"], "1.1.0")
        g.ingest_event(run_event("build", [], [ds("stg.orders", {"ownership": owners("team:events")})]))
        g.attach_contract(version("1.2.0", "team-c"))
        assert (g.dataset(node)["owners"], g.dataset(node)["contract"]) == (
            ["team:events"], {"name": "stg", "version": "1.2.0", "standard": "native"})
        # an event that clears the owners leaves the gap to contracts again, each replacing the one before
        g.ingest_event(run_event("build", [], [ds("stg.orders", {"ownership": {"_deleted": True}})]))
        for number, owner in (("1.3.0", "team-d"), ("1.4.0", "team-e")):
            g.attach_contract(version(number, owner))
            assert g.dataset(node)["owners"] == [owner]


@pytest.mark.parametrize(("dataset", "node"), [
    # a glob or a table cannot be named as the listener would: (namespace or `file`, name)
    ({"name": "curated.events", "namespace": "file", "path": "data/events/*.parquet"}, ("file", "curated.events")),
    ({"name": "sales.orders", "table": "sales.orders"}, ("file", "sales.orders")),
    # an object-store path is named as the listener names it (s3a -> s3, bucket in the namespace)
    ({"name": "lake.orders", "path": "s3a://bucket/curated/orders/"}, ("s3://bucket", "curated/orders")),
])
def test_a_new_node_takes_the_listeners_name_for_a_path_else_the_declared_one(tmp_path, dataset, node):
    from dq_governance.contracts.model import Contract

    doc = yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text())
    doc["dataset"] = {**dataset, "format": "parquet"}
    with LineageGraph(tmp_path / "l.db") as g:
        where = g.attach_contract(Contract.model_validate(doc))
        assert ((where.namespace, where.name), where.created) == (node, True)
        assert g.find_datasets(node[1], node[0]) == [(where.dataset_id, *node)]


if __name__ == "__main__":
    _job(*sys.argv[1:4])

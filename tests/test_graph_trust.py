"""Answers the lineage store must not get wrong: a table named through `symlinks`, a nested column, a dataset the
store does not hold, a file that is not a store, and a facet deleted with `_deleted: true`."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path

import pytest
import yaml
from graph_events import NS, column_lineage, ds, facet, owners, run_event, schema

from dq_governance.cli import main
from dq_governance.contracts.diff import attach_consumers, diff_contracts
from dq_governance.contracts.model import Contract
from dq_governance.lineage.graph import LineageGraph
from dq_governance.lineage.impact import impact, resolve_target

REPO = Path(__file__).resolve().parent.parent
TABLE_WRITE = REPO / "listeners" / "src" / "test" / "resources" / "events" / "table_write.json"
WAREHOUSE = "/tmp/dqgov-listener-fixtures/warehouse/crm_customers"  # the table's location in the recorded event
SYMLINK_NS = "file:/tmp/dqgov-listener-fixtures/warehouse"


def write_jsonl(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def hit_rows(graph: LineageGraph, text: str, direction: str = "downstream") -> list[tuple]:
    result = impact(graph, resolve_target(graph, text), direction)
    return [(h.dataset, h.column, h.distance, h.coarse, h.owners) for h in result.hits]


# -- 1. a catalog table: the listener names it by location, `db.table` only as a symlink ----------------------


def table_events() -> list[dict]:
    """The recorded CTAS of `default.crm_customers`, then a job that reads the table (named as the listener does)."""
    write = json.loads(TABLE_WRITE.read_text())
    table = {k: write["outputs"][0][k] for k in ("namespace", "name")}
    table["facets"] = {k: v for k, v in write["outputs"][0]["facets"].items() if k in ("schema", "symlinks")}
    read = run_event("crm_export", [table], [ds("export.crm_feed", {
        "ownership": owners("team:crm-export"),
        "columnLineage": column_lineage({"email": [(WAREHOUSE, "email", "DIRECT", "IDENTITY")]})})])
    return [write, read]


def table_contract(tmp_path: Path, name: str) -> Path:
    """contracts/customers.yaml as a catalog table's contract: `dataset.table`, no path."""
    doc = yaml.safe_load((REPO / "contracts" / "customers.yaml").read_text())
    for key in ("path", "format", "namespace"):
        doc["dataset"].pop(key, None)
    doc["dataset"].update(name=name, table="default.crm_customers")
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def without_email(tmp_path: Path, contract: Path) -> Path:
    doc = yaml.safe_load(contract.read_text())
    doc["schema"]["fields"] = [f for f in doc["schema"]["fields"] if f["name"] != "email"]
    doc["contract"]["version"] = "2.0.0"
    path = tmp_path / "v2.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_symlink_identifiers_become_aliases_of_the_node(tmp_path):
    with LineageGraph(tmp_path / "l.db") as g:
        g.ingest_events((f"e{i}", e) for i, e in enumerate(table_events()))
        [(node, _, _)] = g.find_datasets(WAREHOUSE)
        assert g.db.execute("SELECT namespace, name, dataset_id FROM dataset_aliases").fetchall() == [
            (SYMLINK_NS, "default.crm_customers", node)]
        assert g.find_aliases("default.crm_customers") == [(node, "file", WAREHOUSE)]
        assert g.find_aliases("default.crm_customers", "file") == [(node, "file", WAREHOUSE)]  # the node's namespace
        assert g.find_aliases("default.crm_customers", SYMLINK_NS) == [(node, "file", WAREHOUSE)]  # the symlink's
        assert g.find_datasets("default.crm_customers") == []  # no second node
        target = resolve_target(g, "default.crm_customers.email")
        assert (target.dataset_id, target.name, target.column) == (node, WAREHOUSE, "email")
        assert hit_rows(g, "default.crm_customers.email") == [("export.crm_feed", "email", 1, False,
                                                               ["team:crm-export"])]


def test_symlinks_are_stored_alike_by_the_serial_and_the_parallel_ingest(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", table_events())
    rows = {}
    for parallel in (False, True):
        with LineageGraph(tmp_path / f"{parallel}.db") as g:
            g.ingest_file(path, parallel=parallel)
            rows[parallel] = g.db.execute("SELECT namespace, name, dataset_id FROM dataset_aliases").fetchall()
    assert rows[False] == rows[True] == [(SYMLINK_NS, "default.crm_customers", 2)]


def moved_table_events() -> tuple[dict, dict]:
    """default.moved written at its old location on day 1, at its new one on day 2 (the listener's symlinks)."""
    def write(location: str, day: str) -> dict:
        link = facet("SymlinksDatasetFacet", "1-0-1", identifiers=[
            {"namespace": "file:/warehouse", "name": "default.moved", "type": "TABLE"}])
        return run_event("ctas", [], [ds(location, {"symlinks": link})], time=f"2026-11-0{day}T10:00:00.000Z")
    return write("/warehouse/old/moved", "1"), write("/warehouse/new/moved", "2")


@pytest.mark.parametrize("together", [True, False])
def test_a_symlink_follows_the_newest_event_whatever_the_order_of_ingest(tmp_path, together):
    old, new = moved_table_events()
    with LineageGraph(tmp_path / "l.db") as g:
        if together:
            g.ingest_events([("new", new), ("old", old)])
        else:
            g.ingest_events([("new", new)])
            g.ingest_events([("old", old)])  # a late backfill of the day-1 event
        [(node, _, _)] = g.find_datasets("/warehouse/new/moved")
        assert g.find_aliases("default.moved") == [(node, NS, "/warehouse/new/moved")]
        g.ingest_events([("newer", run_event("ctas", [], [ds("/warehouse/old/moved", {"symlinks": facet(
            "SymlinksDatasetFacet", "1-0-1", identifiers=[
                {"namespace": "file:/warehouse", "name": "default.moved", "type": "TABLE"}])})],
            time="2026-11-03T10:00:00.000Z"))])  # moved back on day 3: the newest again decides
        [(back, _, _)] = g.find_datasets("/warehouse/old/moved")
        assert g.find_aliases("default.moved") == [(back, NS, "/warehouse/old/moved")]


def test_a_store_written_before_alias_times_takes_them_on_open(tmp_path):
    db = tmp_path / "l.db"
    old, new = moved_table_events()
    with LineageGraph(db) as g:
        g.ingest_events([("old", old)])
    with sqlite3.connect(db) as raw:  # as an older version wrote the table: no seen_time
        raw.execute("DROP TABLE dataset_aliases")
        raw.execute("CREATE TABLE dataset_aliases (namespace TEXT NOT NULL, name TEXT NOT NULL, "
                    "dataset_id INTEGER NOT NULL, PRIMARY KEY (namespace, name)) WITHOUT ROWID")
    with LineageGraph(db) as g:
        g.ingest_events([("new", new)])
        [(node, _, _)] = g.find_datasets("/warehouse/new/moved")
        assert g.db.execute("SELECT namespace, name, dataset_id FROM dataset_aliases").fetchall() == [
            ("file:/warehouse", "default.moved", node)]


def test_table_contract_attaches_to_the_symlinked_node_and_impact_and_diff_find_its_consumers(tmp_path, capsys):
    db = tmp_path / "l.db"
    events = write_jsonl(tmp_path / "t.jsonl", table_events())
    contract = table_contract(tmp_path, "crm_customers")  # name and table differ: the table is matched
    assert main(["lineage", "ingest", str(events), str(contract), "--db", str(db)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        f"  {contract}: contract customers 1.2.0 -> file:{WAREHOUSE} (alias crm_customers)")
    assert main(["impact", "default.crm_customers.email", "--db", str(db)]) == 0
    assert capsys.readouterr().out.splitlines()[2].split() == [
        "downstream", "1", "file:export.crm_feed", "email", "unknown", "column", "team:crm-export",
        "spark:crm_export"]
    new = without_email(tmp_path, contract)
    assert main(["diff", str(contract), str(new), "--lineage", str(db), "--format", "json"]) == 0
    [removed] = json.loads(capsys.readouterr().out)["findings"]
    assert [(c["dataset"], c["column"], c["owners"], c["coarse"]) for c in removed["consumers"]] == [
        ("export.crm_feed", "email", ["team:crm-export"], False)]


def test_a_table_contract_ingested_before_the_events_gives_way_to_the_symlinked_node(tmp_path, capsys):
    db = tmp_path / "l.db"
    contract = table_contract(tmp_path, "default.crm_customers")  # its name is the symlink's
    assert main(["lineage", "ingest", str(contract), "--db", str(db)]) == 0
    assert main(["lineage", "ingest", str(write_jsonl(tmp_path / "t.jsonl", table_events())), "--db", str(db)]) == 0
    capsys.readouterr()
    with LineageGraph(db, create=False) as g:  # the contract's node moved onto the node the symlink names
        assert hit_rows(g, "default.crm_customers.email") == [("export.crm_feed", "email", 1, False,
                                                               ["team:crm-export"])]
        assert g.find_datasets("default.crm_customers") == []
        node = g.dataset(g.find_datasets(WAREHOUSE)[0][0])
        assert (node["contract"]["name"], node["owners"]) == ("customers", ["crm-data-team", "joao.pereira"])
    assert main(["diff", str(contract), str(without_email(tmp_path, contract)), "--lineage", str(db)]) == 0
    assert ("consumer file:export.crm_feed.email via spark:crm_export; owners: team:crm-export"
            in capsys.readouterr().out)
    # ingesting the contract again keeps it there
    assert main(["lineage", "ingest", str(contract), "--db", str(db)]) == 0
    with LineageGraph(db, create=False) as g:
        assert g.find_datasets("default.crm_customers") == []
        node = g.dataset(g.find_datasets(WAREHOUSE)[0][0])
        assert (node["contract"]["name"], node["owners"]) == ("customers", ["crm-data-team", "joao.pereira"])


# -- 2. a nested column is read through its struct ---------------------------------------------------------


@pytest.fixture()
def nested(tmp_path):
    """raw.customers.address (city, zip) -> mart.customers.address (the top column, as Spark names it);
    raw.customers.address.zip -> zips.by_zip.zip (a producer naming the nested field)."""
    struct = {"name": "address", "type": "struct",
              "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "string"}]}
    fields = [{"name": "id", "type": "long"}, struct]
    raw = ds("raw.customers", {"schema": facet("SchemaDatasetFacet", "1-2-0", fields=fields)})
    with LineageGraph(tmp_path / "n.db") as g:
        g.ingest_events([
            ("1", run_event("copy_customers", [raw], [ds("mart.customers", {
                "schema": facet("SchemaDatasetFacet", "1-2-0", fields=fields),
                "ownership": owners("team:mart"),
                "columnLineage": column_lineage({"id": [("raw.customers", "id", "DIRECT", "IDENTITY")],
                                                 "address": [("raw.customers", "address", "DIRECT", "IDENTITY")]})})])),
            ("2", run_event("zips", [ds("raw.customers")], [ds("zips.by_zip", {
                "schema": schema("zip"), "ownership": owners("team:geo"),
                "columnLineage": column_lineage({"zip": [("raw.customers", "address.zip", "DIRECT", "IDENTITY")]})})])),
        ])
        yield g


def test_a_nested_column_reaches_the_consumers_of_its_struct(nested):
    result = impact(nested, resolve_target(nested, "raw.customers.address.city"))
    assert [(h.dataset, h.column, h.distance, h.coarse, h.owners) for h in result.hits] == [
        ("mart.customers", "address", 1, False, ["team:mart"])]
    assert result.hits[0].path == [{"node": "raw.customers.address"},
                                   {"job": "spark:copy_customers", "transformation": "DIRECT/IDENTITY"},
                                   {"node": "mart.customers.address"}]
    mart = nested.find_datasets("mart.customers")[0][0]
    address = nested.find_field(mart, "address")
    assert result.edges == [("target", f"downstream:{mart}:{address}", "copy_customers", False)]
    # the nested field that has edges of its own reaches them and its struct's
    assert hit_rows(nested, "raw.customers.address.zip") == [
        ("zips.by_zip", "zip", 1, False, ["team:geo"]), ("mart.customers", "address", 1, False, ["team:mart"])]


def test_a_struct_reaches_the_consumers_of_its_nested_fields_and_upstream_goes_through_the_struct(nested):
    assert hit_rows(nested, "raw.customers.address") == [
        ("mart.customers", "address", 1, False, ["team:mart"]), ("zips.by_zip", "zip", 1, False, ["team:geo"])]
    assert hit_rows(nested, "mart.customers.address.city", "upstream") == [
        ("raw.customers", "address", 1, False, [])]


def test_diff_of_a_struct_names_the_consumers_of_its_nested_fields(nested):
    doc = {"contract": {"name": "customers", "version": "1.0.0", "owner": "team:crm"},
           "dataset": {"name": "raw.customers"},
           "schema": {"fields": [{"name": "id", "type": "long"},
                                 {"name": "address", "type": "struct<city:string,zip:string>",
                                  "fields": [{"name": "city"}, {"name": "zip"}]}]}}
    old = Contract.model_validate(doc)
    for removed, expected in (
            ("address", [("mart.customers", "address"), ("zips.by_zip", "zip")]),  # and the nested field's reader
            ("address.city", [("mart.customers", "address")])):  # read through its struct
        new_doc = copy.deepcopy(doc)
        fields = new_doc["schema"]["fields"]
        if removed == "address":
            fields.pop()
        else:
            fields[1]["fields"].pop(0)
        report = diff_contracts(old, Contract.model_validate(new_doc))
        attach_consumers(report, old, nested)
        [finding] = [f for f in report.findings if f.rule == "S6"]
        assert finding.field == removed
        assert [(c["dataset"], c["column"]) for c in finding.consumers] == expected


# -- 3. a contract whose dataset the store does not hold: consumers unknown, not "none" ---------------------


@pytest.fixture()
def other_store(tmp_path) -> Path:
    db = tmp_path / "other.db"
    with LineageGraph(db) as g:
        g.ingest_event(run_event("other_job", [ds("sales.raw")], [ds("sales.mart", {"ownership": owners("team:x")})]))
    return db


def orders_v2(tmp_path: Path, edit) -> Path:
    doc = yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text())
    edit(doc)
    path = tmp_path / "orders_v2.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def drop_cliente_id(doc: dict) -> None:
    doc["schema"]["fields"] = [f for f in doc["schema"]["fields"] if f["name"] != "cliente_id"]
    doc["contract"]["version"] = "2.0.0"


def test_diff_says_consumers_are_unknown_when_the_store_lacks_the_dataset(tmp_path, other_store, capsys):
    old, new = str(REPO / "contracts" / "orders.yaml"), str(orders_v2(tmp_path, drop_cliente_id))
    assert main(["diff", old, new, "--lineage", str(other_store)]) == 0  # without --fail-on: 0, as ever
    assert capsys.readouterr().out.splitlines()[1:3] == [
        "incompatible  S6                field cliente_id  field removed",
        "              consumers: unknown: dataset 'curated.orders' is not in the lineage store"]
    assert main(["diff", old, new, "--lineage", str(other_store), "--format", "json"]) == 0
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert (finding["consumers"], finding["consumers_unknown"]) == (
        None, "dataset 'curated.orders' is not in the lineage store")
    assert main(["diff", old, new, "--lineage", str(other_store), "--fail-on", "incompatible"]) == 1  # as without


def test_a_compatible_diff_with_an_unrelated_store_still_passes(tmp_path, other_store, capsys):
    def describe(doc: dict) -> None:
        doc["schema"]["fields"][0]["description"] = "another description"
        doc["contract"]["version"] = "1.0.1"

    new = str(orders_v2(tmp_path, describe))
    assert main(["diff", str(REPO / "contracts" / "orders.yaml"), new, "--lineage", str(other_store),
                 "--fail-on", "potentially", "--format", "json"]) == 0
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert finding["change_class"] == "compatible" and finding["consumers"] is None
    assert "consumers_unknown" not in finding  # compatible changes are not looked up


def test_a_dataset_only_its_contract_named_is_unknown_not_without_consumers(tmp_path, other_store, capsys):
    """`lineage ingest` of a contract alone makes a node (named by its path); until an event names it, impact and
    diff say its consumers are unknown (exit 2 / consumers null), as before the contract was ingested."""
    orders = str(REPO / "contracts" / "orders.yaml")
    assert main(["lineage", "ingest", orders, "--db", str(other_store)]) == 0
    capsys.readouterr()
    assert main(["impact", "curated.orders.cliente_id", "--db", str(other_store)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"dqgov: error: dataset '{REPO}/examples/data/orders.csv' is in the lineage store through "
        "its contract only: no event names it yet, so what reads it is unknown; ingest the events of a job that reads "
        "or writes it")
    new = str(orders_v2(tmp_path, drop_cliente_id))
    assert main(["diff", orders, new, "--lineage", str(other_store), "--format", "json"]) == 0
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert (finding["consumers"], finding["consumers_unknown"]) == (
        None, "dataset 'curated.orders' is in the lineage store through its contract only: no event names it yet")


def test_a_known_dataset_without_consumers_still_says_none_found(tmp_path, capsys):
    db = tmp_path / "l.db"
    with LineageGraph(db) as g:
        g.ingest_event(run_event("load", [], [ds("curated.orders", {"schema": schema("cliente_id")})]))
    new = str(orders_v2(tmp_path, drop_cliente_id))
    assert main(["diff", str(REPO / "contracts" / "orders.yaml"), new, "--lineage", str(db)]) == 0
    assert capsys.readouterr().out.splitlines()[2] == "              consumers: none found in the lineage store"


# -- 4. a file that is not a store, paths that cannot be written: one line, exit 2, nothing written -----------


def tables_of(path: Path) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    finally:
        con.close()


def test_a_foreign_sqlite_file_is_refused_and_left_untouched(tmp_path, other_store, capsys):
    foreign = tmp_path / "app.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE datasets (id INTEGER PRIMARY KEY, name TEXT)")
    con.commit()
    con.close()
    size = foreign.stat().st_size
    events = write_jsonl(tmp_path / "e.jsonl", [run_event("j", [ds("a")], [ds("b")])])
    message = f"dqgov: error: {foreign}: not a lineage store (no `meta` table; `dqgov lineage ingest --db` writes one)"
    new = str(orders_v2(tmp_path, drop_cliente_id))
    for argv in (["impact", "raw.orders", "--db", str(foreign)],
                 ["lineage", "ingest", str(events), "--db", str(foreign)],
                 ["diff", str(REPO / "contracts" / "orders.yaml"), new, "--lineage", str(foreign)]):
        assert main(argv) == 2
        assert capsys.readouterr().err.splitlines() == [message]
    assert tables_of(foreign) == ["datasets"]  # no table of ours was created in it
    assert foreign.stat().st_size == size and not Path(f"{foreign}-wal").exists()  # nor WAL mode


def test_a_file_that_is_not_sqlite_and_an_empty_file_are_not_stores(tmp_path, capsys):
    text = tmp_path / "notes.db"
    text.write_text("just some notes\n" * 100)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert main(["impact", "x", "--db", str(text)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"dqgov: error: {text}: not a lineage store: file is not a database"]
    assert main(["impact", "x", "--db", str(empty)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"dqgov: error: {empty}: not a lineage store (no `meta` table; `dqgov lineage ingest --db` writes one)"]
    assert empty.stat().st_size == 0


def test_a_query_error_on_a_damaged_store_is_one_line(tmp_path, capsys):
    damaged = tmp_path / "damaged.db"  # has our `meta` table, but a `datasets` of another shape
    con = sqlite3.connect(damaged)
    con.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); CREATE TABLE datasets (id, name);")
    con.close()
    assert main(["impact", "raw.orders", "--db", str(damaged)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"dqgov: error: {damaged}: lineage store error: no such column: namespace"]


def test_unwritable_output_and_store_paths_are_one_line_errors(tmp_path, other_store, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = blocker / "sub" / "impact.html"
    assert main(["impact", "sales.raw", "--db", str(other_store), "--format", "html", "-o", str(out)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"dqgov: error: {out}: cannot write the impact report: Not a directory"]
    store = blocker / "sub" / "lineage.db"
    events = write_jsonl(tmp_path / "e.jsonl", [run_event("j", [ds("a")], [ds("b")])])
    assert main(["lineage", "ingest", str(events), "--db", str(store)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"dqgov: error: {store}: cannot open the lineage store: Not a directory"]


# -- 5. `_deleted: true` deletes a facet: the kept column is cleared, latest by eventTime ----------------------


def deleted(name: str) -> dict:
    return {**facet(name), "_deleted": True}


def build(time: str, facets: dict, job_facets: dict | None = None, **extra) -> dict:
    return run_event("build", [ds("raw.a")], [ds("mart.b", facets, **extra)], time=time, job_facets=job_facets)


FULL = {
    "ownership": owners("team:old-owner"),
    "tags": facet("TagsDatasetFacet", tags=[{"key": "domain", "value": "sales"}]),
    "documentation": facet("DocumentationDatasetFacet", description="the b table"),
    "dqgov_dataContract": {**facet("DataContract"), "name": "b", "version": "1.0.0", "status": "failed"},
}
GONE = {"ownership": deleted("OwnershipDatasetFacet"), "tags": deleted("TagsDatasetFacet"),
        "documentation": deleted("DocumentationDatasetFacet"), "dqgov_dataContract": deleted("DataContract")}
JOB_OWNED = {"ownership": facet("OwnershipJobFacet", owners=[{"name": "user:ana"}])}
JOB_GONE = {"ownership": deleted("OwnershipJobFacet")}


def row_of(g: LineageGraph, name: str) -> tuple:
    return g.db.execute("SELECT owners, tags, quality_status, contract, description FROM datasets WHERE name = ?",
                        (name,)).fetchone()


def test_a_deleted_facet_clears_what_was_kept_from_it(tmp_path):
    with LineageGraph(tmp_path / "d.db") as g:
        g.ingest_events([("1", build("2026-11-01T10:00:00Z", FULL, JOB_OWNED)),
                         ("2", build("2026-11-02T10:00:00Z", GONE, JOB_GONE))])
        assert row_of(g, "mart.b") == (None, None, None, None, None)
        node = g.dataset(g.find_datasets("mart.b")[0][0])
        assert (node["owners"], node["tags"], node["quality_status"], node["contract"]) == ([], [], None, None)
        job = g.db.execute("SELECT id, owners FROM jobs WHERE name = 'build'").fetchone()
        assert job[1] is None and g.job(job[0])["owners"] == []
        assert hit_rows(g, "raw.a") == [("mart.b", None, 1, False, [])]  # no removed owner to notify


def test_a_deletion_is_latest_by_event_time_like_content(tmp_path):
    with LineageGraph(tmp_path / "d.db") as g:
        # the deletion arrives first; the older content after it does not come back
        g.ingest_events([("2", build("2026-11-02T10:00:00Z", GONE)), ("1", build("2026-11-01T10:00:00Z", FULL))])
        assert row_of(g, "mart.b") == (None, None, None, None, None)
        # newer content wins over the deletion; an older deletion arriving late does not clear it
        g.ingest_events([("3", build("2026-11-03T10:00:00Z", FULL)),
                         ("0", build("2026-10-31T10:00:00Z", GONE))])
        assert row_of(g, "mart.b") == ('["team:old-owner"]', '[{"key": "domain", "value": "sales"}]', "failed",
                                       '{"name": "b", "status": "failed", "version": "1.0.0"}', "the b table")


def test_a_deleted_contract_facet_leaves_the_status_of_assertions_sent_with_it(tmp_path):
    assertions = facet("DataQualityAssertionsDatasetFacet", "1-1-0",
                       assertions=[{"assertion": "not_null", "success": True}])
    with LineageGraph(tmp_path / "d.db") as g:
        g.ingest_events([("1", build("2026-11-01T10:00:00Z", FULL)),
                         ("2", build("2026-11-02T10:00:00Z", {"dqgov_dataContract": deleted("DataContract"),
                                                              "dataQualityAssertions": assertions}))])
        assert row_of(g, "mart.b")[2:4] == ("passed", None)

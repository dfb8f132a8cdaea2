"""An output that cannot be written fails the run with one line of our own (ConfigError), never Spark's trace.

Refused before the check pass (`writer.check_destination`, called by `pipeline.precheck`): a table in a schema
that does not exist; a target, quarantine or report path under a file. A write that fails later (staging,
promotion, the report) raises `<kind> <location>: writing failed: <Spark's first line>`, chained to Spark's error.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import dq_governance
from dq_governance.contracts.model import Contract
from dq_governance.errors import ConfigError, InputDataError
from dq_governance.publish.report import REPORT_COLUMNS, write_report
from dq_governance.publish.writer import retry_tag

pytestmark = pytest.mark.spark

CONTRACT = Contract.model_validate({
    "contract": {"name": "items", "version": "1.0.0"}, "dataset": {"name": "items"},
    "schema": {"fields": [{"name": "id", "type": "long", "required": True}]},
    "quality": {"on_failure": "quarantine"},
})


def _frame(spark):
    return spark.createDataFrame([(1,), (2,), (None,)], "id long")  # 2 valid rows, 1 quarantined


def _tree(root: Path) -> list[str]:
    """Every file and directory under root (hidden ones included: a staging directory left behind shows)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --------------------------------------------------------------------------- refused before the check pass


def test_table_in_a_missing_schema_is_refused_before_anything_is_written(spark, tmp_path):
    warehouse = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))
    with pytest.raises(ConfigError) as caught:
        dq_governance.run(_frame(spark), CONTRACT, target="dqgov_no_such_schema.t1", format="table",
                          quarantine=str(tmp_path / "q"), report=str(tmp_path / "r"), run_id="r1")
    assert str(caught.value) == ("target dqgov_no_such_schema.t1: schema dqgov_no_such_schema does not exist; "
                                 "create it first or name a table in an existing schema")
    assert not spark.catalog.databaseExists("dqgov_no_such_schema")
    assert not [p.name for p in warehouse.glob("*dqgov_no_such_schema*")]  # nothing staged in the warehouse
    assert _tree(tmp_path) == []  # neither the quarantine nor the report


@pytest.mark.parametrize("kind", ["target", "quarantine", "report"])
def test_a_path_under_a_file_is_refused_before_anything_is_written(spark, tmp_path, kind):
    (tmp_path / "afile").write_text("x")
    outputs = {"target": str(tmp_path / "t"), "quarantine": str(tmp_path / "q"), "report": str(tmp_path / "r")}
    outputs[kind] = str(tmp_path / "afile" / "sub")
    events = tmp_path / "events.jsonl"
    with pytest.raises(ConfigError) as caught:
        dq_governance.run(_frame(spark), CONTRACT, run_id="5f0e7c52-1d2b-4c8a-9e6f-3a7b8c9d0e1f",
                          lineage=f"file:{events}", **outputs)
    assert str(caught.value) == f"{kind} {tmp_path}/afile/sub: file:{tmp_path}/afile is a file, not a directory"
    assert _tree(tmp_path) == ["afile"]  # refused before lineage START: no event either
    assert (tmp_path / "afile").read_text() == "x"


# --------------------------------------------------------------------------- failed writes, in one line


def test_a_failed_staging_write_is_one_line_and_publishes_nothing(spark, tmp_path):
    out, run_id = tmp_path / "out", "0b6c2f36-6c8e-4a59-9a3e-2f1e4c0d7a11"  # lineage needs a uuid run id
    out.mkdir()
    staging = f".dqgov-staging-{run_id}-{retry_tag(CONTRACT.name, run_id, CONTRACT.name)}"  # pipeline: the contract
    (out / staging).write_text("x")  # a stray file where the run stages its target
    (out / "t").mkdir()
    (out / "t" / "keep.txt").write_text("old")
    events = tmp_path / "events.jsonl"
    with pytest.raises(ConfigError) as caught:
        dq_governance.run(_frame(spark), CONTRACT, target=str(out / "t"), quarantine=str(tmp_path / "q"),
                          run_id=run_id, lineage=f"file:{events}")
    message = (f"target {out}/t: writing failed: org.apache.hadoop.fs.ParentNotDirectoryException: Parent path is "
               f"not a directory: file:{out}/{staging}")
    assert str(caught.value) == message
    assert type(caught.value.__cause__).__name__ == "Py4JJavaError"  # Spark's error kept as the cause
    assert _tree(out) == [staging, "t", "t/keep.txt"]  # target unchanged, nothing staged left
    assert not (tmp_path / "q").exists()  # the quarantine was not published either
    sent = _events(events)
    assert [e["eventType"] for e in sent] == ["START", "FAIL"]
    assert sent[1]["run"]["facets"]["errorMessage"]["message"] == message


def test_a_failed_promotion_is_one_line_and_removes_the_promoted_quarantine(spark, tmp_path):
    name = "dqgov_output_errors_t"
    location = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")) / name
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    location.mkdir(parents=True)  # a managed table's location holding a file: Spark refuses to create the table
    (location / "stray.txt").write_text("x")
    try:
        with pytest.raises(ConfigError) as caught:
            dq_governance.run(_frame(spark), CONTRACT, target=name, format="table", mode="append",
                              quarantine=str(tmp_path / "q"), run_id="r1")
        assert str(caught.value) == (
            f"target {name}: writing failed: [LOCATION_ALREADY_EXISTS] Cannot name the managed table as "
            f"`spark_catalog`.`default`.`{name}`, as its associated location 'file:{location}' already exists. "
            "Please pick a different table name, or remove the existing location first. SQLSTATE: 42710")
        assert not spark.catalog.tableExists(name)
        assert _tree(location) == ["stray.txt"]
        assert not [p.name for p in location.parent.iterdir() if p.name.startswith(f".{name}.")]  # no staging
        # the quarantine's run partition was removed again: only the marker of Spark's first write stays
        assert _tree(tmp_path / "q") == ["._SUCCESS.crc", "_SUCCESS"]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        shutil.rmtree(location, ignore_errors=True)


def test_a_failed_report_write_is_one_line(spark, tmp_path):
    report, target = tmp_path / "r", tmp_path / "new" / "deep" / "t"  # the target's parents do not exist yet
    report.mkdir()
    (report / "pipeline=items").write_text("x")  # a stray file where the run's report partition goes
    with pytest.raises(ConfigError) as caught:
        dq_governance.run(_frame(spark), CONTRACT, target=str(target), report=str(report), run_id="r1")
    assert str(caught.value) == (f"report {report}: writing failed: org.apache.hadoop.fs.ParentNotDirectoryException: "
                                 f"Parent path is not a directory: {report}/pipeline=items")
    assert _tree(report) == ["pipeline=items"]  # nothing staged left
    assert sorted(r["id"] for r in spark.read.parquet(str(target)).collect()) == [1, 2]  # published before the report
    assert (report / "pipeline=items").read_text() == "x"


def test_write_report_alone_raises_the_same_line(spark, tmp_path):
    (tmp_path / "afile").write_text("x")
    row = {"pipeline": "p", "run_id": "r1"}
    rows = [{c: row.get(c) for c in REPORT_COLUMNS}]
    with pytest.raises(ConfigError) as caught:
        write_report(spark, rows, str(tmp_path / "afile" / "r"))
    assert str(caught.value) == (f"report {tmp_path}/afile/r: writing failed: org.apache.hadoop.fs."
                                 f"ParentNotDirectoryException: Parent path is not a directory: file:{tmp_path}/afile")
    assert _tree(tmp_path) == ["afile"]


def test_writing_passes_our_errors_and_non_spark_errors_through_unchanged():
    from dq_governance.publish.writer import writing

    ours, bug = InputDataError("cannot append to t: schema differs"), KeyError("x")
    for error in (ours, bug):
        with pytest.raises(type(error)) as caught:
            with writing("target", "t"):
                raise error
        assert caught.value is error and caught.value.__cause__ is None


def test_an_unreadable_target_schema_is_one_line_and_publishes_nothing(spark, tmp_path):
    # verify reads the parquet target's schema before any promotion: a corrupt file there is Spark's error, once
    target = tmp_path / "t"
    target.mkdir()
    (target / "part-00000.parquet").write_text("not parquet")
    with pytest.raises(ConfigError) as caught:
        dq_governance.run(_frame(spark), CONTRACT, target=str(target), mode="append", quarantine=str(tmp_path / "q"),
                          run_id="r1")
    message = str(caught.value)
    assert message.startswith(f"target {target}: writing failed: ") and "\n" not in message
    assert "part-00000.parquet" in message
    assert _tree(tmp_path) == ["t", "t/part-00000.parquet"]  # the quarantine was not promoted either

"""Retried appends: a run repeated with the same run id replaces its published rows, on paths and tables.

Three input rows, two valid and one without an id: every run publishes 2 target rows and 1 quarantine
row, and writes one report row per rule. Delta paths and tables are covered by tests/publish_delta_job.py.
"""

from __future__ import annotations

import json
import uuid

import pytest

import dq_governance
from dq_governance.contracts.model import Contract
from dq_governance.errors import ConfigError
from dq_governance.publish import writer
from dq_governance.publish.report import read_history
from dq_governance.publish.writer import Output, retry_tag, stage
from dq_governance.session import HadoopFs  # the Hadoop FileSystem calls moved from writer._Fs

pytestmark = pytest.mark.spark

CONTRACT = Contract.model_validate({
    "contract": {"name": "items", "version": "1.0.0"}, "dataset": {"name": "items"},
    "schema": {"fields": [{"name": "id", "type": "long", "required": True}, {"name": "v", "type": "string"}]},
    "quality": {"on_failure": "quarantine"},
})
RULES = len(CONTRACT.check_rules())  # the rules of one run: one report row each


def _frame(spark):
    return spark.createDataFrame([("1", "a"), ("2", "b"), (None, "bad")], "id string, v string")


def _outs(tmp_path, **extra):
    return {"quarantine": str(tmp_path / "quarantine"), "report": str(tmp_path / "report"), "mode": "append",
            **extra}


def _ids(frame):
    return sorted(r["id"] for r in frame.collect())


def _events(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_parquet_append_retried_with_the_same_run_id_holds_the_run_once(spark, tmp_path):
    run_id = str(uuid.uuid4())
    target, events = tmp_path / "valid", tmp_path / "events.jsonl"
    outs = _outs(tmp_path, target=str(target), lineage=f"file:{events}")
    first = dq_governance.run(_frame(spark), CONTRACT, run_id=run_id, **outs)
    second = dq_governance.run(_frame(spark), CONTRACT, run_id=run_id, **outs)

    assert _ids(spark.read.parquet(str(target))) == [1, 2]
    assert spark.read.parquet(str(tmp_path / "quarantine")).count() == 1
    history = read_history(str(tmp_path / "report"), spark=spark)
    assert history.count() == RULES and {r["run_id"] for r in history.collect()} == {run_id}
    assert {o["kind"]: o["rows"] for o in first.outputs} == {o["kind"]: o["rows"] for o in second.outputs} == {
        "target": 2, "quarantine": 1}
    # every data file carries the run's name: that is how the retry found and replaced the first attempt's
    names = [p.name for p in target.iterdir() if not p.name.startswith((".", "_"))]
    assert names and all(n.startswith(f"dqgov-{retry_tag('items', run_id, 'items')}.part-") for n in names)
    # the lineage file holds both attempts as one OpenLineage run: START, COMPLETE, START, COMPLETE
    sent = _events(events)
    assert [(e["eventType"], e["run"]["runId"]) for e in sent] == [
        ("START", run_id), ("COMPLETE", run_id), ("START", run_id), ("COMPLETE", run_id)]
    for complete in (sent[1], sent[3]):
        rows = {o["name"].rsplit("/", 1)[-1]: o["outputFacets"]["outputStatistics"]["rowCount"]
                for o in complete["outputs"]}
        assert rows == {"valid": 2, "quarantine": 1}


def test_a_retry_replaces_only_its_own_run(spark, tmp_path):
    target = tmp_path / "valid"
    outs = _outs(tmp_path, target=str(target))
    dq_governance.run(_frame(spark), CONTRACT, run_id="r1", **outs)
    dq_governance.run(_frame(spark), CONTRACT, run_id="r2", **outs)
    r2_tag = f"dqgov-{retry_tag('items', 'r2', 'items')}."
    r2_files = sorted(p.name for p in target.iterdir() if p.name.startswith(r2_tag))
    dq_governance.run(_frame(spark), CONTRACT, run_id="r1", **outs)
    assert _ids(spark.read.parquet(str(target))) == [1, 1, 2, 2]  # r1 once, r2 once
    assert sorted(p.name for p in target.iterdir() if p.name.startswith(r2_tag)) == r2_files
    assert spark.read.parquet(str(tmp_path / "quarantine")).count() == 2
    assert read_history(str(tmp_path / "report"), spark=spark).count() == 2 * RULES
    # the same run id under another pipeline is another run; it needs a quarantine of its own (the quarantine is
    # partitioned by run id alone: sharing it is refused before anything is written, test_publish_trust.py)
    with pytest.raises(ConfigError, match="already holds rows of pipeline items, which this run of other would"):
        dq_governance.run(_frame(spark), CONTRACT, run_id="r1", pipeline="other", **outs)
    assert spark.read.parquet(str(target)).count() == 4
    other = {**outs, "quarantine": str(tmp_path / "other_quarantine")}
    dq_governance.run(_frame(spark), CONTRACT, run_id="r1", pipeline="other", **other)
    assert spark.read.parquet(str(target)).count() == 6


def test_two_contracts_sharing_a_run_id_append_to_one_target_each_once(spark, tmp_path):
    """One orchestrator run id for a pipeline's contracts: each contract's append is its own run (neither
    replaces the other's files), and a retry of one replaces only its own."""
    target = tmp_path / "valid"
    other = CONTRACT.model_copy(deep=True)
    other.contract.name = "items_us"
    shared = {"target": str(target), "mode": "append", "run_id": "nightly-1", "pipeline": "nightly"}
    four = spark.createDataFrame([(str(i), "us") for i in range(4, 8)], "id string, v string")
    dq_governance.run(_frame(spark), CONTRACT, quarantine=str(tmp_path / "q_eu"), **shared)
    dq_governance.run(four, other, quarantine=str(tmp_path / "q_us"), **shared)
    assert _ids(spark.read.parquet(str(target))) == [1, 2, 4, 5, 6, 7]
    dq_governance.run(_frame(spark), CONTRACT, quarantine=str(tmp_path / "q_eu"), **shared)  # the first's retry
    assert _ids(spark.read.parquet(str(target))) == [1, 2, 4, 5, 6, 7]


def test_two_contracts_sharing_a_run_id_stage_apart_when_both_stage_before_either_promotes(spark, tmp_path):
    """A pipeline running its contracts at once: each stages in a folder of its own, so neither's staging
    replaces the other's rows before they are promoted."""
    target = tmp_path / "t"
    out = Output(str(target), mode="append")
    eu = spark.createDataFrame([(1, "eu"), (2, "eu")], "id long, v string")
    us = spark.createDataFrame([(3, "us"), (4, "us")], "id long, v string")
    first = stage(eu, out, run_id="R", pipeline="p", contract="items_eu")
    second = stage(us, out, run_id="R", pipeline="p", contract="items_us")
    assert first.staging != second.staging and (first.rows, second.rows) == (2, 2)
    first.promote()
    second.promote()
    assert sorted(tuple(r) for r in spark.read.parquet(str(target)).collect()) == [
        (1, "eu"), (2, "eu"), (3, "us"), (4, "us")]
    assert [p.name for p in tmp_path.iterdir()] == ["t"]  # both staging folders gone


def test_without_a_run_id_every_run_is_new(spark, tmp_path):
    target, events = tmp_path / "valid", tmp_path / "events.jsonl"
    outs = _outs(tmp_path, target=str(target), lineage=f"file:{events}")
    first = dq_governance.run(_frame(spark), CONTRACT, **outs)
    second = dq_governance.run(_frame(spark), CONTRACT, **outs)
    assert first.run_id != second.run_id
    assert _ids(spark.read.parquet(str(target))) == [1, 1, 2, 2]
    assert spark.read.parquet(str(tmp_path / "quarantine")).count() == 2
    assert read_history(str(tmp_path / "report"), spark=spark).count() == 2 * RULES
    assert [(e["eventType"], e["run"]["runId"]) for e in _events(events)] == [
        ("START", first.run_id), ("COMPLETE", first.run_id), ("START", second.run_id), ("COMPLETE", second.run_id)]


def test_parquet_table_append_retried_holds_the_run_once(spark, tmp_path):
    name = "dqgov_idempotent_append_tbl"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    events = tmp_path / "events.jsonl"
    outs = _outs(tmp_path, target=name, format="table", lineage=f"file:{events}")
    t1, t2 = str(uuid.uuid4()), str(uuid.uuid4())  # OpenLineage run ids are UUIDs
    try:
        dq_governance.run(_frame(spark), CONTRACT, run_id=t1, **outs)  # creates the table
        dq_governance.run(_frame(spark), CONTRACT, run_id=t1, **outs)
        info = writer.table_info(spark, name)
        assert info is not None and info.provider == "parquet" and info.partition_by == []
        assert _ids(spark.table(name)) == [1, 2]
        dq_governance.run(_frame(spark), CONTRACT, run_id=t2, **outs)
        dq_governance.run(_frame(spark), CONTRACT, run_id=t1, **outs)
        assert _ids(spark.table(name)) == [1, 1, 2, 2]
        assert spark.sql(f"SELECT count(*) AS n FROM {name}").first()["n"] == 4  # SQL readers see it too
        assert spark.read.parquet(str(tmp_path / "quarantine")).count() == 2
        assert read_history(str(tmp_path / "report"), spark=spark).count() == 2 * RULES
        assert [e["eventType"] for e in _events(events)] == ["START", "COMPLETE"] * 4
        assert [e["run"]["runId"] for e in _events(events)][::2] == [t1, t1, t2, t1]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_partitioned_parquet_table_append_retried(spark):
    name = "dqgov_idempotent_part_tbl"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    out = Output(name, "table", "append", partition_by=["p"])
    rows = spark.createDataFrame([(1, "a"), (2, "a"), (3, "b")], "id long, p string")
    try:
        stage(rows, out, run_id="R", pipeline="p").promote()
        stage(rows, out, run_id="R", pipeline="p").promote()
        assert writer.table_info(spark, name).partition_by == ["p"]
        assert sorted((r["p"], r["id"]) for r in spark.table(name).collect()) == [("a", 1), ("a", 2), ("b", 3)]
        stage(spark.createDataFrame([(4, "c")], "id long, p string"), out, run_id="S", pipeline="p").promote()
        assert spark.table(name).where("p = 'c'").count() == 1  # a new partition, registered
        assert spark.table(name).count() == 4
        with pytest.raises(ConfigError, match=f"table {name}: append with partition_by \\[\\] into a table "
                                              "partitioned by \\[p\\]"):
            stage(rows, Output(name, "table", "append"), run_id="T", pipeline="p")  # refused before staging
        assert spark.table(name).count() == 4
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_append_to_a_table_of_another_file_format_is_refused(spark, tmp_path):
    name = "dqgov_idempotent_orc_tbl"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (id BIGINT, v STRING) USING orc")
    try:
        with pytest.raises(ConfigError,
                           match=f"table {name}: append needs a parquet or Delta table \\(provider is orc\\)"):
            dq_governance.run(_frame(spark), CONTRACT, run_id="o1", **_outs(tmp_path, target=name, format="table"))
        assert spark.table(name).count() == 0
        assert list(tmp_path.iterdir()) == []  # refused before the check: no quarantine, no report
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.mark.parametrize("crash_at, left", [(0, 0), (1, 2)])
def test_a_crashed_retry_never_shows_a_row_twice(spark, tmp_path, monkeypatch, crash_at, left):
    """A retry that dies after removing the run's old files, before (0) or while (1) moving its own in."""
    target = tmp_path / "t"
    out = Output(str(target), mode="append")
    rows = spark.createDataFrame([(i, f"v{i}") for i in range(4)], "id long, v string")  # two files of two rows
    stage(rows, out, run_id="R", pipeline="p").promote()
    stage(spark.createDataFrame([(9, "other")], "id long, v string"), out, run_id="S", pipeline="p").promote()

    real, moved = HadoopFs.rename, []

    def dies(fs, src, dst):
        if len(moved) == crash_at:
            raise RuntimeError("simulated crash")
        moved.append(dst)
        real(fs, src, dst)

    retry = stage(rows, out, run_id="R", pipeline="p")
    assert retry.rows == 4 and len([p for p in (tmp_path / f".dqgov-staging-R-{retry.tag}" / "t").iterdir()
                                    if p.suffix == ".parquet"]) == 2
    monkeypatch.setattr(HadoopFs, "rename", dies)
    with pytest.raises(RuntimeError, match="simulated crash"):
        retry.promote()
    monkeypatch.undo()
    seen = _ids(spark.read.parquet(str(target)))
    assert seen.count(9) == 1 and len(seen) == 1 + left and len(set(seen)) == len(seen)
    assert seen[:-1] in ([], [0, 1], [2, 3])  # R's rows absent or one of its files: never a second copy

    stage(rows, out, run_id="R", pipeline="p").promote()  # the next attempt repairs it
    assert _ids(spark.read.parquet(str(target))) == [0, 1, 2, 3, 9]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]  # no staging left behind


def test_overwrite_and_replace_partitions_are_unchanged_by_retries(spark, tmp_path):
    target = tmp_path / "valid"
    outs = _outs(tmp_path, target=str(target))
    outs["mode"] = "overwrite"
    dq_governance.run(_frame(spark), CONTRACT, run_id="w1", **outs)
    dq_governance.run(_frame(spark), CONTRACT, run_id="w1", **outs)
    assert _ids(spark.read.parquet(str(target))) == [1, 2]
    names = [p.name for p in target.iterdir() if not p.name.startswith((".", "_"))]
    assert names and not any(n.startswith("dqgov-") for n in names)  # overwrite files keep Spark's names
    assert spark.read.parquet(str(tmp_path / "quarantine")).count() == 1

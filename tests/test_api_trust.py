"""The Python API refuses, before any Spark work and in one line of errors.py, what it would otherwise ignore or
replace without a word; and the decorators act by their expectations' own actions, also on methods."""

from __future__ import annotations

import re

import pytest

import dq_governance
from dq_governance import api
from dq_governance.contracts.model import Contract
from dq_governance.errors import ConfigError, GateFailedError, InputDataError

pytestmark = pytest.mark.spark

ROWS = [(1, 10), (2, -5), (None, 7)]


def _contract(on_failure: str = "quarantine", rules: tuple = ()) -> Contract:
    return Contract.model_validate({
        "contract": {"name": "people", "version": "1.0.0"}, "dataset": {"name": "people"},
        "schema": {"fields": [{"name": "id", "type": "long", "required": True}, {"name": "v", "type": "long"}]},
        "quality": {"on_failure": on_failure, "rules": list(rules)},
    })


@pytest.fixture()
def frame(spark):
    return lambda rows=ROWS: spark.createDataFrame(rows, "id long, v long")


def _exactly(message: str) -> str:
    return f"^{re.escape(message)}$"


RUN_ID_MESSAGE = ("run id '': use 1-128 characters, letters and digits first, then also . _ : + @ - (it names the "
                  "run's staging directory and its quarantine and report partitions)")


# --------------------------------------------------------------------------- item 1: empty run id / pipeline


def test_an_empty_run_id_is_refused_not_replaced_by_a_new_one(frame, tmp_path):
    outs = {"target": str(tmp_path / "t"), "quarantine": str(tmp_path / "q"), "mode": "append"}
    with pytest.raises(ConfigError, match=_exactly(RUN_ID_MESSAGE)):
        dq_governance.run(frame(), _contract(), run_id="", **outs)
    assert list(tmp_path.iterdir()) == []  # nothing published: a retry cannot publish the rows twice
    with pytest.raises(ConfigError, match=_exactly(RUN_ID_MESSAGE)):
        dq_governance.check(frame(), _contract(), run_id="")


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_pipeline_is_refused_in_run_check_and_contract(frame, tmp_path, blank):
    message = _exactly(f"pipeline {blank!r}: expected a non-blank name (leave pipeline out for the contract's name)")
    with pytest.raises(ConfigError, match=message):
        dq_governance.run(frame(), _contract(), pipeline=blank, target=str(tmp_path / "t"))
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ConfigError, match=message):
        dq_governance.check(frame(), _contract(), pipeline=blank)
    with pytest.raises(ConfigError, match=message):
        dq_governance.contract(_contract(), pipeline=blank)


def test_a_given_pipeline_and_run_id_are_used_as_given(frame):
    named = dq_governance.run(frame(), _contract(), pipeline="nightly", run_id="r-1")
    default = dq_governance.run(frame(), _contract(), run_id="r-2")
    assert (named.pipeline, named.run_id, default.pipeline, default.run_id) == ("nightly", "r-1", "people", "r-2")


# --------------------------------------------------------------------------- item 4 (report): before any write


def test_a_bad_report_format_is_refused_before_the_target_is_published(frame, tmp_path):
    outs = {"target": str(tmp_path / "t"), "quarantine": str(tmp_path / "q"), "report": str(tmp_path / "rep")}
    with pytest.raises(ConfigError, match=_exactly("report format must be one of parquet, delta, not 'Parquet'")):
        dq_governance.run(frame(), _contract(), report_format="Parquet", run_id="r1", **outs)
    assert list(tmp_path.iterdir()) == []


def test_a_delta_report_without_delta_is_refused_before_the_target_is_published(frame, tmp_path):
    report = str(tmp_path / "rep")
    message = (f"report {report}: Delta needs delta-spark and a session with "
               "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension")
    with pytest.raises(ConfigError, match=_exactly(message)):
        dq_governance.run(frame(), _contract(), target=str(tmp_path / "t"), report=report, report_format="delta")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sample", [True, -3, 2.5, "3"])
def test_a_bad_failed_sample_is_refused_before_the_target_is_published(frame, tmp_path, sample):
    with pytest.raises(ConfigError, match=_exactly(f"failed_sample={sample!r}: expected a number of rows, 0 or more")):
        dq_governance.run(frame(), _contract(), target=str(tmp_path / "t"), failed_sample=sample)
    assert list(tmp_path.iterdir()) == []


def test_write_report_refuses_a_bad_format_with_a_config_error(spark, tmp_path):
    from dq_governance.publish.report import write_report

    with pytest.raises(ConfigError, match=_exactly("report format must be one of parquet, delta, not 'csv'")):
        write_report(spark, [], str(tmp_path / "rep"), format="csv")


# --------------------------------------------------------------------------- item 7: options with no output


@pytest.mark.parametrize("options, message", [
    ({"mode": "merge", "merge_keys": ["id"], "format": "delta"},
     "mode='merge', format='delta', merge_keys=['id'] go with target=, which this run does not have; "
     "give target= or drop them"),
    ({"mode": "append"}, "mode='append' goes with target=, which this run does not have; give target= or drop it"),
    ({"quarantine_format": "delta"},
     "quarantine_format='delta' goes with quarantine=, which this run does not have; give quarantine= or drop it"),
    ({"report_format": "bogus"},
     "report_format='bogus' goes with report=, which this run does not have; give report= or drop it"),
    ({"lineage_strict": True, "parent_job": "ns/job"},
     "lineage_strict=True, parent_job='ns/job' go with lineage=, which this run does not have; "
     "give lineage= or drop them"),
    ({"parent_run_id": "11111111-1111-1111-1111-111111111111"},
     "parent_run_id='11111111-1111-1111-1111-111111111111' goes with lineage=, which this run does not have; "
     "give lineage= or drop it"),
    ({"outputs": False, "mode": "merge", "merge_keys": ["id"]},
     "mode='merge', merge_keys=['id'] go with target=, which outputs=False never writes; drop them"),
    ({"outputs": False, "storage": "cache"},
     "storage='cache' says how the checked rows are kept, but outputs=False keeps none; drop storage= or "
     "outputs=False"),
])
def test_an_option_for_an_output_the_run_does_not_write_is_refused(frame, options, message):
    with pytest.raises(ConfigError, match=_exactly(message)):
        dq_governance.run(frame(), _contract(), **options)


def test_metrics_only_check_refuses_a_storage_it_would_not_use(frame):
    with pytest.raises(ConfigError, match=r"^storage='packed' says how the checked rows are kept, but outputs=False"):
        dq_governance.check(frame(), _contract(), outputs=False, storage="packed")


def test_options_at_their_defaults_or_with_their_output_are_accepted(frame, tmp_path):
    result = dq_governance.run(frame(), _contract(), mode="overwrite", format="parquet", merge_keys=[],
                               quarantine_format="parquet", report_format="parquet", lineage_strict=False,
                               failed_sample=0, storage="auto", run_id="defaults")
    assert (result.valid_rows, result.invalid_rows, result.published) == (2, 1, True)
    result = dq_governance.run(frame(), _contract(), target=str(tmp_path / "t"), mode="append",
                               quarantine=str(tmp_path / "q"), report=str(tmp_path / "r"), failed_sample=1)
    assert (result.published, len(result.failed_rows)) == (True, 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q", "r", "t"]


# --------------------------------------------------------------------------- item 9: argument types


def test_a_bad_contract_argument_is_a_config_error(frame):
    message = _exactly("contract: expected a Contract, a path, YAML text or a parsed document, not NoneType")
    with pytest.raises(ConfigError, match=message):
        dq_governance.run(frame(), None)
    with pytest.raises(ConfigError, match=message):
        dq_governance.check(frame(), None)
    with pytest.raises(ConfigError, match=message):
        dq_governance.contract(None)


def test_an_input_that_is_not_a_dataframe_is_an_input_data_error():
    with pytest.raises(InputDataError, match=_exactly(
            "df: expected a Spark DataFrame (classic or Spark Connect), not NoneType")):
        dq_governance.run(None, _contract())
    with pytest.raises(InputDataError, match=_exactly(
            "df: expected a Spark DataFrame (classic or Spark Connect), not str")):
        dq_governance.check("not a frame", _contract())


def test_spark_connect_dataframes_are_frames():
    connect = pytest.importorskip("pyspark.sql.connect.dataframe")
    assert api.is_frame(object.__new__(connect.DataFrame))  # by its class: no server needed
    assert not api.is_frame({"columns": [], "sparkSession": None})


def test_a_decorated_function_returning_no_dataframe_is_an_input_data_error():
    @dq_governance.expect("non_negative", "v >= 0")
    def returns_none():
        return None

    with pytest.raises(InputDataError, match=_exactly(
            "returns_none() returned NoneType, not a Spark DataFrame: a checked function must return its DataFrame")):
        returns_none()


# --------------------------------------------------------------------------- item 6: expectations act


@pytest.mark.parametrize("on_failure", ["warn", "skip"])
def test_expect_or_fail_fails_under_a_warn_or_skip_contract(frame, on_failure):
    @dq_governance.contract(_contract(on_failure))
    @dq_governance.expect_or_fail("non_negative", "v >= 0")
    def people():
        return frame([(1, 10), (2, -5), (3, 7)])

    with pytest.raises(GateFailedError, match=_exactly(
            "people: expectations blocked the output: rule non_negative failed with action fail")) as caught:
        people()
    result = caught.value.result
    assert result is people.last_result
    assert (result.gate.publish, result.status, result.published) == (False, "failed", False)
    assert [(r["id"], r["_dq_disposition"]) for r in result.quarantine_df.collect()] == [(2, "blocked")]
    result.release()


@pytest.mark.parametrize("on_failure", ["warn", "skip"])
def test_expect_or_drop_drops_under_a_warn_or_skip_contract(frame, on_failure):
    @dq_governance.contract(_contract(on_failure))
    @dq_governance.expect_or_drop("non_negative", "v >= 0")
    def people():
        return frame([(1, 10), (2, -5), (3, 7)])

    assert sorted(r["id"] for r in people().collect()) == [1, 3]
    result = people.last_result
    assert (result.gate.publish, result.published) == (True, True)
    assert [(r["id"], r["_dq_disposition"]) for r in result.quarantine_df.collect()] == [(2, "dropped")]
    result.release()


def test_under_skip_only_the_expectations_act_the_contracts_own_actions_stay_relaxed(frame):
    own = [{"type": "expression", "name": "small", "expression": "v < 100", "action": "drop"},
           {"type": "expression", "name": "not_huge", "expression": "v < 400", "action": "fail"}]

    @dq_governance.contract(_contract("skip", own))
    @dq_governance.expect_or_drop("non_negative", "v >= 0")
    @dq_governance.expect_or_fail("known", "id IS NOT NULL OR v = 7")
    def people():
        return frame([(1, 10), (2, -5), (None, 7), (4, 500)])

    out = sorted((r["id"] or 0, r["v"]) for r in people().collect())
    assert out == [(0, 7), (1, 10), (4, 500)]  # only non_negative's row left out; small / not_huge only recorded
    result = people.last_result
    dispositions = sorted((r["id"] or 0, r["_dq_disposition"]) for r in result.quarantine_df.collect())
    assert dispositions == [(0, "published"), (2, "dropped"), (4, "published")]
    assert [(r.name, r.action, r.failed_count) for r in result.rules if r.name in ("small", "not_huge")] == [
        ("small", "drop", 1), ("not_huge", "fail", 1)]  # the user's result keeps the rules as checked
    result.release()


# --------------------------------------------------------------------------- item 8: methods


def test_a_decorated_method_gets_self_and_keeps_its_result(frame):
    class Jobs:
        def __init__(self, rows):
            self.rows = rows

        @dq_governance.expect_or_drop("non_negative", "v >= 0")
        def people(self, min_id=0):
            return frame(self.rows).where(f"id >= {int(min_id)}")

    jobs = Jobs([(1, 10), (2, -5), (3, 7)])
    assert sorted(r["id"] for r in jobs.people().collect()) == [1, 3]
    assert jobs.people.last_result.rule("non_negative").failed_count == 1
    assert jobs.people.last_result is Jobs.people.last_result
    jobs.people.last_result.release()
    assert sorted(r["id"] for r in jobs.people(min_id=2).collect()) == [3]
    assert Jobs.people.__name__ == jobs.people.__name__ == "people"
    jobs.people.last_result.release()


def test_yaml_text_longer_than_a_file_name_loads():
    """YAML text of 256+ bytes with no `/` was asked whether it names a file: OSError (File name too long)."""
    from dq_governance.api import resolve_contract

    text = ('contract: {name: long_text, version: "1.0.0", description: "%s"}\ndataset: {name: t}\n'
            "schema:\n  fields:\n    - {name: id, type: long}\n") % ("x" * 300)
    contract, location = resolve_contract(text)
    assert (contract.name, contract.contract.description, location) == ("long_text", "x" * 300, None)


def test_credentials_in_a_source_are_recorded_nowhere(frame, tmp_path):
    """The source names the input in report rows, lineage events and quarantined rows' `_dq_source`: a URL's
    userinfo and query (where object-store keys and tokens sit) are removed first."""
    import json

    source = "s3a://AKIAEXAMPLE:SeCrEtKeY@bucket/in.csv?token=tok123"
    events = tmp_path / "events.jsonl"
    result = dq_governance.run(frame(), _contract(), run_id="r1", source=source, target=str(tmp_path / "t"),
                               quarantine=str(tmp_path / "q"), report=str(tmp_path / "report"),
                               lineage=f"file:{events}")
    assert {row["source"] for row in result.report_rows()} == {"s3a://bucket/in.csv"}
    spark = frame().sparkSession
    quarantined = spark.read.parquet(str(tmp_path / "q")).collect()
    assert [r["_dq_source"] for r in quarantined] == ["s3a://bucket/in.csv"]  # the row without an id
    assert spark.read.parquet(str(tmp_path / "t")).count() == 2
    stored = {r["source"] for r in spark.read.parquet(str(tmp_path / "report")).collect()}
    assert stored == {"s3a://bucket/in.csv"}
    text = events.read_text()
    assert len(text.splitlines()) == 2
    assert not any(secret in text for secret in ("AKIAEXAMPLE", "SeCrEtKeY", "tok123"))
    checked = dq_governance.check(frame(), _contract(), source=source, outputs=False)  # keeps no rows cached
    assert checked.source == "s3a://bucket/in.csv"


def test_two_runs_creating_a_history_at_once_both_keep_their_rows(frame, tmp_path, monkeypatch):
    """Both runs found the new history directory missing; the second one's whole-directory rename was then
    refused (`already exists`) and its report rows were lost. Replayed here: run b is told, once, that the
    history run a has just created does not exist yet."""
    from dq_governance.session import HadoopFs

    history = tmp_path / "report"
    dq_governance.run(frame(), _contract(), run_id="a", pipeline="p", report=str(history))
    real_exists, told = HadoopFs.exists, []

    def exists(self, path):
        if path.rstrip("/").endswith(str(history)) and not told:
            told.append(path)
            return False  # what run b saw before run a's rename
        return real_exists(self, path)

    monkeypatch.setattr(HadoopFs, "exists", exists)
    dq_governance.run(frame(), _contract(), run_id="b", pipeline="p", report=str(history))
    monkeypatch.undo()
    spark = frame().sparkSession
    stored = spark.read.parquet(str(history)).groupBy("run_id").count().collect()
    assert sorted((r["run_id"], r["count"]) for r in stored) == [("a", 4), ("b", 4)]  # one row per rule

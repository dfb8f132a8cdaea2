"""Seed-001 pipeline configs run as written: `validations.outputs`, `report` and `output` act; other keys are refused.

The seed's four example configs live in tests/fixtures/seed001/ as written (Delta, catalog tables); they run in
their own Delta process (fixtures/seed001/delta_job.py). The in-process tests use the same configs with parquet
paths, relative to the working directory (a temporary one), and small CSVs with known answers:
orders.csv (6 rows): id 3 twice, one null id, amount -3 on id 5, every e-mail valid;
orders_bad_email.csv (5 rows): one null id and one malformed e-mail.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dq_governance.cli import main

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "seed001"
EXAMPLES = ("four_rules.json", "report.json", "merge_guard.json", "two_silvers.json")


def _seed(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _write(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path


def _two_silvers(mode: str = "overwrite", **extra: object) -> dict:
    """The seed's two-silvers config with parquet paths instead of tables, plus a report: nothing goes to out/."""
    doc = _seed("two_silvers.json")
    doc["validations"]["outputs"] = {
        "valid": {"format": "parquet", "path": "./silver/orders_ok", "mode": mode},
        "invalid": {"format": "parquet", "path": "./silver/orders_quarantine", "mode": mode},
    }
    doc["report"] = {"format": "parquet", "path": "./quality/pipeline_report", "mode": "append",
                     "partition_by": ["pipeline"]}
    doc.update(extra)
    return doc


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding the seed's CSVs; the configs' relative paths resolve in it."""
    for name in ("orders.csv", "orders_bad_email.csv"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    key = tmp_path / "masking.key"
    key.write_bytes(b"seed-config-test-masking-key-not-a-secret")
    monkeypatch.setenv("DQGOV_MASKING_KEY_FILE", str(key))
    monkeypatch.delenv("DQGOV_MASKING_KEY", raising=False)
    return tmp_path


def _summary(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)


# --------------------------------------------------------------------------- lint: the examples, the refusals


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_seed_examples_lint_clean(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(FIXTURES / name)]) == 0
    assert "1 file checked, 0 errors" in capsys.readouterr().err


MERGE_WITH_OPTION = """{
  "validations": {
    "on_failure": "fail",
    "rules": [{ "type": "unique", "columns": ["order_id"] }]
  },
  "output": {
    "format": "delta",
    "path": "analytics.orders",
    "mode": "merge",
    "options": { "merge_keys": ["order_id"], "when_not_matched": "insert" }
  }
}
"""


@pytest.mark.parametrize("text, where, message", [
    (MERGE_WITH_OPTION, "10:66: output.options.when_not_matched",
     "unknown key `when_not_matched`; output.options takes merge_keys"),
    (MERGE_WITH_OPTION.replace('"mode": "merge"', '"mode": "upsert"'), "9:13: output.mode",
     "mode `upsert` is not supported here; use overwrite, append or merge"),
    ('{\n  "validations": {\n    "rules": [\n      { "type": "not_null", "columns": ["id"] },\n'
     '      { "type": "sql", "query": "SELECT COUNT(*) = 0 FROM _validation_df WHERE id < 0",\n'
     '        "failed_rows": true }\n    ]\n  }\n}\n', "6:24: validations.rules[1].failed_rows",
     "a rule's own failed-rows output is not supported: validations.outputs.invalid receives every row that fails "
     "a row rule, with the rules it failed in `_dq_errors`"),
    ('{\n  "validations": {\n    "rules": [\n      { "type": "filter", "condition": "id IS NOT NULL" }\n    ]\n'
     '  }\n}\n', "4:17: validations.rules[0].type",
     "unknown rule type 'filter' (`filter` is a transformation, not a validation)"),
    ('{\n  "validations": { "rules": [{ "type": "not_null", "columns": ["id"] }] },\n'
     '  "transformations": [{ "type": "filter", "condition": "id IS NOT NULL" }]\n}\n', "3:22: transformations",
     "unknown key `transformations`; a pipeline document takes name, input, validations, output, report (dqgov "
     "checks the data a pipeline produced; run its transformations in the job itself)"),
    ('{\n  "validations": { "rules": [{ "type": "not_null", "columns": ["id"] }] },\n'
     '  "report": { "format": "delta", "path": "quality.pipeline_report", "partition_by": ["validated_at"] }\n}\n',
     "3:85: report.partition_by", 'the report history is partitioned by its own layout (["pipeline"] for delta); '
     'it cannot be partitioned by ["validated_at"]'),
])
def test_refused_keys_give_the_same_line_at_lint_and_at_run_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str, message: str) -> None:
    config = tmp_path / "pipeline.json"
    config.write_text(text, encoding="utf-8")
    line = f"{config}:{where}: {message}"
    assert main(["lint", str(config)]) == 2
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == line  # lint lists every problem; this one first
    # the same first line, exit 2, before any data is read or written (the input does not even exist)
    assert main(["check", "--config", str(config), "--input", str(tmp_path / "orders.csv")]) == 2
    more = "" if len(printed) == 1 else (
        f" [and {len(printed) - 1} more problem{'s' * (len(printed) > 2)}; run `dqgov lint {config}` to list them]")
    assert capsys.readouterr().err == f"dqgov: error: {line}{more}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipeline.json"]


def test_seed_settings_in_a_converted_contract_act_and_are_checked(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    native = tmp_path / "orders.yaml"
    assert main(["convert", str(FIXTURES / "merge_guard.json"), "-o", str(native)]) == 0
    doc = yaml.safe_load(native.read_text(encoding="utf-8"))
    assert doc["extensions"]["seed"]["output"]["options"] == {"merge_keys": ["order_id"]}
    doc["extensions"]["seed"]["output"]["mode"] = "upsert"
    native.write_text(yaml.safe_dump(doc), encoding="utf-8")
    capsys.readouterr()
    assert main(["check", str(native), "--input", str(FIXTURES / "orders_day1.csv")]) == 2
    assert capsys.readouterr().err.startswith(
        f"dqgov: error: {native}:13:13: extensions.seed.output.mode: mode `upsert` is not supported here; use "
        "overwrite, append or merge")


def test_contract_and_config_together_or_neither_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = str(FIXTURES / "two_silvers.json")
    assert main(["check", config, "--config", config]) == 2
    assert "give the contract as CONTRACT or as --config, not both" in capsys.readouterr().err
    assert main(["check"]) == 2
    assert "missing CONTRACT (a contract file, or a pipeline JSON with --config)" in capsys.readouterr().err
    # a pipeline's dataset is its output: without `input` or --input it is never read as the input
    assert main(["check", "--config", config]) == 2
    assert capsys.readouterr().err == f"dqgov: error: {config}: no --input given and the pipeline names no `input`\n"


# --------------------------------------------------------------------------- runs (Spark, parquet paths)


@pytest.mark.spark
def test_two_silvers_write_exactly_to_their_paths(spark, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _write(workdir / "pipeline.json", _two_silvers())
    first = "0c5e2f4a-1b7d-4e9a-8c3f-6a2b1d0e9f11"
    assert main(["check", "--config", str(config), "--input", "orders.csv", "--json", "--run-id", first]) == 0
    summary = _summary(capsys)
    assert (summary["total_rows"], summary["valid_rows"], summary["invalid_rows"]) == (6, 5, 1)
    assert {o["kind"]: (o["location"], o["rows"], o["format"]) for o in summary["outputs"]} == {
        "target": (str(workdir / "silver/orders_ok"), 5, "parquet"),
        "quarantine": (str(workdir / "silver/orders_quarantine"), 1, "parquet")}
    assert summary["report"] == str(workdir / "quality/pipeline_report")
    assert spark.read.parquet(str(workdir / "silver/orders_ok")).count() == 5
    report = spark.read.parquet(str(workdir / "quality/pipeline_report"))
    assert report.where(f"run_id = '{first}'").count() == len(summary["rules"])
    assert (workdir / "quality/lineage/events.jsonl").is_file()  # lineage defaults to beside the report
    assert not (workdir / "out").exists()  # nothing at the default out/ paths

    # invalid.mode overwrite: the next run's quarantine holds that run's rows only; valid is overwritten too
    second = "7d4c3b2a-0f1e-4d5c-9b8a-7f6e5d4c3b2a"
    assert main(["check", "--config", str(config), "--input", "orders.csv", "--json", "--run-id", second]) == 0
    capsys.readouterr()
    assert spark.read.parquet(str(workdir / "silver/orders_ok")).count() == 5
    quarantined = spark.read.parquet(str(workdir / "silver/orders_quarantine")).collect()
    assert [(r["_dq_run_id"], r["email"], r["_dq_disposition"]) for r in quarantined] == [
        (second, "dora@example.com", "quarantined")]
    report = spark.read.parquet(str(workdir / "quality/pipeline_report"))  # listed again: a new run was added
    assert sorted(r["run_id"] for r in report.select("run_id").distinct().collect()) == sorted([first, second])


@pytest.mark.spark
def test_append_mode_keeps_every_run(spark, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _write(workdir / "pipeline.json", _two_silvers(mode="append"))
    for run_id in ("1a2b3c4d-0000-4000-8000-000000000001", "1a2b3c4d-0000-4000-8000-000000000002"):
        assert main(["check", str(config), "--input", "orders.csv", "--run-id", run_id]) == 0
    assert "wrote target: silver/orders_ok (5 rows, parquet)" in capsys.readouterr().out
    assert spark.read.parquet(str(workdir / "silver/orders_ok")).count() == 10
    quarantined = spark.read.parquet(str(workdir / "silver/orders_quarantine"))
    assert sorted(r["_dq_run_id"][-1] for r in quarantined.collect()) == ["1", "2"]


@pytest.mark.spark
def test_a_failed_metric_rule_blocks_and_quarantines_as_evidence(spark, workdir: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    config = _write(workdir / "pipeline.json", _two_silvers())
    assert main(["check", "--config", str(config), "--input", "orders_bad_email.csv", "--json"]) == 1
    summary = _summary(capsys)
    assert {r["name"]: (r["passed"], r["failed_count"]) for r in summary["rules"]
            if r["name"] in ("id_not_null", "email_invalid_count")} == {
        "id_not_null": (False, 1), "email_invalid_count": (False, 1)}
    assert summary["published"] is False and [o["kind"] for o in summary["outputs"]] == ["quarantine"]
    assert not (workdir / "silver/orders_ok").exists()
    quarantined = spark.read.parquet(str(workdir / "silver/orders_quarantine")).collect()
    assert sorted((r["email"], r["_dq_disposition"]) for r in quarantined) == [
        ("carla-at-example.com", "blocked"), ("dora@example.com", "blocked")]
    assert not (workdir / "out").exists()


@pytest.mark.spark
def test_flags_override_the_config_and_input_comes_from_it(spark, workdir: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    doc = _two_silvers(name="orders-daily", input={"format": "csv", "path": "./orders.csv"})
    config = _write(workdir / "pipeline.json", doc)
    assert main(["check", "--config", str(config), "--output", "override/valid", "--json"]) == 0
    summary = _summary(capsys)
    assert summary["pipeline"] == "orders-daily"  # the config's name
    assert {o["kind"]: (o["location"], o["rows"]) for o in summary["outputs"]} == {
        "target": (str(workdir / "override/valid"), 5), "quarantine": (str(workdir / "silver/orders_quarantine"), 1)}
    assert not (workdir / "silver/orders_ok").exists()
    assert main(["check", "--config", str(config), "--pipeline", "from-flag", "--report", "flag-report",
                 "--lineage", "none", "--json"]) == 0
    summary = _summary(capsys)
    assert summary["pipeline"] == "from-flag" and summary["report"] == str(workdir / "flag-report")
    assert (workdir / "flag-report/pipeline=from-flag").is_dir()


@pytest.mark.spark
def test_four_rules_with_the_report_example(spark, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _seed("report.json")
    doc["report"]["format"], doc["report"]["path"] = "parquet", "./quality/pipeline_report"
    config = _write(workdir / "pipeline.json", doc)
    args = ["check", str(config), "--input", "orders.csv", "--output", "valid", "--quarantine", "quarantine",
            "--run-id", "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9", "--json"]
    for _ in range(2):  # mode append: one row per rule per run; the same run id replaces its own rows
        assert main(args) == 0
        summary = _summary(capsys)
    failed = {r["name"]: r["failed_count"] for r in summary["rules"]}
    assert {k: failed[k] for k in ("id_not_null", "id_unique", "amount_range")} == {
        "id_not_null": 1, "id_unique": 2, "amount_range": 1}
    # on_failure warn publishes every row and copies the failing ones to quarantine
    assert {o["kind"]: o["rows"] for o in summary["outputs"]} == {"target": 6, "quarantine": 4}
    report = spark.read.parquet(str(workdir / "quality/pipeline_report"))
    assert report.count() == len(summary["rules"])
    assert [p.name for p in (workdir / "quality/pipeline_report").iterdir() if p.is_dir()] == ["pipeline=pipeline"]
    assert not (workdir / "out").exists()


@pytest.mark.spark
def test_bad_input_and_delta_without_delta_exit_2(spark, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _write(workdir / "pipeline.json", _two_silvers(input={"path": "./missing.csv"}))
    assert main(["check", str(config)]) == 2
    assert capsys.readouterr().err == "dqgov: error: ./missing.csv: no such file or directory\n"
    # the seed's own merge example needs Delta; this test session has none: refused before anything is read
    assert main(["check", str(FIXTURES / "merge_guard.json"), "--input", str(FIXTURES / "orders_day1.csv")]) == 2
    assert capsys.readouterr().err == ("dqgov: error: analytics.orders: Delta needs delta-spark and a session with "
                                       "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension\n")
    assert sorted(p.name for p in workdir.iterdir()) == ["masking.key", "orders.csv", "orders_bad_email.csv",
                                                          "pipeline.json"]


# --------------------------------------------------------------------------- the seed examples as written (Delta)


@pytest.mark.spark
@pytest.mark.integration
def test_the_seed_examples_as_written_on_delta_tables(repo: Path, tmp_path: Path) -> None:
    pytest.importorskip("delta")
    proc = subprocess.run([sys.executable, str(FIXTURES / "delta_job.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=900, cwd=str(repo))
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    seen = json.loads(lines[-1][len("RESULT "):])
    # two silvers: catalog tables written as Delta; a second run overwrites both
    assert seen["two_silvers_codes"] == [0, 0, 1]
    assert seen["two_silvers_counts"] == [[5, 1], [5, 1]]
    assert seen["two_silvers_providers"] == ["delta", "delta"]
    # the blocked run (bad e-mail) leaves silver.orders_ok as it was; its quarantine holds that run's evidence
    assert seen["after_blocked"] == {"valid": 5, "quarantine": [["carla-at-example.com", "blocked"],
                                                                ["dora@example.com", "blocked"]]}
    # the merge guard: merge on order_id into analytics.orders; duplicate keys block with the table unchanged
    assert seen["merge_codes"] == [0, 0, 1]
    assert seen["merge_tables"] == [{"1": "NEW", "2": "NEW", "3": "NEW"},
                                    {"1": "NEW", "2": "NEW", "3": "PAID", "4": "NEW"},
                                    {"1": "NEW", "2": "NEW", "3": "PAID", "4": "NEW"}]
    assert seen["merge_version_unchanged"] is True
    assert seen["merge_block_reason"] == "row rule order_id_unique failed on 2 row(s)"
    # the report example: a Delta table partitioned by pipeline; a re-run with the same run id replaces its rows
    assert seen["report_codes"] == [0, 0, 0]
    assert seen["report_rows"] == [4, 4, 8]
    assert seen["report_partitions"] == ["pipeline"]
    # what a config does not name keeps its default: the report of the configs without `report`, and the merge
    # example's quarantine (it names no validations.outputs.invalid); two silvers wrote nothing else under out/
    assert seen["out"] == {"merge_guard": ["quarantine"], "report": ["_SUCCESS", "pipeline=merge_guard",
                                                                     "pipeline=two_silvers"]}

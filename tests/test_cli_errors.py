"""A Spark error that stops a command is one line naming its cause, never py4j's `An error occurred while calling`.

`dqgov check` reading a file in the wrong format, and a py4j error that escapes a command (the CLI's backstop),
print the Java exception's own line (`session.first_line`: the line after py4j's header; for a failed job, the
last `Caused by:`). dqgov's own sessions log no failed task's trace (Executor) or `aborting job` line
(TaskSetManager): the command's one line says it.
"""

from __future__ import annotations

import subprocess

import pytest
import yaml

from dq_governance.cli import _backstop, main
from enforce_helpers import DQGOV, _env

#: a CSV file: the parquet reader finds its last four bytes (`2,b` and a line break) where its magic should be
CSV = "id,name\n1,alpha\n2,b\n"
TAIL = "[50, 44, 98, 10]"
#: lines a fresh JVM prints before dqgov's session applies its log configuration
_JVM_BANNER = ("WARNING: Using incubator modules", 'Setting default log level to "WARN".',
               "To adjust logging level use sc.setLogLevel")


def _contract(tmp_path):
    data = tmp_path / "items.csv"
    data.write_text(CSV)
    doc = {"contract": {"name": "items", "version": "1.0.0", "owner": "team:x"},
           "dataset": {"name": "items", "path": str(data), "format": "csv"},
           "schema": {"fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}]}}
    path = tmp_path / "items.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path, data


def _args(tmp_path, contract):
    return ["check", str(contract), "--format", "parquet", "--metrics-only", "--report", str(tmp_path / "report"),
            "--lineage", "none", "--no-listener"]


def _expected(data) -> str:
    return (f"dqgov: error: {data}: cannot read as parquet: java.lang.RuntimeException: file:{data} is not a "
            f"Parquet file. Expected magic number at tail, but found {TAIL}")


@pytest.mark.spark
def test_reading_a_csv_as_parquet_names_the_cause_in_one_line(spark, tmp_path, capsys):
    contract, data = _contract(tmp_path)
    assert main(_args(tmp_path, contract)) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", _expected(data) + "\n")


@pytest.mark.spark
def test_a_dqgov_session_prints_the_one_line_and_no_task_trace(tmp_path):
    """A fresh `dqgov check`: besides the JVM's start-up banner, stderr is the error line alone (exit 2)."""
    contract, data = _contract(tmp_path)
    proc = subprocess.run([str(DQGOV), *_args(tmp_path, contract)], cwd=tmp_path, env=_env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2
    assert [line for line in proc.stderr.splitlines() if not line.startswith(_JVM_BANNER)] == [_expected(data)]


@pytest.mark.spark
def test_a_dqgov_session_prints_no_pii_value_a_failed_check_quotes(tmp_path):
    """Spark quotes the value it could not cast; PySpark 4's query-context logger would print it to stderr beside
    dqgov's own (scrubbed) line: a fresh `dqgov check` prints the line alone, the value nowhere."""
    data = tmp_path / "people.csv"
    data.write_text("email\nana@example.com\n")
    doc = {"contract": {"name": "people", "version": "1.0.0", "owner": "team:x"},
           "dataset": {"name": "people", "path": str(data), "format": "csv"},
           "schema": {"fields": [{"name": "email", "type": "string", "pii": True, "masking": "redact"}]},
           "quality": {"rules": [{"type": "expression", "name": "email_number",
                                  "expression": "CAST(email AS INT) > 0"}]}}
    contract = tmp_path / "people.yaml"
    contract.write_text(yaml.safe_dump(doc, sort_keys=False))
    args = ["check", str(contract), "--metrics-only", "--lineage", "none", "--no-listener"]
    proc = subprocess.run([str(DQGOV), *args], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if not line.startswith(_JVM_BANNER)]
    assert len(lines) == 1 and lines[0].startswith(f"dqgov: error: checking {data} failed: ")  # 3.5 names the class
    assert "[CAST_INVALID_INPUT]" in lines[0] and "'<redacted>'" in lines[0]
    assert "ana@example.com" not in proc.stdout + proc.stderr


def test_the_backstop_names_the_java_exception_not_the_py4j_call():
    """A py4j error escaping a command (`--output s3a://…` without the S3 connector): the Java line, not `o49`."""
    py4j_error = type("Py4JJavaError", (Exception,), {"__module__": "py4j.protocol"})
    escaped = py4j_error('An error occurred while calling o49.getFileSystem.\n: '
                         'org.apache.hadoop.fs.UnsupportedFileSystemException: No FileSystem for scheme "s3a"\n'
                         '\tat org.apache.hadoop.fs.FileSystem.getFileSystemClass(FileSystem.java:3443)\n')
    assert _backstop(escaped) == ('the Spark driver failed: org.apache.hadoop.fs.UnsupportedFileSystemException: '
                                  'No FileSystem for scheme "s3a"')


@pytest.mark.spark
def test_a_check_that_raises_under_ansi_names_the_cast_not_the_py4j_call(spark):
    """The engine's own error: on Spark 3.5 py4j's header (`An error occurred while calling o168.collectToPython.`)
    was the whole message; the cause's line follows `checking … failed:` on both lines."""
    from dq_governance.checks.engine import evaluate
    from dq_governance.contracts.model import Contract
    from dq_governance.errors import InputDataError

    checked = Contract.model_validate({
        "contract": {"name": "items", "version": "1.0.0"}, "dataset": {"name": "items"},
        "schema": {"fields": [{"name": "status", "type": "string"}]},
        "quality": {"rules": [{"type": "expression", "name": "status_number", "expression": "CAST(status AS INT) > 0"}]},
    })
    assert spark.conf.get("spark.sql.ansi.enabled") == "true"
    with pytest.raises(InputDataError) as raised:
        evaluate(spark.createDataFrame([("7",), ("sete",)], "status string"), checked, mode="counts")
    message = str(raised.value)
    assert message.startswith("checking items failed: ") and "\n" not in message
    assert "CAST_INVALID_INPUT" in message and "'sete'" in message and "An error occurred" not in message


@pytest.mark.spark
def test_a_check_that_raises_on_a_pii_value_hides_the_value_in_its_error_line(spark):
    """Spark quotes the value it could not cast; for a contract with a PII column, the line keeps the names only."""
    from dq_governance.checks.engine import evaluate
    from dq_governance.contracts.model import Contract
    from dq_governance.errors import InputDataError

    checked = Contract.model_validate({
        "contract": {"name": "people", "version": "1.0.0"}, "dataset": {"name": "people"},
        "schema": {"fields": [{"name": "email", "type": "string", "pii": True, "masking": "redact"}]},
        "quality": {"rules": [{"type": "expression", "name": "email_number", "expression": "CAST(email AS INT) > 0"}]},
    })
    with pytest.raises(InputDataError) as raised:
        evaluate(spark.createDataFrame([("ana@example.com",)], "email string"), checked, mode="counts")
    message = str(raised.value)
    assert message.startswith("checking people failed: ") and "CAST_INVALID_INPUT" in message
    assert "ana@example.com" not in message and "'<redacted>'" in message


def test_an_unexpected_exception_is_exit_3_in_one_line_not_1_the_gates_code(monkeypatch, capsys, caplog):
    """Exit 1 means the gate blocked publication: a bug must not look like one (nor print a value it carries)."""
    import importlib.metadata
    import logging

    def broken(*args, **kwargs):
        raise RuntimeError("the value 'ana@example.com' was not expected")

    monkeypatch.setattr(importlib.metadata, "version", broken)  # `dqgov version` reads it per package
    with caplog.at_level(logging.INFO, logger="dq_governance.cli"):
        code = main(["version"])
    monkeypatch.undo()
    assert code == 3
    err = capsys.readouterr().err.splitlines()
    assert err == ["dqgov: internal error (a bug in dqgov; -v shows the traceback): RuntimeError: "
                   "the value '<redacted>' was not expected"]
    assert [r.exc_info[0] for r in caplog.records if r.getMessage() == "dqgov internal error"] == [RuntimeError]

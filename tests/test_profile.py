"""`dqgov profile`: one Spark pass, a draft contract that lints clean, passes its own data, flags the seed's faults."""

from __future__ import annotations

from pathlib import Path

import pytest

from dq_governance.cli import main
from dq_governance.cli.inputs import read_frame as _read
from dq_governance.contracts.lint import lint_path
from dq_governance.contracts.load import load_contract
from dq_governance.profile import draft_contract, profile, suggest

REPO = Path(__file__).resolve().parent.parent
CLEAN = REPO / "tests" / "fixtures" / "orders_clean.csv"
SEED = REPO / "examples" / "data" / "orders.csv"

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def drafted(spark, tmp_path_factory):
    df = _read(spark, "csv", str(CLEAN))
    group = "dq-profile-one-pass"
    # AQE runs each shuffle stage of a query as its own job; off, one query over the input is one job.
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    spark.sparkContext.setJobGroup(group, "profile")
    try:
        prof = profile(df, source=str(CLEAN))
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        spark.conf.unset("spark.sql.adaptive.enabled")
    jobs = spark.sparkContext.statusTracker().getJobIdsForGroup(group)
    path = tmp_path_factory.mktemp("profile") / "orders_clean.yaml"
    path.write_text(draft_contract(prof, name="orders_clean", path=str(CLEAN), fmt="csv"))
    return prof, path, jobs


def test_profile_is_one_spark_job_with_exact_numbers(drafted):
    prof, _path, jobs = drafted
    assert len(jobs) == 1
    assert prof.rows == 6
    cols = {c.name: c for c in prof.columns}
    assert [c.name for c in prof.columns] == ["pedido_id", "cliente_id", "status", "valor", "data_pedido", "email"]
    assert (cols["pedido_id"].present, cols["pedido_id"].distinct, cols["pedido_id"].min, cols["pedido_id"].max) == (6, 6, 1, 11)
    assert (cols["cliente_id"].distinct, cols["status"].distinct, cols["email"].distinct) == (4, 3, 4)
    assert cols["status"].values == ["CANCELADO", "CRIADO", "PAGO"]
    assert cols["valor"].quantiles == {0.01: 50.0, 0.25: 80.0, 0.5: 99.9, 0.75: 150.0, 0.99: 230.0}
    assert (cols["valor"].scale, cols["valor"].int_digits, cols["valor"].shape) == (2, 3, "9.9")
    assert (cols["email"].min_length, cols["email"].max_length, cols["email"].shape) == (15, 17, "a@a.a")
    assert cols["email"].hits["EMAIL_ADDRESS"] == 6 and cols["data_pedido"].casts["date"] == 6


def test_suggestions_carry_their_evidence(drafted):
    prof, path, _jobs = drafted
    got = {c.name: {s.key: s.value for s in suggest(c)} for c in prof.columns}
    assert got["pedido_id"] == {"type": "long", "required": True, "unique": True}
    assert got["cliente_id"] == {"type": "long", "required": True, "minimum": 100, "maximum": 109}
    assert got["status"] == {"type": "string", "required": True, "allowed_values": ["CANCELADO", "CRIADO", "PAGO"]}
    assert got["valor"] == {"type": "decimal(10,2)", "required": True, "minimum": 32.0, "maximum": 248.0}
    assert got["data_pedido"] == {"type": "date", "required": True}
    assert got["email"] == {"type": "string", "required": True, "format": "email", "pii": True,
                            "classification": "restricted", "masking": "hmac"}
    text = path.read_text()
    assert "unique: true  # 6 distinct values in 6 rows" in text
    assert "minimum: 32.0  # p1 50, p99 230 (min 50, max 230); margin 10% of the p1-p99 spread (18)" in text
    assert "pii: true  # PII detector EMAIL_ADDRESS, confidence 1.00, 6 of 6 values match" in text
    assert "@example.com" not in text  # raw values of a PII column never reach the draft
    schema = text.split("\nquality:")[0]
    body = [line for line in schema.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    suggestion_lines = [line for line in body if line.startswith("      ") and ":" in line]
    assert suggestion_lines and all("  # " in line for line in suggestion_lines)


def test_draft_lints_clean_passes_its_data_and_flags_the_seed_faults(drafted, spark):
    from dq_governance.api import check

    _prof, path, _jobs = drafted
    assert lint_path(path) == []
    contract = load_contract(path)
    clean = check(_read(spark, "csv", str(CLEAN)), contract)
    try:
        assert (clean.total_rows, clean.valid_rows, clean.status, clean.gate.passed) == (6, 6, "passed", True)
    finally:
        clean.release()
    seed = check(_read(spark, "csv", str(SEED)), contract)
    try:
        assert (seed.total_rows, seed.valid_rows, seed.invalid_rows) == (7, 1, 6)
        failed = {r.name: r.failed_count for r in seed.rules if r.failed_count}
        assert failed == {"pedido_id_unique": 2, "cliente_id_not_null": 1, "status_allowed_values": 1,
                          "valor_range": 1, "data_pedido_type": 1}
        assert sorted(r["pedido_id"] for r in seed.valid_df.collect()) == [1]
    finally:
        seed.release()


def test_cli_writes_the_draft_and_reports_bad_input(spark, tmp_path, capsys):
    out = tmp_path / "c.yaml"
    assert main(["profile", "--input", str(CLEAN), "-o", str(out), "--name", "orders_draft"]) == 0
    assert capsys.readouterr().out.strip() == f"wrote draft contract {out}"
    assert load_contract(out).name == "orders_draft" and lint_path(out) == []
    approx = tmp_path / "approx.yaml"
    assert main(["profile", "--input", str(CLEAN), "--approx", "-o", str(approx)]) == 0
    capsys.readouterr()
    text = approx.read_text()
    assert "distinct counts approximate (HyperLogLog, 2% error)" in text
    assert "unique: true  # 6 distinct (approx.) values in 6 rows" in text
    sampled = tmp_path / "sampled.yaml"
    assert main(["profile", "--input", str(SEED), "--sample-fraction", "0.5", "-o", str(sampled)]) == 0
    capsys.readouterr()
    assert f"from {SEED} (a 50% sample)." in sampled.read_text() and lint_path(sampled) == []
    assert main(["profile", "--input", str(tmp_path / "missing.csv")]) == 2
    assert capsys.readouterr().err.strip() == f"dqgov: error: {tmp_path / 'missing.csv'}: no such file or directory"
    odd = tmp_path / "data.bin"
    odd.write_text("x")
    assert main(["profile", "--input", str(odd)]) == 2
    assert "pass --format csv|parquet|json" in capsys.readouterr().err


def test_a_pii_columns_range_is_not_suggested_with_its_values(spark):
    """Digits-only CPFs and phones, one missing (so not unique): flagged PII, and no minimum / maximum whose
    evidence would quote p1, p99, min and max values of the column."""
    rows = [("52998224725", "11987654321"), ("11144477735", "21998765432"), ("39053344705", "11912345678"),
            ("24681357928", "31955554444"), (None, None)]
    text = draft_contract(profile(spark.createDataFrame(rows, "cpf string, telefone string"), source="people.csv"),
                          name="people")
    assert "pii: true" in text and "minimum" not in text and "maximum" not in text
    assert [value for row in rows for value in row if value and value in text] == []


def test_shape_collapses_every_letter_and_digit_of_any_script(spark):
    from pyspark.sql import functions as F

    from dq_governance.profile import _shape, _shape_regex

    values = ["Иван Петров", "Michał Żak", "王小明", "٣٤٥-12", "e\u0301 ok", "AB-123.x"]
    df = spark.createDataFrame([(v,) for v in values], "v string")
    shapes = [row[0] for row in df.select(_shape(F.col("v"))).collect()]
    assert shapes == ["x x", "Aax xa", "x", "0-9", "ax a", "A-9.a"]
    assert [_shape_regex(s) for s in shapes] == [None, None, None, None, None, r"^[A-ZÀ-Þ]+\-[0-9]+\.[a-zà-ÿ]+$"]


def test_a_pii_columns_shape_is_never_printed(spark):
    rows = [(1, "Иван Петров"), (2, "Мария Иванова"), (3, "Иван Петров"), (4, "Ольга Смирнова")]
    df = spark.createDataFrame(rows, "id long, nome string")
    text = draft_contract(profile(df, source="people.csv", approx_distinct=False), name="people")
    assert "    # nome: 4 values, 0 missing, 3 distinct; length 11-14\n" in text
    assert "      pii: true  # PII detector PERSON, confidence 0.60, from the column name\n" in text
    assert [name for _id, name in rows if name in text] == []
    assert [word for _id, name in rows for word in name.split() if word in text] == []


def test_a_numeric_cpf_column_is_flagged_and_its_values_withheld(spark):
    """CPFs typed bigint under a name that says nothing: the value detectors run on the text of every column,
    as `dqgov scan-pii`'s do, so the column is PII and no min, max or quantile (each a CPF) is printed."""
    cpfs = [52998224725, 11144477735, 39053344705, 98765432100, 12312312387, 45645645600]
    df = spark.createDataFrame([(i, c) for i, c in enumerate(cpfs, start=1)], "id long, documento bigint")
    prof = profile(df, source="docs.parquet", approx_distinct=False)
    documento = {c.name: c for c in prof.columns}["documento"]
    assert documento.hits["BR_CPF"] == 6 and documento.hits["PHONE_NUMBER"] == 0
    assert {s.key: s.value for s in suggest(documento)} == {
        "type": "bigint", "required": True, "unique": True, "pii": True, "classification": "restricted",
        "masking": "hmac"}
    text = draft_contract(prof, name="docs")
    assert "    # documento: 6 values, 0 missing, 6 distinct; detector hits: BR_CPF 6\n" in text
    assert "      pii: true  # PII detector BR_CPF, confidence 1.00, 6 of 6 values match\n" in text
    assert [c for c in cpfs if str(c) in text] == []

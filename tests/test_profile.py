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


def test_columns_named_like_the_profiles_own_hit_column_are_profiled_as_any_other(spark):
    """The detectors' flags sit in a column of their own beside the input's: an input column of that name (in
    any case) keeps its values and its own hits."""
    rows = [("ana@example.com", "52998224725", " "), ("bruno@example.com", "11144477735", None),
            ("x", "not a cpf", "ok")]
    df = spark.createDataFrame(rows, "__dqgov_pii_hits string, __DQGOV_PII_HITS_1 string, note string")
    prof = profile(df, source="names.csv", approx_distinct=False)
    hits = {c.name: (c.present, c.hits["EMAIL_ADDRESS"], c.hits["BR_CPF"]) for c in prof.columns}
    assert hits == {"__dqgov_pii_hits": (3, 2, 0), "__DQGOV_PII_HITS_1": (3, 0, 2), "note": (1, 0, 0)}


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


TEXT = REPO / "tests" / "fixtures" / "profile_text" / "clientes.csv"
#: the keys a profile derives from the values; pii / classification / masking come from the PII detectors' proposals
_VALUE_KEYS = ("type", "required", "unique", "allowed_values", "minimum", "maximum", "format", "pattern")


@pytest.fixture(scope="module")
def text_draft(spark, tmp_path_factory):
    """clientes.csv profiled and drafted: CPFs and CEPs with leading zeros, bare mobile numbers, zero-padded lot
    codes, a status with " pending", a contact column where 6 of 16 values are e-mails and 4 phones."""
    prof = profile(_read(spark, "csv", str(TEXT)), source=str(TEXT), approx_distinct=False)
    path = tmp_path_factory.mktemp("profile_text") / "clientes.yaml"
    path.write_text(draft_contract(prof, name="clientes", path=str(TEXT), fmt="csv"))
    return {c.name: c for c in prof.columns}, path


def _value_suggestions(col):
    return {s.key: s.value for s in suggest(col) if s.key in _VALUE_KEYS}


def test_digit_columns_with_a_leading_zero_or_a_format_stay_text(text_draft):
    cols, path = text_draft
    assert _value_suggestions(cols["cpf"]) == {"type": "string", "required": True, "unique": True, "format": "cpf"}
    assert _value_suggestions(cols["cep"]) == {"type": "string", "required": True, "unique": True}
    assert _value_suggestions(cols["celular"]) == {"type": "string", "required": True, "unique": True,
                                                   "format": "phone"}
    assert _value_suggestions(cols["lote"]) == {"type": "string", "required": True, "allowed_values": ["007", "012"]}
    # "0" alone is a number written plainly: qtd stays an integer column with a range
    assert _value_suggestions(cols["qtd"]) == {"type": "long", "required": True, "minimum": 0, "maximum": 22}
    text = path.read_text()
    assert "      type: string  # all 16 values have the cpf format, which is checked on the text\n" in text
    assert ("      type: string  # all 16 values are integers, but 16 have a leading zero that a number would drop\n"
            in text)
    assert (cols["cpf"].leading_zeros, cols["cep"].leading_zeros, cols["celular"].leading_zeros) == (8, 16, 0)


def test_a_column_with_pii_hits_below_the_threshold_has_its_values_withheld(text_draft):
    cols, path = text_draft
    contato = cols["contato"]
    assert "allowed_values" not in _value_suggestions(contato) and "pattern" not in _value_suggestions(contato)
    text = path.read_text()
    assert ("    # contato: 16 values, 0 missing, 6 distinct; length 3-17; "
            "detector hits: EMAIL_ADDRESS 6, PHONE_NUMBER 4\n") in text
    assert ("      # values withheld (no allowed values, range, pattern or value statistics): of 16 values, "
            "6 look like EMAIL_ADDRESS, 4 look like PHONE_NUMBER\n") in text
    raw = TEXT.read_text().splitlines()[1:]
    contacts = {line.rsplit(",", 1)[1] for line in raw}
    assert len(contacts) == 6 and [value for value in contacts if value in text] == []
    assert (contato.value_hits, contato.distinct) == ({"EMAIL_ADDRESS": 6, "PHONE_NUMBER": 4}, 6)


def test_a_numeric_column_with_a_few_cpfs_prints_no_value(spark):
    """1 of 4 bigint values is a CPF (below the PII threshold): no range, min, max or quantile in the draft."""
    values = [52998224725, 7, 8, 8]
    df = spark.createDataFrame([(v,) for v in values], "referencia bigint")
    prof = profile(df, source="refs.parquet", approx_distinct=False)
    col = prof.columns[0]
    assert _value_suggestions(col) == {"type": "bigint", "required": True}
    text = draft_contract(prof, name="refs")
    assert "    # referencia: 4 values, 0 missing, 3 distinct; detector hits: BR_CPF 1\n" in text
    assert [v for v in values if str(v) in text.split("schema:")[1]] == []
    assert col.value_hits == {"BR_CPF": 1}


def test_text_with_surrounding_spaces_gets_no_allowed_values_and_says_why(text_draft):
    cols, path = text_draft
    status = cols["status"]
    assert _value_suggestions(status) == {"type": "string", "required": True}
    assert ("    - name: status\n"
            "      type: string  # 16 values, no narrower type fits all\n"
            "      required: true  # 0 missing values in 16 rows\n"
            "      # 4 of 16 values have leading or trailing spaces: no allowed_values, format or pattern is "
            "suggested, as those checks test the value as written\n") in path.read_text()
    assert (status.padded, status.values) == (4, ["paid", "pending", "shipped"])


def test_blank_text_gets_no_allowed_values_or_pattern_and_the_draft_passes_its_data(spark, tmp_path):
    # a value of only spaces was measured as missing, so the draft's allowed values and pattern failed it
    from dq_governance.api import check

    frame = spark.createDataFrame([("x", "a1"), ("x", "a2"), ("y", "a3"), ("y", "a4"), ("x", "a5"), ("  ", ""),
                                   ("y", "  ")], "s string, t string")
    prof = profile(frame, source="blank", approx_distinct=False)
    cols = {c.name: c for c in prof.columns}
    assert [(cols[n].blank, _value_suggestions(cols[n])) for n in ("s", "t")] == [
        (1, {"type": "string"}), (2, {"type": "string"})]  # blanks count as missing: no `required` either
    path = tmp_path / "blank.yaml"
    path.write_text(draft_contract(prof, name="blank", path="blank", fmt="parquet"))
    assert "      # 2 values are empty or only spaces: no allowed_values, format or pattern is suggested" in (
        path.read_text())
    result = check(frame, str(path))
    assert (result.total_rows, result.valid_rows) == (7, 7)
    result.release()


def test_a_line_break_in_a_name_or_value_never_leaves_its_comment(spark, tmp_path):
    # the name was pasted raw into the comment above its field: the draft was no YAML, or wrote keys of its own
    evil = "evil\nquality:\n  on_failure: warn\n#"
    frame = spark.createDataFrame([(1, "a\u2028b"), (2, "a\u2028b")], ["id", evil])
    path = tmp_path / "nl.yaml"
    path.write_text(draft_contract(profile(frame, source="nl", approx_distinct=False), name="nl"))
    assert lint_path(path) == []
    contract = load_contract(path)
    assert ([f.name for f in contract.fields], contract.quality.on_failure) == (["id", evil], "quarantine")


def test_the_text_draft_passes_the_data_it_was_drawn_from(text_draft, spark):
    """Every rule of the draft (formats on the leading-zero CPFs, allowed lot codes, ...) passes clientes.csv."""
    from dq_governance.api import check

    _cols, path = text_draft
    assert lint_path(path) == []
    result = check(_read(spark, "csv", str(TEXT)), load_contract(path))
    try:
        failed = {r.name: r.failed_count for r in result.rules if r.failed_count}
        assert (failed, result.total_rows, result.valid_rows) == ({}, 16, 16)
        assert {r.name for r in result.rules} >= {"cpf_format", "celular_format", "lote_allowed_values"}
    finally:
        result.release()


def test_struct_array_map_binary_columns_are_declared_unprofiled(spark, tmp_path):
    from dq_governance.api import check

    schema = ("id long, cliente struct<mail:string,doc:string>, tags array<string>, attrs map<string,bigint>, "
              "foto binary, extra struct<`e-mail`:string>, odd struct<`e``mail`:string>")
    rows = [(1, ("a@b.com", "1"), ["x"], {"k": 1}, bytearray(b"\x00"), ("c@d.com",), ("x",)),
            (2, ("e@f.com", "2"), [], {}, bytearray(b"\x01"), ("g@h.com",), ("y",))]
    df = spark.createDataFrame(rows, schema)
    prof = profile(df, source="nested.parquet", approx_distinct=False)
    text = draft_contract(prof, name="nested")
    assert text.split("  fields:\n")[1].split("quality:")[0].splitlines()[5:] == [
        "    - name: cliente",
        '      type: "struct<mail:string,doc:string>"  # not profiled (struct)',
        "    - name: tags",
        '      type: "array<string>"  # not profiled (array)',
        "    - name: attrs",
        '      type: "map<string,bigint>"  # not profiled (map)',
        "    - name: foto",
        "      type: binary  # not profiled (binary)",
        # a member name that is no identifier is backquoted, as Spark's parser reads it
        "    - name: extra",
        '      type: "struct<`e-mail`:string>"  # not profiled (struct)',
        "    # odd: not profiled (struct) and left out: the contract's type syntax cannot state its read type "
        "struct<e`mail:string>; a check run drops it as undeclared",
    ]
    assert [(c.name, c.source_type, c.position, c.expressible) for c in prof.unprofiled] == [
        ("cliente", "struct<mail:string,doc:string>", 1, True), ("tags", "array<string>", 2, True),
        ("attrs", "map<string,bigint>", 3, True), ("foto", "binary", 4, True),
        ("extra", "struct<`e-mail`:string>", 5, True), ("odd", "struct<e`mail:string>", 6, False)]
    path = tmp_path / "nested.yaml"
    path.write_text(text)
    assert lint_path(path) == []
    result = check(df, load_contract(path))
    try:
        outcomes = {r.name: (r.failed_count, r.message) for r in result.rules if r.name != "row_count"}
        assert {name: failed for name, (failed, _message) in outcomes.items() if name.endswith("_type")} == {
            "id_type": 0, "cliente_type": 0, "tags_type": 0, "attrs_type": 0, "foto_type": 0, "extra_type": 0}
        # only the column the draft could not type is undeclared (so a write drops it, and only it)
        assert outcomes["undeclared_columns"][1] == (
            "1 column not in the contract, left out of the outputs (undeclared_columns: drop): odd")
        assert result.valid_rows == 2
    finally:
        result.release()


def test_cli_notices_a_column_the_contract_cannot_type(spark, tmp_path, capsys):
    data = tmp_path / "odd.json"
    data.write_text('{"id": 1, "extra": {"e`mail": "a@b.com"}}\n{"id": 2, "extra": {"e`mail": "c@d.com"}}\n')
    out = tmp_path / "odd.yaml"
    assert main(["profile", "--input", str(data), "-o", str(out)]) == 0
    assert capsys.readouterr().err.strip() == (
        f"dqgov: notice: {data}: column extra (struct<e`mail:string>) is not in the draft: the contract's type "
        "syntax cannot state its type")
    assert "    # extra: not profiled (struct) and left out" in out.read_text()


def test_cli_refuses_an_output_that_is_its_input_or_inside_it(tmp_path, capsys):
    # -o onto the CSV replaced the data with its draft; -o into a parquet folder broke the folder's next read
    data = tmp_path / "victim.csv"
    data.write_text("a,b\n1,x\n")
    folder = tmp_path / "pq"
    folder.mkdir()
    for output, read in ((data, data), (folder / "draft.yaml", folder)):
        assert main(["profile", "--input", str(read), "-o", str(output)]) == 2
        assert capsys.readouterr().err.strip() == (
            f"dqgov: error: -o {output} is inside --input {read} ({output}): writing it would replace or break "
            "the data being read; write it somewhere else")
    assert data.read_text() == "a,b\n1,x\n" and list(folder.iterdir()) == []


def test_cli_refuses_input_with_no_rows_or_no_columns(spark, tmp_path, capsys):
    header_only = tmp_path / "header_only.csv"
    header_only.write_text("a,b\n")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert main(["profile", "--input", str(header_only), "-o", str(tmp_path / "h.yaml")]) == 2
    assert capsys.readouterr().err.strip() == f"dqgov: error: {header_only}: no rows to profile"
    assert main(["profile", "--input", str(empty), "-o", str(tmp_path / "e.yaml")]) == 2
    assert capsys.readouterr().err.strip() == f"dqgov: error: {empty}: no columns to profile"
    assert not (tmp_path / "h.yaml").exists() and not (tmp_path / "e.yaml").exists()


@pytest.mark.parametrize("name, present, hits, expected", [
    ("email", 0, {}, ("EMAIL_ADDRESS", 0.6)),  # every value blank: nothing to test, the name alone decides
    ("email", 10, {}, None),  # ten values, none an e-mail: the name alone is not enough
    ("hotel_id", 0, {}, None),  # `tel` is no word of it
])
def test_a_column_name_decides_pii_alone_only_when_no_value_was_tested(name, present, hits, expected):
    from dq_governance.profile import ColumnProfile, pii_finding

    found = pii_finding(ColumnProfile(name=name, source_type="string", rows=10, present=present, distinct=present,
                                      distinct_exact=True, hits=hits))
    assert (found and (found[0], round(found[1], 2))) == expected


def test_a_json_input_with_no_parseable_line_is_one_line_bad_input(spark, tmp_path):
    """Spark infers a lone `_corrupt_record` column and refuses to aggregate it later (a traceback, exit 1)."""
    from dq_governance.errors import InputDataError

    bad = tmp_path / "bad.json"
    bad.write_text('{"a":\n')
    with pytest.raises(InputDataError) as info:
        _read(spark, "json", str(bad))
    assert str(info.value) == f"{bad}: cannot read as json: no line holds a JSON object"
    partly = tmp_path / "partly.json"
    partly.write_text('{"a": 1}\n{"a":\n')  # one good line: its columns come with the corrupt one, as Spark reads it
    assert _read(spark, "json", str(partly)).columns == ["_corrupt_record", "a"]

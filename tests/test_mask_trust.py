"""`dqgov mask` and `apply_masks` must not lose data, leave declared PII unmasked, or show a key.

In-place outputs, unresolvable masked paths, `schema.undeclared_columns`, key sources and key files,
time-zone-independent pseudonyms of timestamps, and `masking.by_classification` keys that match nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path

import pytest
import yaml

from dq_governance.cli import main
from dq_governance.contracts.model import Contract, MaskingPolicy
from dq_governance.errors import ConfigError
from dq_governance.masking import MaskingKey, resolve_key

KEY = "trust-masking-key-0123456789abcdef"
SECRET = "S3cr3t-K3y-Value-0123456789abcdef"


def h(value: str, key: bytes = KEY.encode()) -> str:
    return hmac.new(key, value.encode(), hashlib.sha256).hexdigest()


def contract(fields, **schema) -> Contract:
    return Contract.model_validate({"contract": {"name": "x", "version": "1.0.0"}, "dataset": {"name": "x"},
                                    "schema": {"fields": fields, **schema}})


def write_contract(path: Path, fields, masking=None, **schema) -> Path:
    doc = {"contract": {"name": "people", "version": "1.0.0"}, "dataset": {"name": "people", "format": "csv"},
           "schema": {**schema, "fields": fields}}
    if masking is not None:
        doc["masking"] = masking
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def csv_rows(spark, path: Path) -> list[tuple]:
    df = spark.read.option("header", True).csv(str(path))
    return [tuple(df.columns), *[tuple(r) for r in df.orderBy("id").collect()]]


CPF_FIELDS = [{"name": "id", "type": "long"}, {"name": "cpf", "format": "cpf", "pii": True, "masking": "redact"}]


# --------------------------------------------------------------------------- 1. output overlapping input


@pytest.mark.spark
@pytest.mark.parametrize("layout", ["same_file", "same_dir", "output_inside_input", "output_contains_input"])
def test_mask_refuses_an_output_overlapping_its_input(spark, tmp_path, monkeypatch, capsys, layout):
    monkeypatch.chdir(tmp_path)
    c = write_contract(tmp_path / "c.yaml", CPF_FIELDS)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "part.csv").write_text("id,cpf\n1,529.982.247-25\n")
    (tmp_path / "data.csv").write_text("id,cpf\n1,529.982.247-25\n")
    source, output = {"same_file": ("data.csv", "data.csv"), "same_dir": ("d", "./d/"),
                      "output_inside_input": ("d", "d/masked"), "output_contains_input": ("d/part.csv", "d")}[layout]
    code = main(["mask", str(c), "--input", source, "--format", "csv", "--output", output, "--output-format", "csv",
                 "--overwrite"])
    err = capsys.readouterr().err.strip().splitlines()
    real = tmp_path.resolve()
    resolved = {"data.csv": real / "data.csv", "d": real / "d", "./d/": real / "d", "d/masked": real / "d" / "masked",
                "d/part.csv": real / "d" / "part.csv"}
    assert code == 2
    assert err == [f"dqgov: error: --output {output} overlaps --input {source} ({resolved[output]} vs "
                   f"{resolved[source]}): writing it would delete the data being read; write the masked data "
                   "somewhere else"]
    assert (tmp_path / "data.csv").read_text() == "id,cpf\n1,529.982.247-25\n"
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["part.csv"]


def test_uri_locations_are_compared_normalised():
    from dq_governance.cli.cmd_mask import location, refuse_overlap

    assert location("S3A://Bucket/data//masked/") == "s3a://bucket/data/masked"
    assert location("file:///tmp/x/../y") == str(Path("/tmp/y").resolve())
    with pytest.raises(ConfigError) as info:
        refuse_overlap("s3a://bucket/data/", "S3A://BUCKET/data/masked")
    assert str(info.value) == (
        "--output S3A://BUCKET/data/masked overlaps --input s3a://bucket/data/ (s3a://bucket/data/masked vs "
        "s3a://bucket/data): writing it would delete the data being read; write the masked data somewhere else")
    refuse_overlap("s3a://bucket/data", "s3a://bucket/data_masked")  # a sibling with a common prefix is fine


@pytest.mark.spark
def test_a_failed_write_names_sparks_condition_not_py4j(spark, tmp_path):
    from dq_governance.cli.cmd_mask import error_class

    (tmp_path / "a.csv").write_text("id\n1\n")
    df = spark.read.option("header", True).csv(str(tmp_path / "a.csv"))
    (tmp_path / "a.csv").unlink()
    with pytest.raises(Exception) as info:
        df.write.parquet(str(tmp_path / "out"))
    assert error_class(info.value) == "FAILED_READ_FILE.FILE_NOT_EXIST"


# --------------------------------------------------------------------------- 2. masked paths that do not resolve


STRUCT_CPF = [{"name": "cliente", "type": "struct<cpf:string>",
               "fields": [{"name": "cpf", "pii": True, "masking": "redact"}]}]


@pytest.mark.spark
def test_a_dotted_top_level_column_is_masked_whole(spark):
    from dq_governance.masking import apply_masks

    df = spark.createDataFrame([(1, "529.982.247-25")], "id long, `cliente.cpf` string")
    got = apply_masks(df, contract([{"name": "cliente.cpf", "pii": True, "masking": "redact"}]))
    assert got.columns == ["id", "cliente.cpf"]
    assert [tuple(r) for r in got.collect()] == [(1, "[REDACTED]")]
    # a truly absent top-level column is still skipped: a frame without it cannot leak it
    df = spark.createDataFrame([(1,)], "id long")
    assert [tuple(r) for r in apply_masks(df, contract(STRUCT_CPF)).collect()] == [(1,)]


@pytest.mark.spark
@pytest.mark.parametrize("ddl, message", [
    ("cliente string", "column cliente.cpf: `cliente` is string, not a struct, so `cpf` cannot be masked inside it; "
                       "mask `cliente` whole (a field-level `masking` on it) or read it as a struct"),
    ("cliente map<string,string>", "column cliente.cpf: `cliente` is map<string,string>, not a struct, so `cpf` "
                                   "cannot be masked inside it; mask `cliente` whole (a field-level `masking` on it) "
                                   "or read it as a struct"),
    ("cliente struct<nome:string>", "column cliente.cpf: struct `cliente` has no field `cpf`; the masked field "
                                    "cannot be found, refusing to leave it unmasked"),
])
def test_a_present_column_whose_masked_path_does_not_resolve_is_refused(spark, ddl, message):
    from dq_governance.masking import apply_masks

    df = spark.createDataFrame([], ddl)
    with pytest.raises(ConfigError) as info:
        apply_masks(df, contract(STRUCT_CPF))
    assert str(info.value) == message


# --------------------------------------------------------------------------- 2/3/5. the CLI: undeclared columns


@pytest.mark.spark
def test_mask_masks_undeclared_columns_with_the_contract_dirs_key_and_lists_them(spark, tmp_path, monkeypatch,
                                                                                   capsys):
    monkeypatch.delenv("DQGOV_MASKING_KEY", raising=False)
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    (project / "key.txt").write_text(KEY + "\n")
    c = write_contract(project / "c.yaml", CPF_FIELDS, masking={"key_file": "key.txt"}, undeclared_columns="mask")
    (tmp_path / "data.csv").write_text("id,cpf,email\n1,529.982.247-25, a@x.com \n")
    monkeypatch.chdir(tmp_path)  # key.txt is not in the working directory: it is found next to the contract
    code = main(["mask", str(c), "--input", str(tmp_path / "data.csv"), "--output", str(tmp_path / "out"),
                 "--output-format", "csv", "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["masked"] == {"cpf": "redact", "email": "hmac"}
    assert summary["key_id"] == MaskingKey.from_secret(KEY).key_id
    assert csv_rows(spark, tmp_path / "out") == [("id", "cpf", "email"), ("1", "[REDACTED]", h("a@x.com"))]


def test_mask_resolves_an_undeclared_columns_key_before_spark(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DQGOV_MASKING_KEY", raising=False)
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)
    c = write_contract(tmp_path / "c.yaml", CPF_FIELDS, undeclared_columns="mask")
    (tmp_path / "data.csv").write_text("id,cpf,email\n1,529.982.247-25,a@x.com\n")
    import dq_governance.cli.cmd_mask as cmd_mask

    monkeypatch.setattr(cmd_mask, "spark_for", lambda *a, **k: pytest.fail("Spark started without a key"))
    code = main(["mask", str(c), "--input", str(tmp_path / "data.csv"), "--output", str(tmp_path / "out")])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "dqgov: error: masking key missing: set env var DQGOV_MASKING_KEY (or DQGOV_MASKING_KEY_FILE to a key "
        "file, or masking.key_file in the contract); refusing to mask without a key"]


@pytest.mark.spark
def test_mask_follows_undeclared_columns_drop_keep_and_fail(spark, tmp_path, capsys):
    (tmp_path / "data.csv").write_text("id,cpf,cpf_conjuge\n1,529.982.247-25,111.444.777-35\n")
    for policy in ("drop", "keep", "fail"):
        c = write_contract(tmp_path / f"{policy}.yaml", CPF_FIELDS, undeclared_columns=policy)
        out = tmp_path / f"out_{policy}"
        code = main(["mask", str(c), "--input", str(tmp_path / "data.csv"), "--output", str(out),
                     "--output-format", "csv"])
        err = capsys.readouterr().err.strip().splitlines()
        if policy == "drop":
            assert code == 0 and err == []
            assert csv_rows(spark, out) == [("id", "cpf"), ("1", "[REDACTED]")]
        elif policy == "keep":
            assert code == 0
            assert err == [f"dqgov: warning: {tmp_path / 'data.csv'}: writing undeclared column(s) cpf_conjuge "
                           "unmasked, as read (schema.undeclared_columns: keep)"]
            assert csv_rows(spark, out) == [("id", "cpf", "cpf_conjuge"), ("1", "[REDACTED]", "111.444.777-35")]
        else:
            assert code == 2 and not out.exists()
            assert err == [f"dqgov: error: {tmp_path / 'data.csv'}: undeclared column(s) cpf_conjuge "
                           "(schema.undeclared_columns: fail); declare them in the contract or choose drop, keep "
                           "or mask"]


# --------------------------------------------------------------------------- 4/6. key sources and key files


def test_a_key_file_env_var_holding_the_key_is_not_shown(monkeypatch):
    monkeypatch.delenv("DQGOV_MASKING_KEY", raising=False)
    monkeypatch.setenv("DQGOV_MASKING_KEY_FILE", SECRET)
    with pytest.raises(ConfigError) as info:
        resolve_key(MaskingPolicy())
    assert str(info.value) == ("masking key missing: cannot read the key file env var DQGOV_MASKING_KEY_FILE "
                                  "names: No such file or directory")


def test_a_key_file_expanded_from_an_env_var_is_not_shown(monkeypatch, tmp_path):
    monkeypatch.setenv("MASKING_SECRET", SECRET)
    with pytest.raises(ConfigError) as info:
        resolve_key(MaskingPolicy(key_file="${MASKING_SECRET}"), base_dir=tmp_path)
    assert str(info.value) == ("masking key missing: cannot read the key file masking.key_file names: "
                                  "No such file or directory")
    # a readable file named through env vars: its path stays out of the key's description too
    (tmp_path / "k.bin").write_bytes(b"\x01" * 32)
    monkeypatch.setenv("MASKING_SECRET", str(tmp_path / "k.bin"))
    assert str(tmp_path) not in repr(resolve_key(MaskingPolicy(key_file="${MASKING_SECRET}")))
    monkeypatch.setenv("DQGOV_MASKING_KEY_FILE", str(tmp_path / "k.bin"))
    monkeypatch.delenv("DQGOV_MASKING_KEY", raising=False)
    assert str(tmp_path) not in repr(resolve_key(MaskingPolicy()))


def test_a_key_file_loses_one_trailing_line_break_only(tmp_path):
    binary = bytes(range(0x41, 0x41 + 30)) + b"\x0c\x20"  # as `head -c 32 /dev/urandom` may end
    cases = [(binary, binary), (b"\t" + KEY.encode() + b" \n", b"\t" + KEY.encode() + b" "),
             (KEY.encode() + b"\r\n", KEY.encode()), (KEY.encode() + b"\n\n", KEY.encode() + b"\n")]
    for content, used in cases:
        (tmp_path / "k.bin").write_bytes(content)
        key = resolve_key(MaskingPolicy(key_file=str(tmp_path / "k.bin")))
        assert key.hmac_hex("52998224725") == h("52998224725", used), content


# --------------------------------------------------------------------------- 7. timestamps


@pytest.mark.spark
@pytest.mark.parametrize("engine", ["jvm", "sha2"])
def test_timestamp_pseudonyms_do_not_depend_on_the_session_time_zone(spark, engine):
    from dq_governance.masking import apply_masks
    from dq_governance.masking.apply import with_pseudonyms

    c = contract([{"name": "ts", "type": "timestamp", "pii": True, "masking": "hmac"},
                  {"name": "tok", "type": "timestamp", "pii": True, "masking": "tokenize"},
                  {"name": "ntz", "type": "timestamp_ntz", "pii": True, "masking": "hmac"}])
    query = ("SELECT TIMESTAMP '{t} UTC' AS ts, TIMESTAMP '{t} UTC' AS tok, TIMESTAMP_NTZ '{t}' AS ntz "
             "FROM VALUES (1) AS v(i)")
    values = ["1990-04-12 10:00:00", "2024-03-10 02:30:00.123"]  # the second: a DST gap in New York
    before = spark.conf.get("spark.sql.session.timeZone")
    got = {}
    try:
        for tz in ("UTC", "America/Sao_Paulo", "America/New_York"):
            spark.conf.set("spark.sql.session.timeZone", tz)
            df = spark.sql(" UNION ALL ".join(query.format(t=t) for t in values))
            masked = apply_masks(df, c, keys=KEY, hmac_engine=engine).collect()
            pseudonyms = with_pseudonyms(df, {"ts": "p"}, c, keys=KEY).collect()
            got[tz] = ([tuple(r) for r in masked], [r.p for r in pseudonyms])
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    assert got["UTC"][0][0][0] == h("1990-04-12 10:00:00") and got["UTC"][0][1][0] == h("2024-03-10 02:30:00.123")
    assert [r[2] for r in got["UTC"][0]] == [h(t) for t in values]  # TIMESTAMP_NTZ: its own text, as before
    assert got["UTC"][1] == [h(t) for t in values]
    assert got["America/Sao_Paulo"] == got["UTC"] and got["America/New_York"] == got["UTC"]


# --------------------------------------------------------------------------- 8. by_classification keys


def test_by_classification_keys_matching_no_field_are_reported():
    from dq_governance.contracts.consistency import Problem, unmatched_classifications

    doc = yaml.safe_load("""
masking:
  by_classification: {Restricted: redact, confidencial: "null", internal: partial}
schema:
  fields:
    - {name: renda, classification: restricted}
    - {name: doc, classification: confidential}
    - name: cliente
      fields: [{name: nota, classification: internal}]
""")
    expected = [
        Problem(("masking", "by_classification", "Restricted"),
                "masking.by_classification key 'Restricted' matches no field's classification: it masks nothing",
                "did you mean `restricted`? classifications match case-sensitively"),
        Problem(("masking", "by_classification", "confidencial"),
                "masking.by_classification key 'confidencial' matches no field's classification: it masks nothing",
                "did you mean `confidential`?"),
    ]
    assert unmatched_classifications(doc["schema"]["fields"], doc["masking"]) == expected
    model = Contract.model_validate({"contract": {"name": "x", "version": "1.0.0"}, "dataset": {"name": "x"}, **doc})
    assert unmatched_classifications(model.schema_.fields, model.masking) == expected


@pytest.mark.spark
def test_mask_warns_about_a_by_classification_key_matching_no_field(spark, tmp_path, capsys):
    c = write_contract(tmp_path / "c.yaml", [{"name": "id", "type": "long"},
                                             {"name": "renda", "classification": "restricted"}],
                       masking={"by_classification": {"Restricted": "redact"}})
    (tmp_path / "data.csv").write_text("id,renda\n1,12345.67\n")
    code = main(["mask", str(c), "--input", str(tmp_path / "data.csv"), "--output", str(tmp_path / "out")])
    assert code == 0
    assert capsys.readouterr().err.strip().splitlines() == [
        f"dqgov: warning: {c}: masking.by_classification key 'Restricted' matches no field's classification: it "
        "masks nothing (did you mean `restricted`? classifications match case-sensitively)"]


def test_lint_warns_about_a_by_classification_key_matching_no_field(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text("contract: {name: c, version: 1.0.0}\ndataset: {name: c}\nschema:\n  fields:\n"
                    "    - {name: renda, type: double, classification: restricted}\n"
                    "masking:\n  by_classification:\n    Restricted: redact\n")
    assert main(["lint", str(path)]) == 0
    assert capsys.readouterr().out == (
        f"{path}:8:17: warning: masking.by_classification.Restricted: masking.by_classification key 'Restricted' "
        "matches no field's classification: it masks nothing (did you mean `restricted`? classifications match "
        "case-sensitively)\n")

"""Each masking method on fixed inputs with a fixed test key; expected HMACs come from Python's hmac."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
from decimal import Decimal

import pytest
from pydantic import ValidationError

from dq_governance.contracts.model import Contract
from dq_governance.errors import ConfigError
from dq_governance.masking import MaskingKey, apply_masks
from dq_governance.masking.apply import META_KEY_ID, META_METHOD

pytestmark = pytest.mark.spark

KEY = b"fixed-test-key-for-dq-governance-0001"
OTHER_KEY = b"another-test-key-for-dq-governance-02"


def h(value: str, key: bytes = KEY) -> str:
    return hmac.new(key, value.encode("utf-8"), hashlib.sha256).hexdigest()


def contract(*fields: dict, masking: dict | None = None) -> Contract:
    doc = {"contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"}, "schema": {"fields": list(fields)}}
    if masking:
        doc["masking"] = masking
    return Contract.model_validate(doc)


def column(spark, values, spec: dict | str, *, fmt: str | None = None, dtype: str = "string", key=KEY,
           extra: dict | None = None) -> list:
    field = {"name": "v", "type": dtype, "masking": spec, **({"format": fmt} if fmt else {}), **(extra or {})}
    df = spark.createDataFrame([(v,) for v in values], f"v {dtype}")
    return [r.v for r in apply_masks(df, contract(field), keys=key).collect()]


# --------------------------------------------------------------------------- hmac


def test_hmac_cpf_with_and_without_punctuation(spark):
    got = column(spark, ["529.982.247-25", "52998224725", " 529.982.247-25 ", None, ""], "hmac", fmt="cpf")
    assert got == [h("52998224725")] * 3 + [None, None]


def test_hmac_email_case_and_whitespace(spark):
    got = column(spark, ["Ana.Souza@Example.COM", "  ana.souza@example.com ", "other@example.com"], "hmac", fmt="email")
    assert got == [h("ana.souza@example.com"), h("ana.souza@example.com"), h("other@example.com")]


def test_hmac_phone_punctuation_country_code_and_trunk_zero(spark):
    values = ["+55 11 98765-4321", "(11) 98765-4321", "11987654321", "0 11 98765-4321", "5511987654321", "11 3456-7890"]
    got = column(spark, values, "hmac", fmt="phone")
    assert got == [h("5511987654321")] * 5 + [h("551134567890")]


def test_hmac_alphanumeric_cnpj_upper_cased(spark):
    got = column(spark, ["12.ABC.345/01DE-35", "12abc34501de35", "11.222.333/0001-81"], "hmac", fmt="cnpj")
    assert got == [h("12ABC34501DE35"), h("12ABC34501DE35"), h("11222333000181")]


def test_hmac_without_format_trims_only(spark):
    got = column(spark, ["  Ana Souza ", "ana souza"], "hmac")
    assert got == [h("Ana Souza"), h("ana souza")]


def test_hmac_base64(spark):
    got = column(spark, ["52998224725"], {"method": "hmac", "encoding": "base64"}, fmt="cpf")
    expected = base64.b64encode(hmac.new(KEY, b"52998224725", hashlib.sha256).digest()).decode()
    assert got == [expected]


def test_hmac_of_a_non_string_column(spark):
    got = column(spark, [101, None], "hmac", dtype="long")
    assert got == [h("101"), None]


def test_hmac_long_key_is_hashed_first(spark):
    long_key = b"L" * 100
    assert column(spark, ["x"], "hmac", key=long_key) == [hmac.new(long_key, b"x", hashlib.sha256).hexdigest()]


def test_different_keys_give_different_outputs(spark):
    a = column(spark, ["52998224725"], "hmac", fmt="cpf", key=KEY)
    b = column(spark, ["52998224725"], "hmac", fmt="cpf", key=OTHER_KEY)
    assert a == [h("52998224725")] and b == [h("52998224725", OTHER_KEY)] and a != b


def test_deterministic_across_partitions_and_runs(spark):
    values = [f"{i:011d}" for i in range(200)]
    df = spark.createDataFrame([(i, v) for i, v in enumerate(values)], "id int, v string")
    c = contract({"name": "id", "type": "int"}, {"name": "v", "masking": "hmac", "format": "cpf"})
    one = {r.id: r.v for r in apply_masks(df, c, keys=KEY).collect()}
    many = {r.id: r.v for r in apply_masks(df.repartition(7), c, keys=KEY).collect()}
    again = {r.id: r.v for r in apply_masks(df.coalesce(1), c, keys=KEY).collect()}
    assert one == many == again == {i: h(v) for i, v in enumerate(values)}


# --------------------------------------------------------------------------- tokenize


def reference_token(raw: str, normalised: str, key: bytes = KEY) -> str:
    """Independent Python version of the documented tokenize rule."""
    stream = hmac.new(key, normalised.encode(), hashlib.sha256).digest()
    shape = raw.strip()
    out = []
    for i, ch in enumerate(shape):
        index = sum(1 for c in shape[i + 1:] if c.isalnum()) % 32
        b = stream[index]
        if ch.isdigit():
            out.append(chr(48 + b % 10))
        elif ch.isalpha() and ch.isupper():
            out.append(chr(65 + b % 26))
        elif ch.isalpha():
            out.append(chr(97 + b % 26))
        else:
            out.append(ch)
    return "".join(out)


def test_tokenize_keeps_length_class_and_layout(spark):
    long_text = "Rua das Flores, 1234 - Apto 56 - Bairro Jardim Paulista"  # more than 32 letters and digits
    values = ["529.982.247-25", "52998224725", "+55 11 98765-4321", "(11) 98765-4321", "Ana-Beatriz 7", "José Ávila",
              long_text, "--/--", None]
    fmts = {"cpf": values[:2], "phone": values[2:4]}
    cpf = column(spark, fmts["cpf"], "tokenize", fmt="cpf")
    phone = column(spark, fmts["phone"], "tokenize", fmt="phone")
    free = column(spark, values[4:], "tokenize")
    assert cpf == [reference_token(v, "52998224725") for v in fmts["cpf"]]
    assert phone == [reference_token(v, "5511987654321") for v in fmts["phone"]]
    assert free == [reference_token("Ana-Beatriz 7", "Ana-Beatriz 7"), reference_token("José Ávila", "José Ávila"),
                    reference_token(long_text, long_text), "--/--", None]
    assert free[1][0].isupper() and free[1][4] == " " and free[1][5].isupper() and free[1].isascii()
    # same person, two layouts: the same digits in each layout
    assert cpf[0].replace(".", "").replace("-", "") == cpf[1]
    digits = ["".join(c for c in p if c.isdigit()) for p in phone]
    assert digits[0][-11:] == digits[1] and len(phone[0]) == len("+55 11 98765-4321")
    assert cpf[0][3] == "." and cpf[0][-3] == "-" and cpf[0] != "529.982.247-25"
    assert free[0][0].isupper() and free[0][1:3].islower() and free[0][3] == "-" and free[0][-1].isdigit()


# --------------------------------------------------------------------------- unkeyed methods


def test_partial_last_n_keeps_punctuation(spark):
    values = ["123.456.789-01", "52998224725", "abc", None]
    assert column(spark, values, "partial") == ["***.***.**9-01", "*******4725", "***", None]
    assert column(spark, values[:2], {"method": "partial", "show_last": 2}) == ["***.***.***-01", "*********25"]
    assert column(spark, values[:1], {"method": "partial", "show_last": 0}) == ["***.***.***-**"]


def test_partial_email_domain_only(spark):
    values = ["Ana@Example.com", "no-at-sign", None]
    assert column(spark, values, {"method": "partial", "domain_only": True}) == ["***@example.com", "**-**-****", None]
    # an email field defaults to the domain when no show_last is given
    assert column(spark, values[:1], "partial", fmt="email") == ["***@example.com"]


def test_redact_and_null(spark):
    assert column(spark, ["Ana", None], "redact") == ["[REDACTED]", None]
    assert column(spark, ["Ana", None], {"method": "redact", "token": "XXX"}) == ["XXX", None]
    df = spark.createDataFrame([(1, 5)], "a long, b int")
    out = apply_masks(df, contract({"name": "a", "type": "long", "masking": "null"}, {"name": "b", "type": "int"}))
    assert out.dtypes == [("a", "bigint"), ("b", "int")] and out.collect()[0].asDict() == {"a": None, "b": 5}


def test_generalize_dates(spark):
    d = [dt.date(1990, 4, 12), None]
    assert column(spark, d, {"method": "generalize", "granularity": "year"}, dtype="date") == [dt.date(1990, 1, 1), None]
    assert column(spark, d, {"method": "generalize", "granularity": "month"}, dtype="date") == [dt.date(1990, 4, 1), None]
    ts = [dt.datetime(2026, 11, 20, 10, 5)]
    assert column(spark, ts, {"method": "generalize"}, dtype="timestamp") == [dt.datetime(2026, 1, 1)]
    text = ["1990-04-12", "12/04/1990", "ontem", None]
    got = column(spark, text, {"method": "generalize", "granularity": "year"}, extra={"date_format": "yyyy-MM-dd"})
    assert got == ["1990", None, None, None]  # unparseable text is not echoed back
    got = column(spark, ["12/04/1990"], {"method": "generalize", "granularity": "month"},
                 extra={"date_format": "dd/MM/yyyy"})
    assert got == ["1990-04"]
    # a year Spark's pattern parser overflows on (it threw and failed the whole masking job) is null
    got = column(spark, ["12/04/+999999", "12/04/1990"], {"method": "generalize", "granularity": "year"},
                 extra={"date_format": "dd/MM/yyyy"})
    assert got == [None, "1990"]


def test_generalize_numbers_to_buckets(spark):
    assert column(spark, [0, 999, 1000, 2501, None], {"method": "generalize", "bucket": 1000}, dtype="long") == [
        0, 0, 1000, 2000, None]
    assert column(spark, [Decimal("1500.00"), Decimal("20000.00")], {"method": "generalize", "bucket": 1000},
                  dtype="decimal(12,2)") == [Decimal("1000.00"), Decimal("20000.00")]
    assert column(spark, ["1500.00", "abc", None], {"method": "generalize", "bucket": 1000}) == ["1000", None, None]
    assert column(spark, ["37.5"], {"method": "generalize", "bucket": 2.5}) == ["37.5"]


def test_generalize_cep_prefix(spark):
    got = column(spark, ["01310-100", "40010000", "3011", None], {"method": "generalize", "prefix_length": 5})
    assert got == ["01310", "40010", "3011", None]


def test_generalize_needs_an_option_for_text(spark):
    # a field declared as text: refused when the contract loads
    with pytest.raises(ValidationError, match="generalize on a string field needs `bucket` or `prefix_length`"):
        column(spark, ["x"], {"method": "generalize"})
    # a field whose type the contract leaves open: refused when the text column is masked
    df = spark.createDataFrame([("x",)], "v string")
    loose = contract({"name": "v", "masking": {"method": "generalize"}})
    with pytest.raises(ConfigError, match="column v: generalize needs"):
        apply_masks(df, loose, keys=KEY)


# --------------------------------------------------------------------------- the frame


def test_same_columns_same_order_metadata_and_absent_columns_skipped(spark):
    df = spark.createDataFrame([("a@x.com", "529.982.247-25", 1)], "email string, CPF string, n int")
    c = contract(
        {"name": "n", "type": "int"}, {"name": "cpf", "format": "cpf", "pii": True},
        {"name": "email", "masking": "redact"}, {"name": "phone", "pii": True},
        masking={"key_id": "k-test"},
    )
    out = apply_masks(df, c, keys=KEY)
    assert out.columns == ["email", "CPF", "n"]
    assert out.collect()[0].asDict() == {"email": "[REDACTED]", "CPF": h("52998224725"), "n": 1}
    meta = {f.name: f.metadata for f in out.schema.fields}
    assert meta["CPF"] == {META_METHOD: "hmac", META_KEY_ID: "k-test"}
    assert meta["email"] == {META_METHOD: "redact"} and meta["n"] == {}


def test_nested_struct_field(spark):
    df = spark.createDataFrame([(1, ("Ana@X.com", "keep")), (2, None)], "id int, contact struct<email:string,note:string>")
    c = contract({"name": "id", "type": "int"}, {"name": "contact", "type": "struct<email:string,note:string>",
                                                  "fields": [{"name": "email", "format": "email", "masking": "hmac"},
                                                             {"name": "note"}]})
    rows = apply_masks(df, c, keys=KEY).orderBy("id").collect()
    assert rows[0].contact.asDict() == {"email": h("ana@x.com"), "note": "keep"}
    assert rows[1].contact is None


def test_missing_key_fails_when_masks_are_set_up(spark, monkeypatch):
    monkeypatch.delenv("DQGOV_MASKING_KEY", raising=False)
    monkeypatch.delenv("DQGOV_MASKING_KEY_FILE", raising=False)
    df = spark.createDataFrame([("52998224725",)], "cpf string")
    with pytest.raises(ConfigError, match="masking key missing"):
        apply_masks(df, contract({"name": "cpf", "masking": "hmac"}))
    # unkeyed methods need no key
    assert apply_masks(df, contract({"name": "cpf", "masking": "redact"})).collect()[0].cpf == "[REDACTED]"


def test_key_from_the_environment(spark, monkeypatch):
    monkeypatch.setenv("DQGOV_MASKING_KEY", KEY.decode())
    df = spark.createDataFrame([("52998224725",)], "cpf string")
    out = apply_masks(df, contract({"name": "cpf", "masking": "hmac"}, masking={"key_id": "env-k"}))
    assert out.collect()[0].cpf == h("52998224725")
    assert out.schema["cpf"].metadata[META_KEY_ID] == "env-k"


def test_masking_key_object(spark):
    key = MaskingKey.from_secret(KEY, key_id="obj")
    assert column(spark, ["x"], "hmac", key=key) == [h("x")]


# --------------------------------------------------------------------------- the two HMAC engines

TRICKY = {
    "cpf": ["529.982.247-25", " 52998224725 ", "abc", "5299822472５", "\t52998224725"],
    "email": ["Ana@Example.COM ", " İSTANBUL@exemplo.com.br", "ΣΊΣΥΦΟΣ@x.gr", "a\tb@c.d", "   "],
    "cnpj": ["12.abc.345/01de-35", "11.222.333/0001-81", "straße-1"],
    "phone": ["+55 (11) 98765-4321", "011 98765-4321", "0800 123 4567", "12345", "---"],
    None: ["  plain text  ", "ünïcödé", "😀 emoji", "", "\u00a0nbsp\u00a0"],
}


def test_the_jvm_udf_is_on_the_test_classpath(spark):
    from dq_governance.masking.jvm_hmac import available

    assert available(spark), "the extension jar is not built: run `make listener` (make test does it first)"


@pytest.mark.parametrize("fmt", list(TRICKY))
@pytest.mark.parametrize("spec", [{"method": "hmac"}, {"method": "hmac", "encoding": "base64"}, {"method": "tokenize"}])
def test_jvm_and_sha2_engines_give_the_same_bytes(spark, fmt, spec):
    values = [*TRICKY[fmt], None]
    field = {"name": "v", "masking": spec, **({"format": fmt} if fmt else {})}
    df = spark.createDataFrame([(v,) for v in values], "v string")
    jvm = [r.v for r in apply_masks(df, contract(field), keys=KEY, hmac_engine="jvm").collect()]
    sha2 = [r.v for r in apply_masks(df, contract(field), keys=KEY, hmac_engine="sha2").collect()]
    assert jvm == sha2 and jvm[-1] is None


def test_jvm_engine_plan_names_the_udf_not_the_key(spark):
    df = spark.createDataFrame([("529.982.247-25",)], "cpf string")
    masked = apply_masks(df, contract({"name": "cpf", "format": "cpf", "masking": "hmac"}), keys=KEY,
                         hmac_engine="jvm")
    plan = masked._jdf.queryExecution().toString()
    # one UDF call per value; no pad columns, no broadcast cross join (the sha2 engine's plan has both)
    assert "dqgov_hmac_cpf_hex_" in plan and "__dqgov_mask_ipad" not in plan and "NestedLoopJoin" not in plan
    assert KEY.decode() not in plan and masked.first().cpf == h("52998224725")


def test_jvm_engine_required_but_missing(spark, monkeypatch):
    from dq_governance.masking import jvm_hmac

    monkeypatch.setattr(jvm_hmac, "HMAC_CLASS", "io.github.dqgovernance.masking.NotInAnyJar")
    df = spark.createDataFrame([("x",)], "v string")
    with pytest.raises(ConfigError, match="hmac_engine 'jvm' needs the dq-governance extension jar"):
        apply_masks(df, contract({"name": "v", "masking": "hmac"}), keys=KEY, hmac_engine="jvm")
    # auto falls back to the built-in sha2 construction, same bytes
    assert apply_masks(df, contract({"name": "v", "masking": "hmac"}), keys=KEY).first().v == h("x")
    with pytest.raises(ConfigError, match="hmac_engine must be one of auto, jvm, sha2"):
        apply_masks(df, contract({"name": "v", "masking": "hmac"}), keys=KEY, hmac_engine="fast")


def test_jvm_udfs_of_two_keys_sharing_a_key_id_stay_apart(spark):
    """Both frames are built before either runs: a rotated key reusing an id must not replace the other's UDF."""
    df = spark.createDataFrame([("x",)], "v string")
    spec = contract({"name": "v", "masking": "hmac"})
    first = apply_masks(df, spec, keys=MaskingKey.from_secret(KEY, key_id="k1"), hmac_engine="jvm")
    second = apply_masks(df, spec, keys=MaskingKey.from_secret(OTHER_KEY, key_id="k1"), hmac_engine="jvm")
    assert (first.first().v, second.first().v) == (h("x"), h("x", OTHER_KEY))

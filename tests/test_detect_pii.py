"""PII detectors on a generated dataset: precision and recall per detector, column-level scan results.

The generator computes check digits in plain Python (an oracle independent of the Spark expressions):
valid values, near-misses with wrong check digits, and decoys such as order numbers of the same length.
"""

from __future__ import annotations

import random
import string

import pytest
from pyspark.sql import functions as F

from dq_governance.masking import detect

pytestmark = pytest.mark.spark

DDD = detect.VALID_DDD


# --------------------------------------------------------------------------- generators (Python oracle)


def _mod11(values: list[int], weights: list[int]) -> int:
    rest = sum(v * w for v, w in zip(values, weights)) % 11
    return 0 if rest < 2 else 11 - rest


def cpf(rng: random.Random, *, valid: bool = True, punctuated: bool | None = None) -> str:
    while True:
        base = [rng.randrange(10) for _ in range(9)]
        if len(set(base)) > 1:
            break
    d1 = _mod11(base, list(range(10, 1, -1)))
    d2 = _mod11(base + [d1], list(range(11, 1, -1)))
    if not valid:  # a near-miss: one check digit off
        if rng.random() < 0.5:
            d2 = (d2 + rng.randrange(1, 10)) % 10
        else:
            d1 = (d1 + rng.randrange(1, 10)) % 10
    text = "".join(map(str, base + [d1, d2]))
    if punctuated if punctuated is not None else rng.random() < 0.5:
        text = f"{text[:3]}.{text[3:6]}.{text[6:9]}-{text[9:]}"
    return text


CNPJ_W1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
CNPJ_W2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]


def cnpj(rng: random.Random, *, valid: bool = True, alphanumeric: bool = False) -> str:
    alphabet = string.digits + string.ascii_uppercase if alphanumeric else string.digits
    base = [rng.choice(alphabet) for _ in range(8)] + list("0001" if rng.random() < 0.6 else
                                                            "".join(rng.choice(alphabet) for _ in range(4)))
    values = [ord(c) - 48 for c in base]
    d1 = _mod11(values, CNPJ_W1)
    d2 = _mod11(values + [d1], CNPJ_W2)
    if not valid:
        d2 = (d2 + rng.randrange(1, 10)) % 10
    text = "".join(base) + f"{d1}{d2}"
    if rng.random() < 0.5:
        text = f"{text[:2]}.{text[2:5]}.{text[5:8]}/{text[8:12]}-{text[12:]}"
    return text


def email(rng: random.Random, *, valid: bool = True) -> str:
    local = "".join(rng.choice(string.ascii_lowercase + "._") for _ in range(rng.randint(3, 10))).strip("._") or "x"
    domain = rng.choice(["example.com", "mail.com.br", "empresa.org", "uol.com.br"])
    if valid:
        return f"{local.capitalize() if rng.random() < 0.3 else local}@{domain}"
    return rng.choice([f"{local}@{domain.split('.')[0]}", f"{local}@@{domain}", f"{local} x@{domain}",
                       f"{local}.{domain}", f"@{domain}"])


def phone(rng: random.Random) -> str:
    ddd = rng.choice(DDD)
    mobile = rng.random() < 0.6
    number = f"9{rng.randint(6, 9)}{rng.randrange(10**7):07d}" if mobile else f"{rng.randint(2, 5)}{rng.randrange(10**7):07d}"
    head, tail = number[:-4], number[-4:]
    layouts = [f"+55 {ddd} {head}-{tail}", f"({ddd}) {head}-{tail}", f"{ddd} {head}-{tail}", f"+55{ddd}{number}"]
    if mobile:
        layouts.append(f"{ddd}{number}")  # bare: only mobiles are read as phones
    return rng.choice(layouts)


def luhn_digit(body: str) -> int:
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return (10 - total % 10) % 10


def card(rng: random.Random, *, valid: bool = True) -> str:
    prefix, length = rng.choice([("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("34", 15), ("37", 15),
                                 ("6011", 16), ("636368", 16), ("4011", 16)])
    body = prefix + "".join(str(rng.randrange(10)) for _ in range(length - len(prefix) - 1))
    check = luhn_digit(body)
    if not valid:
        check = (check + rng.randrange(1, 10)) % 10
    text = body + str(check)
    if rng.random() < 0.4 and length == 16:
        text = " ".join(text[i:i + 4] for i in range(0, 16, 4))
    return text


IBAN_LAYOUTS = {"BR": 25, "DE": 18, "GB": 18, "FR": 23, "PT": 21}


def iban(rng: random.Random, *, valid: bool = True) -> str:
    country = rng.choice(sorted(IBAN_LAYOUTS))
    size = IBAN_LAYOUTS[country]
    if country == "BR":
        bban = "".join(str(rng.randrange(10)) for _ in range(23)) + rng.choice("PC") + rng.choice(string.ascii_uppercase + string.digits)
    elif country == "GB":
        bban = "".join(rng.choice(string.ascii_uppercase) for _ in range(4)) + "".join(str(rng.randrange(10)) for _ in range(14))
    else:
        bban = "".join(str(rng.randrange(10)) for _ in range(size))
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    check = 98 - int(numeric) % 97
    if not valid:  # any other value in 02..98
        check = (check - 2 + rng.randrange(1, 97)) % 97 + 2
    text = f"{country}{check:02d}{bban}"
    if rng.random() < 0.3:
        text = " ".join(text[i:i + 4] for i in range(0, len(text), 4))
    return text


def ipv4(rng: random.Random, *, valid: bool = True) -> str:
    octets = [rng.randrange(256) for _ in range(4)]
    if valid:
        return ".".join(map(str, octets))
    return rng.choice([f"{rng.randint(256, 999)}.{octets[1]}.{octets[2]}.{octets[3]}", ".".join(map(str, octets[:3])),
                       ".".join(map(str, octets + [1])), f"{octets[0]}.{octets[1]}..{octets[3]}"])


def digits(rng: random.Random, n: int) -> str:
    return str(rng.randint(1, 9)) + "".join(str(rng.randrange(10)) for _ in range(n - 1))


def generated_values(seed: int = 7, n: int = 400) -> list[tuple[str, str | None]]:
    """(value, true PII type or None): positives, near-misses and same-length decoys."""
    rng = random.Random(seed)
    rows: list[tuple[str, str | None]] = []
    rows += [(cpf(rng), "BR_CPF") for _ in range(n)]
    rows += [(cpf(rng, valid=False), None) for _ in range(n // 2)]
    rows += [(cnpj(rng, alphanumeric=i % 2 == 0), "BR_CNPJ") for i in range(n)]
    rows += [(cnpj(rng, valid=False, alphanumeric=i % 2 == 0), None) for i in range(n // 2)]
    rows += [(email(rng), "EMAIL_ADDRESS") for _ in range(n)]
    rows += [(email(rng, valid=False), None) for _ in range(n // 2)]
    rows += [(phone(rng), "PHONE_NUMBER") for _ in range(n)]
    rows += [(card(rng), "CREDIT_CARD") for _ in range(n)]
    rows += [(card(rng, valid=False), None) for _ in range(n // 2)]
    rows += [(iban(rng), "IBAN_CODE") for _ in range(n)]
    rows += [(iban(rng, valid=False), None) for _ in range(n // 2)]
    rows += [(ipv4(rng), "IP_ADDRESS") for _ in range(n)]
    rows += [(ipv4(rng, valid=False), None) for _ in range(n // 2)]
    # decoys: order numbers and ids of the same lengths as CPF (11), CNPJ (14), phones (10-13), cards (15-16)
    for length in (10, 11, 11, 12, 13, 14, 14, 15, 16, 16):
        rows += [(digits(rng, length), None) for _ in range(n // 4)]
    rows += [(f"{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}", None) for _ in range(n // 4)]  # versions
    return rows


VALUE_DETECTORS = [d for d in detect.DETECTORS if d.values is not None and not d.values_need_name]


def test_precision_and_recall_per_detector(spark):
    rows = generated_values()
    df = spark.createDataFrame(rows, "value string, label string").repartition(2)
    aggs = []
    for det in VALUE_DETECTORS:
        hit = det.values(F.col("value"))
        truth = F.col("label") == det.pii_type
        aggs += [F.count_if(hit & truth).alias(f"{det.pii_type}_tp"), F.count_if(hit).alias(f"{det.pii_type}_pred"),
                 F.count_if(truth).alias(f"{det.pii_type}_true")]
    counts = df.agg(*aggs).collect()[0].asDict()
    scores = {}
    for det in VALUE_DETECTORS:
        tp, pred, true = (counts[f"{det.pii_type}_{k}"] for k in ("tp", "pred", "true"))
        scores[det.pii_type] = (round(tp / pred, 4), round(tp / true, 4), tp, pred, true)
    print("\ndetector precision/recall on", len(rows), "generated values:")
    for name, (precision, recall, tp, pred, true) in scores.items():
        print(f"  {name:14s} precision {precision:.4f} recall {recall:.4f} (tp {tp}, flagged {pred}, true {true})")
    assert set(scores) == {"BR_CPF", "BR_CNPJ", "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS"}
    for name, (precision, recall, *_rest) in scores.items():
        assert precision >= 0.95, (name, precision)
        assert recall >= 0.95, (name, recall)
    # check digits are exact: every generated CPF, CNPJ (incl. alphanumeric), card and IBAN is found
    assert scores["BR_CPF"][1] == scores["BR_CNPJ"][1] == scores["CREDIT_CARD"][1] == scores["IBAN_CODE"][1] == 1.0


def test_near_misses_are_all_rejected(spark):
    rng = random.Random(11)
    misses = [cpf(rng, valid=False) for _ in range(200)]
    cnpj_misses = [cnpj(rng, valid=False, alphanumeric=True) for _ in range(200)]
    df = spark.createDataFrame([(a, b) for a, b in zip(misses, cnpj_misses)], "a string, b string")
    row = df.agg(F.count_if(detect.is_cpf(F.col("a"))).alias("cpf"), F.count_if(detect.is_cnpj(F.col("b"))).alias("cnpj")).collect()[0]
    assert (row.cpf, row.cnpj) == (0, 0)


def test_known_values(spark):
    cases = {
        "529.982.247-25": "BR_CPF", "111.111.111-11": None, "12.ABC.345/01DE-35": "BR_CNPJ",
        "11.222.333/0001-81": "BR_CNPJ", "00.000.000/0000-00": None, "4111 1111 1111 1111": "CREDIT_CARD",
        "4111 1111 1111 1112": None, "GB82 WEST 1234 5698 7654 32": "IBAN_CODE", "GB83 WEST 1234 5698 7654 32": None,
        "+55 11 98765-4321": "PHONE_NUMBER", "(10) 98765-4321": None, "1134567890": None, "192.168.0.1": "IP_ADDRESS",
        "256.1.1.1": None, "ana@example.com": "EMAIL_ADDRESS", "ana@example": None,
    }
    df = spark.createDataFrame([(k,) for k in cases], "v string")
    got = df.select("v", *[d.values(F.col("v")).alias(d.pii_type) for d in VALUE_DETECTORS]).collect()
    for row in got:
        flagged = [d.pii_type for d in VALUE_DETECTORS if row[d.pii_type]]
        assert flagged == ([cases[row.v]] if cases[row.v] else []), row.v


# --------------------------------------------------------------------------- column-level scan


def generated_table(spark, n: int = 200):
    rng = random.Random(3)
    rows = []
    for i in range(n):
        bad = i % 20 == 0  # 5% near-misses in the document columns
        rows.append((
            i, cpf(rng, valid=not bad), cnpj(rng, valid=not bad, alphanumeric=i % 3 == 0), email(rng), phone(rng),
            card(rng), iban(rng), ipv4(rng), f"19{rng.randint(50, 99)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
            f"2026-11-{rng.randint(10, 28)}", f"Pessoa {i}", f"Rua {i}, {rng.randint(1, 999)}",
            f"{rng.randrange(10**5):05d}-{rng.randrange(1000):03d}", digits(rng, 11), "PAGO" if i % 2 else "ABERTO",
        ))
    schema = ("id long, cpf_cliente string, doc string, contato string, whats string, num string, conta string, "
              "origem string, data_nascimento string, criado_em string, nome string, endereco string, cep string, "
              "pedido_numero string, status string")
    return spark.createDataFrame(rows, schema)


#: generated_table(spark, 200)'s findings: column -> (type, confidence, hit rate, name matched)
GENERATED_FINDINGS = {
    "cpf_cliente": ("BR_CPF", 0.98, 0.95, True),  # 1 - 0.4 * (1 - 0.95)
    "doc": ("BR_CNPJ", 0.95, 0.95, False),  # no name hint: the hit rate alone
    "contato": ("EMAIL_ADDRESS", 1.0, 1.0, False),
    "whats": ("PHONE_NUMBER", 1.0, 1.0, True),
    "num": ("CREDIT_CARD", 1.0, 1.0, False),
    "conta": ("IBAN_CODE", 1.0, 1.0, False),
    "origem": ("IP_ADDRESS", 1.0, 1.0, False),
    "data_nascimento": ("DATE_OF_BIRTH", 1.0, 1.0, True),
    "nome": ("PERSON", 0.6, None, True),
    "endereco": ("LOCATION", 0.6, None, True),
    "cep": ("ZIP_CODE", 1.0, 1.0, True),
}


def test_scan_finds_each_column(spark):
    report = detect.scan_pii(generated_table(spark))
    found = {f.column: (f.pii_type, f.confidence, f.hit_rate, f.name_match) for f in report.findings}
    assert report.sampled_rows == report.total_rows == 200
    # dates without a birth name, order numbers, ids and statuses are not PII
    assert found == GENERATED_FINDINGS and not {"criado_em", "pedido_numero", "id", "status"} & set(found)


def test_sample_is_deterministic_and_bounded(spark):
    df = generated_table(spark, 200)
    first = detect.scan_pii(df, sample_rows=50)
    second = detect.scan_pii(df, sample_rows=50)
    assert first.total_rows == 200 and 40 <= first.sampled_rows <= 50
    assert (first.sampled_rows, first.rates) == (second.sampled_rows, second.rates)


def test_name_heuristics():
    assert detect.name_matches("CPF_Cliente") == ["BR_CPF"]
    assert detect.name_matches("telefone_celular") == ["PHONE_NUMBER"]
    assert detect.name_matches("e_mail") == ["EMAIL_ADDRESS"]
    assert detect.name_matches("nome_produto") == []
    assert detect.name_matches("customer_name") == ["PERSON"]
    assert detect.name_matches("endereco_entrega") == ["LOCATION"]
    assert detect.name_matches("dt_nascimento") == ["DATE_OF_BIRTH"]
    assert detect.name_matches("ip_origem") == ["IP_ADDRESS"]
    assert detect.name_matches("shipping_zip") == ["ZIP_CODE"]
    assert detect.name_matches("pipeline") == []


def test_names_match_whole_words_only():
    """`hotel_id` holds no `tel`, `namespace` no `name`; `event_name` names no person. `email_verified`,
    `is_mobile` and `card_type` do name the entity: their values decide (see the scan test below)."""
    got = {name: detect.name_matches(name) for name in (
        "hotel_id", "namespace", "event_name", "nome_fantasia", "email_verified", "is_mobile", "card_type",
        "email", "e_mail", "customerEmail", "telefone", "celular", "phone_number", "CPFCliente", "card_number",
        "full_name", "lastName", "nome_do_cliente", "IPv4", "email_address")}
    assert got == {
        "hotel_id": [], "namespace": [], "event_name": [], "nome_fantasia": [],
        "email_verified": ["EMAIL_ADDRESS"], "is_mobile": ["PHONE_NUMBER"], "card_type": ["CREDIT_CARD"],
        "email": ["EMAIL_ADDRESS"], "e_mail": ["EMAIL_ADDRESS"], "customerEmail": ["EMAIL_ADDRESS"],
        "telefone": ["PHONE_NUMBER"], "celular": ["PHONE_NUMBER"], "phone_number": ["PHONE_NUMBER"],
        "CPFCliente": ["BR_CPF"], "card_number": ["CREDIT_CARD"], "full_name": ["PERSON"], "lastName": ["PERSON"],
        "nome_do_cliente": ["PERSON"], "IPv4": ["IP_ADDRESS"],
        "email_address": ["EMAIL_ADDRESS"],  # an e-mail address is no LOCATION
    }


def test_a_name_counts_alone_only_when_there_is_nothing_to_test():
    rejected = {"EMAIL_ADDRESS": 0.0, "PHONE_NUMBER": 0.0, "BR_CPF": 0.0}
    assert detect.score("email_verified", rejected) == []
    assert detect.score("email", {}) == [("EMAIL_ADDRESS", 0.6, None, True)]  # no present value: the name alone
    assert detect.score("email", {"EMAIL_ADDRESS": 0.5}) == [("EMAIL_ADDRESS", 0.8, 0.5, True)]  # 1 - 0.4 * 0.5


def test_a_name_alone_never_outweighs_values_that_do_not_match(spark):
    """Names that match a detector, values that do not: not PII. The true positives keep their confidence."""
    rng = random.Random(5)
    rows = [(
        ["true", "false"][i % 2], 100 + i % 5, ["true", "false"][i % 3 == 0], ["click", "view", "buy"][i % 3],
        ["prod", "dev"][i % 2], ["visa", "master"][i % 2], email(rng), email(rng), email(rng), phone(rng),
        phone(rng), phone(rng), cpf(rng), card(rng), f"Pessoa {i}", f"Pessoa {i}", "", None,
    ) for i in range(40)]
    schema = ("email_verified string, hotel_id long, is_mobile string, event_name string, namespace string, "
              "card_type string, email string, e_mail string, customer_email string, telefone string, "
              "celular string, phone_number string, cpf string, card_number string, full_name string, "
              "nome string, email_blank string, telefone_null string")
    report = detect.scan_pii(spark.createDataFrame(rows, schema))
    found = {f.column: (f.pii_type, f.confidence, f.hit_rate, f.non_null, f.name_match) for f in report.findings}
    assert found == {
        "email": ("EMAIL_ADDRESS", 1.0, 1.0, 40, True), "e_mail": ("EMAIL_ADDRESS", 1.0, 1.0, 40, True),
        "customer_email": ("EMAIL_ADDRESS", 1.0, 1.0, 40, True), "telefone": ("PHONE_NUMBER", 1.0, 1.0, 40, True),
        "celular": ("PHONE_NUMBER", 1.0, 1.0, 40, True), "phone_number": ("PHONE_NUMBER", 1.0, 1.0, 40, True),
        "cpf": ("BR_CPF", 1.0, 1.0, 40, True), "card_number": ("CREDIT_CARD", 1.0, 1.0, 40, True),
        "full_name": ("PERSON", 0.6, None, 40, True), "nome": ("PERSON", 0.6, None, 40, True),
        # no present value to test: the name is all the evidence
        "email_blank": ("EMAIL_ADDRESS", 0.6, None, 0, True), "telefone_null": ("PHONE_NUMBER", 0.6, None, 0, True),
    }
    assert report.not_scanned == {}


def test_blanks_are_missing_and_nested_columns_are_named(spark):
    """4 e-mails and 6 blank strings: 4 of 4 present values match. A struct's fields are scanned by dotted name;
    array, map and binary columns are listed as not scanned, with their type."""
    rows = [(f"user{i}@example.com" if i < 4 else ["", "   "][i % 2], {"mail": "a@example.com"}, ["x"], {"k": "v"},
             bytearray(b"\x00")) for i in range(10)]
    df = spark.createDataFrame(rows, "contato string, cliente struct<mail:string>, tags array<string>, "
                                     "attrs map<string,string>, blob binary")
    report = detect.scan_pii(df)
    assert [(f.column, f.pii_type, f.confidence, f.hit_rate, f.non_null, f.path) for f in report.findings] == [
        ("contato", "EMAIL_ADDRESS", 1.0, 1.0, 4, ("contato",)),
        ("cliente.mail", "EMAIL_ADDRESS", 1.0, 1.0, 10, ("cliente", "mail"))]
    assert report.not_scanned == {"tags": "array", "attrs": "map", "blob": "binary"}
    assert report.types["cliente"] == "struct<mail:string>"


def test_struct_fields_are_leaves_named_by_path_and_a_shadowed_one_is_named_not_scanned(spark):
    """Struct fields at any depth are scanned, their struct's name words counting (`loja.nome` is a shop's name,
    `cliente.nome` a person's); a field whose dotted name is also a top-level column's is named as not scanned,
    and a field name with a dot stays whole (`getField`)."""
    df = spark.createDataFrame(
        [(("Ana", ("a@example.com", "x")), ("Loja 1",), "cpf-like", ("b@example.com",))] * 5,
        "cliente struct<nome:string,contato:struct<mail:string,nota:string>>, loja struct<nome:string>, "
        "`cliente.nome` string, s struct<`e.mail`:string>")
    assert [leaf.name for leaf in detect.scannable_columns(df)] == [
        "cliente.contato.mail", "cliente.contato.nota", "loja.nome", "cliente.nome", "s.e.mail"]
    report = detect.scan_pii(df)
    assert [(f.column, f.pii_type, f.hit_rate, f.path) for f in report.findings] == [
        ("cliente.contato.mail", "EMAIL_ADDRESS", 1.0, ("cliente", "contato", "mail")),
        ("cliente.nome", "PERSON", None, ("cliente.nome",)),
        ("s.e.mail", "EMAIL_ADDRESS", 1.0, ("s", "e.mail"))]
    assert report.not_scanned == {"cliente > nome": "string field named like the column cliente.nome"}

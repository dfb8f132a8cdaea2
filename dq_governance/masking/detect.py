"""PII scanner: value detectors as Spark Column predicates, column-name heuristics, and a scan.

Every value detector is a Column expression (CPF, CNPJ, e-mail and IPv4 reuse the check engine's
builders in `checks/formats.py`; the phone detector is stricter than the `phone` format because
detection must tell phones from ids; Luhn via Spark's `luhn_check`, IBAN mod-97 via `aggregate`), so a scan is a single
aggregation over a deterministic sample. Fields inside structs are scanned as columns of their own, by dotted name
(`cliente.cpf`, whose name words include the struct's). Column names count only as whole words (`hotel_id` is no
phone), and a name never makes PII of values the detector tested and rejected. Reports carry column names, rates
and counts only, never a sampled value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from dq_governance.checks import formats
from dq_governance.checks.regex_text import rlike
from dq_governance.contracts.spark_types import type_text
from dq_governance.masking.proposals import NORMALISED_FORMATS, name_has, name_words

DEFAULT_SAMPLE = 10_000
SAMPLE_SEED = 20_260_101
#: minimum confidence for a column to be reported
DEFAULT_MIN_CONFIDENCE = 0.5
#: what a matching column name is worth: alone when there are no values to test (or no value test), else
#: combined with the value hits as independent signals
NAME_WEIGHT = 0.6

VALID_DDD = (
    list(range(11, 20)) + [21, 22, 24, 27, 28, 31, 32, 33, 34, 35, 37, 38] + list(range(41, 50))
    + [51, 53, 54, 55] + list(range(61, 70)) + [71, 73, 74, 75, 77, 79] + list(range(81, 90))
    + list(range(91, 100))
)  # fmt: skip


# --------------------------------------------------------------------------- value predicates


def _text(col: Column) -> Column:
    return F.trim(col.cast("string"))


def _safe(predicate: Column) -> Column:
    return F.coalesce(predicate, F.lit(False))


def is_email(col: Column) -> Column:
    """E-mail address (the check engine's format regex), at most 254 characters."""
    text = _text(col)
    return _safe(rlike(text, formats.EMAIL_RE) & (F.length(text) <= 254))


def is_cpf(col: Column) -> Column:
    """CPF with both mod-11 check digits right (the check engine's `cpf` format)."""
    return _safe(formats.cpf_valid(col))


def is_cnpj(col: Column) -> Column:
    """CNPJ, numeric or alphanumeric, both check digits right (the check engine's `cnpj` format)."""
    return _safe(formats.cnpj_valid(col))


_PHONE_FORMATTED = r"^(\+?55[ .-]?)?(\([0-9]{2}\)|[0-9]{2})[ .-]?(9[ .-]?[0-9]{4}|[2-5][0-9]{3})[ .-]?[0-9]{4}$"
#: a bare digit string is read as a phone only for a mobile (9 then 6-9): bare 10-digit strings are ids
_PHONE_BARE = r"^(55)?[1-9]{2}9[6-9][0-9]{7}$"


def is_br_phone(col: Column) -> Column:
    """Brazilian phone: DDD from the national list, mobile or landline; a valid CPF is not a phone."""
    text = _text(col)
    digits = F.regexp_replace(text, r"[^0-9]", "")
    national = F.when(
        F.length(digits).isin(12, 13) & digits.startswith("55"), F.substring(digits, 3, 11)
    ).otherwise(digits)
    formatted = text.rlike(_PHONE_FORMATTED) & text.rlike(r"[^0-9]")
    ddd_ok = F.left(national, F.lit(2)).isin([str(d) for d in VALID_DDD])
    return _safe((formatted | text.rlike(_PHONE_BARE)) & ddd_ok & ~is_cpf(col))


#: brand prefixes and lengths: Visa, Mastercard (51-55, 2221-2720), Elo, Amex, Diners, JCB, Discover, Hipercard
_CARD_IIN = (
    r"^(4[0-9]{12}([0-9]{3}){0,2}"
    r"|(5[1-5][0-9]{2}|222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}"
    r"|(5041|5066|5067|509[0-9]|6277|6362|6363|650[0-9]|6516|6550)[0-9]{12}"
    r"|3[47][0-9]{13}|3(0[0-5]|[68][0-9])[0-9]{11}|35(2[89]|[3-8][0-9])[0-9]{12}"
    r"|6(011|5[0-9]{2})[0-9]{12}|606282[0-9]{10}([0-9]{3})?)$"
)


def is_credit_card(col: Column) -> Column:
    """Payment card number: brand prefix and length, then Luhn (Spark's `luhn_check`)."""
    digits = F.regexp_replace(_text(col), r"[ -]", "")
    return _safe(digits.rlike(_CARD_IIN) & F.call_function("luhn_check", digits))


def is_iban(col: Column) -> Column:
    """IBAN: country, check digits, BBAN; ISO 13616 mod-97 == 1."""
    text = F.upper(F.regexp_replace(_text(col), r" ", ""))
    moved = F.concat(F.substring(text, 5, 64), F.left(text, F.lit(4)))

    def step(acc: Column, ch: Column) -> Column:
        value = F.when(ch.rlike("^[0-9]$"), F.ascii(ch) - 48).otherwise(F.ascii(ch) - 55).cast("long")
        return (acc * F.when(value >= 10, F.lit(100)).otherwise(F.lit(10)) + value) % 97

    remainder = F.aggregate(F.split(moved, ""), F.lit(0).cast("long"), step)
    return _safe(text.rlike(r"^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$") & (remainder == 1))


def is_ipv4(col: Column) -> Column:
    """Dotted-quad IPv4 address (the check engine's `ipv4` format)."""
    return _safe(_text(col).rlike(formats.IPV4_RE))


def is_date_like(col: Column) -> Column:
    """A calendar date as ISO yyyy-MM-dd (optionally with a time) or dd/MM/yyyy."""
    text = _text(col)
    iso = r"^(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([ T].*)?$"
    br = r"^(0[1-9]|[12][0-9]|3[01])/(0[1-9]|1[0-2])/(19|20)[0-9]{2}$"
    return _safe(text.rlike(iso) | text.rlike(br))


def is_cep(col: Column) -> Column:
    """Brazilian postal code shape (8 digits, optional hyphen); meaningful only with a matching name."""
    return _safe(_text(col).rlike(r"^[0-9]{5}-?[0-9]{3}$"))


# --------------------------------------------------------------------------- the detector table


@dataclass(frozen=True)
class Detector:
    """One PII entity: how its values and column names reveal it (the proposals live in `proposals.py`)."""

    pii_type: str
    values: Callable[[Column], Column] | None = None
    #: matched on the name's whole words (`proposals.name_has`)
    name_pattern: str | None = None
    #: value evidence counts only when the name matches too (dates, CEPs are everywhere)
    values_need_name: bool = False


DETECTORS: tuple[Detector, ...] = (
    # the four whose values masking normalises share their name patterns with lint's `format` advice
    Detector("BR_CPF", is_cpf, NORMALISED_FORMATS["cpf"][0]),
    Detector("BR_CNPJ", is_cnpj, NORMALISED_FORMATS["cnpj"][0]),
    Detector("EMAIL_ADDRESS", is_email, NORMALISED_FORMATS["email"][0]),
    Detector("PHONE_NUMBER", is_br_phone, NORMALISED_FORMATS["phone"][0]),
    Detector("CREDIT_CARD", is_credit_card, r"cartao|cartoes|cards?|cc_?num(ber)?|pan"),
    Detector("IBAN_CODE", is_iban, r"ibans?"),
    Detector("IP_ADDRESS", is_ipv4, r"ip|ip_?addr(ess)?|ipv_?4"),
    Detector("DATE_OF_BIRTH", is_date_like, r"(dt_?)?nasc(imento)?|birth(_?(day|date))?|dob", values_need_name=True),
    Detector("ZIP_CODE", is_cep, r"ceps?|zip(_?code)?|postal(_?code)?|post_?code", values_need_name=True),
    Detector("PERSON", None, r"names?|nomes?|surnames?|sobrenomes?|(full|first|last)names?|nomecompleto"),
    Detector("LOCATION", None, r"enderecos?|address(es)?|logradouros?|rua|streets?|bairros?"),
)
DETECTOR_BY_TYPE = {d.pii_type: d for d in DETECTORS}
#: the detectors that test values (the others judge by the column name alone)
VALUE_DETECTORS = tuple(d for d in DETECTORS if d.values is not None)
#: words of names that hold a name or an address, but not a person's (`nome_produto`, `endereco_loja`)
NOT_PERSONAL = (
    r"produtos?|products?|files?|filenames?|arquivos?|tabelas?|tables?|empresas?|company|companies|lojas?|stores?"
    r"|categor(ia|ias|y|ies)|campanhas?|campaigns?|marcas?|brands?|hosts?|hostnames?|buckets?|columns?|colunas?"
)
#: a `name` / `nome` column is a person's when it has no other word, or one of these (`customer_name`,
#: `nome_do_cliente`); `event_name`, `nome_fantasia` (a company's trade name) are not
PERSON_WORDS = frozenset({
    "first", "last", "full", "middle", "given", "family", "maiden", "legal", "social", "completo",
    "fullname", "firstname", "lastname", "surname", "surnames", "sobrenome", "sobrenomes", "nomecompleto",
    "mae", "pai", "mother", "father", "spouse", "conjuge", "dependente", "dependent",
    "customer", "cliente", "client", "consumer", "consumidor", "user", "usuario", "person", "pessoa",
    "contact", "contato", "owner", "titular", "holder", "cardholder", "patient", "paciente", "employee",
    "funcionario", "colaborador", "student", "aluno", "responsavel", "beneficiary", "beneficiario",
    "passenger", "passageiro", "driver", "motorista", "recipient", "destinatario", "sender", "remetente",
    "buyer", "comprador", "guest", "hospede", "member", "membro", "author", "autor", "candidate", "candidato",
})
#: words joining a name's parts (`nome_do_cliente`), and the generic name words themselves
_FILLER_WORDS = frozenset({"de", "do", "da", "dos", "das", "of", "the", "name", "names", "nome", "nomes"})


def _names_a_person(column: str) -> bool:
    """True when a column name holding `name` / `nome` says it is a person's (see PERSON_WORDS)."""
    others = [w for w in name_words(column) if not w.isdigit() and w not in _FILLER_WORDS]
    return not others or any(w in PERSON_WORDS for w in others)


def name_matches(column: str) -> list[str]:
    """PII types whose name heuristic matches a column name's whole words."""
    out: list[str] = []
    for det in DETECTORS:
        if not det.name_pattern or not name_has(det.name_pattern, column):
            continue
        if det.pii_type in ("PERSON", "LOCATION") and name_has(NOT_PERSONAL, column):
            continue
        if det.pii_type == "PERSON" and not _names_a_person(column):
            continue
        if det.pii_type == "LOCATION" and {"EMAIL_ADDRESS", "IP_ADDRESS"} & set(out):
            continue  # an e-mail or IP address is no place
        out.append(det.pii_type)
    return out


# --------------------------------------------------------------------------- the scan


@dataclass(frozen=True)
class Finding:
    """A column that looks like PII: the best entity, its confidence and the evidence behind it."""

    column: str
    pii_type: str
    confidence: float
    hit_rate: float | None
    #: sampled values present: not null and not blank (the base of `hit_rate`)
    non_null: int
    name_match: bool
    #: the names from the top-level column down (`("cliente", "cpf")` for `cliente.cpf`)
    path: tuple[str, ...] = ()


@dataclass
class ScanReport:
    """All findings of one scan, plus the sample size (no values)."""

    sampled_rows: int
    total_rows: int
    findings: list[Finding] = field(default_factory=list)
    rates: dict[str, dict[str, float]] = field(default_factory=dict)
    #: columns and struct fields the value detectors cannot read -> their type name (array, map, binary), or why
    not_scanned: dict[str, str] = field(default_factory=dict)
    #: every column and struct field by dotted name -> its Spark SQL type (proposals declare new structs with it)
    types: dict[str, str] = field(default_factory=dict)

    def by_column(self) -> dict[str, Finding]:
        """Findings keyed by column."""
        return {f.column: f for f in self.findings}


def sample(
    df: DataFrame, rows: int = DEFAULT_SAMPLE, seed: int = SAMPLE_SEED, total: int | None = None
) -> tuple[DataFrame, int]:
    """A deterministic sample of at most `rows` rows, and the input's row count (counted unless given)."""
    total = df.count() if total is None else total
    if total <= rows:
        return df, total
    # oversample a little so the limit is nearly always reached, then cut deterministically
    fraction = min(1.0, rows * 1.1 / total)
    return df.sample(withReplacement=False, fraction=fraction, seed=seed).limit(rows), total


#: column types the value detectors cannot read: a scan names these columns instead of scanning them
UNSCANNABLE_TYPES = (T.ArrayType, T.MapType, T.BinaryType)


@dataclass(frozen=True)
class Leaf:
    """A column the scan can reach: a top-level column or a field inside structs, by its dotted name."""

    name: str
    path: tuple[str, ...]
    data_type: T.DataType
    #: a struct field whose dotted name is also a top-level column's: not scanned, the two could not be told apart
    shadowed: bool = False

    def column(self) -> Column:
        """The leaf as a Column: `getField` per level, so dots inside a name stay part of it."""
        col = F.col(f"`{self.path[0].replace('`', '``')}`")
        for part in self.path[1:]:
            col = col.getField(part)
        return col


def leaves(schema: T.StructType) -> list[Leaf]:
    """Every column and struct field down to atomic types, in schema order (arrays and maps are not entered).

    A struct's fields are named by dotted paths (`cliente.cpf`); a struct field whose dotted name is also the name
    of a top-level column (a column literally called `cliente.cpf`) is marked `shadowed`, and not entered.
    """
    top = {f.name for f in schema.fields}
    out: list[Leaf] = []

    def walk(fields: list[T.StructField], path: tuple[str, ...]) -> None:
        for f in fields:
            here = (*path, f.name)
            shadowed = len(here) > 1 and ".".join(here) in top
            out.append(Leaf(".".join(here), here, f.dataType, shadowed))
            if isinstance(f.dataType, T.StructType) and not shadowed:
                walk(f.dataType.fields, here)

    walk(schema.fields, ())
    return out


def _scannable(found: list[Leaf]) -> list[Leaf]:
    return [leaf for leaf in found
            if not (leaf.shadowed or isinstance(leaf.data_type, (*UNSCANNABLE_TYPES, T.StructType)))]


def _unscannable(found: list[Leaf]) -> dict[str, str]:
    out = {leaf.name: leaf.data_type.typeName() for leaf in found if isinstance(leaf.data_type, UNSCANNABLE_TYPES)}
    out.update({f"{leaf.path[0]} > {' > '.join(leaf.path[1:])}": f"{leaf.data_type.typeName()} field named like the "
                f"column {leaf.name}" for leaf in found if leaf.shadowed})
    return out


def scannable_columns(df: DataFrame) -> list[Leaf]:
    """Columns and struct fields with atomic types (arrays, maps and binaries are skipped; structs are entered)."""
    return _scannable(leaves(df.schema))


def unscannable_columns(df: DataFrame) -> dict[str, str]:
    """Array, map and binary columns, struct fields included -> their type name (`array`, `map`, `binary`); a struct
    field named like a top-level column, by its path (`cliente > nome`) -> why."""
    return _unscannable(leaves(df.schema))


def value_hits(texts: list[Column]) -> Column:
    """Per text, a struct of `n` (present: not null, not blank) and one flag per value detector, by PII type.

    The detectors are built once, on a lambda variable over an array of every text, not once per column: their
    trees are large (the CPF and CNPJ check digits), and building and planning one per column took ~10 s for
    15 columns. Every detector reads its column as trimmed text, so the text of each is all it needs.
    """
    def flags(text: Column) -> Column:
        return F.struct((_text(text) != "").alias("n"),
                        *(det.values(text).alias(det.pii_type) for det in VALUE_DETECTORS))

    return F.transform(F.array(*texts), flags)


def hit_rates(df: DataFrame, columns: list[Leaf]) -> tuple[dict[str, dict[str, float]], dict[str, int]]:
    """For each column (by dotted name) and value detector, the share of present values it accepts (one job).

    A present value is neither null nor blank (`dqgov profile` and the checks count blank text as missing);
    a column with none gets no rates, so `score` judges it by its name alone.
    """
    if not columns:
        return {}, {}
    detectors = VALUE_DETECTORS
    hits = df.select(value_hits([leaf.column().cast("string") for leaf in columns]).alias("hits"))
    aggs = []
    for i in range(len(columns)):
        aggs.append(F.count_if(F.col("hits")[i]["n"]).alias(f"n{i}"))
        aggs.extend(F.count_if(F.col("hits")[i][det.pii_type]).alias(f"h{i}_{det.pii_type}") for det in detectors)
    row = hits.agg(*aggs).collect()[0].asDict()
    rates: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    for i, name in enumerate(leaf.name for leaf in columns):
        present = int(row[f"n{i}"])
        counts[name] = present
        rates[name] = {det.pii_type: row[f"h{i}_{det.pii_type}"] / present for det in detectors} if present else {}
    return rates, counts


def score(column: str, rates: dict[str, float]) -> list[tuple[str, float, float | None, bool]]:
    """(type, confidence, hit rate, name matched) per candidate entity, best first.

    `rates` holds each value detector's hit rate over the column's present values; a detector missing from it
    had nothing to test, and a matching name then counts alone. A name never makes PII of values that were
    tested and none matched (`email_verified` holding true / false): it only raises the confidence of hits.
    """
    names = set(name_matches(column))
    out = []
    for det in DETECTORS:
        rate = rates.get(det.pii_type) if det.values is not None else None
        named = det.pii_type in names
        if rate is None:  # no value test, or no value to test: the name is all the evidence
            confidence = NAME_WEIGHT if named else 0.0
        elif named and rate > 0:
            confidence = 1 - (1 - NAME_WEIGHT) * (1 - rate)
        else:
            confidence = 0.0 if det.values_need_name else rate
        if confidence > 0:
            out.append((det.pii_type, round(confidence, 4), None if rate is None else round(rate, 4), named))
    return sorted(out, key=lambda c: -c[1])


def scan_pii(
    df: DataFrame, *, sample_rows: int = DEFAULT_SAMPLE, min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    total_rows: int | None = None,
) -> ScanReport:
    """Sample `df` and report the columns that look like PII, best entity per column.

    `total_rows`, when the caller already counted `df` (the check pass has), saves a pass over it.
    """
    found = leaves(df.schema)  # one schema read (a round trip on Connect)
    columns = _scannable(found)
    sampled, total = sample(df, sample_rows, total=total_rows)
    sampled = sampled.cache()
    try:
        rates, counts = hit_rates(sampled, columns)
        sampled_rows = sampled.count()
    finally:
        sampled.unpersist()
    report = ScanReport(sampled_rows=sampled_rows, total_rows=total, rates=rates, not_scanned=_unscannable(found),
                        types={leaf.name: type_text(leaf.data_type) for leaf in found})
    for leaf in columns:
        candidates = score(leaf.name, rates.get(leaf.name, {}))
        if candidates and candidates[0][1] >= min_confidence:
            pii_type, confidence, rate, named = candidates[0]
            report.findings.append(Finding(leaf.name, pii_type, confidence, rate, counts.get(leaf.name, 0), named,
                                           leaf.path))
    return report

"""ODCS import: what a contract says is what is enforced (composite keys, units, SLAs, thresholds), or refused."""

from __future__ import annotations

import copy

import pytest
import yaml

from dq_governance.contracts.load import check_document, load_contract
from dq_governance.contracts.odcs import _fmt, contract_to_odcs, odcs_to_contract
from dq_governance.contracts.source import parse_text
from dq_governance.errors import ContractError

HEAD = """apiVersion: v3.1.0
kind: DataContract
id: c1
name: t
version: 1.0.0
status: active
"""


def odcs(body: str) -> str:
    """An ODCS document: the fixed header, then `body` (from `schema:` on; line 7 is its first line)."""
    return HEAD + body


def issues(text: str) -> list[str]:
    """Every lint issue of the document, as printed (file t.odcs.yaml)."""
    return [str(issue) for issue in check_document(parse_text(text, "t.odcs.yaml")).issues]


def rules(text: str) -> list[tuple[str, str, list[str]]]:
    """(name, type, columns) of each rule a check run evaluates."""
    return [(r.name, r.type, r.target_columns) for r in load_contract(text).check_rules()]


# -- 1. composite primary key ------------------------------------------------------------------------------

COMPOSITE_KEY = odcs("""schema:
  - name: t
    properties:
      - name: b
        logicalType: string
        physicalType: string
        primaryKey: true
        primaryKeyPosition: 2
      - name: a
        logicalType: integer
        physicalType: int
        primaryKey: true
        primaryKeyPosition: 1
""")


def test_composite_primary_key_is_one_unique_rule_over_the_tuple_by_position() -> None:
    assert rules(COMPOSITE_KEY) == [
        ("b_type", "type", ["b"]), ("b_not_null", "not_null", ["b"]),
        ("a_type", "type", ["a"]), ("a_not_null", "not_null", ["a"]),
        ("primary_key", "unique", ["a", "b"]),
        ("undeclared_columns", "undeclared_columns", []),
    ]


def test_single_primary_key_keeps_its_column_rules() -> None:
    single = COMPOSITE_KEY.replace("        primaryKey: true\n        primaryKeyPosition: 2\n", "", 1)
    assert rules(single) == [
        ("b_type", "type", ["b"]),
        ("a_type", "type", ["a"]), ("a_not_null", "not_null", ["a"]), ("a_unique", "unique", ["a"]),
        ("undeclared_columns", "undeclared_columns", []),
    ]


def test_composite_primary_key_exports_back_as_written() -> None:
    doc = yaml.safe_load(COMPOSITE_KEY)
    back = contract_to_odcs(odcs_to_contract(copy.deepcopy(doc)))
    assert back["schema"][0]["properties"] == doc["schema"][0]["properties"]
    assert "quality" not in back["schema"][0]


def test_composite_key_checks_the_tuple(spark) -> None:
    import dq_governance as dq

    # each column repeats, every (a, b) pair is distinct: a valid composite key
    df = spark.createDataFrame([(1, "x"), (1, "y"), (2, "x")], "a int, b string")
    result = dq.check(df, load_contract(COMPOSITE_KEY))
    failed = {r.name: r.failed_count for r in result.rules if r.failed_count}
    assert failed == {}
    assert result.summary()["invalid_rows"] == 0


# -- 2. units of library metrics -------------------------------------------------------------------------

def null_check(unit_line: str) -> str:
    return odcs(f"""schema:
  - name: t
    properties:
      - name: a
        logicalType: integer
        physicalType: int
        quality:
          - metric: nullValues
{unit_line}            mustBeLessThan: 50
""")


@pytest.mark.parametrize("unit", ['"%"', "PERCENT", "percent"])
def test_percent_units_make_a_percent_rule(unit: str) -> None:
    contract = load_contract(null_check(f"            unit: {unit}\n"))
    assert [(r.type, r.must_be) for r in contract.quality.rules] == [("missing_percent", "< 50%")]


def test_unknown_unit_is_refused_on_its_node() -> None:
    assert issues(null_check("            unit: bytes\n")) == [
        "t.odcs.yaml:15:19: schema[0].properties[0].quality[0].unit: unknown unit 'bytes'; a library metric counts "
        "`rows` or `percent` (`%`)",
    ]


# -- 3. SLA entries ---------------------------------------------------------------------------------------

TWO_FRESHNESS = odcs("""schema:
  - name: t
    properties:
      - name: ts1
        logicalType: timestamp
        physicalType: timestamp
      - name: ts2
        logicalType: timestamp
        physicalType: timestamp
slaProperties:
  - property: freshness
    value: 1
    unit: d
    element: t.ts1
  - property: freshness
    value: 1
    unit: h
    element: t.ts2
  - property: frequency
    value: 1
    unit: d
""")


def test_second_freshness_sla_is_its_own_rule() -> None:
    contract = load_contract(TWO_FRESHNESS)
    assert [(r.name, r.column, r.must_be) for r in contract.check_rules() if r.type == "freshness"] == [
        ("freshness_sla", "ts1", "< 1d"), ("freshness_sla_2", "ts2", "< 1h")]


def test_second_freshness_sla_exports_back_as_written() -> None:
    doc = yaml.safe_load(TWO_FRESHNESS)
    back = contract_to_odcs(odcs_to_contract(copy.deepcopy(doc)))
    assert back["slaProperties"] == doc["slaProperties"]
    assert "quality" not in back["schema"][0]


def test_sla_entry_without_rule_is_a_warning() -> None:
    assert issues(TWO_FRESHNESS) == [
        "t.odcs.yaml:25:5: warning: slaProperties[2]: SLA property `frequency` has no equivalent rule: kept for "
        "export, not evaluated",
    ]


# -- 4. thresholdText / warnOnly never override the visible operator ---------------------------------------

def check_with(operator_line: str, cps: str) -> str:
    return odcs(f"""schema:
  - name: t
    properties:
      - name: a
        logicalType: integer
        physicalType: int
        quality:
          - metric: nullValues
            {operator_line}
            customProperties:
{cps}""")


def test_threshold_text_of_the_same_threshold_is_kept() -> None:
    text = check_with("mustBeLessThan: 5", "              - property: thresholdText\n                value: <5\n")
    assert [r.must_be for r in load_contract(text).quality.rules] == ["<5"]


def test_threshold_text_that_differs_from_the_operator_is_refused() -> None:
    text = check_with("mustBeLessThan: 100", "              - property: thresholdText\n                value: <5\n")
    assert issues(text) == [
        "t.odcs.yaml:18:24: schema[0].properties[0].quality[0].customProperties[0].value: thresholdText '<5' is "
        "not the threshold `mustBeLessThan` shows (< 100); remove it or make the two agree",
    ]


def test_warn_only_false_enforces_the_operator() -> None:
    text = check_with("mustBeLessThan: 5", "              - property: warnOnly\n                value: false\n")
    assert [(r.must_be, r.warn) for r in load_contract(text).quality.rules] == [("< 5", None)]


def test_warn_only_that_is_not_a_boolean_is_refused() -> None:
    text = check_with("mustBeLessThan: 5", "              - property: warnOnly\n                value: 'yes'\n")
    assert issues(text) == [
        "t.odcs.yaml:18:24: schema[0].properties[0].quality[0].customProperties[0].value: warnOnly must be true or "
        "false, got 'yes'",
    ]


# -- 5. allowed values with descriptive keys ---------------------------------------------------------------

def allowed_values(extra: str) -> str:
    return odcs(f"""schema:
  - name: t
    properties:
      - name: s
        logicalType: string
        physicalType: string
        quality:
          - metric: invalidValues
{extra}            arguments:
              validValues: [A, B]
            mustBe: 0
""")


def test_described_allowed_values_stay_a_row_rule() -> None:
    described = allowed_values("            name: only_a_or_b\n            description: only A or B\n"
                               "            dimension: conformity\n            severity: error\n")
    contract = load_contract(described)
    rule = [r for r in contract.check_rules() if r.name == "only_a_or_b"]
    assert [(r.type, r.level, r.column, r.values, r.description, r.dimension, r.severity) for r in rule] == [
        ("allowed_values", "row", "s", ["A", "B"], "only A or B", "validity", "error")]
    plain = load_contract(allowed_values(""))
    assert [(r.name, r.type, r.level) for r in plain.check_rules() if r.target_columns == ["s"]] == [
        ("s_type", "type", "row"), ("s_allowed_values", "allowed_values", "row")]


def test_described_allowed_values_export_back_as_written() -> None:
    doc = yaml.safe_load(allowed_values("            name: only_a_or_b\n            description: only A or B\n"))
    back = contract_to_odcs(odcs_to_contract(copy.deepcopy(doc)))
    assert back["schema"][0]["properties"][0]["quality"] == doc["schema"][0]["properties"][0]["quality"]


# -- 6. items and relationships ----------------------------------------------------------------------------

def test_items_constraints_and_relationships_are_warnings() -> None:
    text = odcs("""schema:
  - name: t
    properties:
      - name: tags
        logicalType: array
        items:
          logicalType: string
          logicalTypeOptions:
            maxLength: 3
      - name: cust
        logicalType: integer
        physicalType: int
        relationships:
          - type: foreignKey
            to: customers.id
""")
    assert issues(text) == [
        "t.odcs.yaml:13:11: warning: schema[0].properties[0].items: `items` logicalTypeOptions of `tags` are not "
        "checked: no rule reads array elements; kept for export",
        "t.odcs.yaml:20:11: warning: schema[0].properties[1].relationships: relationships of `cust` are not "
        "checked: no rule follows them; kept for export",
    ]


# -- 7. ${column} in a schema-level SQL check --------------------------------------------------------------

def test_column_placeholder_in_a_schema_level_sql_check_is_refused() -> None:
    text = odcs("""schema:
  - name: t
    properties:
      - name: a
        logicalType: integer
        physicalType: int
    quality:
      - type: sql
        query: "SELECT COUNT(*) FROM ${table} WHERE ${column} IS NULL"
        mustBeLessThan: 1
""")
    assert issues(text) == [
        "t.odcs.yaml:15:16: schema[0].quality[0].query: `${column}` names no column in a check on the schema "
        "object; move the check to its property or write the column name",
    ]
    with pytest.raises(ContractError) as info:
        load_contract(text)
    assert str(info.value).startswith("<string>:15:16: schema[0].quality[0].query: `${column}` names no column")


# -- 8. threshold numbers and their errors -----------------------------------------------------------------

def test_small_numbers_format_without_exponent() -> None:
    assert [_fmt(0.00001), _fmt(1e-7), _fmt(2.5), _fmt(3.0)] == ["0.00001", "0.0000001", "2.5", "3"]
    text = null_check("            unit: percent\n").replace("mustBeLessThan: 50", "mustBeLessThan: 0.00001")
    assert [r.must_be for r in load_contract(text).quality.rules] == ["< 0.00001%"]


@pytest.mark.parametrize(("operator", "expected"), [
    ("mustBeBetween: [5, 1]", "t.odcs.yaml:15:28: schema[0].properties[0].quality[0].mustBeBetween: threshold "
                              "'between 5 and 1' has its lower bound above its upper bound"),
    ("mustBe: zero", "t.odcs.yaml:15:21: schema[0].properties[0].quality[0].mustBe: threshold value 'zero' is not "
                     "a number"),
])
def test_threshold_errors_point_at_the_operator(operator: str, expected: str) -> None:
    text = odcs(f"""schema:
  - name: t
    properties:
      - name: a
        logicalType: integer
        physicalType: int
        quality:
          - metric: nullValues
            {operator}
""")
    assert issues(text) == [expected]


# -- 9. our customProperties, as a person spells them --------------------------------------------------------

SPELLED = odcs("""schema:
  - name: t
    customProperties:
      - property: Path
        value: /data/t
    properties:
      - name: email
        logicalType: string
        customProperties:
          - property: PII
            value: true
          - property: Masking
            value: redact
      - name: note
        logicalType: string
customProperties:
  - property: on_failure
    value: block_publication
  - property: MinimumValidRatio
    value: 0.95
  - property: businessUnit
    value: sales
""")


def test_our_custom_properties_act_in_any_case_or_separator() -> None:
    """`PII: true` left the column unmasked, and `OnFailure` the gate at its default, with no word."""
    contract = load_contract(SPELLED)
    email = next(f for f in contract.fields if f.name == "email")
    assert (email.pii, email.masking.method if email.masking else None) == (True, "redact")
    assert (contract.quality.on_failure, contract.quality.minimum_valid_ratio) == ("block_publication", 0.95)
    assert contract.dataset.path == "/data/t"
    assert issues(SPELLED) == []  # businessUnit: the user's own, kept for export


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("MinimumValidRatio", "minimumValidRation", "t.odcs.yaml:25:15: customProperties[1].property: custom property "
     "`minimumValidRation` is not one dq-governance reads: did you mean `minimumValidRatio`?"),
    ("Masking", "masknig", "t.odcs.yaml:18:23: schema[0].properties[0].customProperties[1].property: custom property "
     "`masknig` is not one dq-governance reads: did you mean `masking`?"),
    ("Masking", "undeclared_columns", "t.odcs.yaml:18:23: schema[0].properties[0].customProperties[1].property: "
     "custom property `undeclared_columns` is not read here: dq-governance reads `undeclaredColumns` on a schema "
     "object"),
    ("PII", "onFailure", "t.odcs.yaml:16:23: schema[0].properties[0].customProperties[0].property: custom property "
     "`onFailure` is not read here: dq-governance reads `onFailure` on the contract's top level"),
])
def test_a_custom_property_meant_for_us_but_unread_is_refused(old: str, new: str, expected: str) -> None:
    text = SPELLED.replace(f"property: {old}\n", f"property: {new}\n")
    assert issues(text) == [expected]
    with pytest.raises(ContractError, match="custom property"):
        load_contract(text)

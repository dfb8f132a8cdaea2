"""Every contract key acts or is refused (issue 19): service levels, date ranges, aggregates in row rules, any role
name, the `format` a keyed mask needs. Lint and load give the same one-line error; exact positions and messages.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml

from dq_governance.cli import main
from dq_governance.contracts.lint import lint_path
from dq_governance.contracts.load import load_contract
from dq_governance.contracts.model import SPARK_AGGREGATES, Contract, aggregate_function
from dq_governance.contracts.native import contract_to_native
from dq_governance.contracts.odcs import contract_to_odcs, odcs_issues, odcs_to_contract
from dq_governance.errors import ContractError

REPO = Path(__file__).resolve().parent.parent

HEAD = "contract: {name: t, version: 1.0.0}\ndataset: {name: t}\n"


def write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def issues_of(path: Path) -> list[tuple]:
    return [(i.line, i.column, i.severity, i.field, i.message, i.hint) for i in lint_path(path)]


def doc(fields=None, rules=None, **extra) -> dict:
    out = {"contract": {"name": "t", "version": "1.0.0"}, "dataset": {"name": "t"},
           "schema": {"fields": fields if fields is not None else [{"name": "id", "type": "long"}]},
           "quality": {"rules": rules or []}}
    out.update(extra)
    return out


# --------------------------------------------------------------------------- 1. service levels


SEED_SLA = HEAD + "schema:\n  fields:\n    - {name: data_pedido, type: date}\nservice_level:\n  freshness_minutes: 60\n"
FRESHNESS = "freshness needs `freshness_column` (or `freshness.column`) to be evaluated"
FRESHNESS_HINT = "name the date or timestamp column whose newest value the SLA measures"


def test_seed_freshness_minutes_without_a_column_is_a_lint_error_at_its_line(tmp_path, capsys):
    path = write(tmp_path, SEED_SLA)
    assert issues_of(path) == [(7, 22, "error", "service_level.freshness_minutes", FRESHNESS, FRESHNESS_HINT)]
    assert main(["lint", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == f"{path}:7:22: service_level.freshness_minutes: {FRESHNESS} ({FRESHNESS_HINT})\n"
    assert err.strip() == "dqgov lint: 1 file checked, 1 error, 0 warnings"


def test_freshness_without_a_column_is_refused_at_load_time_in_one_line(tmp_path):
    path = write(tmp_path, HEAD + "service_level:\n  freshness: {max_age: 1h}\n")
    with pytest.raises(ContractError) as info:
        load_contract(path)
    assert str(info.value) == f"{path}:4:14: service_level.freshness: {FRESHNESS} ({FRESHNESS_HINT})"
    with_column = load_contract(HEAD + "service_level:\n  freshness_minutes: 60\n  freshness_column: ts\n")
    assert [(r.name, r.column, r.must_be) for r in with_column.rules()] == [("freshness_sla", "ts", "< 60m")]


def test_odcs_freshness_needs_its_element(tmp_path):
    odcs = yaml.safe_load((REPO / "contracts" / "orders.odcs.yaml").read_text())
    odcs["slaProperties"].insert(0, {"property": "freshness", "value": 60, "unit": "min"})
    path = write(tmp_path, yaml.safe_dump(odcs, sort_keys=False), "o.odcs.yaml")
    issues = lint_path(path)
    assert [(i.field, i.message) for i in issues] == [
        ("slaProperties[0]", "freshness needs `element` (table.column), or a `slaDefaultElement`, to be evaluated")]
    assert path.read_text().splitlines()[issues[0].line - 1] == "- property: freshness"
    with pytest.raises(ContractError, match=r"slaProperties\[0\]: freshness needs `element`"):
        load_contract(path)


def test_odcs_freshness_takes_the_default_element_and_writes_it_back_as_it_was():
    odcs = yaml.safe_load((REPO / "contracts" / "orders.odcs.yaml").read_text())
    odcs["slaDefaultElement"] = "curated.orders.data_pedido"
    odcs["slaProperties"].insert(0, {"property": "freshness", "value": 1, "unit": "d"})
    contract = odcs_to_contract(odcs)
    assert (contract.service_level.freshness.max_age, contract.service_level.freshness.column) == ("1d", "data_pedido")
    assert [r.name for r in contract.rules() if r.type == "freshness"] == ["freshness_sla"]
    exported = contract_to_odcs(contract)
    assert exported["slaDefaultElement"] == "curated.orders.data_pedido"
    assert exported["slaProperties"][0] == {"property": "freshness", "value": 1, "unit": "d"}
    assert odcs_issues(exported) == [] and odcs_to_contract(exported) == contract
    # a native contract's freshness exports its column as the element
    native = Contract.model_validate(doc([{"name": "ts", "type": "timestamp"}],
                                         service_level={"freshness": {"max_age": "2h", "column": "ts"}}))
    assert contract_to_odcs(native)["slaProperties"] == [
        {"property": "freshness", "value": 2, "unit": "h", "element": "t.ts"}]


def test_the_example_contracts_have_no_unevaluated_sla():
    for name in ("orders.yaml", "orders.odcs.yaml"):
        assert load_contract(REPO / "contracts" / name).service_level is None, name
    customers = load_contract(REPO / "contracts" / "customers.yaml")
    assert customers.service_level.freshness.column == "atualizado_em"


# --------------------------------------------------------------------------- 2. date and timestamp bounds


def test_date_and_timestamp_bounds_from_iso_text_and_yaml_dates():
    contract = load_contract(HEAD + """schema:
  fields:
    - {name: day, type: date, minimum: "2024-01-01", maximum: 2024-12-31}
    - {name: at, type: timestamp, minimum: "2024-01-01T08:00:00", exclusive_maximum: true, maximum: 2025-01-01}
quality:
  rules:
    - {type: range, column: day, min: "2024-03-01", max_exclusive: true, max: "2024-04-01"}
""")
    rules = {r.name: r for r in contract.rules()}
    assert (rules["day_range"].min, rules["day_range"].max) == (dt.date(2024, 1, 1), dt.date(2024, 12, 31))
    assert (rules["at_range"].min, rules["at_range"].max) == (dt.datetime(2024, 1, 1, 8), dt.date(2025, 1, 1))
    assert rules["at_range"].max_exclusive and rules["day_range_2"].temporal
    assert (rules["day_range_2"].min, rules["day_range_2"].max) == (dt.date(2024, 3, 1), dt.date(2024, 4, 1))
    # native round trip: ISO text back
    native = contract_to_native(contract)
    assert native["schema"]["fields"][0] == {"name": "day", "type": "date", "minimum": "2024-01-01",
                                             "maximum": "2024-12-31"}
    assert Contract.model_validate(yaml.safe_load(yaml.safe_dump(native))) == contract
    # ODCS carries date bounds in logicalTypeOptions as ISO text
    exported = contract_to_odcs(contract)
    props = {p["name"]: p for p in exported["schema"][0]["properties"]}
    assert props["day"]["logicalTypeOptions"] == {"minimum": "2024-01-01", "maximum": "2024-12-31"}
    assert props["at"]["logicalTypeOptions"] == {"minimum": "2024-01-01T08:00:00", "exclusiveMaximum": "2025-01-01"}
    assert odcs_issues(exported) == [] and odcs_to_contract(exported) == contract


BAD_BOUNDS = HEAD + """schema:
  fields:
    - {name: valor, type: "decimal(12,2)", minimum: "2024-01-01"}
    - {name: day, type: date, minimum: 0}
    - {name: d2, type: date, maximum: "01/02/2024"}
    - {name: d3, type: date, maximum: "2024-02-30"}
    - {name: d4, type: date, maximum: "2024-02-01 10:00:00"}
    - {name: note, type: string}
quality:
  rules:
    - {type: range, column: valor, max: "2024-12-31"}
    - {type: range, column: day, min: 5}
    - {type: range, column: day, min: 5, max: "2024-01-01"}
    - {type: range, column: day, min: soon}
    - {type: range, column: note, min: "2024-01-01"}
"""


def test_lint_refuses_bounds_that_do_not_fit_the_field(tmp_path):
    path = write(tmp_path, BAD_BOUNDS)
    assert [(i.line, i.field, i.message) for i in lint_path(path)] == [
        (5, "schema.fields[0].minimum",
         "date bound '2024-01-01' on a `decimal(12,2)` field: only `date` and `timestamp` fields take date bounds"),
        (6, "schema.fields[1].minimum", "a `date` field takes an ISO date bound (e.g. '2024-01-01'), not 0"),
        (7, "schema.fields[2].maximum",
         "a `date` field takes an ISO date bound (e.g. '2024-01-01'), not '01/02/2024'"),
        (8, "schema.fields[3].maximum", "'2024-02-30' is not a valid date: day is out of range for month"),
        (9, "schema.fields[4].maximum",
         "a `date` field takes a date bound (yyyy-MM-dd), not the timestamp '2024-02-01 10:00:00'"),
        (13, "quality.rules[0].max", "range max '2024-12-31' is a date, but `valor` is `decimal(12,2)`: only `date` "
                                     "and `timestamp` fields take date bounds"),
        (14, "quality.rules[1].min", "range min 5 is a number, but `day` is `date`: give an ISO date (e.g. "
                                     "'2024-01-01')"),
        (15, "quality.rules[2]", "range `min` and `max` must both be numbers or both be dates"),
        (15, "quality.rules[2].min", "range min 5 is a number, but `day` is `date`: give an ISO date (e.g. "
                                     "'2024-01-01')"),
        (16, "quality.rules[3].min", "input should be a number or an ISO date, not str 'soon'"),
        (17, "quality.rules[4].min", "range min '2024-01-01' is a date, but `note` is `string`: only `date` and "
                                     "`timestamp` fields take date bounds"),
    ]
    with pytest.raises(ContractError) as info:
        load_contract(path)
    assert str(info.value).startswith(f"{path}:5:53: schema.fields[0].minimum: date bound '2024-01-01' on a")
    assert str(info.value).endswith("[and 10 more problems; run `dqgov lint " + str(path) + "` to list them]")


def test_bounds_out_of_order_are_refused_at_lint_not_at_run_time(tmp_path):
    path = write(tmp_path, HEAD + "schema:\n  fields:\n    - {name: d, type: date, minimum: 2024-02-01, "
                                  "maximum: 2024-01-01}\n    - {name: v, type: long, minimum: 10, maximum: 5}\n")
    assert [(i.line, i.field, i.message) for i in lint_path(path)] == [
        (5, "schema.fields[0].minimum", "minimum 2024-02-01 is above maximum 2024-01-01"),
        (6, "schema.fields[1].minimum", "minimum 10 is above maximum 5"),
    ]


def test_numeric_bounds_still_read_as_before():
    contract = Contract.model_validate(doc([{"name": "v", "type": "double", "minimum": "0", "maximum": 10.5}]))
    rule = contract.rules()[1]
    assert (rule.min, rule.max, rule.temporal) == (0, 10.5, False)


# --------------------------------------------------------------------------- 3. aggregates in row-level SQL


def test_an_aggregate_expression_is_a_lint_error_naming_the_fix(tmp_path):
    path = write(tmp_path, HEAD + """schema:
  fields:
    - {name: id, type: long}
quality:
  rules:
    - type: expression
      name: ids_unique
      expression: "COUNT(DISTINCT id) = COUNT(id)"
    - {type: not_null, column: id, filter: "id > avg(id)"}
""")
    assert issues_of(path) == [
        (10, 19, "error", "quality.rules[0].expression",
         "'COUNT(DISTINCT id) = COUNT(id)' is an aggregate (COUNT): use a `sql` rule for dataset-level conditions",
         'e.g. type: sql, query: "SELECT COUNT(DISTINCT id) = COUNT(id) FROM _validation_df"'),
        (11, 44, "error", "quality.rules[1].filter",
         "filter 'id > avg(id)' is an aggregate (avg): a filter picks rows; use a `sql` rule for dataset-level "
         "conditions", None),
    ]
    with pytest.raises(ContractError) as info:
        load_contract(path)
    assert str(info.value).startswith(f"{path}:10:19: quality.rules[0].expression: 'COUNT(DISTINCT id) = COUNT(id)' "
                                      "is an aggregate (COUNT): use a `sql` rule")


@pytest.mark.parametrize("sql, found", [
    ("COUNT(DISTINCT id) = COUNT(id)", "COUNT"),
    ("sum(x) FILTER (WHERE y > 0) > 10", "sum"),
    ("percentile_cont(0.5) WITHIN GROUP (ORDER BY x) > 1", "percentile_cont"),
    ("abs(x - stddev_samp(x)) < 3", "stddev_samp"),
    ("bool_and(flag)", "bool_and"),
    ("count(*) OVER (PARTITION BY id) = 1", None),  # a window: one value per row
    ("first(x) IGNORE NULLS OVER (ORDER BY ts) IS NOT NULL", None),
    ("status LIKE ANY ('A%', 'B%')", None),
    ("note <> 'count(x) > 1' AND `max(y)` > 0", None),  # literal and quoted identifier
    ("x > 0 -- max(x)", None),
    ("count > 1 AND max_value < min_value", None),  # columns named like functions
    ("aggregate(items, 0, (acc, v) -> acc + v) > 0", None),  # a higher-order function, not an aggregate
])
def test_aggregate_scan(sql, found):
    assert aggregate_function(sql) == found


@pytest.mark.spark
def test_the_aggregate_list_is_sparks(spark):
    registry = spark._jsparkSession.sessionState().functionRegistry()
    ident = spark._jvm.org.apache.spark.sql.catalyst.FunctionIdentifier
    # JavaConverters: in both Scala lines (2.12 for Spark 3.5, 2.13 for 4.0)
    names = {f.funcName() for f in spark._jvm.scala.collection.JavaConverters.seqAsJavaList(registry.listFunction())}
    grouped = {n for n in names if (info := registry.lookupFunction(ident(n))).isDefined()
               and info.get().getGroup() == "agg_funcs"}
    if spark.version.startswith("3."):  # the list is Spark 4.0's, which has every aggregate 3.5 has, and more
        assert grouped < SPARK_AGGREGATES
    else:
        assert SPARK_AGGREGATES == grouped


@pytest.mark.spark
def test_an_aggregate_that_slips_through_is_one_line_naming_the_rule(spark):
    from dq_governance.checks.engine import evaluate
    from dq_governance.contracts.model import ExpressionRule

    contract = Contract.model_validate(doc())
    # built without validation, as a rule from code could be: the engine must still answer in one line
    slipped = ExpressionRule.model_construct(type="expression", name="ids_unique", expression="count(id) = 2")
    contract.quality.rules.append(slipped)
    with pytest.raises(ContractError) as info:
        evaluate(spark.createDataFrame([(1,), (2,)], "id long"), contract)
    assert str(info.value) == ("rule ids_unique: 'count(id) = 2' is an aggregate: use a `sql` rule for dataset-level "
                               "conditions")


# --------------------------------------------------------------------------- 4. roles


ROLES = HEAD + """roles:
  Data Owner: {name: sales-data-team, contact: sales@example.com}
  steward: maria.silva
  engineering: team-x
  Data Scientist: [ana, {name: rui, contact: rui@example.com}]
  consumers: [finance-analytics]
"""


def test_any_role_name_loads_with_its_owner_type(tmp_path):
    path = write(tmp_path, ROLES)
    assert lint_path(path) == []
    roles = load_contract(path).roles
    assert [(role, kind, party.name, party.contact) for role, kind, party in roles.parties()] == [
        ("owner", "TECHNICAL_OWNER", "sales-data-team", "sales@example.com"),
        ("steward", "DATA_STEWARD", "maria.silva", None),
        ("engineering", "ENGINEERING", "team-x", None),
        ("Data Scientist", "DATA_SCIENTIST", "ana", None),
        ("Data Scientist", "DATA_SCIENTIST", "rui", "rui@example.com"),
        ("consumers", "CONSUMER", "finance-analytics", None),
    ]
    assert list(roles.other_roles) == ["engineering", "Data Scientist"]


def test_roles_round_trip_native_and_odcs():
    contract = load_contract(ROLES)
    native = contract_to_native(contract)
    assert native["roles"] == {
        "owner": {"name": "sales-data-team", "contact": "sales@example.com"}, "steward": "maria.silva",
        "consumers": [{"name": "finance-analytics"}], "engineering": "team-x",
        "Data Scientist": ["ana", {"name": "rui", "contact": "rui@example.com"}]}
    assert Contract.model_validate(yaml.safe_load(yaml.safe_dump(native, sort_keys=False))) == contract
    exported = contract_to_odcs(contract)
    assert exported["team"]["members"] == [
        {"username": "sales-data-team", "role": "owner",
         "customProperties": [{"property": "contact", "value": "sales@example.com"}]},
        {"username": "maria.silva", "role": "steward"},
        {"username": "team-x", "role": "engineering"},
        {"username": "ana", "role": "Data Scientist"},
        {"username": "rui", "role": "Data Scientist",
         "customProperties": [{"property": "contact", "value": "rui@example.com"}]},
    ]
    assert exported["roles"] == [{"role": "finance-analytics", "access": "read"}]
    assert odcs_issues(exported) == [] and odcs_to_contract(exported) == contract


def test_odcs_members_of_any_role_become_roles():
    contract = odcs_to_contract(yaml.safe_load((REPO / "contracts" / "full-example.odcs.yaml").read_text()))
    assert [(role, kind, party.name) for role, kind, party in contract.roles.parties()] == [
        ("owner", "TECHNICAL_OWNER", "daustin"),
        ("Data Scientist", "DATA_SCIENTIST", "ceastwood"), ("Data Scientist", "DATA_SCIENTIST", "mhopper"),
        ("consumers", "CONSUMER", "microstrategy_user_opr"), ("consumers", "CONSUMER", "bq_queryman_user_opr"),
        ("consumers", "CONSUMER", "risk_data_access_opr"), ("consumers", "CONSUMER", "bq_unica_user_opr"),
    ]
    assert contract.extensions["odcs"]["team"]["memberExtras"]["Data Scientist/ceastwood"] == {
        "dateIn": "2022-08-02", "dateOut": "2022-10-01", "replacedByUsername": "mhopper"}


def test_two_names_for_one_role_and_near_misses(tmp_path):
    with pytest.raises(ContractError) as info:
        load_contract(HEAD + "roles:\n  owner: a\n  Data Owner: b\n")
    assert str(info.value) == "<string>:4:3: roles: roles `owner` and `Data Owner` name the same role"
    path = write(tmp_path, HEAD + "roles:\n  owner: a\n  stewart: b\n")
    assert issues_of(path) == [(5, 12, "warning", "roles.stewart",
                                "`stewart` is read as a role of its own, not one of owner, steward, consumers",
                                "did you mean `steward`?")]


def test_lineage_ownership_carries_every_role_but_the_consumers():
    from dq_governance.lineage.facets import ownership_facet, owners

    contract = load_contract(ROLES)
    assert owners(contract) == [("team:sales-data-team", "TECHNICAL_OWNER"), ("user:maria.silva", "DATA_STEWARD"),
                                ("team-x", "ENGINEERING"), ("ana", "DATA_SCIENTIST"), ("rui", "DATA_SCIENTIST")]
    facet = ownership_facet(contract)
    assert [(o.name, o.type) for o in facet.owners] == owners(contract)
    orders = load_contract(REPO / "contracts" / "orders.yaml")
    assert owners(orders) == [("team:sales-data-team", "TECHNICAL_OWNER"), ("user:maria.silva", "DATA_STEWARD")]


# --------------------------------------------------------------------------- 6. a keyed mask needs the format


NORMALISATION = HEAD + """schema:
  fields:
    - name: cpf
      pii: true
      masking: hmac
    - {name: nr_cpf, pii: true}
    - {name: e_mail, pii: true, masking: tokenize}
    - {name: telefone, classification: restricted}
    - {name: celular, pii: true, masking: tokenize, format: phone}
    - {name: email_contato, pii: true, masking: {method: partial, domain_only: true}}
    - {name: cnpj, type: long, pii: true}
    - {name: cnpj_fornecedor, pii: true, masking: none}
masking:
  by_classification: {restricted: tokenize}
"""


def test_keyed_masks_without_format_warn_with_the_fix(tmp_path, capsys):
    path = write(tmp_path, NORMALISATION)
    assert [(i.line, i.column, i.severity, i.field, i.message) for i in lint_path(path)] == [
        (5, 7, "warning", "schema.fields[0]", "cpf: masked with hmac but no `format`: `529.982.247-25` and "
                                              "`52998224725` would get different pseudonyms; add `format: cpf`"),
        (8, 7, "warning", "schema.fields[1]", "nr_cpf: masked with hmac but no `format`: `529.982.247-25` and "
                                              "`52998224725` would get different pseudonyms; add `format: cpf`"),
        (9, 7, "warning", "schema.fields[2]", "e_mail: masked with tokenize but no `format`: `Ana@Example.com` and "
                                              "`ana@example.com` would get different pseudonyms; add `format: email`"),
        (10, 7, "warning", "schema.fields[3]", "telefone: masked with tokenize but no `format`: `(11) 98765-4321` "
                                               "and `+55 11 98765-4321` would get different pseudonyms; add "
                                               "`format: phone`"),
    ]
    assert main(["lint", str(path)]) == 0  # warnings print, and lint still passes
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == (f"{path}:5:7: warning: schema.fields[0]: cpf: masked with hmac but no `format`: "
                                   "`529.982.247-25` and `52998224725` would get different pseudonyms; add "
                                   "`format: cpf`")
    assert err.strip() == "dqgov lint: 1 file checked, 0 errors, 4 warnings"
    fixed = NORMALISATION.replace("      masking: hmac\n", "      masking: hmac\n      format: cpf\n")
    assert [i.field for i in lint_path(write(tmp_path, fixed))] == [
        "schema.fields[1]", "schema.fields[2]", "schema.fields[3]"]


def test_the_warning_is_placed_on_the_odcs_property(tmp_path):
    odcs = yaml.safe_load((REPO / "contracts" / "orders.odcs.yaml").read_text())
    email = odcs["schema"][0]["properties"][5]
    del email["logicalTypeOptions"]  # no `format: email` any more
    path = write(tmp_path, yaml.safe_dump(odcs, sort_keys=False), "o.odcs.yaml")
    (issue,) = lint_path(path)
    assert (issue.severity, issue.field) == ("warning", "schema[0].properties[5]")
    assert issue.message.startswith("email: masked with hmac but no `format`: `Ana@Example.com`")
    lines = path.read_text().splitlines()
    assert lines[issue.line - 1].strip() == "- name: email"


# --------------------------------------------------------------------------- 6. options that would do nothing

FIELDS = ("schema:\n  fields:\n    - {name: id, type: long}\n    - {name: code, type: string}\n"
          "    - {name: ts, type: timestamp}\n")

def _rule(text: str) -> str:
    return f"quality:\n  rules:\n    - {text}\n"


#: (the document's last lines, lint's (line, column, field, message)); each is also the load-time ContractError
DOING_NOTHING = [
    (_rule("{type: not_null, column: code, severity: warn, action: quarantine}"),
     (10, 62, "quality.rules[0].action", "`action: quarantine` has no effect on a `severity: warn` rule, which "
                                        "never invalidates a row nor blocks (use `severity: error`)")),
    (_rule("{type: row_count, min: 1, action: drop}"),
     (10, 41, "quality.rules[0].action", "`action: drop` routes rows, and a row_count rule measures the dataset "
                                        "(use `action: fail` or `action: warn`)")),
    (_rule("{type: sql, query: \"SELECT count(*) = 1 FROM _validation_df\", filter: \"code = 'x'\"}"),
     (10, 77, "quality.rules[0].filter", "`filter` has no effect on a sql rule (put the condition in the query's "
                                        "WHERE)")),
    (_rule("{type: format, column: code, format: email, date_format: yyyy}"),
     (10, 64, "quality.rules[0].date_format", "`date_format` has no effect with format email: it parses dates and "
                                             "timestamps")),
    (_rule("{type: length, column: code}"),
     (10, 7, "quality.rules[0]", "length needs `min` or `max`")),
    (_rule("{type: length, column: code, min: 5, max: 2}"),
     (10, 41, "quality.rules[0].min", "length `min` 5 is above `max` 2: nothing can pass")),
    (_rule("{type: row_count}"),
     (10, 7, "quality.rules[0]", "row_count needs `min` or `max` (or `must_be` or `warn`)")),
    (_rule("{type: volume, history_runs: 3, min_history: 10}"),
     (10, 52, "quality.rules[0].min_history", "min_history 10 is above history_runs 3: the rule would never have "
                                             "enough history")),
    (_rule("{type: schema}"),
     (10, 7, "quality.rules[0]", "schema needs `required_columns` or `column_types`")),
    (_rule("{type: avg, columns: [id, code], must_be: '> 0'}"),
     (10, 28, "quality.rules[0].columns", "avg takes exactly one column, got 2")),
    (_rule("{type: reconcile, source: {table: src.t, format: csv}}"),
     (10, 56, "quality.rules[0].source.format", "`format` has no effect with `table`: the table is read as the "
                                               "catalog has it (give either `table`, or `path` with its `format`)")),
    (_rule("{type: reconcile, source: {path: s.csv, column: id}}"),
     (10, 55, "quality.rules[0].source.column", "`source.column` has no effect on a reconcile rule (name the "
                                               "columns to compare in `sum_columns`)")),
    ("service_level:\n  volume: {min_rows: 100, max_rows: 5}\n",
     (9, 22, "service_level.volume.min_rows", "volume `min_rows` 100 is above `max_rows` 5: nothing can pass")),
]


@pytest.mark.parametrize(("tail", "expected"), DOING_NOTHING, ids=[e[1][2] + ":" + e[1][3][:20] for e in DOING_NOTHING])
def test_an_option_that_would_do_nothing_is_refused_in_one_line(tmp_path, tail, expected):
    path = write(tmp_path, HEAD + FIELDS + tail)
    line, column, field, message = expected
    assert [(i.line, i.column, i.field, i.message if not i.hint else f"{i.message} ({i.hint})")
            for i in lint_path(path)] == [expected]
    with pytest.raises(ContractError) as info:
        load_contract(path)
    assert str(info.value) == f"{path}:{line}:{column}: {field}: {message}"


FIELD_OPTIONS = [
    ({"name": "code", "type": "string", "date_format": "yyyy"},
     "schema.fields[0].date_format", "`date_format` has no effect on a string field: it parses dates and "
                                     "timestamps (declare `type: date` or `format: date`)"),
    ({"name": "code", "type": "string", "masking": {"method": "hmac", "token": "X"}},
     "schema.fields[0].masking.token", "`token` has no effect with method hmac (it is an option of redact)"),
    ({"name": "v", "type": "double", "masking": {"method": "generalize", "bucket": 10, "granularity": "year"}},
     "schema.fields[0].masking.bucket", "generalize takes one of `granularity`, `bucket`, `prefix_length`; got "
                                        "`granularity`, `bucket`"),
    ({"name": "zip", "type": "string", "masking": "generalize"},
     "schema.fields[0].masking", "generalize on a string field needs `bucket` or `prefix_length` (e.g. masking: "
                                 "{method: generalize, prefix_length: 5})"),
    ({"name": "v", "type": "double", "exclusive_minimum": True},
     "schema.fields[0].exclusive_minimum", "`exclusive_minimum` has no effect without `minimum`"),
    ({"name": "v", "type": "double", "masking": {"method": "generalize", "bucket": 0}},
     "schema.fields[0].masking.bucket", "input should be greater than 0"),
]


@pytest.mark.parametrize(("field", "where", "message"), FIELD_OPTIONS, ids=[f[1] for f in FIELD_OPTIONS])
def test_a_field_option_that_would_do_nothing_is_refused(tmp_path, field, where, message):
    path = write(tmp_path, yaml.safe_dump(doc(fields=[field]), sort_keys=False))
    assert [(i.field, i.message if not i.hint else f"{i.message} ({i.hint})") for i in lint_path(path)] == [
        (where, message)]


def test_options_that_act_still_load():
    loaded = Contract.model_validate(doc(fields=[
        {"name": "d", "type": "string", "format": "date", "date_format": "dd/MM/yyyy"},
        {"name": "born", "type": "string", "date_format": "dd/MM/yyyy", "masking": {"method": "generalize",
                                                                                   "granularity": "year"}},
        {"name": "ts", "type": "timestamp", "masking": "generalize"},
        {"name": "v", "type": "double", "minimum": 0, "exclusive_minimum": True},
    ], rules=[
        {"type": "not_null", "column": "d", "severity": "warn", "action": "warn"},
        {"type": "row_count", "min": 1, "action": "fail"},
        {"type": "row_count", "must_be": ">= 1"},
        {"type": "invalid_count", "column": "d", "valid_format": "date", "date_format": "dd/MM/yyyy", "must_be": "= 0"},
        {"type": "reconcile", "source": {"path": "s.csv", "format": "csv"}, "sum_columns": ["v"]},
        {"type": "expression", "expression": "v >= 0", "filter": "d IS NOT NULL"},
    ], dataset={"name": "t", "format": "orc"}))
    assert len(loaded.quality.rules) == 6


def test_odcs_content_nothing_checks_is_a_warning_on_its_node(tmp_path):
    odcs = yaml.safe_load((REPO / "contracts" / "orders.odcs.yaml").read_text())
    props = odcs["schema"][0]["properties"]
    props[0].setdefault("logicalTypeOptions", {})["multipleOf"] = 5
    props[1]["quality"] = [{"metric": "invalidValues", "arguments": {"validValues": ["A"], "pattern": "^A$"},
                            "mustBe": 0}, {"type": "text", "description": "prose is for readers"}]
    odcs["schema"].append({"name": "order_lines", "physicalType": "table",
                           "properties": [{"name": "line_id", "logicalType": "integer"}]})
    path = write(tmp_path, yaml.safe_dump(odcs, sort_keys=False), "o.odcs.yaml")
    found = [(i.severity, i.field, i.message) for i in lint_path(path)]
    assert found == [
        ("warning", "schema[0].properties[0].logicalTypeOptions.multipleOf",
         f"logicalTypeOptions `multipleOf` of `{props[0]['name']}` is not checked: no rule measures it; kept for "
         "export"),
        ("warning", "schema[0].properties[1].quality[0]", "check `invalidValues` has no equivalent rule: kept for "
                                                          "export, not evaluated"),
        ("warning", "schema[1]", "schema object `order_lines` is not checked: a contract checks one dataset "
                                 f"(`{odcs['schema'][0]['name']}`); kept for export"),
    ]
    lines = path.read_text().splitlines()
    assert [lines[i.line - 1].strip() for i in lint_path(path)][-1] == "- name: order_lines"


def test_odcs_pii_custom_property_reads_as_a_boolean():
    odcs = yaml.safe_load((REPO / "contracts" / "orders.odcs.yaml").read_text())
    prop = odcs["schema"][0]["properties"][1]
    prop["customProperties"] = [c for c in prop.get("customProperties") or [] if c["property"] != "pii"] + [
        {"property": "pii", "value": "false"}]
    assert prop["name"] not in odcs_to_contract(odcs).pii_columns()
    prop["customProperties"][-1]["value"] = "maybe"
    with pytest.raises(Exception, match="pii"):
        odcs_to_contract(odcs)


def test_rule_types_name_spark_types_or_lint_warns(tmp_path):
    path = write(tmp_path, HEAD + FIELDS + "quality:\n  rules:\n    - {type: type, column: code, data_type: integr}\n"
                                          "    - {type: schema, column_types: {code: lnog}}\n")
    assert [(i.severity, i.field, i.message, i.hint) for i in lint_path(path)] == [
        ("warning", "quality.rules[0].data_type", "`integr` is not a Spark SQL type string", "did you mean `integer`?"),
        ("warning", "quality.rules[1].column_types.code", "`lnog` is not a Spark SQL type string",
         "did you mean `long`?"),
    ]


def test_dataset_format_is_one_the_reader_has():
    from typing import get_args

    from dq_governance.cli.inputs import INPUT_FORMATS
    from dq_governance.contracts.model import DatasetFormat

    assert set(get_args(DatasetFormat)) == set(INPUT_FORMATS)
    with pytest.raises(Exception, match="format"):
        Contract.model_validate(doc(dataset={"name": "t", "format": "csvv"}))


def test_a_bad_odcs_custom_property_is_placed_on_its_value(tmp_path):
    odcs = yaml.safe_load((REPO / "contracts" / "orders.odcs.yaml").read_text())
    odcs["customProperties"] = [c for c in odcs.get("customProperties") or [] if c["property"] != "onFailure"] + [
        {"property": "onFailure", "value": "explode"}]
    path = write(tmp_path, yaml.safe_dump(odcs, sort_keys=False), "o.odcs.yaml")
    (issue,) = lint_path(path)
    index = len(odcs["customProperties"]) - 1
    assert (issue.field, issue.message) == (
        f"customProperties[{index}].value",
        "input should be 'fail', 'block_publication', 'warn', 'skip' or 'quarantine'")
    assert path.read_text().splitlines()[issue.line - 1].strip() == "value: explode"
    with pytest.raises(ContractError) as info:
        load_contract(path)
    assert str(info.value) == f"{path}:{issue.line}:{issue.column}: {issue.field}: {issue.message}"


NESTED = HEAD + """schema:
  fields:
    - name: cliente
      type: struct<email:string,doc:struct<cpf:string>>
      fields:
        - name: emial
          required: true
        - name: doc
          fields:
            - name: cfp
"""


def test_a_structs_fields_are_rules_and_a_field_its_type_lacks_is_refused(tmp_path, capsys):
    """A nested field's shorthands act (rules on its dotted path), so a nested name its struct's declared type does
    not have is refused at its line, by lint and at load, with the closest member; a nested struct that declares no
    type is checked against the member type its parent gives it."""
    path = write(tmp_path, NESTED)
    emial = "struct cliente has no field 'emial' (its type declares email, doc)"
    cfp = "struct cliente.doc has no field 'cfp' (its type declares cpf)"
    assert issues_of(path) == [
        (8, 17, "error", "schema.fields[0].fields[0].name", emial, "did you mean `email`?"),
        (12, 21, "error", "schema.fields[0].fields[1].fields[0].name", cfp, "did you mean `cpf`?")]
    assert main(["lint", str(path)]) == 2
    assert capsys.readouterr().out.splitlines()[0] == (
        f"{path}:8:17: schema.fields[0].fields[0].name: {emial} (did you mean `email`?)")
    with pytest.raises(ContractError) as info:
        load_contract(path)
    assert str(info.value).startswith(f"{path}:8:17: schema.fields[0].fields[0].name: {emial} (did you mean")
    fixed = load_contract(NESTED.replace("emial", "email").replace("cfp", "cpf"))
    assert [(r.name, r.type, r.column) for r in fixed.rules()] == [
        ("cliente_type", "type", "cliente"), ("cliente.email_not_null", "not_null", "cliente.email")]

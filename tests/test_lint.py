"""`dqgov lint` and positioned contract loading: exact line:column and field path per error kind.

Every file in tests/contracts_broken/ is broken in one known way. No Spark.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dq_governance.cli import main
from dq_governance.contracts.lint import lint_path
from dq_governance.contracts.load import check_document, detect_format, load_contract, load_contract_with_source
from dq_governance.contracts.source import parse_text
from dq_governance.errors import ContractError

HERE = Path(__file__).resolve().parent
BROKEN = HERE / "contracts_broken"
REPO = HERE.parent
NOT_A_CONTRACT = (
    "not a data contract (found {}): expected a native contract (`contract:`, `dataset:`, `schema:`), an ODCS v3 "
    "document (`apiVersion:`, `kind: DataContract`), a DQX checks list or a `validations` block"
)

# file -> [(line, column, field path, message, hint)]
EXPECTED = {
    "unknown_key.yaml": [(14, 7, "schema.fields[1].alowed_values", "unknown key `alowed_values`",
                          "did you mean `allowed_values`?")],
    "wrong_type.yaml": [(14, 16, "schema.fields[1].minimum", "input should be a number, not str 'zero'", None)],
    "wrong_type.json": [(4, 68, "schema.fields[0].required",
                         "input should be a valid boolean, unable to interpret input", None)],
    "invalid_regex.yaml": [(14, 16, "schema.fields[1].pattern",
                            "invalid regex '^SKU-[0-9{4}$': unterminated character set at position 5", None)],
    "bad_threshold.yaml": [(16, 16, "quality.rules[0].must_be",
                            "invalid threshold 'less than 1%'; expected e.g. '= 0', '< 1%', '>= 10', "
                            "'between 10 and 100' or '< 1d'", None)],
    "duplicate_field.yaml": [(14, 13, "schema.fields[2].name", "duplicate field name 'id'", None)],
    # a float would round it silently, and a decimal(20,2) value of .89 would pass `maximum`
    "inexact_number.yaml": [(14, 16, "schema.fields[1].maximum", "12345678901234567.88 is not exact as a number: it "
                             "reads as 1.2345678901234568e+16, the nearest 64-bit float",
                             "numbers hold about 15 significant digits; write one that fits")],
    "unique_missing_column.yaml": [(17, 21, "quality.rules[0].columns[1]", "unique rule names unknown column 'stauts'",
                                    "did you mean `status`?")],
    "sql_not_select.yaml": [(15, 14, "quality.rules[0].query", "query must be a SELECT over `_validation_df`", None)],
    # A missing key points at the mapping that lacks it: a list item's first key, or the section's key.
    "missing_required.yaml": [(13, 7, "quality.rules[0].column", "missing required key `column`", None)],
    "missing_section.yaml": [(2, 1, "contract.version", "missing required key `version`", None)],
    "bad_version.yaml": [(4, 12, "contract.version",
                          "version '1.0' is not semantic (MAJOR.MINOR.PATCH, e.g. '1.0.0')", None)],
    "unknown_rule_type.yaml": [(14, 13, "quality.rules[0].type", "unknown rule type `not_nul`",
                                "did you mean `not_null`?")],
    "duplicate_key.yaml": [(7, 3, "dataset.name", "duplicate key `name` (first defined on line 6)", None)],
    "yaml_syntax.yaml": [(4, 11, "", "invalid YAML: mapping values are not allowed here", None)],
    "empty.yaml": [(1, 1, "", "empty document, not a contract", None)],
    "list_of_numbers.yaml": [(2, 1, "", NOT_A_CONTRACT.format("a list"), None)],
    "random_mapping.yaml": [(2, 1, "", NOT_A_CONTRACT.format("a mapping"), None)],
    # ODCS files are validated against the official JSON Schema, positioned the same way.
    "odcs_unknown_key.odcs.yaml": [(14, 9, "schema[0].properties[0].requird", "unknown key `requird`",
                                    "did you mean `required`?")],
    "odcs_missing_status.odcs.yaml": [(2, 1, "status", "'status' is a required property", None)],
}


def test_every_broken_file_has_an_expectation():
    assert sorted(p.name for p in BROKEN.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_contract_exact_position(name):
    issues = lint_path(BROKEN / name)
    assert [(i.line, i.column, i.field, i.message, i.hint) for i in issues] == EXPECTED[name]
    assert all(i.severity == "error" for i in issues)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_load_contract_raises_one_line_error(name):
    line, column, field, message, hint = EXPECTED[name][0]
    path = BROKEN / name
    with pytest.raises(ContractError) as info:
        load_contract(path)
    expected = f"{path}:{line}:{column}: " + (f"{field}: " if field else "") + message
    expected += f" ({hint})" if hint else ""
    assert str(info.value) == expected
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cli_exit_2_and_one_line_per_problem(name, capsys):
    code = main(["lint", str(BROKEN / name)])
    out, err = capsys.readouterr()
    assert code == 2
    line, column, field, message, hint = EXPECTED[name][0]
    assert out.splitlines() == [str(i) for i in lint_path(BROKEN / name)]
    assert out.startswith(f"{BROKEN / name}:{line}:{column}: ")
    assert "Traceback" not in out + err
    assert err.strip() == "dqgov lint: 1 file checked, 1 error, 0 warnings"


def test_cli_lints_a_directory(capsys):
    code = main(["lint", str(BROKEN)])
    out, err = capsys.readouterr()
    assert code == 2
    assert len(out.splitlines()) == len(EXPECTED)
    assert err.strip() == f"dqgov lint: {len(EXPECTED)} files checked, {len(EXPECTED)} errors, 0 warnings"


def test_cli_missing_path_exit_2(capsys, tmp_path):
    code = main(["lint", str(tmp_path / "nope.yaml")])
    out, err = capsys.readouterr()
    assert code == 2
    assert out.strip() == f"{tmp_path / 'nope.yaml'}: no such file or directory"


def test_example_contracts_lint_clean(capsys):
    native = sorted(str(p) for p in (REPO / "contracts").iterdir() if p.suffix == ".yaml"
                    and "apiVersion" not in p.read_text())
    assert len(native) >= 3
    assert main(["lint", *native]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == f"dqgov lint: {len(native)} files checked, 0 errors, 0 warnings"


def test_all_of_contracts_dir_lints_clean(capsys):
    """`dqgov lint contracts/*`, ODCS examples included: ODCS's full example has a second schema object,
    relationships and SLA properties no rule evaluates, all kept for export but not checked, and lint says so."""
    files = sorted(str(p) for p in (REPO / "contracts").iterdir() if p.is_file())
    code = main(["lint", *files])
    out, _ = capsys.readouterr()
    full = REPO / "contracts" / "full-example.odcs.yaml"
    assert (code, out) == (0, "".join(f"{full}:{line}\n" for line in (
        "28:3: warning: servers: servers are not read: a run reads the dataset from its caller's input or the schema "
        "object's `path` custom property; kept for export",
        "52:7: warning: schema[0].relationships: relationships of `tbl` are not checked: no rule follows them; "
        "kept for export",
        "108:11: warning: schema[0].properties[1].relationships: relationships of `rcvr_id` are not checked: no rule "
        "follows them; kept for export",
        "170:5: warning: schema[1]: schema object `receivers` is not checked: a contract checks one dataset (`tbl`); "
        "kept for export",
        *(f"{at}: warning: slaProperties[{i}]: SLA property `{name}` has no equivalent rule: kept for export, not "
          "evaluated" for at, i, name in (("274:5", 1, "generalAvailability"), ("276:5", 2, "endOfSupport"),
                                          ("278:5", 3, "endOfLife"), ("284:5", 5, "frequency"),
                                          ("289:5", 6, "timeOfAvailability"), ("293:5", 7, "timeOfAvailability"))),
    )))


ALL_AT_ONCE = """\
contract:
  name: many
  version: 1.0.0
dataset:
  name: many
schema:
  fields:
    - name: a
      type: long
      minimum: abc
      masking: hmax
    - name: a
qualty:
  rules: []
quality:
  on_failure: explode
  rules:
    - column: a
    - type: range
    - type: unique
      columns: [a, zz]
    - type: freshness
      column: a
      must_be: "< 1 day"
roles:
  steward: {nam: x}
"""


def test_lint_collects_every_problem(tmp_path):
    path = tmp_path / "many.yaml"
    path.write_text(ALL_AT_ONCE)
    issues = lint_path(path)
    assert [(i.line, i.column, i.field, i.message, i.hint) for i in issues] == [
        (10, 16, "schema.fields[0].minimum", "input should be a number, not str 'abc'", None),
        (11, 16, "schema.fields[0].masking",
         "input should be 'hmac', 'partial', 'redact', 'null', 'generalize', 'tokenize' or 'none'",
         "did you mean `hmac`?"),
        (12, 13, "schema.fields[1].name", "duplicate field name 'a'", None),
        (13, 1, "qualty", "unknown key `qualty`", "did you mean `quality`?"),
        (16, 15, "quality.on_failure",
         "input should be 'fail', 'block_publication', 'warn', 'skip' or 'quarantine'", None),
        (18, 7, "quality.rules[0].type", "missing required key `type`", "a rule needs `type`, e.g. `not_null`"),
        (19, 7, "quality.rules[1].column", "missing required key `column`", None),
        (21, 20, "quality.rules[2].columns[1]", "unique rule names unknown column 'zz'", None),
        (24, 16, "quality.rules[3].must_be",
         "invalid threshold '< 1 day'; expected e.g. '= 0', '< 1%', '>= 10', 'between 10 and 100' or '< 1d'", None),
        (26, 3, "roles.steward.name", "missing required key `name`", None),
        (26, 13, "roles.steward.nam", "unknown key `nam`", "did you mean `name`?"),
    ]
    assert str(issues[3]) == f"{path}:13:1: qualty: unknown key `qualty` (did you mean `quality`?)"


def test_load_contract_error_counts_the_rest(tmp_path):
    path = tmp_path / "many.yaml"
    path.write_text(ALL_AT_ONCE)
    with pytest.raises(ContractError) as info:
        load_contract(path)
    assert str(info.value) == (
        f"{path}:10:16: schema.fields[0].minimum: input should be a number, not str 'abc' "
        f"[and 10 more problems; run `dqgov lint {path}` to list them]"
    )


def test_positions_of_flow_and_block_nodes():
    doc = parse_text("a:\n  b: [1, {c: x}]\n  'd': \"e\"\n", "t.yaml")
    assert doc.values[("a",)] == (2, 3)
    assert doc.values[("a", "b")] == (2, 6)
    assert doc.values[("a", "b", 1)] == (2, 10)
    assert doc.keys[("a", "b", 1, "c")] == (2, 11)
    assert doc.values[("a", "b", 1, "c")] == (2, 14)
    assert (doc.keys[("a", "d")], doc.values[("a", "d")]) == ((3, 3), (3, 8))
    assert doc.position(("a", "b", 1, "missing", 4)) == (2, 10)


def test_load_contract_with_source_native(repo):
    contract, source = load_contract_with_source(repo / "contracts" / "orders.yaml")
    assert contract.name == "orders"
    assert (source.format, source.standard) == ("native", "native")
    assert source.location == (repo / "contracts" / "orders.yaml").resolve().as_uri()


def test_detect_format():
    assert detect_format({"contract": {}}) == "native"
    assert detect_format({"apiVersion": "v3.1.0", "kind": "DataContract", "id": "x", "version": "1.0.0",
                          "status": "active", "schema": []}) == "odcs"
    for not_a_contract in (None, [1, 2], {"hello": "world"}, "text", 3):
        with pytest.raises(ContractError):
            detect_format(not_a_contract)


def test_check_document_keeps_a_valid_contract():
    result = check_document(parse_text("contract: {name: t, version: 1.0.0}\ndataset: {name: t}\n", "t.yaml"))
    assert result.issues == [] and result.contract is not None and result.contract.name == "t"


def test_lint_does_not_import_spark():
    code = (
        "import sys\n"
        "from dq_governance.cli import main\n"
        f"assert main(['lint', {str(REPO / 'contracts' / 'orders.yaml')!r}]) == 0\n"
        f"assert main(['lint', {str(BROKEN)!r}]) == 2\n"
        "from dq_governance.contracts.load import load_contract\n"
        f"load_contract({str(REPO / 'contracts' / 'customers.yaml')!r})\n"
        "assert 'pyspark' not in sys.modules, 'pyspark was imported'\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("ok")


def test_unknown_spark_type_is_a_warning(tmp_path, capsys):
    path = tmp_path / "types.yaml"
    path.write_text(
        "contract: {name: t, version: 1.0.0}\ndataset: {name: t}\nschema:\n  fields:\n"
        "    - {name: a, type: lnog}\n"
        "    - {name: b, type: \"struct<x:int>\", fields: [{name: x, type: integr}]}\n"
    )
    assert main(["lint", str(path)]) == 0  # warnings do not fail lint
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"{path}:5:23: warning: schema.fields[0].type: `lnog` is not a Spark SQL type string (did you mean `long`?)",
        f"{path}:6:65: warning: schema.fields[1].fields[0].type: `integr` is not a Spark SQL type string "
        "(did you mean `integer`?)",
    ]
    assert err.strip() == "dqgov lint: 1 file checked, 0 errors, 2 warnings"
    assert load_contract(path).field("b.x").type == "integr"


def test_a_varchar_inside_a_struct_type_is_a_warning_and_refused_at_run_time(tmp_path, capsys, spark):
    import dq_governance as dq
    from dq_governance.errors import ContractError

    path = tmp_path / "types.yaml"
    path.write_text("contract: {name: t, version: 1.0.0}\ndataset: {name: t}\nschema:\n  fields:\n"
                    "    - {name: b, type: \"struct<x:varchar(3)>\"}\n    - {name: c, type: varchar(3)}\n")
    assert main(["lint", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{path}:5:23: warning: schema.fields[0].type: `struct<x:varchar(3)>`: char(n) and varchar(n) are checked "
        "only as a field's own type; declare the member as a field (`fields`) with that type"]
    frame = spark.sql("select named_struct('x', 'abcd') as b, 'abc' as c")
    refused = r"^schema.fields.b.type: type 'struct<x:varchar\(3\)>': char\(n\) and varchar\(n\) are checked"
    with pytest.raises(ContractError, match=refused):
        dq.check(frame, str(path))


def test_odcs_contract_loads_with_its_standard(repo):
    odcs, source = load_contract_with_source(repo / "contracts" / "orders.odcs.yaml")
    native = load_contract(repo / "contracts" / "orders.yaml")
    assert (source.format, source.standard) == ("odcs", "odcs")
    assert [r.name for r in odcs.rules()] == [r.name for r in native.rules()]


DQX = """\
- criticality: warn
  check:
    function: is_not_null
    arguments: {column: id}
- check:
    function: is_valid_ipv6_address
    arguments: {column: ip}
- check:
    function: compare_datasets
    arguments: {columns: [id], ref_columns: [id], ref_table: main.crm.snapshot}
"""


def test_dqx_unmapped_functions_are_positioned_warnings(tmp_path, capsys):
    path = tmp_path / "checks.yaml"
    path.write_text(DQX)
    assert main(["lint", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"{path}:6:15: warning: [1].check.function: DQX function `is_valid_ipv6_address` has no equivalent rule; "
        "not imported",
        f"{path}:9:15: warning: [2].check.function: DQX function `compare_datasets` has no equivalent rule; "
        "not imported",
    ]
    assert err.strip() == "dqgov lint: 1 file checked, 0 errors, 2 warnings"
    contract, source = load_contract_with_source(path)
    assert (source.format, source.standard, contract.name) == ("dqx", "native", "checks")
    assert [r.name for r in contract.rules()] == ["id_not_null"]


def test_seed_validations_errors_point_into_the_block(tmp_path):
    path = tmp_path / "pipeline.json"
    path.write_text(
        '{\n  "validations": {\n    "rules": [\n      {"type": "row_count", "min": 1},\n'
        '      {"type": "avg", "column": "amount", "must_be": "about 10"}\n    ]\n  }\n}\n'
    )
    issues = lint_path(path)
    assert [(i.line, i.column, i.field) for i in issues] == [(5, 54, "validations.rules[1].must_be")]
    assert issues[0].message.startswith("invalid threshold 'about 10'")
    path.write_text('{"validations": {"rules": [{"type": "not_null", "columns": ["id"]}]}}')
    contract, source = load_contract_with_source(path)
    assert (source.format, contract.name, [r.name for r in contract.rules()]) == ("seed", "pipeline", ["id_not_null"])


CATALOG_TYPO = """contract: {name: events, version: 1.0.0}
dataset:
  name: curated.events
  catalog:
    datahub_enviroment: PROD
schema:
  fields:
    - {name: id, type: long}
"""


def test_unknown_catalog_hint_is_refused_at_lint_and_load(tmp_path, capsys):
    path = tmp_path / "events.yaml"
    path.write_text(CATALOG_TYPO, encoding="utf-8")
    assert main(["lint", str(path)]) == 2
    assert capsys.readouterr().out == (
        f"{path}:5:25: dataset.catalog.datahub_enviroment: unknown catalog hint `datahub_enviroment` "
        "(did you mean `datahub_env`?)\n")
    with pytest.raises(ContractError, match="dataset.catalog.datahub_enviroment: unknown catalog hint"):
        load_contract(path)


def test_lint_checks_the_project_config_of_the_current_directory(tmp_path, capsys, monkeypatch):
    (tmp_path / ".dqgov").mkdir()
    (tmp_path / ".dqgov" / "config.yaml").write_text("openmetadata:\n  servce: lakehouse\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["lint", str(REPO / "contracts" / "sales.yaml")]) == 2
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        f"{tmp_path / '.dqgov' / 'config.yaml'}:2:3: openmetadata.servce: unknown key `servce` (did you mean `service`?)"]
    assert "2 files checked, 1 error" in captured.err
    (tmp_path / ".dqgov" / "config.yaml").write_text("openmetadata:\n  service: lakehouse\n", encoding="utf-8")
    assert main(["lint", str(REPO / "contracts" / "sales.yaml")]) == 0


SEED_TWO_PROBLEMS = """{
  "validations": {
    "rules": [{"type": "filter", "condition": "id IS NOT NULL"}, {"type": "not_null", "columns": ["id"]}]
  },
  "output": {"format": "delta", "path": "analytics.orders", "mode": "merge", "options": {"merge_keyz": ["id"]}}
}
"""

DQX_RULES = """rules:
  - name: id_not_null
    expression: "customer_id IS NOT NULL"
  - name: id_unique
    expression: "COUNT(DISTINCT customer_id) = COUNT(customer_id)"
"""


def test_seed_config_lint_lists_every_problem(tmp_path, capsys):
    path = tmp_path / "pipeline.json"
    path.write_text(SEED_TWO_PROBLEMS, encoding="utf-8")
    assert main(["lint", str(path)]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 2, lines
    assert any("validations.rules[0]" in line and "filter" in line for line in lines), lines
    assert any("output.options.merge_keyz" in line for line in lines), lines


def test_dqx_rules_file_lints_with_its_conversions_as_warnings(tmp_path, capsys):
    path = tmp_path / "customers_rules.yaml"
    path.write_text(DQX_RULES, encoding="utf-8")
    assert main(["lint", str(path)]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.out.splitlines() if ": warning: " in line]
    assert warnings == [f"{path}:5:17: warning: rules[1].expression: id_unique: aggregate expression (COUNT) cannot be "
                        "a row rule: imported as a sql rule over _validation_df, one verdict for the dataset (no row "
                        "is quarantined for it)"], captured.out
    assert "0 errors, 1 warning" in captured.err

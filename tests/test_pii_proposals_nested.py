"""scan-pii proposals for fields inside structs: the patch and the in-place edit put them under their struct."""

from __future__ import annotations

import pytest
import yaml

from dq_governance.contracts.model import Contract
from dq_governance.errors import ContractError
from dq_governance.masking.detect import Finding
from dq_governance.masking.proposals import patch_yaml, propose, undeclared, write_proposals

HEAD = """contract:
  name: people
  version: "1.0.0"
dataset:
  name: people
  path: people.json
schema:
"""
#: the first entries of FIELDS, up to the line the in-place edit first adds to
FIRST = """    - name: id
      type: long
    - name: cliente
      type: struct<nome:string,mail:string,doc:struct<cpf:string>>
      fields:
        - name: nome   # the author's comment
"""
FIELDS = "  fields:\n" + FIRST + "    - name: loja\n      type: struct<mail:string>\n"
TYPES = {"id": "bigint", "cliente": "struct<nome:string,mail:string,doc:struct<cpf:string>>",
         "cliente.nome": "string", "cliente.mail": "string", "cliente.doc": "struct<cpf:string>",
         "cliente.doc.cpf": "string", "loja": "struct<mail:string>", "loja.mail": "string",
         "extra": "struct<tel:string,mail:string>", "extra.tel": "string", "extra.mail": "string"}


def _finding(column: str, pii_type: str, rate: float | None = 1.0) -> Finding:
    return Finding(column, pii_type, 1.0, rate, 10, True, tuple(column.split(".")))


FINDINGS = [_finding("cliente.nome", "PERSON", None), _finding("cliente.mail", "EMAIL_ADDRESS"),
            _finding("cliente.doc.cpf", "BR_CPF"), _finding("loja.mail", "EMAIL_ADDRESS"),
            _finding("extra.tel", "PHONE_NUMBER"), _finding("extra.mail", "EMAIL_ADDRESS")]


def _contract(text: str) -> Contract:
    return Contract.model_validate(yaml.safe_load(text))


def test_struct_fields_go_under_their_struct_in_the_patch_and_the_file(tmp_path):
    """An existing entry (`cliente.nome`) gets its keys after its name, its comment kept; a field its struct does not
    list joins the struct's `fields` (`cliente.mail`, and `doc` with the type it was read with); a struct without
    `fields` gets them (`loja`); a struct the contract does not list is added with its type (`extra`)."""
    path = tmp_path / "people.yaml"
    path.write_text(HEAD + FIELDS)
    proposals = propose(FINDINGS, _contract(path.read_text()), TYPES)
    patch = yaml.safe_load(patch_yaml(proposals))
    hmac = {"classification": "restricted", "masking": "hmac"}
    assert patch == {"schema": {"fields": [
        {"name": "cliente", "fields": [
            {"name": "nome", "pii": True, "classification": "confidential", "masking": "redact"},
            {"name": "mail", "pii": True, **hmac, "format": "email"},
            {"name": "doc", "type": "struct<cpf:string>", "fields": [
                {"name": "cpf", "pii": True, **hmac, "format": "cpf"}]}]},
        {"name": "loja", "fields": [{"name": "mail", "pii": True, **hmac, "format": "email"}]},
        {"name": "extra", "type": "struct<tel:string,mail:string>", "fields": [
            {"name": "tel", "pii": True, **hmac, "format": "phone"},
            {"name": "mail", "pii": True, **hmac, "format": "email"}]},
    ]}}
    written = write_proposals(path, proposals)
    assert written == HEAD + "  fields:\n" + FIRST + """          pii: true
          classification: confidential
          masking: redact
        - name: mail
          pii: true
          classification: restricted
          masking: hmac
          format: email
        - name: doc
          type: struct<cpf:string>
          fields:
            - name: cpf
              pii: true
              classification: restricted
              masking: hmac
              format: cpf
    - name: loja
      type: struct<mail:string>
      fields:
        - name: mail
          pii: true
          classification: restricted
          masking: hmac
          format: email
    - name: extra
      type: struct<tel:string,mail:string>
      fields:
        - name: tel
          pii: true
          classification: restricted
          masking: hmac
          format: phone
        - name: mail
          pii: true
          classification: restricted
          masking: hmac
          format: email
"""
    contract = _contract(written)
    assert contract.pii_columns() == ["cliente.nome", "cliente.mail", "cliente.doc.cpf", "loja.mail", "extra.tel",
                                      "extra.mail"]
    # applied once, nothing is left to propose or to warn about
    assert propose(FINDINGS, contract, TYPES) == [] and undeclared(FINDINGS, contract) == []


def test_a_struct_declared_pii_or_masked_covers_its_fields():
    """`cliente` is pii: true and `loja` is masked (null): their fields are declared or masked already."""
    text = HEAD + FIELDS.replace("    - name: cliente\n", "    - name: cliente\n      pii: true\n").replace(
        "      type: struct<mail:string>\n", "      type: struct<mail:string>\n      masking: \"null\"\n")
    contract = _contract(text)
    findings = [_finding("cliente.doc.cpf", "BR_CPF"), _finding("loja.mail", "EMAIL_ADDRESS")]
    assert [f.column for f in undeclared(findings, contract)] == ["loja.mail"]
    # only what the author has not decided: the format the values show, and `pii` for the field masked with loja
    assert [(p.column, p.changes) for p in propose(findings, contract, TYPES)] == [
        ("cliente.doc.cpf", {"format": "cpf"}), ("loja.mail", {"pii": True, "format": "email"})]


def test_under_undeclared_mask_a_struct_not_listed_is_proposed_pii_whole(tmp_path):
    """`undeclared_columns: mask` masks `extra` whole: declaring only `extra.tel` would publish `extra.mail` raw, so
    the struct itself is proposed `pii: true` (the same mask), once for both of its findings."""
    path = tmp_path / "people.yaml"
    path.write_text(HEAD + "  undeclared_columns: mask\n" + FIELDS)
    proposals = propose(FINDINGS[4:], _contract(path.read_text()), TYPES)
    assert [(p.column, p.changes, p.names()) for p in proposals] == [("extra", {"pii": True}, ("extra",))]
    assert patch_yaml(proposals).splitlines()[3:] == [
        "    # extra.tel: PHONE_NUMBER, confidence 1.00; 100.0% of 10 sampled values match; column name matches "
        "(column not in the contract)",
        "    - name: extra", "      type: struct<tel:string,mail:string>", "      pii: true"]
    written = write_proposals(path, proposals)
    assert written.endswith("      type: struct<mail:string>\n    - name: extra\n"
                            "      type: struct<tel:string,mail:string>\n      pii: true\n")


def test_keys_of_a_one_line_last_entry_stay_with_it_when_fields_are_appended_after_it(tmp_path):
    """The last entry is only its name line, so its new keys and the appended entry are inserted at one place:
    the keys must land first, or they would belong to the appended entry."""
    path = tmp_path / "people.yaml"
    path.write_text(HEAD + "  fields:\n    - name: id\n      type: long\n    - name: email\n")
    findings = [_finding("email", "EMAIL_ADDRESS"), _finding("cpf", "BR_CPF")]
    written = write_proposals(path, propose(findings, _contract(path.read_text()), TYPES))
    assert written.endswith("    - name: email\n      pii: true\n      classification: restricted\n"
                            "      masking: hmac\n      format: email\n    - name: cpf\n      pii: true\n"
                            "      classification: restricted\n      masking: hmac\n      format: cpf\n")
    assert _contract(written).field("email").pii and _contract(written).field("cpf").pii


@pytest.mark.parametrize(("fields", "message"), [
    ("    - {name: cliente, type: 'struct<mail:string>'}\n",
     "cannot edit field 'cliente': it is written in flow style"),
    ("    - name: cliente\n      type: struct<mail:string,nome:string>\n      fields: [{name: nome}]\n",
     "cannot edit field 'cliente': its `fields` is not a block list"),
])
def test_a_struct_written_in_flow_style_is_refused_and_the_file_left_alone(tmp_path, fields, message):
    path = tmp_path / "people.yaml"
    text = HEAD + "  fields:\n    - name: id\n      type: long\n" + fields
    path.write_text(text)
    proposals = propose([_finding("cliente.mail", "EMAIL_ADDRESS")], _contract(text), TYPES)
    with pytest.raises(ContractError, match=message) as caught:
        write_proposals(path, proposals)
    assert caught.value.location.line == 11 and path.read_text() == text


def test_an_edit_the_contract_would_refuse_names_the_problem_and_leaves_the_file(tmp_path):
    """The data's struct has a member the contract's declared type lacks: the edit is refused with the model's own
    words, not just an error class, and the file is left as it was."""
    path = tmp_path / "people.yaml"
    text = HEAD + FIELDS
    path.write_text(text)
    proposals = propose([_finding("loja.tel", "PHONE_NUMBER")], _contract(text), TYPES)
    with pytest.raises(ContractError) as caught:
        write_proposals(path, proposals)
    assert str(caught.value) == (
        f"{path}: the proposed edit would make the contract invalid: schema: fields.2.fields.0.name: struct loja has "
        "no field 'tel' (its type declares mail); apply the patch by hand")
    assert path.read_text() == text


def test_a_struct_member_with_a_dot_is_written_backquoted_and_a_backtick_name_is_refused(tmp_path):
    """`scan-pii --write` wrote `struct<x.y:string,cpf:string>` (simpleString), which `dqgov check` cannot parse."""
    from pyspark.sql import types as T

    from dq_governance.contracts.spark_types import is_spark_type, type_text

    dotted = T.StructType([T.StructField("x.y", T.StringType()), T.StructField("cpf", T.StringType()),
                           T.StructField("tags", T.ArrayType(T.StructType([T.StructField("a b", T.LongType())])))])
    assert type_text(dotted) == "struct<`x.y`:string,cpf:string,tags:array<struct<`a b`:bigint>>>"
    assert is_spark_type(type_text(dotted))
    path = tmp_path / "people.yaml"
    text = HEAD + "  fields:\n    - name: id\n      type: long\n"
    path.write_text(text)
    for struct_type, written in ((type_text(dotted), True), ("struct<`x`y`:string,cpf:string>", False)):
        proposals = propose([_finding("st.cpf", "BR_CPF")], _contract(text), {"st": struct_type, "st.cpf": "string"})
        if written:
            assert f"      type: {struct_type}\n" in write_proposals(path, proposals)
            path.write_text(text)
            continue
        with pytest.raises(ContractError, match=r"the proposed edit would write the type .* \(a member name with a "
                                                r"backtick\)"):
            write_proposals(path, proposals)
        assert path.read_text() == text

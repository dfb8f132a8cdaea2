from dq_governance.identifiers import quote_identifier


def test_names_become_backquoted_identifiers():
    assert quote_identifier("valor") == "`valor`"
    assert quote_identifier("a.b c") == "`a.b c`"  # a dot is part of the name, not a nested path
    assert quote_identifier("we`ird") == "`we``ird`"  # a backquote is doubled

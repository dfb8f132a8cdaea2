"""CLI options that would be accepted and then do nothing are refused before any Spark work."""

from __future__ import annotations

from dq_governance.cli import main


def test_scan_pii_strict_needs_a_contract(repo, capsys):
    assert main(["scan-pii", "--input", str(repo / "examples/data/customers.csv"), "--strict"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "dqgov: error: --strict needs --contract (the contract to compare with)\n"
    assert captured.out == ""

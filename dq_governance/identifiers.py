"""Column names as Spark SQL identifiers (no Spark import: SQL text is built anywhere)."""

from __future__ import annotations


def quote_identifier(name: str) -> str:
    """A column name as a backquoted Spark SQL identifier: any character allowed, dots are not paths."""
    return "`" + name.replace("`", "``") + "`"

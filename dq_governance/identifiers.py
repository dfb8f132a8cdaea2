"""Column names as Spark SQL identifiers (no Spark import: SQL text is built anywhere)."""

from __future__ import annotations


def quote_identifier(name: str) -> str:
    """A column name as a backquoted Spark SQL identifier: any character allowed, dots are not paths."""
    return "`" + name.replace("`", "``") + "`"


#: The prefix of the working columns dq-governance adds (rule flags, raw copies, key markers, masking pads).
#: An input column that starts with it would be overwritten or dropped, so it is refused instead.
WORKING_PREFIX = "__dq"


def working_name_clashes(columns: list[str]) -> str | None:
    """One line naming the input columns that start with `WORKING_PREFIX`, or None when there are none."""
    clashes = [name for name in columns if name.startswith(WORKING_PREFIX)]
    if not clashes:
        return None
    return (f"input column(s) {', '.join(clashes)} start with `{WORKING_PREFIX}`, which dq-governance keeps for the "
            "columns it adds while it works; rename them")

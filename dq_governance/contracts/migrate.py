"""Import other rule formats into the contract model: DQX checks YAML, DQX rules files, the seed framework's JSON.

DQX checks: each check (`criticality`, `check.function`, `arguments`, `filter`, `name`, `for_each_column`,
`user_metadata`) becomes one rule. Functions with an equivalent rule map onto it (is_not_null -> not_null,
is_unique -> unique, regex_match -> regex, ...); row conditions the model has no structured rule for become
`expression` rules with the same semantics (a null value passes, as in DQX). Functions without an
equivalent (sql_query, compare_datasets, IPv6 and CIDR checks, group-by aggregates, ...) are returned in the
unmapped list and kept verbatim in `extensions.dqx.unmapped`, never dropped silently.

DQX rules files (`rules: [{name, description, expression}]`): a row expression becomes an `expression` rule;
`x IN (SELECT y FROM t)` a `foreign_key` rule; an aggregate (`COUNT(DISTINCT id) = COUNT(id)`) or any other
subquery a `sql` rule over `_validation_df`, with a conversion note (`extensions.dqx.notes`).

The seed framework's pipeline JSON: `validations` (on_failure, rules) becomes the contract; `name`, `input`,
`output`, `report` and `validations.outputs` are kept in `extensions.seed` and act at run time
(`seed_pipeline`). Every other key, and every value dqgov cannot honour, is refused with its document path.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

from pydantic import ValidationError

from dq_governance.contracts.hints import did_you_mean
from dq_governance.contracts.model import RULE_TYPES, Contract, aggregate_function
from dq_governance.errors import ContractError

DEFAULT_VERSION = "1.0.0"
_IDENT_RE = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*|`[^`]+`)(?:\.(?:[A-Za-z_][A-Za-z0-9_]*|`[^`]+`))*$")
# Older DQX releases used other names for the same functions and `col_name(s)` for `column(s)`.
_FUNCTION_ALIASES = {
    "value_is_in_list": "is_in_list", "value_is_not_null_and_is_in_list": "is_not_null_and_is_in_list",
    "not_less_than": "is_not_less_than", "not_greater_than": "is_not_greater_than",
    "not_in_future": "is_not_in_future", "not_in_near_future": "is_not_in_near_future",
    "is_col_older_than_n_days": "is_older_than_n_days",
    "is_col_older_than_col2_for_n_days": "is_older_than_col2_for_n_days",
}  # fmt: skip
_ARGUMENT_ALIASES = {"col_name": "column", "col_names": "columns", "col_name1": "column1", "col_name2": "column2"}

Mapped = dict[str, Any] | None


# =========================================================================== DQX


def is_dqx_checks(doc: Any) -> bool:
    """True for a DQX checks list: every item has `check.function`."""
    return (isinstance(doc, list) and bool(doc) and all(
        isinstance(item, Mapping) and isinstance(item.get("check"), Mapping) and "function" in item["check"]
        for item in doc))


def is_dqx(doc: Any) -> bool:
    """True for either DQX shape: a checks list, or a rules file (`rules: [{name, description, expression}]`)."""
    return is_dqx_checks(doc) or is_dqx_rules(doc)


@dataclass(frozen=True)
class DqxSkipped:
    """A DQX check not imported: its index in the list, where in it the reason lies, and the reason."""

    index: int
    function: str
    path: tuple[Any, ...]
    message: str


#: the keys of a DQX checks-list item and of its `check` (anything else is a typo, refused with a suggestion)
_DQX_ITEM_KEYS = ("criticality", "check", "name", "filter", "user_metadata")
_DQX_CHECK_KEYS = ("function", "arguments", "for_each_column")


class _ReadArguments(dict):
    """A call's arguments that remember which ones the mapper read: one it never read has no equivalent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read: set[str] = set()

    def get(self, key: Any, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.read.add(key)
        return super().__getitem__(key)


def _refuse_unknown(mapping: Mapping[str, Any], known: tuple[str, ...], where: str, what: str) -> None:
    for key in mapping:
        if key not in known:
            hint = did_you_mean(key, known)
            raise ContractError(f"unknown DQX {what} key `{key}`" + (f"; {hint}" if hint else "")
                                + f" (known: {', '.join(known)})", field=f"{where}.{key}")


def dqx_to_contract(doc: Any, name: str) -> tuple[Contract, list[DqxSkipped]]:
    """A DQX checks list or rules file as a contract named `name`, and the DQX checks it could not import.

    A check is not imported when its function has no equivalent rule, or when it has an argument the rule would
    not honour (a `window_spec`, a `row_filter`): it is kept in `extensions.dqx.unmapped` and reported. A rules
    file maps every rule (see `dqx_rules_to_contract`, which also returns the conversion notes).
    """
    if is_dqx_rules(doc):
        return dqx_rules_to_contract(doc, name)[0], []
    if not is_dqx_checks(doc):
        raise ContractError("not a DQX checks list: expected a list of items with `check: {function: ...}`")
    rules: list[dict[str, Any]] = []
    skipped: list[DqxSkipped] = []
    kept: list[Any] = []
    metadata: dict[str, Any] = {}
    for index, item in enumerate(doc):
        _refuse_unknown(item, _DQX_ITEM_KEYS, str(index), "check")
        check = item["check"]
        _refuse_unknown(check, _DQX_CHECK_KEYS, f"{index}.check", "`check`")
        function = str(check["function"])
        written = dict(check.get("arguments") or {})
        spelled = {_ARGUMENT_ALIASES.get(k, k): k for k in written}
        arguments = {_ARGUMENT_ALIASES.get(k, k): v for k, v in written.items()}
        targets = check.get("for_each_column")
        if isinstance(targets, list):
            spelled["column"] = "for_each_column"  # each call's column comes from it
        calls = [_ReadArguments({**arguments, "column": c}) for c in targets] if isinstance(targets, list) else [
            _ReadArguments(arguments)]
        mapper = _DQX_FUNCTIONS.get(_FUNCTION_ALIASES.get(function, function))
        built = [mapper(args) if mapper else None for args in calls]
        unread = [spelled.get(key, key) for key in sorted({k for args in calls for k in args if k not in args.read})]
        if mapper is None or any(rule is None for rule in built):
            skip = DqxSkipped(index, function, ("check", "function"),
                              f"DQX function `{function}` has no equivalent rule; not imported")
        elif unread:
            at = ("check", unread[0]) if unread[0] == "for_each_column" else ("check", "arguments", unread[0])
            skip = DqxSkipped(index, function, at,
                              f"DQX function `{function}`: argument(s) {', '.join(f'`{k}`' for k in unread)} "
                              "have no equivalent in its rule; not imported")
        else:
            skip = None
        if skip is not None:
            skipped.append(skip)
            kept.append(dict(item))
            continue
        for rule in built:
            assert rule is not None
            rules.append(_dqx_common(rule, item, index, len(built) > 1, metadata))
    native: dict[str, Any] = {
        "contract": {"name": name, "version": DEFAULT_VERSION, "description": "Imported from DQX checks"},
        "dataset": {"name": name},
        "quality": {"rules": rules},
    }
    dqx: dict[str, Any] = {}
    if kept:
        dqx["unmapped"] = kept
    if metadata:
        dqx["user_metadata"] = metadata
    if dqx:
        native["extensions"] = {"dqx": dqx}
    return _validate(native, "DQX checks"), skipped


def _dqx_common(rule: dict[str, Any], item: Mapping[str, Any], index: int, expanded: bool,
                metadata: dict[str, Any], where: str | None = None) -> dict[str, Any]:
    """criticality, name, filter and user_metadata, which every DQX check (or rule, at `where`) may carry."""
    criticality = str(item.get("criticality", "error")).lower()
    if criticality in ("warn", "warning"):
        rule["severity"] = "warn"
    elif criticality != "error":
        raise ContractError(f"unknown criticality {item.get('criticality')!r}; expected error or warn",
                            field=f"{where or index}.criticality")
    if item.get("name") and not expanded:
        rule["name"] = str(item["name"])
    if item.get("filter"):
        rule["filter"] = str(item["filter"])
    if item.get("user_metadata"):
        key = rule.get("name") or f"check_{index}"
        metadata[key] = item["user_metadata"]
    return rule


def _column(args: Mapping[str, Any], key: str = "column") -> str | None:
    value = args.get(key)
    return value if isinstance(value, str) and _IDENT_RE.match(value.strip()) else None


def _expr_column(args: Mapping[str, Any], key: str = "column") -> str | None:
    """A column name or SQL column expression (DQX accepts both), for expression rules."""
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    return value if _IDENT_RE.match(value) else f"({value})"


def _literal(value: Any) -> str:
    """A Python value as a Spark SQL literal."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, _dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, _dt.date):
        return f"DATE '{value.isoformat()}'"
    if value is None:
        return "NULL"
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _limit(value: Any) -> str | None:
    """A DQX limit: numbers and dates are literals; a string is a column name or SQL expression, as in DQX."""
    if value is None:
        return None
    if isinstance(value, str):
        return f"({value})" if value.strip() else None
    return _literal(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _expression(text: str) -> dict[str, Any]:
    return {"type": "expression", "expression": text}


def _nullable(column: str, condition: str) -> dict[str, Any]:
    """A row passes when the value is null or the condition holds (DQX conditions pass on null)."""
    return _expression(f"{column} IS NULL OR ({condition})")


def _in_list(column: str, allowed: Any, case_sensitive: bool) -> str | None:
    if not isinstance(allowed, list) or not allowed:
        return None
    if case_sensitive:
        return f"{column} IN ({', '.join(_literal(v) for v in allowed)})"
    return f"lower({column}) IN ({', '.join('lower(' + _literal(v) + ')' for v in allowed)})"


def _f_not_null(args: Mapping[str, Any]) -> Mapped:
    column = _column(args)
    return {"type": "not_null", "column": column} if column else None


def _f_not_empty(args: Mapping[str, Any]) -> Mapped:
    column = _expr_column(args)
    return _expression(f"{column} IS NULL OR CAST({column} AS STRING) <> ''") if column else None


def _f_not_null_and_not_empty(args: Mapping[str, Any]) -> Mapped:
    column = _expr_column(args)
    if not column:
        return None
    value = f"trim(CAST({column} AS STRING))" if args.get("trim_strings") else f"CAST({column} AS STRING)"
    return _expression(f"{column} IS NOT NULL AND {value} <> ''")


def _f_not_null_and_not_empty_array(args: Mapping[str, Any]) -> Mapped:
    column = _expr_column(args)
    return _expression(f"{column} IS NOT NULL AND size({column}) > 0") if column else None


def _f_in_list(args: Mapping[str, Any]) -> Mapped:
    allowed = args.get("allowed")
    case_sensitive = args.get("case_sensitive", True) is not False
    column = _column(args)
    if column and case_sensitive and isinstance(allowed, list) and allowed:
        return {"type": "allowed_values", "column": column, "values": list(allowed)}
    expr = _expr_column(args)
    condition = _in_list(expr, allowed, case_sensitive) if expr else None
    return _nullable(expr, condition) if expr and condition else None


def _f_not_null_and_in_list(args: Mapping[str, Any]) -> Mapped:
    expr = _expr_column(args)
    condition = _in_list(expr, args.get("allowed"), args.get("case_sensitive", True) is not False) if expr else None
    return _expression(f"{expr} IS NOT NULL AND {condition}") if expr and condition else None


def _f_in_range(args: Mapping[str, Any]) -> Mapped:
    low, high = args.get("min_limit"), args.get("max_limit")
    column = _column(args)
    if column and _is_number(low) and _is_number(high) and low <= high:
        return {"type": "range", "column": column, "min": low, "max": high}
    return _bounds(args, low, high, negate=False)


def _f_not_in_range(args: Mapping[str, Any]) -> Mapped:
    return _bounds(args, args.get("min_limit"), args.get("max_limit"), negate=True)


def _bounds(args: Mapping[str, Any], low: Any, high: Any, negate: bool) -> Mapped:
    expr = _expr_column(args)
    low_sql, high_sql = _limit(low), _limit(high)
    if not expr or low_sql is None or high_sql is None:
        return None
    inside = f"{expr} >= {low_sql} AND {expr} <= {high_sql}"
    return _nullable(expr, f"NOT ({inside})" if negate else inside)


def _one_bound(key: str, sql_op: str) -> Callable[[Mapping[str, Any]], Mapped]:
    def mapper(args: Mapping[str, Any]) -> Mapped:
        limit = args.get("limit")
        column = _column(args)
        if column and _is_number(limit):
            return {"type": "range", "column": column, key: limit}
        expr, sql = _expr_column(args), _limit(limit)
        return _nullable(expr, f"{expr} {sql_op} {sql}") if expr and sql else None

    return mapper


def _compare(sql_op: str) -> Callable[[Mapping[str, Any]], Mapped]:
    def mapper(args: Mapping[str, Any]) -> Mapped:
        expr, value = _expr_column(args), _limit(args.get("value"))
        return _nullable(expr, f"{expr} {sql_op} {value}") if expr and value else None

    return mapper


def _f_regex(args: Mapping[str, Any]) -> Mapped:
    regex = args.get("regex")
    if not isinstance(regex, str):
        return None
    column = _column(args)
    if column and not args.get("negate"):
        return {"type": "regex", "column": column, "pattern": regex}
    expr = _expr_column(args)
    return _nullable(expr, f"NOT ({expr} RLIKE {_literal(regex)})") if expr and args.get("negate") else None


def _format(name: str, pattern_key: str | None) -> Callable[[Mapping[str, Any]], Mapped]:
    def mapper(args: Mapping[str, Any]) -> Mapped:
        column = _column(args)
        if not column:
            return None
        rule: dict[str, Any] = {"type": "format", "column": column, "format": name}
        if pattern_key and args.get(pattern_key):
            rule["date_format"] = str(args[pattern_key])
        return rule

    return mapper


def _f_not_in_future(args: Mapping[str, Any]) -> Mapped:
    expr, offset = _expr_column(args), args.get("offset", 0)
    if not expr or not _is_number(offset) or args.get("curr_timestamp") is not None:
        return None
    return _nullable(expr, f"{expr} <= timestampadd(SECOND, {offset}, current_timestamp())")


def _f_not_in_near_future(args: Mapping[str, Any]) -> Mapped:
    expr, offset = _expr_column(args), args.get("offset", 0)
    if not expr or not _is_number(offset) or args.get("curr_timestamp") is not None:
        return None
    near = f"timestampadd(SECOND, {offset}, current_timestamp())"
    return _nullable(expr, f"NOT ({expr} > current_timestamp() AND {expr} < {near})")


def _f_older_than_n_days(args: Mapping[str, Any]) -> Mapped:
    expr, days = _expr_column(args), args.get("days")
    if not expr or not _is_number(days) or args.get("curr_date") is not None:
        return None
    older = f"to_date({expr}) < date_sub(current_date(), {days})"
    return _nullable(expr, f"NOT ({older})" if args.get("negate") else older)


def _f_older_than_col2(args: Mapping[str, Any]) -> Mapped:
    first, second, days = _expr_column(args, "column1"), _expr_column(args, "column2"), args.get("days", 0)
    if not first or not second or not _is_number(days):
        return None
    older = f"to_date({first}) < date_sub(to_date({second}), {days})"
    condition = f"NOT ({older})" if args.get("negate") else older
    return _expression(f"{first} IS NULL OR {second} IS NULL OR ({condition})")


def _f_data_fresh(args: Mapping[str, Any]) -> Mapped:
    expr, minutes = _expr_column(args), args.get("max_age_minutes")
    base = args.get("base_timestamp")
    if not expr or not _is_number(minutes):
        return None
    base_sql = "current_timestamp()" if base is None else _limit(base)
    return _nullable(expr, f"{expr} >= timestampadd(MINUTE, -{minutes}, {base_sql})")


def _f_sql_expression(args: Mapping[str, Any]) -> Mapped:
    args.get("columns")  # DQX names the result's columns with it (reporting only): what the check tests is the same
    expression = args.get("expression")
    if not isinstance(expression, str) or not expression.strip():
        return None
    rule = _expression(f"NOT ({expression})" if args.get("negate") else expression)
    if args.get("name"):
        rule["name"] = str(args["name"])
    if args.get("msg"):
        rule["description"] = str(args["msg"])
    return rule


def _columns(args: Mapping[str, Any]) -> list[str] | None:
    columns = args.get("columns")
    if isinstance(columns, str):
        columns = [columns]
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) and _IDENT_RE.match(c)
                                                               for c in columns):
        return None
    return list(columns)


def _f_unique(args: Mapping[str, Any]) -> Mapped:
    columns = _columns(args)
    if columns is None or args.get("nulls_distinct", True) is False:
        return None  # our unique rule never matches null keys, DQX's nulls_distinct=False does
    return {"type": "unique", "column": columns[0]} if len(columns) == 1 else {"type": "unique", "columns": columns}


def _f_foreign_key(args: Mapping[str, Any]) -> Mapped:
    columns = _columns(args)
    refs = _columns({"columns": args.get("ref_columns")})
    table = args.get("ref_table") or args.get("ref_df_name")  # a DataFrame name is registered as a view
    if columns is None or refs is None or len(columns) != len(refs) or not table or args.get("negate"):
        return None
    rule: dict[str, Any] = {"type": "foreign_key", "reference": {"table": str(table)}}
    if len(columns) == 1:
        rule["column"], rule["reference"]["column"] = columns[0], refs[0]
    else:
        rule["columns"], rule["reference"]["columns"] = columns, refs
    return rule


def _aggregate(sql_op: str) -> Callable[[Mapping[str, Any]], Mapped]:
    def mapper(args: Mapping[str, Any]) -> Mapped:
        limit, kind = args.get("limit"), str(args.get("aggr_type", "count"))
        column = args.get("column")
        if args.get("group_by") or not _is_number(limit) or not isinstance(column, str):
            return None
        threshold = f"{sql_op} {limit}"
        if kind == "count" and column.strip() == "*":
            return {"type": "row_count", "must_be": threshold}
        if kind in ("sum", "avg", "min", "max") and _IDENT_RE.match(column):
            return {"type": kind, "column": column, "must_be": threshold}
        return None  # count(column) counts non-null values: no rule counts that

    return mapper


#: DQX function -> rule builder; a builder returns None when the call's arguments have no equivalent
_DQX_FUNCTIONS: dict[str, Callable[[Mapping[str, Any]], Mapped]] = {
    "is_not_null": _f_not_null,
    "is_not_empty": _f_not_empty,
    "is_not_null_and_not_empty": _f_not_null_and_not_empty,
    "is_not_null_and_not_empty_array": _f_not_null_and_not_empty_array,
    "is_in_list": _f_in_list,
    "is_not_null_and_is_in_list": _f_not_null_and_in_list,
    "is_in_range": _f_in_range,
    "is_not_in_range": _f_not_in_range,
    "is_not_less_than": _one_bound("min", ">="),
    "is_not_greater_than": _one_bound("max", "<="),
    "is_equal_to": _compare("="),
    "is_not_equal_to": _compare("<>"),
    "regex_match": _f_regex,
    "is_valid_date": _format("date", "date_format"),
    "is_valid_timestamp": _format("timestamp", "timestamp_format"),
    "is_valid_ipv4_address": _format("ipv4", None),
    "is_not_in_future": _f_not_in_future,
    "is_not_in_near_future": _f_not_in_near_future,
    "is_older_than_n_days": _f_older_than_n_days,
    "is_older_than_col2_for_n_days": _f_older_than_col2,
    "is_data_fresh": _f_data_fresh,
    "sql_expression": _f_sql_expression,
    "is_unique": _f_unique,
    "foreign_key": _f_foreign_key,
    "is_aggr_not_greater_than": _aggregate("<="),
    "is_aggr_not_less_than": _aggregate(">="),
    "is_aggr_equal": _aggregate("="),
    "is_aggr_not_equal": _aggregate("!="),
}


# =========================================================================== DQX rules files


def is_dqx_rules(doc: Any) -> bool:
    """True for a DQX rules file: a mapping whose `rules` list holds `{name, description, expression}` items."""
    if not isinstance(doc, Mapping) or "validations" in doc:
        return False
    rules = doc.get("rules")
    return (isinstance(rules, list) and bool(rules) and all(isinstance(item, Mapping) for item in rules)
            and any("expression" in item for item in rules))


#: the keys one item of a DQX rules file may hold
_RULE_ITEM_KEYS = ("name", "description", "expression", "criticality", "filter", "user_metadata")
# `x IN (SELECT y FROM t)`: a foreign key in DQX terms, kept a row rule
_IN_SUBQUERY = re.compile(
    r"^\s*(?P<column>[A-Za-z_][A-Za-z0-9_]*)\s+IN\s*\(\s*SELECT\s+(?:DISTINCT\s+)?(?P<ref>[A-Za-z_][A-Za-z0-9_]*)"
    r"\s+FROM\s+(?P<table>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\)\s*$", re.IGNORECASE)
_SUBQUERY_START = re.compile(r"\(\s*(?:SELECT|WITH)\b", re.IGNORECASE)


def _outer_sql(text: str) -> tuple[str, bool]:
    """`text` with its subqueries blanked (string literals and quoted names skipped), and whether it had one."""
    out: list[str] = []
    subquery = False
    i = 0
    while i < len(text):
        char = text[i]
        if char in "'\"`":  # a literal or quoted name: a `(SELECT` inside is text, kept as written
            j = i + 1
            while j < len(text) and text[j] != char:
                j += 2 if text[j] == "\\" and char != "`" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif char == "(" and _SUBQUERY_START.match(text, i):
            subquery = True
            depth, j = 0, i
            while j < len(text):  # skip to the matching parenthesis (literals inside are rare enough)
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            out.append("()")
            i = j + 1
        else:
            out.append(char)
            i += 1
    return "".join(out), subquery


def _expression_rule(text: str) -> tuple[dict[str, Any], str | None]:
    """A DQX expression as the rule that evaluates it the same way, and a note when it is not a row rule."""
    found = _IN_SUBQUERY.match(text)
    if found:
        rule = {"type": "foreign_key", "column": found["column"],
                "reference": {"table": found["table"], "column": found["ref"]}}
        return rule, (f"`{found['column']} IN (SELECT ...)` imported as a foreign_key rule on {found['table']}"
                      f".{found['ref']} (a row whose {found['column']} is null passes, as in SQL)")
    outer, subquery = _outer_sql(text)
    aggregate = aggregate_function(outer)  # a subquery's own aggregates leave the expression a row condition
    if aggregate:
        return ({"type": "sql", "query": f"SELECT {text} FROM _validation_df"},
                f"aggregate expression ({aggregate}) cannot be a row rule: imported as a sql rule over "
                "_validation_df, one verdict for the dataset (no row is quarantined for it)")
    if subquery:
        return ({"type": "sql", "query": f"SELECT COUNT(*) = 0 FROM _validation_df WHERE NOT ({text})"},
                "expression with a subquery cannot be a row rule: imported as a sql rule that fails when any "
                "row breaks it, one verdict for the dataset (no row is quarantined for it)")
    return _expression(text), None


def dqx_rules_to_contract(doc: Any, name: str) -> tuple[Contract, list[tuple[tuple[Any, ...], str]]]:
    """A DQX rules file as a contract, and the conversion notes: (document path, note) per rule not kept as is."""
    if not is_dqx_rules(doc):
        raise ContractError("not a DQX rules file: expected `rules: [{name, description, expression}]`")
    for key in doc:
        if key != "rules":
            raise ContractError(f"unknown key `{key}`; a DQX rules file holds `rules` only", field=str(key))
    rules: list[dict[str, Any]] = []
    notes: list[tuple[tuple[Any, ...], str]] = []
    metadata: dict[str, Any] = {}
    for index, item in enumerate(doc["rules"]):
        where = f"rules.{index}"
        for key in item:
            if key not in _RULE_ITEM_KEYS:
                hint = did_you_mean(key, _RULE_ITEM_KEYS)
                raise ContractError(f"unknown key `{key}`; a rule takes {', '.join(_RULE_ITEM_KEYS)}"
                                    + (f" ({hint})" if hint else ""), field=f"{where}.{key}")
        text = item.get("expression")
        if not isinstance(text, str) or not text.strip():
            field = f"{where}.expression" if "expression" in item else where
            raise ContractError("missing required key `expression`" if "expression" not in item
                                else "`expression` must be a non-empty SQL boolean expression", field=field)
        rule, note = _expression_rule(text.strip())
        rule = _dqx_common(rule, item, index, False, metadata, where=where)
        if item.get("description"):
            rule["description"] = str(item["description"])
        rules.append(rule)
        if note:
            notes.append(((*_path(where), "expression"), f"{item['name']}: {note}" if item.get("name") else note))
    native: dict[str, Any] = {
        "contract": {"name": name, "version": DEFAULT_VERSION, "description": "Imported from a DQX rules file"},
        "dataset": {"name": name},
        "quality": {"rules": rules},
    }
    dqx: dict[str, Any] = {}
    if notes:  # kept with the contract, so `dqgov convert` output says what became what
        dqx["notes"] = [f"rules[{path[1]}] {note}" for path, note in notes]
    if metadata:
        dqx["user_metadata"] = metadata
    if dqx:
        native["extensions"] = {"dqx": dqx}
    return _validate(native, "the DQX rules file", items="rules"), notes


# =========================================================================== the seed framework's pipeline JSON

#: top-level keys of a seed pipeline document that dqgov acts on; any other key is refused
SEED_KEYS = ("name", "input", "validations", "output", "report")
_VALIDATIONS_KEYS = ("on_failure", "minimum_valid_ratio", "rules", "outputs")
#: keys a seed rule may carry that dqgov cannot honour, and why
_REFUSED_RULE_KEYS = {
    "failed_rows": "a rule's own failed-rows output is not supported: validations.outputs.invalid receives "
                   "every row that fails a row rule, with the rules it failed in `_dq_errors`",
    "output": "a rule's own output is not supported: validations.outputs.invalid receives every row that "
              "fails a row rule, with the rules it failed in `_dq_errors`",
}
_SEED_HINTS = {
    "transformations": "dqgov checks the data a pipeline produced; run its transformations in the job itself",
    "inputs": "dqgov checks one dataset: name it in `input`",
}


@dataclass(frozen=True)
class SeedDestination:
    """One place a seed pipeline reads or writes: a path or a catalog table, with its format and mode."""

    key: str  # where in the document, e.g. `validations.outputs.valid`
    location: str
    format: str
    mode: str | None = None
    table: bool = False  # `location` is a catalog table name (no `/`)
    merge_keys: tuple[str, ...] = ()
    partition_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class SeedPipeline:
    """What a seed pipeline document says beyond its rules: its name, input and destinations."""

    name: str | None = None
    input: SeedDestination | None = None
    target: SeedDestination | None = None  # `output`, or `validations.outputs.valid`
    quarantine: SeedDestination | None = None  # `validations.outputs.invalid`
    report: SeedDestination | None = None


@dataclass(frozen=True)
class _Block:
    """The keys, formats and modes one destination block accepts."""

    keys: tuple[str, ...]
    formats: tuple[str, ...]
    modes: tuple[str, ...] = ()
    default_mode: str | None = None


_WRITE_FORMATS = ("delta", "parquet")
_TARGET = _Block(("format", "path", "mode", "options"), _WRITE_FORMATS, ("overwrite", "append", "merge"), "overwrite")
#: destination block -> what it accepts (the quarantine keeps one partition per run: append is its default)
_BLOCKS: dict[str, _Block] = {
    "input": _Block(("format", "path"), ("csv", "json", "parquet", "delta")),
    "output": _TARGET,
    "validations.outputs.valid": _TARGET,
    "validations.outputs.invalid": _Block(("format", "path", "mode"), _WRITE_FORMATS, ("overwrite", "append"),
                                          "append"),
    "report": _Block(("format", "path", "mode", "partition_by"), _WRITE_FORMATS, ("append",), "append"),
}
#: report.partition_by lists that match the report history's own layout, per format
_REPORT_PARTITIONS = {"delta": (("pipeline",),), "parquet": (("pipeline",), ("pipeline", "run_id"))}
_TABLE_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|`[^`]+`")


def is_seed_validations(doc: Any) -> bool:
    """True for a pipeline document whose `validations` block has a `rules` list."""
    if not isinstance(doc, Mapping):
        return False
    block = doc.get("validations")
    return isinstance(block, Mapping) and isinstance(block.get("rules"), list)


def is_table_name(location: str) -> bool:
    """A seed location without `/` (and not starting with `.` or `~`, no URI scheme) names a catalog table."""
    return not ("/" in location or "\\" in location or location.startswith((".", "~")) or ":" in location)


def table_parts(name: str) -> list[str]:
    """`catalog.db.table` (backticks allowed) as its unquoted parts."""
    return [part.strip("`") for part in _TABLE_PART.findall(name)]


class _Problems(list[tuple[tuple[Any, ...], str]]):
    """(document path, message) of every key a seed document holds that dqgov cannot honour."""

    def add(self, path: tuple[Any, ...], message: str) -> None:
        self.append((path, message))


def _path(dotted: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in dotted.split(".")) if dotted else ()


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


def _either(choices: tuple[str, ...]) -> str:
    """`a`, `a or b`, `a, b or c`."""
    return choices[0] if len(choices) == 1 else f"{', '.join(choices[:-1])} or {choices[-1]}"


def _unknown(problems: _Problems, path: tuple[Any, ...], key: Any, allowed: tuple[str, ...], where: str) -> None:
    hint = _SEED_HINTS.get(key) if not path[:-1] else None
    hint = hint or did_you_mean(key, allowed)
    problems.add(path, f"unknown key `{key}`; {where} takes {', '.join(allowed)}" + (f" ({hint})" if hint else ""))


def _destination(block: Any, key: str, problems: _Problems) -> SeedDestination | None:
    """One destination block, checked against what dqgov can honour; None (with problems) when it cannot."""
    spec, path = _BLOCKS[key], _path(key)
    if not isinstance(block, Mapping):
        problems.add(path, f"must be a mapping with {', '.join(spec.keys)}")
        return None
    before = len(problems)
    for name in block:
        if name not in spec.keys:
            _unknown(problems, (*path, name), name, spec.keys, key)
    location = block.get("path")
    if not isinstance(location, str) or not location.strip():
        problems.add(path if location is None else (*path, "path"),
                     "missing required key `path`" if location is None else "`path` must be a non-empty string")
        return None
    table = is_table_name(location)
    if table and not _IDENT_RE.match(location):
        problems.add((*path, "path"), f"`{location}` is neither a path (it has no `/`) nor a table name "
                                      f"(db.table); write ./{location} for a directory")
    # An input's format defaults to its file extension, as for --input; written tables are Delta.
    fmt = block.get("format", ("delta" if table else "parquet") if spec.modes else "")
    if fmt and fmt not in spec.formats:
        problems.add((*path, "format"), f"format `{fmt}` is not supported here; use {_either(spec.formats)}")
    elif table and fmt and fmt != "delta":
        problems.add((*path, "format"), f"`{location}` names a catalog table (it has no `/`), and dqgov reads and "
                                        f"writes tables as Delta: use format delta, or a path such as ./{location} "
                                        f"for {fmt}")
    mode = block.get("mode", spec.default_mode) if spec.modes else None
    if spec.modes and mode not in spec.modes:
        why = " (a re-run with the same run id replaces its own rows)" if key == "report" else ""
        problems.add((*path, "mode"), f"mode `{mode}` is not supported here; use {_either(spec.modes)}{why}")
    keys = _merge_keys(block, mode, fmt, path, problems)
    partitions = _partitions(block, fmt, path, problems) if key == "report" else ()
    if len(problems) > before:
        return None
    return SeedDestination(key, location.strip(), fmt, mode, table, keys, partitions)


def _merge_keys(block: Mapping[str, Any], mode: Any, fmt: Any, path: tuple[Any, ...],
                problems: _Problems) -> tuple[str, ...]:
    options = block.get("options")
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        problems.add((*path, "options"), "must be a mapping (merge_keys)")
        return ()
    for name in options:
        if name != "merge_keys":
            _unknown(problems, (*path, "options", name), name, ("merge_keys",), f"{_dotted(path)}.options")
    keys = options.get("merge_keys")
    if keys is not None and (not isinstance(keys, list) or not keys
                             or not all(isinstance(k, str) and k.strip() for k in keys)):
        problems.add((*path, "options", "merge_keys"), "must be a non-empty list of column names")
        return ()
    if mode == "merge" and keys is None:
        problems.add((*path, "mode"), "mode merge needs options.merge_keys (the columns a row is matched on)")
    elif mode == "merge" and fmt == "parquet":
        problems.add((*path, "format"), "mode merge needs format delta")
    elif keys is not None and mode != "merge":
        problems.add((*path, "options", "merge_keys"), f"merge_keys only act with mode merge, not `{mode}`")
    return tuple(k.strip() for k in keys or ())


def _partitions(block: Mapping[str, Any], fmt: Any, path: tuple[Any, ...], problems: _Problems) -> tuple[str, ...]:
    given = block.get("partition_by")
    if given is None:
        return ()
    layouts = _REPORT_PARTITIONS.get(fmt, ())
    if not isinstance(given, list) or tuple(given) not in layouts:
        shown = " or ".join(json.dumps(list(layout)) for layout in layouts)
        problems.add((*path, "partition_by"), f"the report history is partitioned by its own layout ({shown} for "
                                              f"{fmt}); it cannot be partitioned by {json.dumps(given)}")
        return ()
    return tuple(given)


def _check_rules(rules: list[Any], problems: _Problems) -> None:
    for index, rule in enumerate(rules):
        path = ("validations", "rules", index)
        kind = rule.get("type") if isinstance(rule, Mapping) else None
        if kind not in RULE_TYPES:
            hint = " (`filter` is a transformation, not a validation)" if kind == "filter" else ""
            problems.add((*path, "type"), f"unknown rule type {kind!r}{hint}")
            continue
        for key, why in _REFUSED_RULE_KEYS.items():
            if key in rule:
                problems.add((*path, key), why)


def _read_pipeline(doc: Mapping[str, Any]) -> tuple[SeedPipeline, _Problems]:
    """The pipeline's name, input and destinations, and every key that cannot be honoured, in document order."""
    problems = _Problems()
    found: dict[str, SeedDestination | None] = {}
    name = None
    for key, value in doc.items():
        if key not in SEED_KEYS:
            _unknown(problems, (key,), key, SEED_KEYS, "a pipeline document")
        elif key == "name":
            if isinstance(value, str) and value.strip():
                name = value.strip()
            else:
                problems.add(("name",), "the pipeline name must be a non-empty string")
        elif key == "validations":
            _read_validations(value, problems, found)
        else:
            found[key] = _destination(value, key, problems)
    if found.get("output") and found.get("validations.outputs.valid"):
        problems.add(("validations", "outputs", "valid"),
                     "`output` already names where the checked rows are published; dqgov publishes one target: "
                     "keep either output or validations.outputs.valid")
    pipeline = SeedPipeline(
        name=name, input=found.get("input"),
        target=found.get("output") or found.get("validations.outputs.valid"),
        quarantine=found.get("validations.outputs.invalid"), report=found.get("report"),
    )
    return pipeline, problems


def _read_validations(block: Mapping[str, Any], problems: _Problems, found: dict[str, Any]) -> None:
    for key, value in block.items():
        if key not in _VALIDATIONS_KEYS:
            _unknown(problems, ("validations", key), key, _VALIDATIONS_KEYS, "validations")
        elif key == "rules":
            _check_rules(value, problems)
        elif key == "outputs":
            if not isinstance(value, Mapping):
                problems.add(("validations", "outputs"), "must be a mapping with valid and/or invalid")
                continue
            for kind, spec in value.items():
                where = f"validations.outputs.{kind}"
                if where in _BLOCKS:
                    found[where] = _destination(spec, where, problems)
                else:
                    _unknown(problems, ("validations", "outputs", kind), kind, ("valid", "invalid"),
                             "validations.outputs")


def seed_issues(doc: Any) -> list[tuple[tuple[Any, ...], str]]:
    """Every (document path, message) a seed pipeline document holds that dqgov cannot honour (for lint)."""
    return list(_read_pipeline(doc)[1]) if is_seed_validations(doc) else []


def _read_extension(seed: Any) -> tuple[SeedPipeline, list[tuple[tuple[Any, ...], str]]]:
    """`extensions.seed` read like the pipeline document it came from (paths relative to it)."""
    if not isinstance(seed, Mapping):
        return SeedPipeline(), [((), "must be a mapping (the seed pipeline's settings)")]
    doc = dict(seed)
    validations = seed.get("validations") or {}
    doc["validations"] = {**validations, "rules": []} if isinstance(validations, Mapping) else validations
    pipeline, problems = _read_pipeline(doc)
    return pipeline, list(problems)


def seed_extension_issues(extensions: Any) -> list[tuple[tuple[Any, ...], str]]:
    """Every (path under `extensions`, message) of a native / ODCS contract's `extensions.seed` (for lint)."""
    if not isinstance(extensions, Mapping) or "seed" not in extensions:
        return []
    return [(("seed", *path), message) for path, message in _read_extension(extensions["seed"])[1]]


def seed_pipeline(contract: Contract) -> SeedPipeline | None:
    """The seed pipeline settings a contract carries (`extensions.seed`), checked; None when it has none.

    A seed document is checked when it is loaded; a native or ODCS contract that carries `extensions.seed`
    (e.g. written by `dqgov convert`) is checked here, naming `extensions.seed.<key>`.
    """
    if "seed" not in contract.extensions:
        return None
    pipeline, problems = _read_extension(contract.extensions["seed"])
    if problems:
        path, message = problems[0]
        raise ContractError(message, field=_dotted(("extensions", "seed", *path)))
    return pipeline


def seed_to_contract(doc: Any, name: str) -> Contract:
    """The `validations` block (on_failure, rules[]) as a contract named `name`; the pipeline keys in `extensions.seed`.

    Raises ContractError (with the key's document path) for the first key dqgov cannot honour.
    """
    if not is_seed_validations(doc):
        raise ContractError("not a validations document: expected `validations: {rules: [...]}`")
    _pipeline, problems = _read_pipeline(doc)
    if problems:
        path, message = problems[0]
        raise ContractError(message, field=_dotted(path))
    block = dict(doc["validations"])
    quality: dict[str, Any] = {"rules": list(block.pop("rules"))}
    for key in ("on_failure", "minimum_valid_ratio"):
        if key in block:
            quality[key] = block.pop(key)
    dataset: dict[str, Any] = {"name": name}
    output = doc.get("output")
    if isinstance(output, Mapping) and isinstance(output.get("path"), str):
        # the rules guard what the pipeline writes: its output is the contract's dataset
        location = output["path"]
        dataset["table" if is_table_name(location) else "path"] = location
        if output.get("format"):
            dataset["format"] = str(output["format"])
    seed = {k: v for k, v in doc.items() if k != "validations"}
    if block:
        seed["validations"] = block  # outputs: the valid / invalid destinations
    native: dict[str, Any] = {
        "contract": {"name": name, "version": DEFAULT_VERSION, "description": "Imported from a validations block"},
        "dataset": dataset,
        "quality": quality,
    }
    if seed:
        native["extensions"] = {"seed": seed}
    return _validate(native, "the validations block")


def _validate(native: dict[str, Any], what: str, items: str | None = None) -> Contract:
    """The converted document as a Contract; the first problem as a ContractError naming its model path.

    With `items`, rule i was converted from the document's `<items>[i]`: its problems name that item.
    """
    try:
        return Contract.model_validate(native)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = f"unknown key `{loc[-1]}`"
        if items and loc[:2] == ("quality", "rules") and len(loc) > 2:
            inner = ".".join(str(p) for p in loc[4:])  # past the rule's type tag
            raise ContractError(f"{message} (in the {inner or 'rule'} of the rule converted from this item)",
                                field=f"{items}.{loc[2]}") from None
        raise ContractError(f"{message} (in the contract converted from {what})", field=_dotted(loc)) from None

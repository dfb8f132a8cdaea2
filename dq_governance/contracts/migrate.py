"""Import other rule formats into the contract model: DQX checks YAML and the seed framework's `validations` JSON.

DQX: each check (`criticality`, `check.function`, `arguments`, `filter`, `name`, `for_each_column`,
`user_metadata`) becomes one rule. Functions with an equivalent rule map onto it (is_not_null -> not_null,
is_unique -> unique, regex_match -> regex, ...); row conditions the model has no structured rule for become
`expression` rules with the same semantics (a null value passes, as in DQX). Functions without an
equivalent (sql_query, compare_datasets, IPv6 and CIDR checks, group-by aggregates, ...) are returned in the
unmapped list and kept verbatim in `extensions.dqx.unmapped`, never dropped silently.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from typing import Any, Callable

from pydantic import ValidationError

from dq_governance.contracts.model import RULE_TYPES, Contract
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


def is_dqx(doc: Any) -> bool:
    """True for a DQX checks list: every item has `check.function`."""
    return (isinstance(doc, list) and bool(doc) and all(
        isinstance(item, Mapping) and isinstance(item.get("check"), Mapping) and "function" in item["check"]
        for item in doc))


def dqx_to_contract(doc: Any, name: str) -> tuple[Contract, list[str]]:
    """A DQX checks list as a contract named `name`, and the DQX functions that have no equivalent rule."""
    if not is_dqx(doc):
        raise ContractError("not a DQX checks list: expected a list of items with `check: {function: ...}`")
    rules: list[dict[str, Any]] = []
    unmapped: list[str] = []
    kept: list[Any] = []
    metadata: dict[str, Any] = {}
    for index, item in enumerate(doc):
        check = item["check"]
        function = str(check["function"])
        arguments = {_ARGUMENT_ALIASES.get(k, k): v for k, v in dict(check.get("arguments") or {}).items()}
        targets = check.get("for_each_column")
        calls = [{**arguments, "column": c} for c in targets] if isinstance(targets, list) else [arguments]
        mapper = _DQX_FUNCTIONS.get(_FUNCTION_ALIASES.get(function, function))
        built = [mapper(args) if mapper else None for args in calls]
        if any(rule is None for rule in built):
            if function not in unmapped:
                unmapped.append(function)
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
    return _validate(native, "DQX checks"), unmapped


def _dqx_common(rule: dict[str, Any], item: Mapping[str, Any], index: int, expanded: bool,
                metadata: dict[str, Any]) -> dict[str, Any]:
    """criticality, name, filter and user_metadata, which every DQX check may carry."""
    criticality = str(item.get("criticality", "error")).lower()
    if criticality in ("warn", "warning"):
        rule["severity"] = "warn"
    elif criticality != "error":
        raise ContractError(f"unknown criticality {item.get('criticality')!r}; expected error or warn",
                            field=f"{index}.criticality")
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


# =========================================================================== the seed framework's validations


def is_seed_validations(doc: Any) -> bool:
    """True for a pipeline document whose `validations` block has a `rules` list."""
    if not isinstance(doc, Mapping):
        return False
    block = doc.get("validations")
    return isinstance(block, Mapping) and isinstance(block.get("rules"), list)


def seed_to_contract(doc: Any, name: str) -> Contract:
    """The `validations` block (on_failure, rules[], outputs) as a contract named `name`."""
    if not is_seed_validations(doc):
        raise ContractError("not a validations document: expected `validations: {rules: [...]}`")
    block = dict(doc["validations"])
    rules = list(block.pop("rules"))
    for index, rule in enumerate(rules):
        kind = rule.get("type") if isinstance(rule, Mapping) else None
        if kind not in RULE_TYPES:
            hint = " (`filter` is a transformation, not a validation)" if kind == "filter" else ""
            raise ContractError(f"unknown rule type {kind!r}{hint}", field=f"validations.rules.{index}.type")
    quality: dict[str, Any] = {"rules": rules}
    if "on_failure" in block:
        quality["on_failure"] = block.pop("on_failure")
    if "minimum_valid_ratio" in block:
        quality["minimum_valid_ratio"] = block.pop("minimum_valid_ratio")
    dataset: dict[str, Any] = {"name": name}
    output = doc.get("output")
    if isinstance(output, Mapping) and isinstance(output.get("path"), str):
        # the rules guard what the pipeline writes: its output is the contract's dataset
        location = output["path"]
        dataset["path" if "/" in location or location.startswith(".") else "table"] = location
        if output.get("format"):
            dataset["format"] = str(output["format"])
    seed = {k: v for k, v in doc.items() if k != "validations"}
    if block:
        seed["validations"] = block  # outputs (valid / invalid destinations) and anything else
    native: dict[str, Any] = {
        "contract": {"name": name, "version": DEFAULT_VERSION, "description": "Imported from a validations block"},
        "dataset": dataset,
        "quality": quality,
    }
    if seed:
        native["extensions"] = {"seed": seed}
    return _validate(native, "the validations block")


def _validate(native: dict[str, Any], what: str) -> Contract:
    try:
        return Contract.model_validate(native)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise ContractError(f"{error['msg']} (in the contract converted from {what})", field=field) from None

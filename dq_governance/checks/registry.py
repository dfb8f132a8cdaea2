"""Rule type -> one function that builds the rule's Spark Columns.

Row rules return a violation Column (true = the row breaks the rule). Dataset rules return aggregate
Columns, which the engine folds into its single aggregation, and a `finalize` step that compares the
metric with the rule's thresholds. Adding a rule type = one builder + `@register` + its test.

`volume` is registered: it compares the row count with report history when the caller passes it
(`volume_history`), and otherwise reports `skipped: no history` (status skipped, never blocks).
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field
from decimal import Context, Decimal
from typing import TYPE_CHECKING, Any, Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    DataType,
    DecimalType,
    FloatType,
    IntegralType,
    NumericType,
    StringType,
    TimestampNTZType,
    TimestampType,
)

from dq_governance.checks import formats
from dq_governance.checks.regex_text import rlike
from dq_governance.contracts.consistency import bound_text
from dq_governance.contracts.thresholds import Metric, Threshold, parse_threshold
from dq_governance.errors import ContractError

if TYPE_CHECKING:
    from dq_governance.checks.engine import BuildContext


@dataclass
class Measured:
    """What the single pass measured for one rule, handed to its finalize step."""

    values: dict[str, Any]  # the rule's own aggregates, by the keys its builder used
    failed_count: int | None  # rows flagged by the rule's violation Column
    scope_rows: int  # rows the rule applies to (its `filter`, or all rows)
    total_rows: int


@dataclass
class Outcome:
    """A rule's verdict."""

    passed: bool
    status: str
    metric_value: float | None = None
    threshold: str | None = None
    message: str = ""


@dataclass
class RulePlan:
    """The Spark side of one rule."""

    violation: Column | None = None  # row flag; None when no row can violate
    aggregates: dict[str, Column] = field(default_factory=dict)
    finalize: Callable[[Measured], Outcome] | None = None  # None: passed iff failed_count == 0
    expected: str | None = None
    content: str | None = None


#: the data-quality dimension reported for a rule that does not name one
DEFAULT_DIMENSIONS: dict[str, str] = {
    "not_null": "completeness", "missing_count": "completeness", "missing_percent": "completeness",
    "row_count": "completeness", "volume": "completeness",
    "unique": "uniqueness", "duplicate_count": "uniqueness", "duplicate_percent": "uniqueness",
    "range": "validity", "regex": "validity", "allowed_values": "validity", "format": "validity",
    "length": "validity", "type": "validity", "invalid_count": "validity", "invalid_percent": "validity",
    "schema": "validity", "expression": "consistency", "sql": "consistency",
    "foreign_key": "integrity", "reconcile": "accuracy", "freshness": "timeliness",
    "avg": "accuracy", "sum": "accuracy", "min": "accuracy", "max": "accuracy", "stddev": "accuracy",
    "schema_drift": "consistency", "pii_undeclared": "consistency", "undeclared_columns": "validity",
}  # fmt: skip

Builder = Callable[[Any, "BuildContext"], RulePlan]
REGISTRY: dict[str, Builder] = {}


def register(*types: str) -> Callable[[Builder], Builder]:
    """Register a builder for one or more rule types."""

    def wrap(builder: Builder) -> Builder:
        for rule_type in types:
            if rule_type in REGISTRY:
                raise ValueError(f"rule type {rule_type!r} registered twice")
            REGISTRY[rule_type] = builder
        return builder

    return wrap


def builder_for(rule_type: str) -> Builder:
    """The builder of a rule type; ContractError when none is registered."""
    try:
        return REGISTRY[rule_type]
    except KeyError:
        raise ContractError(f"rule type {rule_type!r} has no check implementation") from None


# --------------------------------------------------------------------------- verdict helpers


def blocks(rule: Any) -> bool:
    """Whether a failure of this rule marks rows invalid / counts as an error."""
    return rule.severity == "error" and rule.action != "warn"


def status_of(rule: Any, passed: bool, warned: bool = False) -> str:
    """`failed` (or `warned` for warn-severity rules) when not passed; else `warned` / `passed`."""
    if not passed:
        return "failed" if blocks(rule) else "warned"
    return "warned" if warned else "passed"


def judge(rule: Any, metric: Metric | None, *, unit_metrics: dict[str | None, float | None] | None = None,
          extra: list[str] | None = None, what: str = "metric") -> Outcome:
    """Compare a metric with `must_be` (fails the rule) and `warn` (recorded only)."""
    problems = list(extra or [])
    must = parse_threshold(rule.must_be) if getattr(rule, "must_be", None) is not None else None
    warn = parse_threshold(rule.warn) if getattr(rule, "warn", None) is not None else None

    def value_for(threshold: Threshold) -> float | None:
        if unit_metrics and threshold.unit in unit_metrics:
            return unit_metrics[threshold.unit]
        return metric

    shown = _fmt(metric)
    threshold_text = f"must_be {must}" if must else (f"warn {warn}" if warn else None)
    if must is not None and not must.holds(value_for(must)):
        problems.append(f"{what} {shown} fails must_be {must}")
    if problems:
        return Outcome(False, status_of(rule, False), _num(metric), threshold_text, "; ".join(problems))
    if warn is not None and not warn.holds(value_for(warn)):
        return Outcome(True, "warned", _num(metric), f"warn {warn}", f"{what} {shown} outside warn {warn}")
    met = f" meets {threshold_text}" if threshold_text else ""
    return Outcome(True, "passed", _num(metric), threshold_text, f"{what} {shown}{met}")


def _fmt(value: Metric | None) -> str:
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Decimal):  # every digit, as Spark summed it: 12345678901234567.89, not 1.23457e+16
        text = format(value, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _num(value: Any) -> float | None:
    return None if value is None else float(value)


def _one_column(rule: Any) -> str:
    columns = rule.target_columns
    if len(columns) != 1:
        raise ContractError(f"rule {rule.name}: {rule.type} takes exactly one column, got {len(columns)}")
    return columns[0]


# --------------------------------------------------------------------------- row rules


@register("not_null")
def not_null(rule: Any, ctx: BuildContext) -> RulePlan:
    """Any of the columns has no value (null, or blank text in a converted column)."""
    violation = _any(ctx.absent(c) for c in rule.target_columns)
    return RulePlan(violation=violation, expected="not null")


@register("unique")
def unique(rule: Any, ctx: BuildContext) -> RulePlan:
    """Every row of a key that occurs more than once; null keys never collide."""
    return RulePlan(violation=ctx.duplicate_flag(rule.target_columns, rule.filter),
                    expected=f"unique ({', '.join(rule.target_columns)})")


@register("range")
def range_(rule: Any, ctx: BuildContext) -> RulePlan:
    """Below `min` or above `max` (exclusive bounds optional), compared in the column's type.

    Numbers compare with the column as a number, dates and timestamps with the typed date / timestamp column; a
    value that does not convert is null here, never a range violation (the type rule reports it).
    """
    value = ctx.temporal(rule.column) if rule.temporal else ctx.number(rule.column)
    target = ctx.dtype(rule.column)
    checks, expected = [], []
    if rule.min is not None:
        low = _bound(rule.min, target)
        checks.append(value <= low if rule.min_exclusive else value < low)
        expected.append(f"{'>' if rule.min_exclusive else '>='} {bound_text(rule.min)}")
    if rule.max is not None:
        high = _bound(rule.max, target)
        checks.append(value >= high if rule.max_exclusive else value > high)
        expected.append(f"{'<' if rule.max_exclusive else '<='} {bound_text(rule.max)}")
    return RulePlan(violation=_any(checks), expected=" and ".join(expected))


def _bound(bound: Any, column_type: DataType | None) -> Column:
    """A range bound as a literal: dates and timestamps from ISO text cast in Spark, as the session reads the data.

    The cast goes to the column's own type (a date bound on a timestamp column is its midnight); naive timestamps
    are then in the session time zone like the data, where a Python datetime literal would take the driver's zone.
    """
    if not isinstance(bound, _dt.date):
        return _number(bound, column_type)
    if isinstance(column_type, TimestampNTZType):
        kind = "timestamp_ntz"
    elif isinstance(column_type, TimestampType) or isinstance(bound, _dt.datetime):
        kind = "timestamp"
    else:
        kind = "date"
    return F.lit(bound.isoformat()).cast(kind)


_MAX_DECIMAL_DIGITS = 38  # Spark's widest decimal
_LONG_RANGE = (-(2**63), 2**63 - 1)
_FLOAT_RANGE = (1.1754943508222875e-38, 3.4028234663852886e38)  # a float's smallest normal and largest finite


def _number(value: Any, column_type: DataType | None) -> Column:
    """A number as a literal that compares in the column's type.

    Beside a decimal or integer column a float is a decimal literal: Spark would compare the column and a double
    as doubles, where 1234567890123456.51 is 1234567890123456.5 and so not above it.
    """
    if isinstance(value, float) and isinstance(column_type, (DecimalType, IntegralType)) and math.isfinite(value):
        exact = Decimal(format(Decimal(repr(value)), "f"))  # fixed point: no negative scale for 1e+16
        _sign, digits, exponent = exact.as_tuple()
        if max(len(digits), -int(exponent)) <= _MAX_DECIMAL_DIGITS:  # else no decimal holds it: compare as doubles
            return F.lit(exact)
    if isinstance(value, float) and isinstance(column_type, FloatType) and (
            value == 0 or _FLOAT_RANGE[0] <= abs(value) <= _FLOAT_RANGE[1]):
        # a float column holds 1.1 as 1.100000023841858: beside a double 1.1 it would break `maximum: 1.1`. Out of
        # a float's normal range the bound would round to 0 or infinity, so it stays a double there
        return F.lit(value).cast("float")
    if isinstance(value, int) and not isinstance(value, bool) and not _LONG_RANGE[0] <= value <= _LONG_RANGE[1]:
        # past a long Spark has no integer literal (lit fails): an exact decimal, else a double, as Spark reads it
        return F.lit(Decimal(value)) if len(str(abs(value))) <= _MAX_DECIMAL_DIGITS else F.lit(float(value))
    return F.lit(value)


@register("allowed_values")
def allowed_values(rule: Any, ctx: BuildContext) -> RulePlan:
    """A present value outside the list."""
    return RulePlan(violation=_not_in(ctx.col(rule.column), ctx.dtype(rule.column), rule.values),
                    expected=f"in {list(rule.values)}")


@register("regex")
def regex(rule: Any, ctx: BuildContext) -> RulePlan:
    """A present value with no match of the (Java) pattern; anchor it with ^...$ for a full match."""
    return RulePlan(violation=~rlike(ctx.col(rule.column).cast("string"), rule.pattern),
                    expected=f"matches {rule.pattern}")


@register("format")
def format_(rule: Any, ctx: BuildContext) -> RulePlan:
    """A present value not in the named format."""
    valid = formats.is_valid(rule.format, ctx.col(rule.column), rule.date_format, ctx.dtype(rule.column))
    return RulePlan(violation=~valid, expected=f"format {rule.format}")


@register("length")
def length(rule: Any, ctx: BuildContext) -> RulePlan:
    """Text length outside [min, max]."""
    size = F.length(ctx.col(rule.column).cast("string"))
    checks, expected = [], []
    if rule.min is not None:
        checks.append(size < F.lit(rule.min))
        expected.append(f"length >= {rule.min}")
    if rule.max is not None:
        checks.append(size > F.lit(rule.max))
        expected.append(f"length <= {rule.max}")
    return RulePlan(violation=_any(checks) if checks else None, expected=" and ".join(expected) or "any length")


@register("type")
def type_(rule: Any, ctx: BuildContext) -> RulePlan:
    """A present value that does not convert to the declared type (null / blank never violate)."""
    expected = f"type {rule.data_type}" + (f" ({rule.date_format})" if rule.date_format else "")
    reason = ctx.never_converts(rule.column, rule.data_type)
    if reason:
        expected += f"; {reason}"
    return RulePlan(violation=ctx.type_violation(rule.column, rule.data_type, rule.date_format), expected=expected)


@register("expression")
def expression(rule: Any, ctx: BuildContext) -> RulePlan:
    """Rows where the SQL boolean is false (null is not a violation)."""
    return RulePlan(violation=~ctx.expr(rule.expression, rule.name), expected=rule.expression,
                    content=rule.expression)


@register("foreign_key")
def foreign_key(rule: Any, ctx: BuildContext) -> RulePlan:
    """A non-null key absent from the reference (one left join per rule)."""
    ref = rule.reference
    where = ref.table or ref.path
    return RulePlan(violation=ctx.foreign_key_flag(rule.target_columns, ref),
                    expected=f"exists in {where}")


# --------------------------------------------------------------------------- dataset rules


@register("row_count")
def row_count(rule: Any, ctx: BuildContext) -> RulePlan:
    """Rows in scope against min / max and must_be / warn."""

    def finalize(m: Measured) -> Outcome:
        count = m.scope_rows
        extra = []
        if rule.min is not None and count < rule.min:
            extra.append(f"row count {count} is below min {rule.min}")
        if rule.max is not None and count > rule.max:
            extra.append(f"row count {count} is above max {rule.max}")
        outcome = judge(rule, float(count), extra=extra, what="row count")
        if outcome.threshold is None and (rule.min is not None or rule.max is not None):
            outcome.threshold = _bounds_text(rule.min, rule.max)
        return outcome

    return RulePlan(finalize=finalize, expected=_expected_thresholds(rule) or _bounds_text(rule.min, rule.max))


def _judges_percent(rule: Any) -> bool:
    """True when a count rule is judged as a percent of its rows: a `_percent` type or a `%` threshold."""
    texts = [getattr(rule, key, None) for key in ("must_be", "warn")]
    return rule.type.endswith("_percent") or any(
        text is not None and parse_threshold(text).unit == "percent" for text in texts)


def _count_metric_rule(rule: Any, violation: Column | None, what: str) -> RulePlan:
    """missing_* / invalid_* / duplicate_*: flag offending rows, compare the count or percent."""

    def finalize(m: Measured) -> Outcome:
        count = float(m.failed_count or 0)
        percent = 100.0 * count / m.scope_rows if m.scope_rows else None
        metric = percent if rule.type.endswith("_percent") else count
        if percent is None and _judges_percent(rule):  # a percent of no rows is no figure: not a failure
            return Outcome(True, "skipped", None, _expected_thresholds(rule), "skipped: no rows in scope")
        return judge(rule, metric, unit_metrics={"percent": percent}, what=f"{what} {rule.type.rsplit('_', 1)[1]}")

    return RulePlan(violation=violation, finalize=finalize, expected=_expected_thresholds(rule))


@register("missing_count", "missing_percent")
def missing(rule: Any, ctx: BuildContext) -> RulePlan:
    """Absent values; the rows are flagged, the count / percent (of rows in scope) is compared."""
    return _count_metric_rule(rule, _any(ctx.absent(c) for c in rule.target_columns), "missing")


@register("invalid_count", "invalid_percent")
def invalid(rule: Any, ctx: BuildContext) -> RulePlan:
    """Present values failing valid_format / valid_values / valid_regex."""
    column = _one_column(rule)
    value = ctx.col(column)
    if rule.valid_format is not None:
        bad = ~formats.is_valid(rule.valid_format, value, rule.date_format, ctx.dtype(column))
    elif rule.valid_values is not None:
        bad = _not_in(value, ctx.dtype(column), rule.valid_values)
    else:
        bad = ~rlike(value.cast("string"), rule.valid_regex)
    return _count_metric_rule(rule, bad, "invalid")


@register("duplicate_count", "duplicate_percent")
def duplicate(rule: Any, ctx: BuildContext) -> RulePlan:
    """Rows whose (composite) key occurs more than once; every such row is flagged."""
    return _count_metric_rule(rule, ctx.duplicate_flag(rule.target_columns, rule.filter), "duplicate")


def sum_can_overflow(dtype: DataType) -> bool:
    """Whether a sum of values of this type can overflow it: integral and decimal types (floating point cannot)."""
    return isinstance(dtype, (IntegralType, DecimalType))


def checked_sum(value: Column, dtype: DataType) -> Column:
    """The sum of `value` (of type `dtype`), null when it overflows, alike on Spark 3.5 and 4.0 and either ANSI mode.

    Plain `sum` of longs wraps without ANSI and aborts the whole pass with it (of decimals: null / abort);
    `try_sum` is null in both. Measured on 3.5 and 4.0, four long sums over 20M rows: try_sum as fast as sum
    (within the run-to-run noise), a sum of decimal(38,0) casts twice as slow. Floating point stays on `sum`.
    """
    return F.try_sum(value) if sum_can_overflow(dtype) else F.sum(value)


def avg_can_overflow(dtype: DataType) -> bool:
    """Whether an average of values of this type can overflow: decimals (Spark sums them as decimals; integers and
    floating point are averaged as doubles)."""
    return isinstance(dtype, DecimalType)


def checked_avg(value: Column, dtype: DataType) -> Column:
    """The average of `value` (of type `dtype`), null when its decimal sum overflows (try_avg), as checked_sum."""
    return F.try_avg(value) if avg_can_overflow(dtype) else F.avg(value)


def overflow_message(what: str, values: int, dtype: DataType) -> str:
    """The one line saying that a checked_sum of `values` values of type `dtype` overflowed (was null)."""
    # the type Spark sums in: bigint for integral types, ten more digits (at most 38) for decimals
    summed = f"decimal({min(38, dtype.precision + 10)},{dtype.scale})" if isinstance(dtype, DecimalType) else "bigint"
    return f"{what} overflowed: the sum of {values} value(s) does not fit in {summed}"


#: aggregates that can overflow: (the aggregate, null on overflow; whether it can overflow for a column type)
_CHECKED_AGGREGATES: dict[str, tuple[Callable[[Column, DataType], Column], Callable[[DataType], bool]]] = {
    "sum": (checked_sum, sum_can_overflow),
    "avg": (checked_avg, avg_can_overflow),
}
_AGGREGATES: dict[str, Callable[[Column], Column]] = {
    "min": F.min,
    "max": F.max,
    "stddev": F.stddev_samp,
}


@register("avg", "sum", "min", "max", "stddev")
def aggregate(rule: Any, ctx: BuildContext) -> RulePlan:
    """An aggregate of a numeric column compared with its thresholds; no values -> skipped; a sum that
    overflows its type fails."""
    column = _one_column(rule)
    value, dtype = ctx.in_scope(rule, ctx.number(column)), ctx.dtype(column)
    checked = _CHECKED_AGGREGATES.get(rule.type)
    aggregates = {"value": checked[0](value, dtype) if checked else _AGGREGATES[rule.type](value)}
    if checked and checked[1](dtype):
        aggregates["values"] = F.count(value)  # null with no values and on overflow: the count tells which

    def finalize(m: Measured) -> Outcome:
        metric = m.values["value"]  # exact (a Decimal or int) when Spark's is: judged against the bounds as written
        if metric is None and m.values.get("values"):
            return Outcome(False, status_of(rule, False), None, _expected_thresholds(rule),
                           overflow_message(f"{rule.type}({column})", m.values["values"], dtype))
        if metric is None:
            return Outcome(True, "skipped", None, _expected_thresholds(rule), f"skipped: no values in {column}")
        return judge(rule, metric, what=f"{rule.type}({column})")

    return RulePlan(aggregates=aggregates, finalize=finalize, expected=_expected_thresholds(rule))


@register("freshness")
def freshness(rule: Any, ctx: BuildContext) -> RulePlan:
    """Age in seconds of the newest value of a date / timestamp column, against a duration threshold."""
    latest = F.max(F.unix_timestamp(ctx.in_scope(rule, ctx.timestamp(rule.column))))

    def finalize(m: Measured) -> Outcome:
        newest = m.values["latest"]
        if newest is None:
            return Outcome(False, status_of(rule, False), None, _expected_thresholds(rule),
                           f"no value in {rule.column} to measure freshness")
        from dq_governance.observe.freshness import data_age, describe

        age = data_age(float(newest), getattr(ctx, "now", None))  # ctx.now: an injected clock (tests, replays)
        # A bare number in a freshness threshold means minutes, as in parse_duration.
        outcome = judge(rule, age, unit_metrics={None: age / 60.0}, what="age seconds")
        outcome.message = f"{describe(rule.column, rule.time, float(newest), age)}; {outcome.message}"
        return outcome

    return RulePlan(aggregates={"latest": latest}, finalize=finalize, expected=_expected_thresholds(rule))


@register("schema")
def schema(rule: Any, ctx: BuildContext) -> RulePlan:
    """The input DataFrame's schema has the required columns, with the stated types."""
    from dq_governance.checks.casting import parse_type, same_type

    def finalize(m: Measured) -> Outcome:
        actual = {f.name: f.dataType for f in ctx.input_schema.fields}
        problems = [f"missing column {c}" for c in rule.required_columns if c not in actual]
        for column, type_text in rule.column_types.items():
            if column not in actual:
                problems.append(f"missing column {column}")
            elif not same_type(actual[column], parse_type(type_text, f"{rule.name}.column_types.{column}")):
                problems.append(f"column {column} is {actual[column].simpleString()}, expected {type_text}")
        problems = list(dict.fromkeys(problems))
        if problems:
            return Outcome(False, status_of(rule, False), float(len(problems)), None, "; ".join(problems))
        return Outcome(True, "passed", 0.0, None, "schema matches")

    expected = ", ".join([*rule.required_columns, *(f"{c}: {t}" for c, t in rule.column_types.items())])
    return RulePlan(finalize=finalize, expected=expected or "any schema")


@register("sql")
def sql(rule: Any, ctx: BuildContext) -> RulePlan:
    """A query over `_validation_df` returning one boolean; true passes."""

    def finalize(m: Measured) -> Outcome:
        value = ctx.validation_query(rule.query, rule.name)
        if value is True:
            return Outcome(True, "passed", 1.0, None, "query returned true")
        message = rule.error_message or f"query returned {str(value).lower()}"
        return Outcome(False, status_of(rule, False), 0.0, None, message)

    return RulePlan(finalize=finalize, expected="query returns true", content=rule.query)


@register("reconcile")
def reconcile(rule: Any, ctx: BuildContext) -> RulePlan:
    """Row count and column sums equal the source's (sums within `tolerance`); a sum that overflows fails."""
    aggregates: dict[str, Column] = {}
    for column in rule.sum_columns:
        value = ctx.in_scope(rule, ctx.col(column))
        aggregates[f"sum:{column}"] = checked_sum(value, ctx.dtype(column))
        aggregates[f"values:{column}"] = F.count(value)  # a null sum of values: an overflow (see checked_sum)

    def finalize(m: Measured) -> Outcome:
        source = ctx.source_totals(rule.source, rule.sum_columns)
        problems, worst = [], 0.0
        if rule.compare_count:
            diff = abs(m.scope_rows - source["count"])
            worst = max(worst, float(diff))
            if diff:
                problems.append(f"row count {m.scope_rows} differs from source {source['count']}")
        for column in rule.sum_columns:
            mine, theirs = m.values[f"sum:{column}"], source[f"sum:{column}"]
            mine_values, their_values = m.values[f"values:{column}"], source[f"values:{column}"]
            unmeasured = []
            if mine is None and mine_values:
                unmeasured.append(overflow_message(f"sum({column})", mine_values, ctx.dtype(column)))
            if theirs is None and their_values:
                unmeasured.append(overflow_message(f"source sum({column})", their_values, source[f"type:{column}"]))
            if source[f"unconverted:{column}"]:  # left out of the source's sum, which then means nothing
                unmeasured.append(f"{source[f'unconverted:{column}']} source value(s) in {column} do not convert "
                                  f"exactly to {source[f'type:{column}'].simpleString()}: the source sum is not measured")
            if unmeasured:  # no difference to measure
                problems.extend(unmeasured)
                continue
            diff = _difference(mine or 0, theirs or 0)
            worst = max(worst, float(diff))
            if diff > _tolerance(rule.tolerance, diff):
                problems.append(f"sum({column}) differs from source by {_fmt(diff)} (tolerance {rule.tolerance})")
        if problems:
            return Outcome(False, status_of(rule, False), worst, f"tolerance {rule.tolerance}", "; ".join(problems))
        return Outcome(True, "passed", worst, f"tolerance {rule.tolerance}", "matches source")

    where = rule.source.table or rule.source.path
    return RulePlan(aggregates=aggregates, finalize=finalize, expected=f"matches {where}")


_EXACT = Context(prec=80)  # a difference of two 38-digit sums, to the last digit


def _difference(mine: Metric, theirs: Metric) -> Metric:
    """|mine - theirs|, exact for decimal and long sums (as floats, sums past 2^53 that differ by a cent are equal)."""
    if isinstance(mine, float) or isinstance(theirs, float):
        return abs(float(mine) - float(theirs))
    return abs(_EXACT.subtract(Decimal(mine), Decimal(theirs)))


def _tolerance(tolerance: Any, diff: Metric) -> Metric:
    return float(tolerance) if isinstance(diff, float) else Decimal(str(tolerance))


@register("volume")
def volume(rule: Any, ctx: BuildContext) -> RulePlan:
    """Row count in the rule's scope against history (median and MAD); without enough history: skipped.

    `ctx.volume_history` is one list of earlier counts for every volume rule, or a dict rule name -> that rule's
    own earlier counts (what a pipeline passes: a rule with `filter` is compared with its own filtered counts).
    """

    from dq_governance.observe.anomaly import volume_anomaly

    history = ctx.volume_history
    if isinstance(history, dict):
        history = history.get(rule.name)
    history = list(history or [])

    def finalize(m: Measured) -> Outcome:
        verdict = volume_anomaly(m.scope_rows, history, history_runs=rule.history_runs,
                                 min_history=rule.min_history, sensitivity=float(rule.sensitivity),
                                 min_rows=rule.min_rows, max_rows=rule.max_rows)
        count = float(m.scope_rows)
        if verdict.skipped:
            return Outcome(True, "skipped", count, None,
                           f"skipped: no history ({len(verdict.history)} of {rule.min_history} runs needed)")
        return judge(rule, count, extra=verdict.problems, what="row count")

    expected = f"robust z <= {rule.sensitivity} over {rule.history_runs} runs"
    if rule.min_rows is not None or rule.max_rows is not None:
        expected += "; rows " + str(_bounds_text(rule.min_rows, rule.max_rows))
    return RulePlan(finalize=finalize, expected=expected)


@register("schema_drift")
def schema_drift(rule: Any, ctx: BuildContext) -> RulePlan:
    """Columns added / removed / retyped since the last run (ctx.previous_schema); first run: skipped."""
    from dq_governance.observe.drift import schema_drift as diff, schema_of

    def finalize(m: Measured) -> Outcome:
        previous = getattr(ctx, "previous_schema", None)
        if previous is None:
            return Outcome(True, "skipped", None, None, "skipped: no earlier run with a recorded schema")
        changes = [c for c in diff(previous, schema_of(ctx.input_schema))
                   if not (rule.ignore_added and c.kind == "added")]
        outcome = judge(rule, float(len(changes)), what="schema changes",
                        extra=[] if rule.must_be or rule.warn or not changes else ["schema changed"])
        if changes:
            outcome.message = "; ".join(c.describe() for c in changes) + f" ({outcome.message})"
        return outcome

    return RulePlan(finalize=finalize, expected=_expected_thresholds(rule) or "no schema change since the last run")


@register("pii_undeclared")
def pii_undeclared(rule: Any, ctx: BuildContext) -> RulePlan:
    """Columns the PII scanner flags (values or names) that the contract does not mark `pii: true`.

    The scan samples the input (`sample` rows, fixed seed) in jobs of its own, like `sql` and `reconcile`;
    the row count comes from the check pass.
    The message names columns, entities and match rates, never a value.
    """

    def finalize(m: Measured) -> Outcome:
        from dq_governance.masking.detect import scan_pii
        from dq_governance.masking.proposals import evidence, undeclared

        report = scan_pii(ctx.input_df, sample_rows=rule.sample, min_confidence=rule.min_confidence,
                          total_rows=m.total_rows)
        ignored = {c.lower() for c in rule.ignore}  # a struct named there takes its fields with it
        found = [f for f in undeclared(report.findings, ctx.contract)
                 if not ignored & ({".".join(f.path[:n]).lower() for n in range(1, len(f.path))} | {f.column.lower()})]
        if not found:
            return Outcome(True, "passed", 0.0, None, f"no undeclared PII in {report.sampled_rows} sampled row(s)")
        listed = "; ".join(f"{f.column} ({evidence(f)})" for f in found)
        return Outcome(False, status_of(rule, False), float(len(found)), None,
                       f"{len(found)} column(s) look like PII but are not declared pii: true: {listed}")

    return RulePlan(finalize=finalize, expected=f"every column that looks like PII (confidence >= "
                                                f"{rule.min_confidence}) is declared pii: true")


#: undeclared_columns policy -> what happens to the columns, as the report says it
_UNDECLARED_FATE = {
    "drop": "left out of the outputs",
    "keep": "published as read",
    "mask": "masked in the outputs",
    "fail": "refused",
}


@register("undeclared_columns")
def undeclared_columns(rule: Any, ctx: BuildContext) -> RulePlan:
    """Data columns of the input the contract does not declare; from the column names, on the driver (no job).

    The metric is their count; warn severity for drop / keep / mask (they never block), error for `fail`.
    """
    from dq_governance.contracts.model import undeclared_columns as find

    def finalize(m: Measured) -> Outcome:
        found = find(ctx.contract, ctx.input_schema.names) if ctx.contract is not None else []
        if not found:
            return Outcome(True, "passed", 0.0, None, "every data column is declared in the contract")
        noun = "column" if len(found) == 1 else "columns"
        message = (f"{len(found)} {noun} not in the contract, {_UNDECLARED_FATE[rule.policy]} "
                   f"(undeclared_columns: {rule.policy}): {', '.join(found)}")
        return Outcome(False, status_of(rule, False), float(len(found)), None, message)

    return RulePlan(finalize=finalize, expected=f"every data column declared in the contract "
                                                f"(undeclared_columns: {rule.policy})")


# --------------------------------------------------------------------------- small helpers


def _any(conditions: Any) -> Column | None:
    result = None
    for condition in conditions:
        result = condition if result is None else (result | condition)
    return result


def _not_in(value: Column, dtype: DataType, allowed: list[Any]) -> Column:
    """A present value outside the list, comparing in the column's type when the values fit it."""
    if isinstance(dtype, BooleanType) and all(isinstance(v, bool) for v in allowed):
        return ~value.isin(allowed)
    numbers = [v for v in allowed if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if isinstance(dtype, NumericType) and numbers:  # numbers compare as numbers, quoted ones as text (README)
        listed = value.isin([_number(v, dtype) for v in numbers])
        texts = [str(v) for v in allowed if not isinstance(v, (int, float)) or isinstance(v, bool)]
        return ~(listed | value.cast("string").isin(texts)) if texts else ~listed
    texts = [str(v).lower() if isinstance(v, bool) else str(v) for v in allowed]
    text = value if isinstance(dtype, StringType) else value.cast("string")
    return ~text.isin(texts)


def _bounds_text(low: Any, high: Any) -> str | None:
    parts = ([f">= {low}"] if low is not None else []) + ([f"<= {high}"] if high is not None else [])
    return " and ".join(parts) or None


def _expected_thresholds(rule: Any) -> str | None:
    parts = []
    if getattr(rule, "must_be", None) is not None:
        parts.append(f"must_be {rule.must_be}")
    if getattr(rule, "warn", None) is not None:
        parts.append(f"warn {rule.warn}")
    return "; ".join(parts) or None

"""Evaluate a contract on a DataFrame in one pass: rule results, metrics and the valid / quarantine split.

Plan of one run:
1. a typed projection ("stage"): contract columns cast to their declared types, raw values kept aside;
2. one window over each distinct uniqueness key set (persisted duplicated keys, joined back by broadcast)
   and one left join per foreign key;
3. ONE Spark job over the input for every row condition, every per-rule count and every dataset metric:
   - mode "counts": a single `agg` of count_if conditions and metric aggregates;
   - mode "split": the typed columns plus one bit per row rule (packed into longs) are kept in Spark's
     cache (see materialize.py) and the same `agg` runs on top of them, so keeping and measuring are
     one job; valid and quarantine outputs then read the kept rows, never the input again, and spell
     out `_dq_errors` / `_dq_warnings` (names, not bits) only for the rows they return;
4. `sql` and `reconcile` rules run their own query (over the typed data / the source), one per rule.

Who frees the kept rows: the caller, through `CheckResult.release()` (publish does it after writing); the
outputs then read the input again.
"""

from __future__ import annotations

import base64
import functools
import logging
import re
import uuid
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import reduce
from typing import Any, Callable, Mapping, ParamSpec, Sequence, TypeVar

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    DataType,
    DateType,
    DoubleType,
    NumericType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from dq_governance.checks import casting, compat
from dq_governance.checks.materialize import Kept, count_rows, keep, persist_for_run, resolve_storage
from dq_governance.checks.registry import (
    DEFAULT_DIMENSIONS,
    Measured,
    Outcome,
    RulePlan,
    blocks,
    builder_for,
    checked_sum,
    status_of,
)
from dq_governance.checks.columns import ERRORS_COL, WARNINGS_COL
from dq_governance.checks.result import CheckResult, ColumnMetrics, RuleResult
from dq_governance.contracts.model import Contract, ReferenceSpec
from dq_governance.contracts.spark_types import char_limit
from dq_governance.errors import ConfigError, ContractError, InputDataError
from dq_governance.identifiers import quote_identifier, working_name_clashes
from dq_governance.scrub import contract_identifiers, scrub_message
from dq_governance.session import deterministic, first_line
from dq_governance.checks.disclosure import withheld
from dq_governance.checks.gate import decide

log = logging.getLogger(__name__)

VALID_COL = "__dq_valid"
MODES = ("split", "counts")
#: earlier row counts for volume rules: one list for every rule, or per rule name (a filtered rule has its own)
VolumeHistory = Sequence[int] | Mapping[str, Sequence[int]]
#: duplicated-key sets up to this many keys are broadcast to the main pass (no shuffle of the input)
BROADCAST_DUPLICATE_KEYS = 2_000_000
#: how much of one generated method a rule's condition takes, in units of a column's null test (see _BitLayout);
#: other rule types weigh 2
_WEIGHTS = {"format": 8, "expression": 4, "invalid_count": 4, "invalid_percent": 4, "length": 3}
_VIEW_RE = re.compile(r"(?<![\w`])_validation_df(?!\w)")
_PLAIN_TEXT = re.compile(r"[\w .:/-]*")


# Column references made during one evaluate(), by name. Each F.col is about a dozen py4j round trips
# (PySpark records the call site), and a 40-rule run asks for the same few names hundreds of times.
_COLUMNS: ContextVar[dict[str, Column] | None] = ContextVar("dq_governance_columns", default=None)
P = ParamSpec("P")
R = TypeVar("R")


def q(name: str) -> Column:
    """A top-level column by exact name (dots and spaces allowed)."""
    memo = _COLUMNS.get()
    column = memo.get(name) if memo is not None else None
    if column is None:
        column = F.col(quote_identifier(name))
        if memo is not None:
            memo[name] = column
    return column


def _with_column_memo(fn: Callable[P, R]) -> Callable[P, R]:
    """Run `fn` with its own memo of column references (q)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        token = _COLUMNS.set({})
        try:
            return fn(*args, **kwargs)
        finally:
            _COLUMNS.reset(token)

    return wrapper


#: Spark error conditions that mean an expression aggregates over rows (lint refuses the aggregates it knows;
#: one it does not, a UDAF say, is caught here) -> what to say instead of Spark's message
_AGGREGATE_CONDITIONS = frozenset({"MISSING_GROUP_BY", "NESTED_AGGREGATE_FUNCTION", "GROUP_BY_AGGREGATE"})


def _invalid_expression(rule_name: str, text: str, exc: BaseException) -> ContractError:
    condition = _condition(exc)
    if condition in _AGGREGATE_CONDITIONS:
        return ContractError(f"rule {rule_name}: {text!r} is an aggregate: use a `sql` rule for dataset-level "
                             "conditions")
    return ContractError(f"rule {rule_name}: invalid SQL expression {text!r}: {first_line(exc)}")


def _condition(exc: BaseException) -> str | None:
    """The error condition (class) of a Spark exception, e.g. MISSING_GROUP_BY; None for other exceptions."""
    for getter in ("getCondition", "getErrorClass"):
        method = getattr(exc, getter, None)
        if callable(method):
            try:
                value = method()
            except Exception:  # an older PySpark without the getter's backing field
                continue
            if value:
                return str(value)
    return None


def failure_line(contract: Contract | None, exc: BaseException) -> str:
    """The line naming why Spark failed on the data; its quoted values hidden when the contract declares a PII
    column (Spark quotes the offending value: `The value 'ana@example.com' cannot be cast`)."""
    line = first_line(exc)
    if contract is not None and any(spec.pii for _, spec in contract.iter_fields()):
        return scrub_message(line, contract_identifiers(contract))
    return line


@dataclass
class _Field:
    """One contract column in the stage."""

    name: str
    declared: DataType
    conversion: casting.Conversion
    raw_alias: str | None  # hidden column holding the raw value when the typed value differs
    date_format: str | None
    pii: bool


class BuildContext:
    """What rule builders see: typed columns, scopes, and the joins the engine adds for them."""

    def __init__(self, spark: SparkSession, df: DataFrame, stage: DataFrame, fields: dict[str, _Field],
                 run_tag: str, volume_history: VolumeHistory | None, nested: frozenset[str] = frozenset()):
        self.spark = spark
        self.input_df = df  # as read (annotations of an earlier check dropped), for rules that scan it
        self.input_schema: StructType = df.schema
        self.contract: Contract | None = None
        self.stage = stage
        self.fields = fields
        self.run_tag = run_tag
        self.volume_history = volume_history
        self.now: datetime | None = None  # the freshness clock; None = wall clock
        self.previous_schema: dict[str, str] | None = None  # the last run's input schema, for schema_drift
        # a struct field's dotted path is a path even when the input also holds a column of that very name
        self._columns = set(stage.columns) - nested
        # the input's columns, typed: what valid_df and `sql` rules see (the raw copies left out)
        self.user_columns = [c for c in stage.columns if not c.startswith("__dq_raw")]
        self._dtypes = {f.name: f.dataType for f in stage.schema.fields}
        self.duplicate_sets: dict[tuple[tuple[str, ...], str | None], int] = {}
        self.foreign_keys: list[tuple[list[str], ReferenceSpec]] = []
        self.validation_frame: DataFrame | None = None  # the typed rows of this run, for `sql` rules
        self._view: str | None = None
        self._expressions: dict[str, Column] = {}
        self._unchecked: dict[str, str] = {}  # expression text -> the rule naming it, until check_expressions()
        self._expressions_checked = False

    # -- column access (typed values) ----------------------------------------
    def col(self, name: str) -> Column:
        """The typed value of a column (contract columns are cast; others as read)."""
        return q(name) if name in self._columns else F.col(self.sql(name))

    def sql(self, name: str) -> str:
        """`col(name)` as SQL text: a top-level name quoted whole, else a path of quoted parts."""
        if name in self._columns:
            return quote_identifier(name)
        return ".".join(map(quote_identifier, name.split(".")))

    def absent(self, name: str) -> Column:
        """True where the column has no value: null, or blank text for a converted text column.

        Judged on the raw value, so a malformed value ("abc" in a long column) is a type violation
        only, not also a missing one.
        """
        spec = self.fields.get(name)
        if spec is None or spec.raw_alias is None:
            return self.col(name).isNull()
        raw = q(spec.raw_alias)
        return raw.isNull() | (F.trim(raw) == F.lit("")) if spec.conversion.text_source else raw.isNull()

    def dtype(self, name: str) -> DataType:
        """The typed Spark type of a column or dotted nested path."""
        if name in self._columns:
            return self._dtypes[name]
        current: DataType = self.stage.schema
        for part in name.split("."):
            if not isinstance(current, StructType) or part not in current.names:
                raise InputDataError(f"column {name} is not in the input")
            current = current[part].dataType
        return current

    def number(self, name: str) -> Column:
        """The column as a number: typed numeric as is, text through try_cast to double."""
        dtype = self.dtype(name)
        if isinstance(dtype, (NumericType, DateType, TimestampType, TimestampNTZType)):
            return self.col(name)
        return compat.try_cast(self.sql(name), "double")

    def temporal(self, name: str) -> Column:
        """The column as a date or timestamp: typed date / timestamp columns as they are, text through try_cast."""
        dtype = self.dtype(name)
        if isinstance(dtype, (DateType, TimestampType, TimestampNTZType)):
            return self.col(name)
        return compat.try_cast(self.sql(name), "timestamp")

    def timestamp(self, name: str) -> Column:
        """The column as a timestamp (dates at midnight, text through try_cast, all in the session time zone)."""
        dtype = self.dtype(name)
        if isinstance(dtype, TimestampType):
            return self.col(name)
        # timestamp_ntz digits are wall-clock time, as text is: read in the session zone (unix_timestamp takes UTC)
        if isinstance(dtype, (DateType, TimestampNTZType)):
            return self.col(name).cast("timestamp")
        return compat.try_cast(self.sql(name), "timestamp")

    def expr(self, text: str, rule_name: str) -> Column:
        """A SQL expression over the typed columns; a bad one is a one-line ContractError (see check_expressions)."""
        column = self._expressions.get(text)
        if column is None:
            try:
                column = F.expr(text)  # parsed here
            except Exception as exc:
                raise _invalid_expression(rule_name, text, exc) from None
            self._expressions[text] = column
            self._unchecked[text] = rule_name
            if self._expressions_checked:
                self.check_expressions()
        return column

    def check_expressions(self) -> None:
        """Resolve every expression made so far against the typed columns, in one analysis (no job).

        Beside every column of the row, as the pass computes them: an aggregate, which a select of the
        expressions alone would accept as a one-row query, fails here and is named.
        """
        self._expressions_checked = True
        pending, self._unchecked = self._unchecked, {}
        if not pending:
            return
        try:
            # `.schema`: a Spark Connect session analyses only when asked (a classic one at withColumns)
            _ = self.stage.withColumns({f"__dq_e{i}": self._expressions[text] for i, text in enumerate(pending)}).schema
        except Exception as together:
            for text, rule_name in pending.items():  # which one: only on this error path, one analysis each
                try:
                    _ = self.stage.withColumns({"__dq_e": self._expressions[text]}).schema
                except Exception as exc:
                    raise _invalid_expression(rule_name, text, exc) from None
            raise ContractError(f"rule expressions do not resolve together: {first_line(together)}") from None

    def scope(self, rule: Any) -> Column | None:
        """The rule's `filter` as a non-null boolean, or None when it applies to every row."""
        if not rule.filter:
            return None
        return F.coalesce(self.expr(rule.filter, rule.name), F.lit(False))

    def in_scope(self, rule: Any, value: Column) -> Column:
        """The value where the rule applies, null elsewhere (for aggregates)."""
        scope = self.scope(rule)
        return value if scope is None else F.when(scope, value)

    # -- rules that need the engine --------------------------------------------
    def type_violation(self, column: str, data_type: str, date_format: str | None) -> Column | None:
        """True where a present raw value does not convert to `data_type`, or is longer than its varchar(n)."""
        declared = casting.parse_type(data_type, f"{column}_type")
        spec = self.fields.get(column)
        if spec is not None and casting.same_type(spec.declared, declared) and spec.date_format == date_format:
            raw = q(spec.raw_alias) if spec.raw_alias else q(column)
            violation, typed = spec.conversion.violation(raw, q(column)), q(column)
        else:
            nested = self._nested_raw(column)
            if nested is not None:  # a struct's field: judged on its raw value, as its struct's conversion read it
                raw, raw_type = nested
            else:
                raw = q(spec.raw_alias) if spec and spec.raw_alias else self.col(column)
                raw_type = self._raw_type(column)
            conversion = casting.convert(raw, raw_type, declared, date_format)
            violation, typed = conversion.violation(raw, conversion.typed), conversion.typed
        limit = char_limit(data_type)
        if limit is None:
            return violation
        return casting.too_long(typed, limit) if violation is None else violation | casting.too_long(typed, limit)

    def _nested_raw(self, column: str) -> tuple[Column, DataType] | None:
        """The raw value and input type of a dotted path inside a contract struct, or None for other columns."""
        if column in self._columns:
            return None
        top = next((name for name in self.fields if column.startswith(name + ".")), None)
        if top is None or top not in self.input_schema.names:
            return None
        spec = self.fields[top]
        value = q(spec.raw_alias) if spec.raw_alias else q(top)
        data_type: DataType = self.input_schema[top].dataType
        if isinstance(data_type, StringType) and isinstance(spec.declared, StructType):  # JSON text
            data_type = casting.as_text(spec.declared)
            value = F.from_json(value, data_type)
        for part in column[len(top) + 1:].split("."):
            if not isinstance(data_type, StructType) or part not in data_type.names:
                return None
            value, data_type = value.getField(part), data_type[part].dataType
        return value, data_type

    def never_converts(self, column: str, data_type: str) -> str | None:
        """Why no value of the column's input type converts to `data_type`, or None."""
        nested = self._nested_raw(column)
        raw_type = nested[1] if nested is not None else self._raw_type(column)
        return casting.never_converts(raw_type, casting.parse_type(data_type, f"{column}_type"))

    def _raw_type(self, column: str) -> DataType:
        return self.input_schema[column].dataType if column in self.input_schema.names else self.dtype(column)

    def duplicate_flag(self, columns: list[str], filter_sql: str | None) -> Column:
        """True on every row whose key occurs more than once (one window per distinct key set)."""
        key = (tuple(columns), filter_sql or None)
        index = self.duplicate_sets.setdefault(key, len(self.duplicate_sets))
        return q(f"__dq_dup{index}").isNotNull()

    def foreign_key_flag(self, columns: list[str], reference: ReferenceSpec) -> Column:
        """True where every key column is present and the key is absent from the reference."""
        index = len(self.foreign_keys)
        self.foreign_keys.append((list(columns), reference))
        present = reduce(lambda a, b: a & b, [self.col(c).isNotNull() for c in columns])
        return present & q(f"__dq_fk{index}").isNull()

    def validation_query(self, query: str, rule_name: str) -> Any:
        """Run a `sql` rule's query with `_validation_df` bound to the typed data of this run."""
        if self._view is None:
            self._view = f"_validation_df_{self.run_tag}"
            assert self.validation_frame is not None
            self.validation_frame.selectExpr(*map(quote_identifier, self.user_columns)).createOrReplaceTempView(self._view)
        text = _VIEW_RE.sub(self._view, query)
        try:
            rows = self.spark.sql(text).collect()
        except Exception as exc:
            raise ContractError(f"rule {rule_name}: query failed: {failure_line(self.contract, exc)}") from None
        if len(rows) != 1 or len(rows[0]) != 1:
            raise ContractError(f"rule {rule_name}: query must return one row with one boolean column")
        value = rows[0][0]
        if value is not None and not isinstance(value, bool):
            raise ContractError(f"rule {rule_name}: query returned {type(value).__name__}, expected a boolean")
        return value

    def source_totals(self, spec: ReferenceSpec, sum_columns: list[str]) -> dict[str, Any]:
        """Row count and, per column, the sum, its count of values and the type summed (`sum:<c>`, `values:<c>`,
        `type:<c>`) of a reconcile source, in one aggregation over the source; an overflowing sum is null."""
        source = read_reference(self.spark, spec)
        missing = [c for c in sum_columns if c not in source.columns]
        if missing:
            raise InputDataError(f"reconcile source {spec.table or spec.path} has no column(s) {', '.join(missing)}")
        aggregates = [F.count(F.lit(1))]
        summed: dict[str, DataType] = {}  # the type each sum is taken in
        for column in sum_columns:
            found = source.schema[column].dataType
            if isinstance(found, NumericType):  # summed in its own type: exact, and compared with ours as written
                value, summed[column], unconverted = q(column), found, F.lit(0)
            else:  # text (a csv source): only values that convert exactly; the others are counted, not dropped
                target = self.dtype(column) if column in self._dtypes else None
                summed[column] = target if isinstance(target, NumericType) else DoubleType()
                conversion = casting.convert(quote_identifier(column), found, summed[column])
                value, failed = conversion.typed, conversion.violation(q(column), conversion.typed)
                unconverted = F.count(F.when(failed, 1)) if failed is not None else F.lit(0)
            aggregates += [checked_sum(value, summed[column]), F.count(value), unconverted]
        row = source.agg(*aggregates).collect()[0]
        out: dict[str, Any] = {"count": row[0]}
        for i, column in enumerate(sum_columns):
            total, values, unconverted = row[3 * i + 1: 3 * i + 4]
            out.update({f"sum:{column}": total, f"values:{column}": values, f"unconverted:{column}": unconverted,
                        f"type:{column}": summed[column]})
        return out

    def drop_view(self) -> None:
        """Drop this run's `_validation_df` view."""
        if self._view is not None:
            self.spark.catalog.dropTempView(self._view)
            self._view = None


def read_reference(spark: SparkSession, spec: ReferenceSpec) -> DataFrame:
    """A reference / source dataset by table name or path (csv read with header, as strings)."""
    try:
        if spec.table:
            frame = spark.table(spec.table)
            _ = frame.schema  # analysed here on Spark Connect too, so a missing table is this one-line error
            return frame
        fmt = (spec.format or spec.path.rsplit(".", 1)[-1]).lower()  # type: ignore[union-attr]
        reader = spark.read
        if fmt == "csv":
            reader = reader.option("header", "true")
        elif fmt == "json":
            reader = reader.option("primitivesAsString", "true")
        frame = reader.format(fmt).load(spec.path)
        _ = frame.schema
        return frame
    except Exception as exc:
        raise InputDataError(f"cannot read reference {spec.table or spec.path}: {first_line(exc)}") from None


# --------------------------------------------------------------------------- the run


@_with_column_memo
def evaluate(
    df: DataFrame,
    contract: Contract,
    *,
    run_id: str | None = None,
    pipeline: str | None = None,
    source: str | None = None,
    mode: str = "split",
    spark: SparkSession | None = None,
    volume_history: VolumeHistory | None = None,
    now: datetime | None = None,
    previous_schema: dict[str, str] | None = None,
    storage: str = "auto",
) -> CheckResult:
    """Evaluate every rule of the contract on df; mode "split" also returns annotated/valid/quarantine.

    `storage` keeps the split's rows between the pass and the outputs: "packed", "cache" or "auto".
    """
    if mode not in MODES:
        raise ConfigError(f"unknown check mode {mode!r}; expected one of {', '.join(MODES)}")
    resolve_storage(storage)  # an unknown name fails before any Spark work
    started = datetime.now(timezone.utc)
    spark = spark or df.sparkSession
    run_id = run_id or str(uuid.uuid4())
    rules = contract.check_rules()
    _require_columns(df, contract, rules, source)
    previous = [c for c in (ERRORS_COL, WARNINGS_COL) if c in df.columns]
    if previous:  # re-checking annotated data (e.g. a quarantine table): the old annotations are replaced
        df = df.drop(*previous)

    if any(getattr(item, "date_format", None) for item in [*contract.fields, *rules]) or any(
            rule.type == "format" and rule.format in ("date", "timestamp") for rule in rules):
        # the pattern parser reads these (a date or timestamp format, named or not): under 3.5's default policy it
        # aborts the pass, and under LEGACY it takes text such as "2024-1-1 1:2:3" as valid
        compat.check_time_parser(spark)  # before any Spark work
    cached: list[DataFrame] = []
    pinned: DataFrame | None = None
    if deterministic(df) is False and not _user_cached(df):
        # rand() or a nondeterministic UDF in the input: the duplicated keys, the pass, `sql` rules and the
        # outputs must all read the same rows, so the input is read once and kept (split: until released)
        log.info("the input of %s is nondeterministic: it is read once and kept for this run", source or contract.name)
        df = pinned = persist_for_run(df)
        cached.append(pinned)
    ctx, plans = build_rules(spark, df, contract, rules, volume_history=volume_history)
    stage, fields = ctx.stage, ctx.fields
    ctx.now, ctx.previous_schema = now, previous_schema

    try:
        flagged = _join_flags(ctx, stage, cached)
    except BaseException:
        for frame in cached:
            frame.unpersist()
        raise
    keys: list[str] = []
    aggs: list[Column] = []

    def add(key: str, column: Column) -> None:
        keys.append(key)
        aggs.append(column)

    add("total", F.count(F.lit(1)))
    for index, (rule, plan, violation) in enumerate(plans):
        scope = ctx.scope(rule)
        if scope is not None:
            add(f"scope{index}", F.count_if(scope))
        for name, column in plan.aggregates.items():
            add(f"r{index}:{name}", column)
    kept: Kept | None = None
    row_rules = [(i, rule, v) for i, (rule, _p, v) in enumerate(plans) if v is not None]
    layout, conditions, null_flags = _layout(ctx, row_rules)
    metric_columns = _column_metric_aggregates(ctx, layout, null_flags, add)
    for index, _rule, _v in row_rules:
        add(f"v{index}", layout.count(index))
    add("valid", layout.count_valid())
    # One withColumns names every condition (one call to the JVM for all, where an alias each would be one
    # more Column operation each); everything built on the names is SQL text, one call per expression, where
    # the same from Column operators costs a dozen (most of the driver's time with 40 rules).
    with_flags = flagged.withColumns(layout.flag_columns(conditions)) if conditions else flagged
    # The rows as measured: the words (one bit per flag) and the validity column. The split keeps them beside
    # the typed columns (a few longs, not arrays of names: building and caching two arrays for every row cost
    # about a tenth of the split); names are spelled out only when an output is read. The counts pass keeps
    # nothing: the aggregate reads the words and the few columns its metrics name (Spark prunes the rest, so
    # text columns are never copied out of the scan).
    passed = stage.columns if mode == "split" else flagged.columns
    full = with_flags.selectExpr(*map(quote_identifier, passed), *layout.columns())
    measured_frame = full
    try:
        try:  # THE pass over the input: every count and metric (and in split mode the kept rows)
            if mode == "split":
                # One `agg` over the kept frame builds it and measures in the same job. observe() riding on
                # the cache build was tried: with 40 rules on 2M rows it took 95 s against 26 s for this agg.
                kept = keep(measured_frame, storage, loose=layout.kept_names(), source=df)
                cached.append(kept)
                measured_frame = kept.frame
            row = measured_frame.agg(*aggs).collect()[0]
        except Exception as exc:
            raise InputDataError(f"checking {source or contract.name} failed: {failure_line(contract, exc)}") from None
        values = dict(zip(keys, row))
        for frame in [f for f in cached if f is not kept and f is not pinned]:  # duplicated keys: used up
            frame.unpersist()
            cached.remove(frame)
        ctx.validation_frame = measured_frame  # read by `sql` rules only, each building its view from it
        total = int(values["total"])
        pii = contract.pii_columns()
        results = [withheld(_result(rule, plan, index, values, total), _read_columns(rule), pii)
                   for index, (rule, plan, _v) in enumerate(plans)]
        if pinned is not None and mode == "counts":  # `sql` rules have read it: nothing is left to read
            pinned.unpersist()
            cached.remove(pinned)
    except BaseException:
        for frame in cached:
            frame.unpersist()
        raise
    finally:
        ctx.drop_view()

    valid_rows = int(values["valid"])
    gate, status = decide(
        results,
        on_failure=contract.quality.on_failure,
        minimum_valid_ratio=contract.quality.minimum_valid_ratio,
        total_rows=total,
        valid_rows=valid_rows,
    )
    result = CheckResult(
        run_id=run_id,
        contract_name=contract.name,
        contract_version=contract.version,
        pipeline=pipeline or contract.name,
        rules=results,
        total_rows=total,
        valid_rows=valid_rows,
        invalid_rows=total - valid_rows,
        status=status,
        gate=gate,
        started_at=started,
        finished_at=datetime.now(timezone.utc),
        column_metrics=_column_metrics(metric_columns, values),
        source=source,
        on_failure=contract.quality.on_failure,
        pii_columns=contract.pii_columns(),
        cached=cached,
        input_schema={f.name: f.dataType.simpleString() for f in df.schema.fields},
        contract=contract,
    )
    if mode == "counts":
        result.row_outputs = "none"
    else:
        assert kept is not None
        result.split_storage = kept.storage
        named = [(index, rule) for index, rule, _v in row_rules]
        result.outputs_from(_Outputs.of(layout, named, fields, df.columns, ctx.user_columns, kept.frame, full).build)
    return result


# --------------------------------------------------------------------------- steps


def build_rules(spark: SparkSession, df: DataFrame, contract: Contract, rules: list[Any], *,
                volume_history: VolumeHistory | None = None,
                ) -> tuple[BuildContext, list[tuple[Any, RulePlan, Column | None]]]:
    """The typed stage and each rule's plan, its violation scoped by the rule's `filter` (no Spark job).

    The one place rules become Spark expressions: `evaluate` measures them, and `checks.sql_text` compiles
    the same row conditions to SQL text for the session extension.
    """
    stage, fields = _stage(df, contract)
    ctx = BuildContext(spark, df, stage, fields, uuid.uuid4().hex[:12], volume_history, contract.nested_paths())
    ctx.contract = contract
    plans: list[tuple[Any, RulePlan, Column | None]] = []
    for rule in rules:
        plan = builder_for(rule.type)(rule, ctx)
        violation = plan.violation
        scope = ctx.scope(rule)
        if violation is not None and scope is not None:
            violation = scope & violation
        plans.append((rule, plan, violation))
    ctx.check_expressions()
    return ctx, plans


def _user_cached(df: DataFrame) -> bool:
    """Whether the caller has persisted `df` (its rows are read once already; its cache is theirs to release)."""
    level = df.storageLevel
    return level.useMemory or level.useDisk


def _require_columns(df: DataFrame, contract: Contract, rules: list[Any], source: str | None) -> None:
    """InputDataError (one line) naming the contract / rule columns the input lacks."""
    present = set(df.columns)

    def has(path: str) -> bool:
        return path in present or path.split(".", 1)[0] in present

    where = f"{source}: " if source else ""
    clash = working_name_clashes(df.columns)
    if clash:
        raise InputDataError(where + clash)
    missing = [c for c in contract.column_names() if c not in present]
    if missing:
        raise InputDataError(
            f"{where}input is missing contract column(s) {', '.join(missing)} (contract {contract.name})"
        )
    for rule in rules:
        if rule.type == "schema":
            continue  # reporting absent columns is that rule's job
        needed = list(rule.target_columns) + list(getattr(rule, "sum_columns", []) or [])
        absent = [c for c in needed if not has(c)]
        if absent:
            raise InputDataError(f"{where}rule {rule.name} reads column(s) {', '.join(absent)} missing from the input")


def _stage(df: DataFrame, contract: Contract) -> tuple[DataFrame, dict[str, _Field]]:
    """The typed projection: contract columns cast to their types, raw values kept as hidden columns."""
    specs = {f.name: f for f in contract.fields}
    columns: list[Column] = []
    fields: dict[str, _Field] = {}
    for position, struct_field in enumerate(df.schema.fields):
        name = struct_field.name
        spec = specs.get(name)
        if spec is None:
            columns.append(q(name))
            continue
        declared = casting.parse_type(spec.type, f"schema.fields.{name}.type")
        conversion = casting.convert(q(name), struct_field.dataType, declared, spec.date_format,
                                     _nested_formats(spec.fields))
        raw_alias = f"__dq_raw{position}" if conversion.changes else None
        columns.append(conversion.typed.alias(name) if conversion.changes else q(name))
        if raw_alias:
            columns.append(q(name).alias(raw_alias))
        fields[name] = _Field(name, declared, conversion, raw_alias, spec.date_format, spec.pii)
    converted = any(spec.raw_alias for spec in fields.values())
    return (df.select(*columns) if converted else df), fields  # nothing to convert: no projection to analyse


def _nested_formats(fields: list[Any] | None, prefix: str = "") -> dict[str, str]:
    """The date formats of a struct's nested fields, by dotted path below the struct."""
    found: dict[str, str] = {}
    for spec in fields or []:
        path = prefix + spec.name
        if spec.date_format:
            found[path] = spec.date_format
        found.update(_nested_formats(spec.fields, path + "."))
    return found


def _join_flags(ctx: BuildContext, stage: DataFrame, cached: list[DataFrame]) -> DataFrame:
    """Add a marker column per duplicated-key set (a window over the key + broadcast join) and per foreign key."""
    flagged = stage
    for (columns, filter_sql), index in ctx.duplicate_sets.items():
        marker = f"__dq_dup{index}"
        aliases = [f"__dq_d{index}k{j}" for j in range(len(columns))]
        present = reduce(lambda a, b: a & b, [ctx.col(c).isNotNull() for c in columns])
        if filter_sql:
            present = present & F.coalesce(ctx.expr(filter_sql, f"unique({','.join(columns)})"), F.lit(False))
        duplicates = persist_for_run(_duplicated_keys(
            stage.where(present).select(*[ctx.col(c).alias(a) for c, a in zip(columns, aliases)]), aliases, marker))
        cached.append(duplicates)
        found = count_rows(duplicates)  # the one shuffle for this key set
        if found == 0:
            flagged = flagged.withColumn(marker, F.lit(None).cast("long"))
            continue
        right = F.broadcast(duplicates) if found <= BROADCAST_DUPLICATE_KEYS else duplicates
        condition = reduce(lambda a, b: a & b, [ctx.col(c) == q(a) for c, a in zip(columns, aliases)])
        flagged = flagged.join(right, on=condition, how="left").drop(*aliases)
    for index, (columns, reference) in enumerate(ctx.foreign_keys):
        marker = f"__dq_fk{index}"
        ref_columns = reference.columns or ([reference.column] if reference.column else list(columns))
        if len(ref_columns) != len(columns):
            raise ContractError(f"foreign_key on {', '.join(columns)}: reference names {len(ref_columns)} column(s)")
        ref = read_reference(ctx.spark, reference)
        absent = [c for c in ref_columns if c not in ref.columns]
        if absent:
            raise InputDataError(f"reference {reference.table or reference.path} has no column(s) {', '.join(absent)}")
        aliases = [f"__dq_f{index}k{j}" for j in range(len(columns))]
        keys = []
        for column, ref_column, alias in zip(columns, ref_columns, aliases):
            value = casting.comparable(quote_identifier(ref_column), ref.schema[ref_column].dataType, ctx.dtype(column))
            keys.append(value.alias(alias))
        present = reduce(lambda a, b: a & b, [q(a).isNotNull() for a in aliases])
        known = ref.select(*keys).where(present).distinct().withColumn(marker, F.lit(True))
        condition = reduce(lambda a, b: a & b, [ctx.col(c) == q(a) for c, a in zip(columns, aliases)])
        flagged = flagged.join(known, on=condition, how="left").drop(*aliases)
    return flagged


def _duplicated_keys(keys: DataFrame, aliases: list[str], marker: str) -> DataFrame:
    """One row per key that occurs more than once in `keys`, with its row count in `marker`.

    A window over the key rather than groupBy: a unique rule expects distinct keys, and on distinct keys the
    partial hash aggregation groupBy plans first only builds a map the shuffle then repeats; the window
    shuffles once and sorts. Measured on 2M cached rows (local[2]): 0.60 s against 0.81 s for long keys
    with 0.5% duplicated, 0.78 s against 1.18 s for string keys, 0.59 s against 0.67 s with every key twice.
    A key held by most rows costs more (95% of rows on one key: 0.78 s against 0.25 s): that group is one
    task's sorted run, which spills rather than fails when it outgrows memory.
    """
    names = ", ".join(map(quote_identifier, aliases))
    group, first = f"PARTITION BY {names} ORDER BY {names}", f"{marker}_first"
    # SQL text: one call to the JVM per expression (see evaluate)
    counted = keys.selectExpr(
        *map(quote_identifier, aliases),
        f"count(1) OVER ({group} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS {marker}",
        f"row_number() OVER ({group}) AS {first}",
    )
    return counted.where(f"{marker} > 1 AND {first} = 1").drop(first)


class _BitLayout:
    """Row flags packed into long columns ("words", 63 flags a word) and one validity column, all as SQL text.

    A flag is a row rule's violation or a column's null test (for the column metrics); a not_null rule and
    its column's null test share one flag when they are the same condition.

    Why groups: Spark generates one Java method for a stage's per-row work, and the JVM never compiles a
    method past 8,000 bytes of bytecode (the pass then runs interpreted, several times slower). Each word is
    built from groups of at most GROUP_WEIGHT flags, and every group appears twice in the projection: in its
    word, and in the validity test. Spark's subexpression elimination then moves each group into a method of
    its own, so the per-row method only calls them and its size grows by a few bytes per group, not by the
    size of every condition. Measured on 127 row rules (1M rows, 66 columns): the largest generated method
    was 2.8 KB, against 29.7 KB with the words as plain expressions. The two copies read two names of the
    same conditions (`__dq_v<n>` and `__dq_w<n>`, see flag_columns): each name is used once, so Spark's
    optimizer inlines the conditions into the one projection, where one name used twice would keep them in a
    projection of their own, fused into the per-row method again.
    """

    BITS = 63  # bits 0..62: the sign bit stays unused
    #: the weight of the flags in one group (one method); a null test weighs 1, a rule its _WEIGHTS entry
    GROUP_WEIGHT = 32
    #: rules per chunk of the name arrays of the outputs (see arrays)
    NAME_CHUNK = 32

    def __init__(self, flags: list[tuple[Any, bool, int]]):
        """`flags`: (key, blocks, weight) in order; `blocks` marks error flags, which make a row invalid."""
        self.keys = [key for key, _blocks, _weight in flags]
        self.slot = {key: (f"__dq_bits{n // self.BITS}", 1 << (n % self.BITS)) for n, key in enumerate(self.keys)}
        self.position = {key: n for n, key in enumerate(self.keys)}
        self.groups: list[list[tuple[Any, bool]]] = []
        weight = 0
        for n, (key, blocks_rows, w) in enumerate(flags):
            if not self.groups or n % self.BITS == 0 or weight + w > self.GROUP_WEIGHT:  # a group stays in its word
                self.groups.append([])
                weight = 0
            self.groups[-1].append((key, blocks_rows))
            weight += w

    def flag_columns(self, conditions: dict[Any, Column]) -> dict[str, Column]:
        """Each condition under its two names (`__dq_v<n>` for the words, `__dq_w<n>` for the validity test)."""
        out = {f"__dq_v{self.position[key]}": column for key, column in conditions.items()}
        out.update({f"__dq_w{self.position[key]}": column for key, column in conditions.items()})
        return out

    def _group(self, group: list[tuple[Any, bool]], prefix: str) -> str:
        # A null condition sets no bit. Bitwise or, not +: under ANSI mode + is an overflow-checked call.
        return "(" + " | ".join(f"IF(`{prefix}{self.position[key]}`, {self.slot[key][1]}L, 0L)"
                                for key, _blocks in group) + ")"

    def columns(self) -> list[str]:
        """SQL of the word columns and of `__dq_valid` (true where the row violates no error flag)."""
        words: dict[str, list[str]] = {}
        tests = []
        for group in self.groups:
            word = self.slot[group[0][0]][0]
            words.setdefault(word, []).append(self._group(group, "__dq_v"))
            # Every group is tested, a group of warnings against mask 0: the test is the group's second use.
            mask = sum(self.slot[key][1] for key, blocks_rows in group if blocks_rows)
            tests.append(f"({self._group(group, '__dq_w')} & {mask}L) != 0")
        valid = f"NOT ({' OR '.join(tests)})" if tests else "true"
        return [f"{' | '.join(parts)} AS `{word}`" for word, parts in words.items()] + [f"{valid} AS {VALID_COL}"]

    def word_names(self) -> list[str]:
        """The names of the word columns, in order."""
        return list(dict.fromkeys(word for word, _bit in self.slot.values()))

    def kept_names(self) -> list[str]:
        """The columns the split keeps beside the row: the words and the validity column."""
        return [*self.word_names(), VALID_COL]

    def test(self, key: Any) -> str:
        """SQL: true where the row's flag `key` is set."""
        return self._any_set([key])

    def _any_set(self, keys: list[Any]) -> str:
        """SQL: true where any of the flags `keys` is set (one mask per word they lie in)."""
        masks: dict[str, int] = {}
        for key in keys:
            word, bit = self.slot[key]
            masks[word] = masks.get(word, 0) | bit
        return " OR ".join(f"(`{word}` & {mask}L) != 0" for word, mask in masks.items())

    def count(self, key: Any) -> Column:
        """How many rows have flag `key` set (an aggregate)."""
        return F.expr(f"count_if({self.test(key)})")

    def valid(self) -> str:
        """SQL: true where the row violates no error rule (never null)."""
        return VALID_COL

    def count_valid(self) -> Column:
        """How many rows violate no error rule (an aggregate)."""
        return F.expr(f"count_if({VALID_COL})")

    def arrays(self, rules: list[tuple[Any, Any]]) -> tuple[str, str]:
        """SQL: array<string> of the error and of the warning rule names the row violates, in contract order.

        The names come in chunks of NAME_CHUNK rules, each chunk one array with its error rules first: the
        error array takes a slice of every chunk and the warning array the rest, so every chunk appears twice
        and gets a method of its own (see the class docstring; one array entry per rule in the per-row
        method took 21 KB of bytecode with 127 rules).

        A chunk whose bits are all clear is the empty array, tested with one mask per word before any name
        is built: a row that breaks one row rule of 127 then builds one chunk, not four. Measured on
        bench_checks.py --wide 30 (1M rows, 85 % of them quarantined with 2.5 rules each): the quarantine
        output took 2.4 s instead of 3.4 s.
        """
        errors, warnings = [], []
        empty = "CAST(array() AS array<string>)"
        for start in range(0, len(rules), self.NAME_CHUNK):
            chunk = rules[start:start + self.NAME_CHUNK]
            ordered = [r for r in chunk if blocks(r[1])] + [r for r in chunk if not blocks(r[1])]
            first = len([r for r in chunk if blocks(r[1])])
            names = "array(" + ", ".join(f"IF({self.test(key)}, {_sql_string(rule.name)}, '')"
                                         for key, rule in ordered) + ")"
            names = f"IF({self._any_set([key for key, _rule in chunk])}, {names}, {empty})"
            errors.append(f"slice({names}, 1, {first})")
            warnings.append(f"slice({names}, {first + 1}, {len(chunk) - first})")
        # array_remove of "" rather than array_compact: array_compact is a lambda (filter) and would switch off
        # whole-stage code generation for the projection.
        return (f"array_remove(concat({', '.join(errors)}), '')" if errors else empty,
                f"array_remove(concat({', '.join(warnings)}), '')" if warnings else empty)


def _sql_string(text: str) -> str:
    """A Spark SQL string expression for any text, whatever the parser's escaping settings."""
    if _PLAIN_TEXT.fullmatch(text):
        return f"'{text}'"
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")  # no quote or backslash to escape
    return f"CAST(unbase64('{encoded}') AS STRING)"


@dataclass(frozen=True)
class _Outputs:
    """The split's outputs as SQL text, each built on its first read over the kept rows or, after release, the
    input again (building one is a Spark analysis, so outputs nobody reads cost nothing)."""

    kept: DataFrame
    unkept: DataFrame
    raw: list[str]  # the input columns as read (raw values where the contract converted them)
    arrays: list[str]  # _dq_errors, _dq_warnings
    valid: str
    typed: list[str]  # the user's columns, typed

    @classmethod
    def of(cls, layout: _BitLayout, rules: list[tuple[int, Any]], fields: dict[str, _Field], input_columns: list[str],
           user_columns: list[str], kept: DataFrame, unkept: DataFrame) -> _Outputs:
        """The outputs of one run."""
        raw = [f"{quote_identifier(fields[c].raw_alias)} AS {quote_identifier(c)}"  # type: ignore[arg-type]
               if c in fields and fields[c].raw_alias else quote_identifier(c) for c in input_columns]
        errors, warnings = layout.arrays(rules)
        arrays = [f"{errors} AS {ERRORS_COL}", f"{warnings} AS {WARNINGS_COL}"]
        return cls(kept, unkept, raw, arrays, layout.valid(), [quote_identifier(c) for c in user_columns])

    def build(self, name: str, kept: bool) -> DataFrame:
        """annotated_df (raw + arrays), valid_df (typed, no arrays) or quarantine_df (raw + arrays)."""
        frame = self.kept if kept else self.unkept
        if name == "valid_df":
            return frame.where(self.valid).selectExpr(*self.typed)
        if name == "quarantine_df":
            return frame.where(f"NOT ({self.valid})").selectExpr(*self.raw, *self.arrays)
        return frame.selectExpr(*self.raw, *self.arrays)


def _layout(ctx: BuildContext, row_rules: list[tuple[int, Any, Column]]) -> tuple[_BitLayout, dict[Any, Column], dict[str, Any]]:
    """The flags of one pass: each row rule's violation (key: the rule's index) and each contract column's null
    test (key: "null:<column>", for its null_count), and which flag holds each column's null test.

    A not_null rule on one typed column, without a filter, tests exactly `column IS NULL`: its flag is shared.
    """
    flags: list[tuple[Any, bool, int]] = []
    conditions: dict[Any, Column] = {}
    null_flags: dict[str, Any] = {}
    for index, rule, violation in row_rules:
        flags.append((index, blocks(rule), _WEIGHTS.get(rule.type, 2)))
        conditions[index] = violation
        column = rule.target_columns[0] if len(rule.target_columns) == 1 else None
        if rule.type == "not_null" and not rule.filter and column in ctx.fields and not ctx.fields[column].raw_alias:
            null_flags.setdefault(column, index)
    for name in ctx.fields:
        if name not in null_flags:
            null_flags[name] = key = f"null:{name}"
            flags.append((key, False, 1))
            conditions[key] = F.expr(f"{quote_identifier(name)} IS NULL")  # SQL text: one call to the JVM
    return _BitLayout(flags), conditions, null_flags


def _column_metric_aggregates(ctx: BuildContext, layout: _BitLayout, null_flags: dict[str, Any],
                              add: Any) -> dict[str, list[str]]:
    """Per contract column: null count (from its null flag; the value count is total - nulls); numeric non-PII
    columns also min, max (SQL text: one call to the JVM each) and sum (null when it overflows: checked_sum)."""
    out: dict[str, list[str]] = {}
    for name, spec in ctx.fields.items():
        metrics = ["null_count"]
        add(f"cm:{name}:null_count", layout.count(null_flags[name]))
        if isinstance(spec.declared, NumericType) and not spec.pii:
            # Raw values of PII columns never leave in metrics, so no min / max / sum for them.
            metrics += ["min", "max", "sum"]
            for metric in ("min", "max"):
                add(f"cm:{name}:{metric}", F.expr(f"{metric}({quote_identifier(name)})"))
            add(f"cm:{name}:sum", checked_sum(q(name), spec.declared))
        out[name] = metrics
    return out


def _metric_number(value: Any) -> int | float | None:
    """A measured value for ColumnMetrics: integers as they are (a long past 2**53 is not exact as a float)."""
    if value is None or isinstance(value, int):
        return value
    return float(value)


def _column_metrics(metric_columns: dict[str, list[str]], values: dict[str, Any]) -> dict[str, ColumnMetrics]:
    out = {}
    for name, metrics in metric_columns.items():
        found = {m: values[f"cm:{name}:{m}"] for m in metrics}
        out[name] = ColumnMetrics(
            null_count=int(found["null_count"]),
            count=int(values["total"]) - int(found["null_count"]),
            min=_metric_number(found.get("min")),
            max=_metric_number(found.get("max")),
            sum=_metric_number(found.get("sum")),
        )
    return out


def _result(rule: Any, plan: RulePlan, index: int, values: dict[str, Any], total: int) -> RuleResult:
    """Finalize one rule into its RuleResult."""
    failed = values.get(f"v{index}")
    failed_count = None if failed is None else int(failed)
    if plan.violation is not None or rule.level == "row":
        failed_count = failed_count or 0
    scope_rows = int(values.get(f"scope{index}", total))
    own = {key.split(":", 1)[1]: value for key, value in values.items() if key.startswith(f"r{index}:")}
    if plan.finalize is not None:
        outcome = plan.finalize(Measured(own, failed_count, scope_rows, total))
    else:
        outcome = _row_outcome(rule, failed_count or 0, scope_rows)
    return RuleResult(
        name=rule.name,
        type=rule.type,
        columns=list(rule.target_columns),
        level=rule.level,
        severity=rule.severity,
        action=rule.action,
        dimension=rule.dimension or DEFAULT_DIMENSIONS.get(rule.type),
        passed=outcome.passed,
        status=outcome.status,  # type: ignore[arg-type]
        failed_count=failed_count,
        metric_value=outcome.metric_value,
        threshold=outcome.threshold,
        message=outcome.message,
        expected=plan.expected,
        content=plan.content,
        description=rule.description,
    )


def _read_columns(rule: Any) -> list[str]:
    """The columns whose values a rule's metric or message can hold (a reconcile's summed ones too)."""
    return [*rule.target_columns, *(getattr(rule, "sum_columns", None) or [])]


def _row_outcome(rule: Any, failed: int, scope_rows: int) -> Outcome:
    passed = failed == 0
    message = "no violations" if passed else f"{failed} of {scope_rows} row(s) violate the rule"
    return Outcome(passed, status_of(rule, passed), float(failed), None, message)

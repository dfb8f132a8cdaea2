"""The contract model: one pydantic model that both the native format and ODCS v3 load into.

The native YAML format maps onto these classes key for key, so `Contract.model_validate(doc)`
is the native parser; ODCS, DQX and seed-framework documents are converted into the same shape.
Field shorthands (`required`, `unique`, `allowed_values`, ...) stay on the field as written and
are expanded into rules by `Contract.rules()`, so a round trip gives back what the author wrote.
"""

from __future__ import annotations

import datetime as _dt
import re
import warnings
from collections.abc import Iterable
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from dq_governance.contracts.consistency import (
    ambiguous_paths,
    as_moment,
    bound_kind,
    bound_text,
    comparable_bound,
    duplicate_field_names,
    range_bound_problems,
    struct_member_problems,
    unknown_rule_columns,
)
from dq_governance.contracts.spark_types import logical_type
from dq_governance.contracts.thresholds import parse_duration, parse_threshold
from dq_governance.errors import ThresholdSyntaxError

SEMVER_RE = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")

Severity = Literal["error", "warn"]
Action = Literal["warn", "drop", "quarantine", "fail"]
OnFailure = Literal["fail", "block_publication", "warn", "skip", "quarantine"]
Dimension = Literal["completeness", "uniqueness", "validity", "consistency", "timeliness", "accuracy", "integrity"]
Number = Union[int, float]
#: a `minimum` / `maximum` / range bound: a number, or a date / timestamp (ISO text or a YAML date) for date fields
Bound = Union[int, float, _dt.datetime, _dt.date]
#: logical types (and formats) that `date_format` parses
_TEMPORAL_TYPES = ("date", "timestamp")
#: the formats a dataset is read as (dq_governance.cli.inputs has a reader for each)
DatasetFormat = Literal["csv", "parquet", "json", "orc", "delta", "table"]
FORMATS = ("email", "uuid", "url", "ipv4", "date", "timestamp", "cpf", "cnpj", "phone")
FormatName = Literal["email", "uuid", "url", "ipv4", "date", "timestamp", "cpf", "cnpj", "phone"]
MaskingMethod = Literal["hmac", "partial", "redact", "null", "generalize", "tokenize", "none"]


def _refusal(path: tuple[Any, ...], message: str, hint: str = "") -> PydanticCustomError:
    """A cross-field problem placed on `path` (relative to the model raising it), for lint and the loader."""
    return PydanticCustomError("contract_consistency", "{message}", {"message": message, "path": path, "hint": hint})


class _Strict(BaseModel):
    """Base: unknown keys are errors, so a misspelt key never passes silently."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_assignment=False)


# --------------------------------------------------------------------------- contract header


class ContractInfo(_Strict):
    name: str = Field(min_length=1)
    version: str
    owner: str | None = None
    steward: str | None = None
    domain: str | None = None
    description: str | None = None
    id: str | None = None
    status: str | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _semver(cls, value: Any) -> str:
        text = str(value)
        if not SEMVER_RE.match(text):
            raise ValueError(f"version {text!r} is not semantic (MAJOR.MINOR.PATCH, e.g. '1.0.0')")
        return text


#: `dataset.catalog` keys: the parts of a catalog name a contract may pin (any other key is refused)
CATALOG_HINTS = ("openmetadata_fqn", "datahub_name", "datahub_platform", "datahub_platform_instance", "datahub_env")


class DatasetInfo(_Strict):
    name: str = Field(min_length=1)
    namespace: str | None = None
    description: str | None = None
    classification: str | None = None
    path: str | None = None  # a file path or glob the dataset lives at
    table: str | None = None  # a catalog table name
    format: DatasetFormat | None = None  # how `dqgov check` reads the dataset when the path does not say
    tags: list[str] = Field(default_factory=list)
    catalog: dict[str, str] = Field(default_factory=dict)  # hints for catalog names: CATALOG_HINTS

    @model_validator(mode="after")
    def _known_catalog_hints(self) -> DatasetInfo:
        for key in self.catalog:
            if key not in CATALOG_HINTS:
                from dq_governance.contracts.hints import did_you_mean

                hint = did_you_mean(key, CATALOG_HINTS) or f"known hints: {', '.join(CATALOG_HINTS)}"
                raise PydanticCustomError(
                    "contract_consistency", "{where}: {message}",
                    {"where": f"catalog.{key}", "message": f"unknown catalog hint `{key}`", "path": ("catalog", key),
                     "hint": hint})
        return self


# --------------------------------------------------------------------------- schema


#: the options each masking method reads; any other option given with it is refused
MASKING_OPTIONS: dict[str, tuple[str, ...]] = {
    "hmac": ("encoding",), "partial": ("show_last", "domain_only"), "redact": ("token",),
    "generalize": ("granularity", "bucket", "prefix_length"), "tokenize": (), "null": (), "none": (),
}  # fmt: skip


class MaskingSpec(_Strict):
    method: MaskingMethod
    encoding: Literal["hex", "base64"] | None = None  # hmac
    show_last: int | None = Field(default=None, ge=0)  # partial
    domain_only: bool | None = None  # partial, email
    token: str | None = None  # redact
    granularity: Literal["year", "month"] | None = None  # generalize dates
    bucket: Number | None = Field(default=None, gt=0)  # generalize numbers
    prefix_length: int | None = Field(default=None, ge=0)  # generalize zip / CEP

    @model_validator(mode="after")
    def _options_of_the_method(self) -> MaskingSpec:
        given = [name for name in type(self).model_fields if name != "method" and getattr(self, name) is not None]
        for name in given:
            if name not in MASKING_OPTIONS[self.method]:
                readers = [m for m, options in MASKING_OPTIONS.items() if name in options]
                raise _refusal((name,), f"`{name}` has no effect with method {self.method} (it is an option of "
                                        f"{' and '.join(readers)})")
        if self.method == "generalize" and len(given) > 1:
            raise _refusal((given[1],), f"generalize takes one of `granularity`, `bucket`, `prefix_length`; "
                                        f"got {', '.join(f'`{g}`' for g in given)}")
        return self


class FieldSpec(_Strict):
    name: str = Field(min_length=1)
    type: str = "string"  # a Spark SQL type string: long, decimal(12,2), array<string>, struct<...>
    id: str | None = None
    description: str | None = None
    required: bool = False
    unique: bool = False
    primary_key: bool = False
    allowed_values: list[Any] | None = None
    minimum: Bound | None = None  # a number; on a date / timestamp field an ISO date or timestamp
    maximum: Bound | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    min_length: int | None = Field(default=None, ge=0)
    max_length: int | None = Field(default=None, ge=0)
    pattern: str | None = None
    format: FormatName | None = None
    date_format: str | None = None  # Spark datetime pattern for date / timestamp parsing
    pii: bool = False
    classification: str | None = None
    masking: MaskingSpec | None = None
    tags: list[str] = Field(default_factory=list)
    fields: list[FieldSpec] | None = None  # nested fields of a struct

    @field_validator("masking", mode="before")
    @classmethod
    def _masking_shorthand(cls, value: Any) -> Any:
        return {"method": value} if isinstance(value, str) else value

    @field_validator("minimum", "maximum", mode="before")
    @classmethod
    def _bound_fits_the_type(cls, value: Any, info: ValidationInfo) -> Any:
        # `type` is declared before the bounds, so it is in info.data once it validated
        return _field_bound(value, str(info.data.get("type", "string")))

    @field_validator("pattern")
    @classmethod
    def _valid_regex(cls, value: str | None) -> str | None:
        if value is not None:
            _compile_regex(value)
        return value

    @model_validator(mode="after")
    def _bounds_in_order(self) -> FieldSpec:
        # caught here, not when the range rule is built at run time
        low, high = self.minimum, self.maximum
        if low is not None and high is not None and comparable_bound(low) > comparable_bound(high):
            raise PydanticCustomError("contract_consistency", "{message}", {
                "message": f"minimum {bound_text(low)} is above maximum {bound_text(high)}", "path": ("minimum",),
                "hint": ""})
        for flag, bound in (("exclusive_minimum", "minimum"), ("exclusive_maximum", "maximum")):
            if getattr(self, flag) and getattr(self, bound) is None:
                raise _refusal((flag,), f"`{flag}` has no effect without `{bound}`")
        return self

    @model_validator(mode="after")
    def _options_act(self) -> FieldSpec:
        # Options the field's type gives nothing to act on would be ignored without a word (issue: nothing silent).
        temporal = logical_type(self.type) in _TEMPORAL_TYPES or self.format in _TEMPORAL_TYPES
        mask = self.masking
        by_date = (mask is not None and mask.method == "generalize" and mask.bucket is None
                   and mask.prefix_length is None)
        if self.date_format is not None and not (temporal or by_date):
            raise _refusal(("date_format",), f"`date_format` has no effect on a {self.type} field: it parses "
                                             "dates and timestamps", "declare `type: date` or `format: date`")
        # generalize without an option truncates dates; on a field declared another type it has nothing to do
        if (by_date and mask is not None and mask.granularity is None and "type" in self.model_fields_set
                and not temporal):
            raise _refusal(("masking",), f"generalize on a {self.type} field needs `bucket` or `prefix_length`",
                           "e.g. masking: {method: generalize, prefix_length: 5}")
        return self


UndeclaredPolicy = Literal["drop", "keep", "fail", "mask"]


class SchemaSpec(_Strict):
    fields: list[FieldSpec] = Field(default_factory=list)
    #: data columns the contract does not declare: left out of every output (the default: data
    #: minimisation), kept as read, masked with the PII default, or a failed check that blocks the gate
    undeclared_columns: UndeclaredPolicy = "drop"

    @model_validator(mode="after")
    def _unique_names(self) -> SchemaSpec:
        _raise_first(duplicate_field_names(self.fields) + struct_member_problems(self.fields)
                     + ambiguous_paths(self.fields), ())
        return self


# --------------------------------------------------------------------------- service level


class Freshness(_Strict):
    max_age: str  # a duration: 60m, 1d
    column: str | None = None
    time: Literal["event", "ingestion"] = "event"

    @field_validator("max_age", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> str:
        text = f"{value}m" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
        try:
            parse_duration(text)
        except ThresholdSyntaxError as exc:  # pydantic only turns ValueError into a located error
            raise ValueError(exc.message) from None
        return text

    @property
    def seconds(self) -> float:
        """The SLA in seconds."""
        return parse_duration(self.max_age)


class Volume(_Strict):
    min_rows: int | None = Field(default=None, ge=0)
    max_rows: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _in_order(self) -> Volume:
        _check_bounds(self.min_rows, self.max_rows, "volume", required=False, names=("min_rows", "max_rows"))
        return self


class ServiceLevel(_Strict):
    freshness: Freshness | None = None
    volume: Volume | None = None
    latency: str | None = None  # recorded (diff, ODCS export); no check measures it

    @model_validator(mode="before")
    @classmethod
    def _seed_shorthands(cls, data: Any) -> Any:
        # The seed lab writes `freshness_minutes: 60`; a bare string `freshness: 1d` is also accepted.
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "freshness_minutes" in data:
            minutes = data.pop("freshness_minutes")
            fresh = dict(data.get("freshness") or {})
            fresh.setdefault("max_age", f"{minutes}m")
            if "freshness_column" in data:
                fresh.setdefault("column", data.pop("freshness_column"))
            data["freshness"] = fresh
        elif isinstance(data.get("freshness"), (str, int, float)):
            fresh = {"max_age": data["freshness"]}
            if "freshness_column" in data:
                fresh["column"] = data.pop("freshness_column")
            data["freshness"] = fresh
        return data

    @model_validator(mode="after")
    def _freshness_is_measurable(self) -> ServiceLevel:
        # A freshness SLA is the age of the newest value of one column: without the column it cannot be
        # evaluated, and dropping it silently would let a stale dataset pass (issue 19).
        if self.freshness is not None and not self.freshness.column:
            raise PydanticCustomError("contract_consistency", "{message}", {
                "message": "freshness needs `freshness_column` (or `freshness.column`) to be evaluated",
                "path": ("freshness",),
                "hint": "name the date or timestamp column whose newest value the SLA measures"})
        return self


# --------------------------------------------------------------------------- quality rules


class _RuleBase(_Strict):
    name: str | None = None
    severity: Severity = "error"
    action: Action | None = None
    filter: str | None = None
    dimension: Dimension | None = None
    description: str | None = None

    #: row rules give a violation condition per row; dataset rules give one metric
    level: ClassVar[str] = "dataset"
    #: whether the engine scopes this rule by `filter` (a query, the schema and column names have no rows to scope)
    filterable: ClassVar[bool] = True

    @field_validator("filter")
    @classmethod
    def _row_filter(cls, value: str | None) -> str | None:
        if value is not None:
            _refuse_aggregate(value, "filter")
        return value

    @model_validator(mode="after")
    def _options_act(self) -> _RuleBase:
        kind = getattr(self, "type", "")
        if self.filter is not None and not self.filterable:
            raise _refusal(("filter",), f"`filter` has no effect on a {kind} rule",
                           "put the condition in the query's WHERE" if kind == "sql" else "")
        if self.severity == "warn" and self.action in ("drop", "quarantine", "fail"):
            raise _refusal(("action",), f"`action: {self.action}` has no effect on a `severity: warn` rule, which "
                                        "never invalidates a row nor blocks", "use `severity: error`")
        if self.action in ("drop", "quarantine") and self.level != "row":
            raise _refusal(("action",), f"`action: {self.action}` routes rows, and a {kind} rule measures the "
                                        "dataset", "use `action: fail` or `action: warn`")
        return self

    @property
    def target_columns(self) -> list[str]:
        """The columns the rule reads, in the order written."""
        columns = list(getattr(self, "columns", None) or [])
        column = getattr(self, "column", None)
        return ([column] if column else []) + columns

    def default_name(self) -> str:
        """A stable readable name: `<column>_<type>`, or the type alone for dataset rules."""
        columns = self.target_columns
        return f"{'_'.join(columns)}_{self.type}" if columns else str(self.type)  # type: ignore[attr-defined]


class _ThresholdMixin(BaseModel):
    warn: str | None = None
    must_be: str | None = None

    @field_validator("warn", "must_be", mode="before")
    @classmethod
    def _threshold(cls, value: Any) -> Any:
        if value is None:
            return None
        try:
            parse_threshold(value)
        except ThresholdSyntaxError as exc:  # pydantic only turns ValueError into a located error
            raise ValueError(exc.message) from None
        return str(value)


class _ColumnsRule(_RuleBase):
    column: str | None = None
    columns: list[str] | None = None

    @model_validator(mode="after")
    def _needs_column(self) -> _ColumnsRule:
        if not self.target_columns:
            raise ValueError("needs `column` or `columns`")
        return self


class NotNullRule(_ColumnsRule):
    type: Literal["not_null"]
    level: ClassVar[str] = "row"


class UniqueRule(_ColumnsRule):
    """Single or composite key; every row of a duplicated key is invalid; null keys never collide."""

    type: Literal["unique"]
    level: ClassVar[str] = "row"


class RangeRule(_RuleBase):
    """Values below `min` or above `max`: numbers, or dates / timestamps compared with the typed column."""

    type: Literal["range"]
    level: ClassVar[str] = "row"
    column: str
    min: Bound | None = None
    max: Bound | None = None
    min_exclusive: bool = False
    max_exclusive: bool = False

    @field_validator("min", "max", mode="before")
    @classmethod
    def _number_or_moment(cls, value: Any) -> Any:
        if value is None:
            return None
        moment = as_moment(value)
        return moment if moment is not None else _number(value, "input should be a number or an ISO date")

    @model_validator(mode="after")
    def _bounds(self) -> RangeRule:
        if self.min is None and self.max is None:
            raise ValueError("range needs `min` or `max`")
        if self.min is not None and self.max is not None:
            if bound_kind(self.min) != bound_kind(self.max):
                raise ValueError("range `min` and `max` must both be numbers or both be dates")
            if comparable_bound(self.min) > comparable_bound(self.max):
                raise ValueError("range `min` is above `max`")
        return self

    @property
    def temporal(self) -> bool:
        """True when the bounds are dates / timestamps."""
        return bound_kind(self.min if self.min is not None else self.max) == "date"


class RegexRule(_RuleBase):
    type: Literal["regex"]
    level: ClassVar[str] = "row"
    column: str
    pattern: str

    @field_validator("pattern")
    @classmethod
    def _valid(cls, value: str) -> str:
        _compile_regex(value)
        return value


class AllowedValuesRule(_RuleBase):
    type: Literal["allowed_values"]
    level: ClassVar[str] = "row"
    column: str
    values: list[Any] = Field(min_length=1)


class FormatRule(_RuleBase):
    type: Literal["format"]
    level: ClassVar[str] = "row"
    column: str
    format: FormatName
    date_format: str | None = None

    @model_validator(mode="after")
    def _date_format_acts(self) -> FormatRule:
        _check_date_format(self.date_format, self.format in _TEMPORAL_TYPES, f"format {self.format}")
        return self


class LengthRule(_RuleBase):
    type: Literal["length"]
    level: ClassVar[str] = "row"
    column: str
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> LengthRule:
        _check_bounds(self.min, self.max, "length")
        return self


class TypeRule(_RuleBase):
    """Type conformance: the column's values cast to the declared Spark type (nulls excepted)."""

    type: Literal["type"]
    level: ClassVar[str] = "row"
    column: str
    data_type: str
    date_format: str | None = None

    @model_validator(mode="after")
    def _date_format_acts(self) -> TypeRule:
        _check_date_format(self.date_format, logical_type(self.data_type) in _TEMPORAL_TYPES, self.data_type)
        return self


class ExpressionRule(_RuleBase):
    """A row-level SQL boolean; rows where it is false are violations."""

    type: Literal["expression"]
    level: ClassVar[str] = "row"
    expression: str

    @field_validator("expression")
    @classmethod
    def _row_level(cls, value: str) -> str:
        _refuse_aggregate(value, "expression")
        return value


class ReferenceSpec(_Strict):
    path: str | None = None
    table: str | None = None
    format: str | None = None
    column: str | None = None
    columns: list[str] | None = None

    @model_validator(mode="after")
    def _where(self) -> ReferenceSpec:
        if not (self.path or self.table):
            raise ValueError("reference needs `path` or `table`")
        if self.table and (self.path or self.format):
            extra = "path" if self.path else "format"
            raise _refusal((extra,), f"`{extra}` has no effect with `table`: the table is read as the catalog "
                                     "has it", "give either `table`, or `path` with its `format`")
        return self


class ForeignKeyRule(_ColumnsRule):
    type: Literal["foreign_key"]
    level: ClassVar[str] = "row"
    reference: ReferenceSpec


class RowCountRule(_ThresholdMixin, _RuleBase):
    type: Literal["row_count"]
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> RowCountRule:
        if self.warn is None and self.must_be is None:
            _check_bounds(self.min, self.max, "row_count", also="`must_be` or `warn`")
        else:
            _check_bounds(self.min, self.max, "row_count", required=False)
        return self


class _MetricRule(_ThresholdMixin, _ColumnsRule):
    """Metric over a column compared with warn / must_be thresholds."""

    @model_validator(mode="after")
    def _needs_threshold(self) -> _MetricRule:
        if self.warn is None and self.must_be is None:
            raise ValueError("needs `must_be` or `warn`")
        return self


class MissingRule(_MetricRule):
    type: Literal["missing_count", "missing_percent"]


class InvalidRule(_MetricRule):
    type: Literal["invalid_count", "invalid_percent"]
    valid_format: FormatName | None = None
    valid_values: list[Any] | None = None
    valid_regex: str | None = None
    date_format: str | None = None

    @field_validator("valid_regex")
    @classmethod
    def _valid(cls, value: str | None) -> str | None:
        if value is not None:
            _compile_regex(value)
        return value

    @model_validator(mode="after")
    def _one_validity(self) -> InvalidRule:
        given = [x for x in (self.valid_format, self.valid_values, self.valid_regex) if x is not None]
        if len(given) != 1:
            raise ValueError("needs exactly one of `valid_format`, `valid_values`, `valid_regex`")
        _check_one_column(self)
        _check_date_format(self.date_format, self.valid_format in _TEMPORAL_TYPES,
                           f"valid_format {self.valid_format}" if self.valid_format else "valid_values or valid_regex")
        return self


class DuplicateRule(_MetricRule):
    type: Literal["duplicate_count", "duplicate_percent"]


class AggregateRule(_MetricRule):
    type: Literal["avg", "sum", "min", "max", "stddev"]

    @model_validator(mode="after")
    def _one(self) -> AggregateRule:
        _check_one_column(self)
        return self


class FreshnessRule(_ThresholdMixin, _RuleBase):
    type: Literal["freshness"]
    column: str
    time: Literal["event", "ingestion"] = "event"

    @model_validator(mode="after")
    def _needs_threshold(self) -> FreshnessRule:
        if self.must_be is None and self.warn is None:
            raise ValueError("needs `must_be` or `warn`, e.g. '< 1d'")
        return self


class SchemaRule(_RuleBase):
    type: Literal["schema"]
    filterable: ClassVar[bool] = False
    required_columns: list[str] = Field(default_factory=list)
    column_types: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _checks_something(self) -> SchemaRule:
        if not self.required_columns and not self.column_types:
            raise ValueError("schema needs `required_columns` or `column_types`")
        return self


class SqlRule(_RuleBase):
    """A query over the view `_validation_df` returning one boolean: true passes."""

    type: Literal["sql"]
    filterable: ClassVar[bool] = False
    query: str
    error_message: str | None = None

    @field_validator("query")
    @classmethod
    def _select_only(cls, value: str) -> str:
        head = value.lstrip().lstrip("(").lstrip().split(None, 1)
        if not head or head[0].upper() not in ("SELECT", "WITH"):
            raise ValueError("query must be a SELECT over `_validation_df`")
        return value


class ReconcileRule(_RuleBase):
    """Compare row count and column sums with a source dataset."""

    type: Literal["reconcile"]
    source: ReferenceSpec
    sum_columns: list[str] = Field(default_factory=list)
    compare_count: bool = True
    tolerance: Number = 0

    @model_validator(mode="after")
    def _source_is_whole(self) -> ReconcileRule:
        # a reference's key columns are a foreign key's; a reconcile compares the whole source
        for key in ("column", "columns"):
            if getattr(self.source, key) is not None:
                raise _refusal(("source", key), f"`source.{key}` has no effect on a reconcile rule",
                               "name the columns to compare in `sum_columns`")
        if not self.compare_count and not self.sum_columns:
            raise _refusal(("compare_count",), "a reconcile rule with `compare_count: false` and no `sum_columns` "
                                               "compares nothing")
        return self


class VolumeRule(_ThresholdMixin, _RuleBase):
    """Row count against the run history: median and MAD of the last `history_runs` runs."""

    type: Literal["volume"]
    history_runs: int = Field(default=20, ge=1)
    min_history: int = Field(default=5, ge=1)
    sensitivity: Number = 3.5
    #: explicit expected range; when unset, taken from `service_level.volume` by `Contract.rules()`
    min_rows: int | None = Field(default=None, ge=0)
    max_rows: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _windows(self) -> VolumeRule:
        _check_bounds(self.min_rows, self.max_rows, "volume", required=False, names=("min_rows", "max_rows"))
        if self.min_history > self.history_runs:
            raise _refusal(("min_history",), f"min_history {self.min_history} is above history_runs "
                                             f"{self.history_runs}: the rule would never have enough history")
        return self


class SchemaDriftRule(_ThresholdMixin, _RuleBase):
    """Columns added, removed or retyped since the pipeline's last run; the metric is the change count."""

    type: Literal["schema_drift"]
    filterable: ClassVar[bool] = False
    ignore_added: bool = False  # additive changes are compatible for most readers


class PiiUndeclaredRule(_RuleBase):
    """Columns whose values or names look like PII but are not declared `pii: true`; the metric is their count."""

    type: Literal["pii_undeclared"]
    filterable: ClassVar[bool] = False
    min_confidence: float = Field(default=0.8, gt=0, le=1)
    sample: int = Field(default=10_000, ge=1)  # rows scanned (deterministic sample)
    ignore: list[str] = Field(default_factory=list)  # columns known not to be PII despite their look


class UndeclaredColumnsRule(_RuleBase):
    """Data columns of the input the contract does not declare (derived from `schema.undeclared_columns`).

    Computed on the driver from the input's column names; the metric is their count. Not written in
    `quality.rules`: `Contract.check_rules()` adds it when the contract declares fields.
    """

    type: Literal["undeclared_columns"]
    filterable: ClassVar[bool] = False
    policy: UndeclaredPolicy = "drop"


Rule = Annotated[
    Union[
        NotNullRule,
        UniqueRule,
        RangeRule,
        RegexRule,
        AllowedValuesRule,
        FormatRule,
        LengthRule,
        TypeRule,
        ExpressionRule,
        ForeignKeyRule,
        RowCountRule,
        MissingRule,
        InvalidRule,
        DuplicateRule,
        AggregateRule,
        FreshnessRule,
        SchemaRule,
        SqlRule,
        ReconcileRule,
        VolumeRule,
        SchemaDriftRule,
        PiiUndeclaredRule,
    ],
    Field(discriminator="type"),
]

RULE_TYPES: tuple[str, ...] = (
    "not_null", "unique", "range", "regex", "allowed_values", "format", "length", "type", "expression",
    "foreign_key", "row_count", "missing_count", "missing_percent", "invalid_count", "invalid_percent",
    "duplicate_count", "duplicate_percent", "avg", "sum", "min", "max", "stddev", "freshness", "schema",
    "sql", "reconcile", "volume", "schema_drift", "pii_undeclared",
)  # fmt: skip
#: rule types the contract derives and no author writes: each has a check implementation too
DERIVED_RULE_TYPES: tuple[str, ...] = ("undeclared_columns",)


class QualitySpec(_Strict):
    on_failure: OnFailure = "quarantine"
    minimum_valid_ratio: float | None = Field(default=None, ge=0, le=1)
    rules: list[Rule] = Field(default_factory=list)


# --------------------------------------------------------------------------- roles, governance


class Party(_Strict):
    name: str
    contact: str | None = None
    role: str | None = None


#: the role slots the model names; any other key of `roles` is a role of its own (ODCS: free-form roles)
ROLE_SLOTS = ("owner", "steward", "consumers")
#: how the seed and ODCS spell the named slots (compared lower-case, spaces and dashes as `_`)
ROLE_SYNONYMS: dict[str, str] = {
    "owner": "owner", "data_owner": "owner", "steward": "steward", "data_steward": "steward",
    "consumers": "consumers", "consumer": "consumers", "data_consumer": "consumers", "data_consumers": "consumers",
}  # fmt: skip
#: role -> owner type (DataHub OwnershipType names, as OpenLineage ownership facets carry them); any other
#: role's type is its name upper-cased, e.g. `engineering` -> ENGINEERING, `Data Engineering` -> DATA_ENGINEERING
OWNER_TYPES: dict[str, str] = {"owner": "TECHNICAL_OWNER", "steward": "DATA_STEWARD", "consumers": "CONSUMER"}


def role_slot(name: str) -> str | None:
    """The named slot a role name stands for (`Data Owner` -> owner), or None for a role of its own."""
    return ROLE_SYNONYMS.get(re.sub(r"[\s-]+", "_", name.strip().lower()))


def owner_type(role: str) -> str:
    """The owner type of a role: TECHNICAL_OWNER, DATA_STEWARD, CONSUMER, else the name upper-cased."""
    slot = role_slot(role)
    if slot is not None:
        return OWNER_TYPES[slot]
    return re.sub(r"[^A-Za-z0-9]+", "_", role).strip("_").upper() or "NONE"


def _party(value: Any) -> Any:
    return {"name": value} if isinstance(value, str) else value


class Roles(_Strict):
    """Who answers for the dataset: owner, steward, consumers, and any other role by name (`engineering: team-x`)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    owner: Party | None = None
    steward: Party | None = None
    consumers: list[Party] = Field(default_factory=list)
    #: every other role: name -> its parties (one party may be written alone)
    __pydantic_extra__: dict[str, list[Party]] = Field(init=False)

    @model_validator(mode="before")
    @classmethod
    def _shorthands(cls, data: Any) -> Any:
        # `owner: x` and `engineering: x` are a party named x; `Data Owner:` is the owner slot.
        if not isinstance(data, dict):
            return data
        out: dict[Any, Any] = {}
        written: dict[str, Any] = {}
        for key, value in data.items():
            slot = role_slot(key) if isinstance(key, str) else None
            target = slot or key
            if target in out:
                raise ValueError(f"roles `{written[target]}` and `{key}` name the same role")
            written[target] = key
            if target in ("owner", "steward"):
                out[target] = _party(value)
            elif isinstance(value, list):
                out[target] = [_party(item) for item in value]
            else:
                out[target] = [_party(value)]
        return out

    @property
    def other_roles(self) -> dict[str, list[Party]]:
        """The roles beyond owner, steward and consumers, in the order written."""
        return dict(self.__pydantic_extra__ or {})

    def parties(self) -> list[tuple[str, str, Party]]:
        """(role, owner type, party) for everyone named: owner, steward, the other roles, then the consumers."""
        out: list[tuple[str, str, Party]] = []
        for role in ("owner", "steward"):
            party = getattr(self, role)
            if party is not None:
                out.append((role, OWNER_TYPES[role], party))
        for role, parties in self.other_roles.items():
            out.extend((role, owner_type(role), party) for party in parties)
        out.extend(("consumers", OWNER_TYPES["consumers"], party) for party in self.consumers)
        return out


class Governance(_Strict):
    legal_basis: str | None = None
    purpose: str | None = None
    retention: str | None = None  # a duration: 365d, 5y is written as 1825d


class MaskingPolicy(_Strict):
    """Defaults for columns whose field has no `masking`: per classification, then for PII."""

    key_env: str = "DQGOV_MASKING_KEY"
    key_file: str | None = None
    key_id: str | None = None
    by_classification: dict[str, MaskingSpec] = Field(default_factory=dict)
    pii: MaskingSpec | None = None

    @field_validator("by_classification", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ({"method": v} if isinstance(v, str) else v) for k, v in value.items()}
        return value

    @field_validator("pii", mode="before")
    @classmethod
    def _pii_shorthand(cls, value: Any) -> Any:
        return {"method": value} if isinstance(value, str) else value


# --------------------------------------------------------------------------- the contract


class Contract(_Strict):
    contract: ContractInfo
    dataset: DatasetInfo
    schema_: SchemaSpec = Field(default_factory=SchemaSpec, alias="schema")
    service_level: ServiceLevel | None = None
    quality: QualitySpec = Field(default_factory=QualitySpec)
    roles: Roles | None = None
    governance: Governance | None = None
    masking: MaskingPolicy | None = None
    #: what another standard carries that this model has no field for (kept for round trips)
    extensions: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _rules_reference_known_columns(self) -> Contract:
        problems = unknown_rule_columns(self.column_names(nested=True), self.quality.rules)
        problems += range_bound_problems(self.iter_fields(), self.quality.rules)
        _raise_first(problems, ("quality",))
        return self

    # -- identity ----------------------------------------------------------
    @property
    def name(self) -> str:
        """The contract name."""
        return self.contract.name

    @property
    def version(self) -> str:
        """The contract version (semver)."""
        return self.contract.version

    @property
    def fields(self) -> list[FieldSpec]:
        """Top-level schema fields."""
        return self.schema_.fields

    def field(self, name: str) -> FieldSpec | None:
        """A field by (dotted, for nested) name, or None."""
        for path, spec in self.iter_fields():
            if path == name:
                return spec
        return None

    def iter_fields(self) -> list[tuple[str, FieldSpec]]:
        """Every field with its dotted path, nested struct fields included."""
        out: list[tuple[str, FieldSpec]] = []

        def walk(fields: list[FieldSpec], prefix: str) -> None:
            for spec in fields:
                path = f"{prefix}{spec.name}"
                out.append((path, spec))
                if spec.fields:
                    walk(spec.fields, f"{path}.")

        walk(self.schema_.fields, "")
        return out

    def column_names(self, nested: bool = False) -> list[str]:
        """Top-level column names, or every dotted path with `nested=True`."""
        if nested:
            return [path for path, _ in self.iter_fields()]
        return [f.name for f in self.schema_.fields]

    def nested_paths(self) -> frozenset[str]:
        """Dotted paths of the fields inside structs: read as paths even where a top-level column has that name."""
        return frozenset(self.column_names(nested=True)) - set(self.column_names())

    def pii_columns(self) -> list[str]:
        """Dotted paths of fields marked `pii: true`."""
        return [path for path, spec in self.iter_fields() if spec.pii]

    # -- rules -------------------------------------------------------------
    def rules(self) -> list[Any]:
        """All rules: one type rule per field, field shorthands, then `quality.rules`; names unique."""
        return _named(self._authored_rules())

    def check_rules(self) -> list[Any]:
        """What a check run evaluates: `rules()`, then the input-shape rule `undeclared_columns` (when fields exist).

        Last, so every other rule keeps the name `rules()` gives it; catalogs publish `rules()` only.
        """
        extra = [] if not self.schema_.fields else [UndeclaredColumnsRule(
            type="undeclared_columns", name="undeclared_columns", policy=self.schema_.undeclared_columns,
            severity="error" if self.schema_.undeclared_columns == "fail" else "warn", dimension="validity")]
        return _named(self._authored_rules() + extra)

    def _authored_rules(self) -> list[Any]:
        derived: list[Any] = []
        key = [path for path, spec in self.iter_fields() if spec.primary_key]
        composite = len(key) > 1  # one key over the tuple, as in a database: (1, x) and (1, y) are two keys

        def walk(fields: list[FieldSpec], prefix: str) -> None:
            for spec in fields:
                derived.extend(_field_rules(f"{prefix}{spec.name}", spec, nested=bool(prefix), in_key=composite))
                walk(spec.fields or [], f"{prefix}{spec.name}.")

        walk(self.schema_.fields, "")
        if composite:
            derived.append(UniqueRule(type="unique", columns=key, dimension="uniqueness", name="primary_key"))
        derived.extend(_service_level_rules(self.service_level))
        return derived + [_with_expected_volume(rule, self.service_level) for rule in self.quality.rules]


def undeclared_columns(contract: Contract, columns: Iterable[str]) -> list[str]:
    """The data columns (in the given order) that the contract's top-level fields do not declare.

    Columns starting with `_dq_` are ours (annotations), never undeclared. Empty when the contract declares
    no field at all: with nothing declared, `schema.undeclared_columns` cannot apply.
    """
    declared = set(contract.column_names())
    if not declared:
        return []
    return [c for c in columns if c not in declared and not c.startswith("_dq_")]


def _named(rules: list[Any]) -> list[Any]:
    """The rules with unique names: an unnamed rule takes its default name, repeats get `_2`, `_3`, ...

    A suffix never takes a name another rule holds as its own (`x_not_null_2` written by hand stays that rule's).
    """
    bases = [rule.name or rule.default_name() for rule in rules]
    reserved = set(bases)
    taken: set[str] = set()
    named: list[Any] = []
    for rule, base in zip(rules, bases):
        name, count = base, 1
        while name in taken or (name != base and name in reserved):
            count += 1
            name = f"{base}_{count}"
        taken.add(name)
        named.append(rule if rule.name == name else rule.model_copy(update={"name": name}))
    return named


def _field_rules(path: str, spec: FieldSpec, nested: bool = False, in_key: bool = False) -> list[Any]:
    """Rules a field's shorthands stand for, in a fixed order; a struct's field (`nested`, by its dotted path) has
    a type rule of its own only when it declares a type (its struct's type covers it otherwise). A `primary_key`
    field of a composite key (`in_key`) is not null here and unique only as the tuple (the `primary_key` rule)."""
    # a field's date_format goes to the rules that parse dates (a text field's `format: date`, not its type rule)
    type_format = spec.date_format if logical_type(spec.type) in _TEMPORAL_TYPES else None
    out: list[Any] = []
    if not nested or "type" in spec.model_fields_set:
        out.append(TypeRule(type="type", column=path, data_type=spec.type, date_format=type_format,
                            dimension="validity", name=f"{path}_type"))
    if spec.required or spec.primary_key:
        out.append(NotNullRule(type="not_null", column=path, dimension="completeness", name=f"{path}_not_null"))
    if spec.unique or (spec.primary_key and not in_key):
        out.append(UniqueRule(type="unique", column=path, dimension="uniqueness", name=f"{path}_unique"))
    if spec.allowed_values is not None:
        out.append(AllowedValuesRule(type="allowed_values", column=path, values=spec.allowed_values,
                                     dimension="validity", name=f"{path}_allowed_values"))
    if spec.minimum is not None or spec.maximum is not None:
        out.append(RangeRule(type="range", column=path, min=spec.minimum, max=spec.maximum,
                             min_exclusive=spec.exclusive_minimum, max_exclusive=spec.exclusive_maximum,
                             dimension="validity", name=f"{path}_range"))
    if spec.min_length is not None or spec.max_length is not None:
        out.append(LengthRule(type="length", column=path, min=spec.min_length, max=spec.max_length,
                              dimension="validity", name=f"{path}_length"))
    if spec.pattern is not None:
        out.append(RegexRule(type="regex", column=path, pattern=spec.pattern, dimension="validity",
                             name=f"{path}_regex"))
    if spec.format is not None and not (spec.format in ("date", "timestamp") and spec.type in ("date", "timestamp")):
        # A `date` field with `format: date` is already covered by its type rule.
        out.append(FormatRule(type="format", column=path, format=spec.format,
                              date_format=spec.date_format if spec.format in _TEMPORAL_TYPES else None,
                              dimension="validity", name=f"{path}_format"))
    return out


def _service_level_rules(level: ServiceLevel | None) -> list[Any]:
    """The freshness SLA (when it names its column) and the expected volume, as ordinary rules."""
    out: list[Any] = []
    if level and level.freshness and level.freshness.column:
        out.append(FreshnessRule(type="freshness", column=level.freshness.column, time=level.freshness.time,
                                 must_be=f"< {level.freshness.max_age}", dimension="timeliness",
                                 name="freshness_sla"))
    if level and level.volume and (level.volume.min_rows is not None or level.volume.max_rows is not None):
        out.append(RowCountRule(type="row_count", min=level.volume.min_rows, max=level.volume.max_rows,
                                dimension="completeness", name="volume_sla"))
    return out


def _with_expected_volume(rule: Any, level: ServiceLevel | None) -> Any:
    """A volume rule without its own range takes `service_level.volume`'s min / max rows."""
    if rule.type != "volume" or rule.min_rows is not None or rule.max_rows is not None:
        return rule
    if not (level and level.volume):
        return rule
    return rule.model_copy(update={"min_rows": level.volume.min_rows, "max_rows": level.volume.max_rows})


# --------------------------------------------------------------------------- bounds


def _number(value: Any, wanted: str = "input should be a number") -> Any:
    """A numeric bound as pydantic's lax mode reads one (`"5"` is 5); ValueError naming what was found."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{wanted}, not {type(value).__name__} {value!r}")
    if isinstance(value, str):
        for kind in (int, float):
            try:
                return kind(value.strip())
            except ValueError:
                continue
        raise ValueError(f"{wanted}, not str {value!r}")
    return value


def _field_bound(value: Any, type_text: str) -> Any:
    """A field's `minimum` / `maximum`: a date or timestamp on date / timestamp fields, a number elsewhere."""
    if value is None:
        return None
    kind = logical_type(type_text)
    moment = as_moment(value)
    if kind in ("date", "timestamp"):
        if moment is None:
            raise ValueError(f"a `{type_text}` field takes an ISO date bound (e.g. '2024-01-01'), not {value!r}")
        if kind == "date" and isinstance(moment, _dt.datetime):
            raise ValueError(f"a `date` field takes a date bound (yyyy-MM-dd), not the timestamp {value!r}")
        return moment
    if moment is not None:
        raise ValueError(f"date bound {str(value)!r} on a `{type_text}` field: only `date` and `timestamp` fields "
                         "take date bounds")
    return _number(value)


# --------------------------------------------------------------------------- aggregates in row-level SQL

#: Spark 4.0's aggregate functions: the `agg_funcs` group of its function registry (tests compare this with the
#: running Spark). In an `expression` or a `filter` they turn a row condition into a dataset-level one.
SPARK_AGGREGATES = frozenset({
    "any", "any_value", "approx_count_distinct", "approx_percentile", "array_agg", "avg", "bit_and", "bit_or",
    "bit_xor", "bitmap_construct_agg", "bitmap_or_agg", "bool_and", "bool_or", "collect_list", "collect_set", "corr",
    "count", "count_if", "count_min_sketch", "covar_pop", "covar_samp", "every", "first", "first_value", "grouping",
    "grouping_id", "histogram_numeric", "hll_sketch_agg", "hll_union_agg", "kurtosis", "last", "last_value",
    "listagg", "max", "max_by", "mean", "median", "min", "min_by", "mode", "percentile", "percentile_approx",
    "percentile_cont", "percentile_disc", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2",
    "regr_slope", "regr_sxx", "regr_sxy", "regr_syy", "skewness", "some", "std", "stddev", "stddev_pop",
    "stddev_samp", "string_agg", "sum", "try_avg", "try_sum", "var_pop", "var_samp", "variance",
})  # fmt: skip
# Literals, quoted identifiers and comments are single tokens, so a function name inside them never counts.
_SQL_TOKEN = re.compile(r"""
    '(?:[^'\\]|\\.)*'? | "(?:[^"\\]|\\.)*"? | `(?:[^`]|``)*`? | --[^\n]* | /\*.*?(?:\*/|$)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*) | (?P<punct>\S)
""", re.VERBOSE | re.DOTALL)
#: words before `any (` / `some (` / `all (` that make them a predicate, not an aggregate: `x LIKE ANY ('a%')`
_QUANTIFIED = frozenset({"like", "ilike", "rlike", "regexp"})


def aggregate_function(sql: str) -> str | None:
    """The first aggregate function called in a SQL expression (as written), or None.

    A function name scan, no Spark: string literals, quoted identifiers and comments are skipped, a call followed
    by `OVER` (a window, a row-level value) does not count, nor does `LIKE ANY (...)`.
    """
    tokens = [(m.group("word"), m.group(0)) for m in _SQL_TOKEN.finditer(sql)]
    for index, (word, _text) in enumerate(tokens):
        if not word or word.lower() not in SPARK_AGGREGATES:
            continue
        if index + 1 >= len(tokens) or tokens[index + 1][1] != "(":
            continue
        before = tokens[index - 1] if index else (None, "")
        if before[1] == "." or (before[0] or "").lower() in _QUANTIFIED:
            continue  # a struct field or method-like name; a quantified LIKE
        after = _after_call(tokens, index + 1)
        if after < len(tokens) and (tokens[after][0] or "").lower() == "over":
            continue
        return word
    return None


def _after_call(tokens: list[tuple[str | None, str]], open_index: int) -> int:
    """The index after a call's closing parenthesis and any FILTER (...) / WITHIN GROUP (...) / IGNORE NULLS."""
    index = _past_parens(tokens, open_index)
    while index < len(tokens):
        word = (tokens[index][0] or "").lower()
        if word == "filter" and index + 1 < len(tokens) and tokens[index + 1][1] == "(":
            index = _past_parens(tokens, index + 1)
        elif word == "within" and index + 2 < len(tokens) and tokens[index + 2][1] == "(":
            index = _past_parens(tokens, index + 2)
        elif word in ("ignore", "respect") and index + 1 < len(tokens):
            index += 2
        else:
            break
    return index


def _past_parens(tokens: list[tuple[str | None, str]], open_index: int) -> int:
    depth = 0
    for index in range(open_index, len(tokens)):
        text = tokens[index][1]
        depth += (text == "(") - (text == ")")
        if depth == 0:
            return index + 1
    return len(tokens)


def _refuse_aggregate(sql: str, key: str) -> None:
    """ValueError when a row-level SQL (`expression`, `filter`) calls an aggregate function."""
    name = aggregate_function(sql)
    if name is None:
        return
    what = f"filter {sql.strip()!r} is an aggregate ({name}): a filter picks rows;" if key == "filter" else \
        f"{sql.strip()!r} is an aggregate ({name}):"
    raise PydanticCustomError("contract_consistency", "{message}", {
        "message": f"{what} use a `sql` rule for dataset-level conditions",
        "path": (),
        "hint": f"e.g. type: sql, query: \"SELECT {sql.strip()} FROM _validation_df\"" if key == "expression"
        else ""})


def _compile_regex(pattern: str) -> None:
    """ValueError unless `pattern` compiles as a Java regex (Spark's RLIKE): Python's re checks its Python spelling."""
    try:
        text, origin = _JavaSpelling(pattern).spell()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # Python's "possible nested set": Java has them
            re.compile(text)
    except _JavaSyntaxError as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc.message} at position {exc.position}") from None
    except re.error as exc:
        where = "" if exc.pos is None else f" at position {origin[exc.pos]}"
        raise ValueError(f"invalid regex {pattern!r}: {exc.msg}{where}") from None


class _JavaSyntaxError(Exception):
    """Java's Pattern refuses this where Python's re would take the spelling (a message and a position)."""

    def __init__(self, message: str, position: int):
        super().__init__(message)
        self.message, self.position = message, position


#: `\p{…}` names Java takes without a prefix: general categories, POSIX classes, java.lang.Character tests
_JAVA_CATEGORIES = frozenset(
    "L M N P S Z C LC LD L1 all Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf "
    "Cs Co Cn".split())
_JAVA_PROPERTIES = _JAVA_CATEGORIES | frozenset(
    "ASCII Alnum Alpha Blank Cntrl Digit Graph Lower Print Punct Space Upper XDigit javaLowerCase javaUpperCase "
    "javaWhitespace javaMirrored javaAlphabetic javaIdeographic javaTitleCase javaDigit javaDefined javaLetter "
    "javaLetterOrDigit javaJavaIdentifierStart javaJavaIdentifierPart javaUnicodeIdentifierStart "
    "javaUnicodeIdentifierPart javaIdentifierIgnorable javaSpaceChar javaISOControl".split())
#: a script, block or binary property after `Is`, `In`, `sc=`, `blk=`: which exist is the JVM's (its Unicode version)
_JAVA_UNICODE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_ -]*")
_JAVA_FLAGS = re.compile(r"\(\?([idmsuxcU]*)(?:-([idmsuxcU]*))?([:)])")
_JAVA_GROUP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_JAVA_COUNT = re.compile(r"\{(\d+)(?:,(\d*))?\}")
_JAVA_OCTAL = re.compile(r"[0-3][0-7]{0,2}|[4-7][0-7]?")
#: Java's escapes for a set of characters, as Python spells a set (`\h` horizontal, `\v` vertical space)
_JAVA_SETS = {"d": r"\d", "D": r"\D", "s": r"\s", "S": r"\S", "w": r"\w", "W": r"\W", "h": r"\s", "H": r"\S",
              "v": r"\s", "V": r"\S"}
#: Java's zero-width escapes outside a class (Java quantifies them; Python quantifies them inside a group)
_JAVA_ANCHORS = {"b": r"(?:\b)", "B": r"(?:\B)", "A": r"(?:\A)", "Z": r"(?:\Z)", "z": r"(?:\Z)", "G": "(?:)"}


class _JavaSpelling:
    """A Java regex spelt for Python's re, for a validity check only.

    Java's own constructs become Python ones that compile alike: a `\\p{…}` property (its name checked) is `\\w`,
    a possessive quantifier the greedy one, an atomic group or a named one a plain group, a look-behind a
    look-ahead (Java's may vary in length), a back reference an empty group, inline flags anywhere an empty group,
    `\\Q…\\E` the quoted characters escaped, a nested class or `&&` its members in one class. What Java refuses and
    Python would take (`\\0` alone, `a{`, a quantifier after a quantifier, a `\\k<…>` to no group) is refused here.
    """

    def __init__(self, pattern: str):
        self.src = pattern
        self.at = 0
        self.out: list[str] = []
        self.origin: list[int] = []  # per spelt character, where it came from in the pattern
        self.names: set[str] = set()
        self.comments = False  # the x flag: whitespace and #-comments are not part of the pattern
        self.last = "none"  # what a quantifier would apply to: none, atom, or a quantifier

    def spell(self) -> tuple[str, list[int]]:
        """The Python spelling, and for each of its characters (and its end) the position in the pattern."""
        src = self.src
        while self.at < len(src):
            start, ch = self.at, src[self.at]
            if self.comments and ch == "#":
                end = src.find("\n", start)
                self.at = len(src) if end < 0 else end + 1
            elif self.comments and ch.isspace():
                self.at += 1
            elif ch == "\\":
                self._escape()
            elif ch == "[":
                self._class()
            elif ch == "(":
                self._group()
            elif ch in "*+?":
                if self.last != "atom":
                    raise _JavaSyntaxError(f"dangling meta character {ch!r}", start)
                self._emit(ch, start)
                self.at += 1
                self._modifier()
            elif ch == "{":
                self._count()
            else:
                self._emit(f"(?:{ch})" if ch in "^$" else ch, start)
                self.at += 1
                self.last = "none" if ch == "|" else "atom"
        self.origin.append(len(src))
        return "".join(self.out), self.origin

    def _emit(self, text: str, start: int) -> None:
        self.out.append(text)
        self.origin.extend([start] * len(text))

    def _modifier(self) -> None:
        """A quantifier's lazy `?` (kept) or possessive `+` (dropped: it matches no differently for validity)."""
        if self.src.startswith("?", self.at):
            self._emit("?", self.at)
            self.at += 1
        elif self.src.startswith("+", self.at):
            self.at += 1
        self.last = "quantifier"

    def _count(self) -> None:
        start = self.at
        match = _JAVA_COUNT.match(self.src, start)
        if match is None:
            raise _JavaSyntaxError("illegal repetition", start)
        low, high = match.group(1), match.group(2)
        if high and int(high) < int(low):
            raise _JavaSyntaxError("illegal repetition range", start)
        # Java takes {n} after nothing or after a quantifier; Python does after an empty group
        self._emit(("" if self.last == "atom" else "(?:)") + match.group(0), start)
        self.at = match.end()
        self._modifier()

    def _group(self) -> None:
        src, start = self.src, self.at
        self.last = "none"
        if not src.startswith("?", start + 1):
            self._emit("(", start)
            self.at += 1
        elif src.startswith(("(?:", "(?=", "(?!"), start):
            self._emit(src[start:start + 3], start)
            self.at += 3
        elif src.startswith(("(?<=", "(?<!"), start):
            self._emit("(?" + src[start + 3], start)
            self.at += 4
        elif src.startswith("(?<", start):
            name = _JAVA_GROUP_NAME.match(src, start + 3)
            if name is None:
                raise _JavaSyntaxError("capturing group name does not start with a Latin letter", start + 3)
            if not src.startswith(">", name.end()):
                raise _JavaSyntaxError("named capturing group is missing trailing '>'", name.end())
            if name.group(0) in self.names:
                raise _JavaSyntaxError(f"named capturing group <{name.group(0)}> is already defined", start + 3)
            self.names.add(name.group(0))
            self._emit("(", start)
            self.at = name.end() + 1
        elif src.startswith("(?>", start):
            self._emit("(?:", start)
            self.at += 3
        else:
            flags = _JAVA_FLAGS.match(src, start)
            if flags is None:
                raise _JavaSyntaxError("unknown inline modifier", start + 2)
            if "x" in flags.group(1) or "x" in (flags.group(2) or ""):
                self.comments = "x" in flags.group(1)
            self._emit("(?:)" if flags.group(3) == ")" else "(?:", start)
            self.at = flags.end()

    def _escape(self) -> None:
        """An escape outside a class."""
        src, start = self.src, self.at
        kind = src[start + 1:start + 2]
        if kind == "Q":
            text, self.at = self._quoted(start)
            if text:
                self._emit(re.escape(text), start)
                self.last = "atom"
            return
        self.last = "atom"
        if kind in ("p", "P"):
            self.at = self._property(start)
            self._emit(r"\w", start)
        elif kind in _JAVA_SETS:
            self._emit(_JAVA_SETS[kind], start)
            self.at += 2
        elif kind == "b" and src.startswith("{g}", start + 2):  # a grapheme cluster boundary
            self._emit(r"(?:\b)", start)
            self.at += 5
        elif kind in _JAVA_ANCHORS:
            self._emit(_JAVA_ANCHORS[kind], start)
            self.at += 2
        elif kind in ("R", "X"):  # a line break, a grapheme cluster
            self._emit("(?:.)", start)
            self.at += 2
        elif kind and kind in "123456789":  # a back reference: Java takes one to a group not (yet) there
            self.at += 2
            while self.at < len(src) and src[self.at].isdigit():
                self.at += 1
            self._emit("(?:)", start)
        elif kind == "k":
            name = _JAVA_GROUP_NAME.match(src, start + 3) if src.startswith("<", start + 2) else None
            if name is None or not src.startswith(">", name.end()):
                raise _JavaSyntaxError("\\k is not followed by '<' for named capturing group", start)
            if name.group(0) not in self.names:
                raise _JavaSyntaxError(f"named capturing group <{name.group(0)}> does not exist", start)
            self._emit("(?:)", start)
            self.at = name.end() + 1
        else:
            text, self.at = self._character(start)
            self._emit(text, start)

    def _character(self, start: int) -> tuple[str, int]:
        """One character's escape at `start` as Python spells it, and where the escape ends."""
        src = self.src
        kind = src[start + 1:start + 2]
        if kind == "e":
            return r"\x1b", start + 2
        if kind == "c":
            if start + 2 >= len(src):
                raise _JavaSyntaxError("illegal control escape sequence", start)
            return f"\\U{ord(src[start + 2]) ^ 64:08x}", start + 3
        if kind == "0":
            digits = _JAVA_OCTAL.match(src, start + 2)
            if digits is None:
                raise _JavaSyntaxError("illegal octal escape sequence", start)
            return f"\\U{int(digits.group(0), 8):08x}", digits.end()
        if kind == "x" and src.startswith("{", start + 2):
            end = src.find("}", start + 3)
            digits = src[start + 3:end] if end > 0 else ""
            if not re.fullmatch(r"[0-9A-Fa-f]+", digits):
                raise _JavaSyntaxError("illegal hexadecimal escape sequence", start)
            if int(digits, 16) > 0x10FFFF:
                raise _JavaSyntaxError("hexadecimal codepoint is too big", start)
            return f"\\U{int(digits, 16):08x}", end + 1
        if kind == "N" and src.startswith("{", start + 2) and "}" in src[start + 3:]:
            end = src.index("}", start + 3) + 1  # a character by name: Python knows the same names
            return src[start:end], end
        width = {"x": 4, "u": 6}.get(kind, 2)  # \xhh, \uhhhh; anything else Python takes or refuses as Java does
        return src[start:start + width], start + width

    def _quoted(self, start: int) -> tuple[str, int]:
        """The text of `\\Q…\\E` at `start` (to the end of the pattern without `\\E`), and where it ends."""
        end = self.src.find("\\E", start + 2)
        if end < 0:
            return self.src[start + 2:], len(self.src)
        return self.src[start + 2:end], end + 2

    def _property(self, start: int) -> int:
        """Check the `\\p{name}` or `\\pX` at `start` names a property Java knows; where it ends."""
        src = self.src
        if src.startswith("{", start + 2):
            end = src.find("}", start + 3)
            if end < 0:
                raise _JavaSyntaxError("unclosed character family", start)
            name, after = src[start + 3:end], end + 1
        else:
            name, after = src[start + 2:start + 3], start + 3
        key, _, value = name.partition("=")
        if value:
            known = (value in _JAVA_CATEGORIES if key.lower() in ("gc", "general_category") else
                     key.lower() in ("sc", "script", "blk", "block") and _JAVA_UNICODE_NAME.fullmatch(value))
        else:
            known = name in _JAVA_PROPERTIES or (
                name.startswith(("Is", "In")) and _JAVA_UNICODE_NAME.fullmatch(name[2:]) is not None)
        if not known:
            raise _JavaSyntaxError(f"unknown character property name {{{name}}}", start)
        return after

    def _class(self) -> None:
        """A bracket class, nested classes and `&&` flattened into one: the same members, for validity."""
        src, start = self.src, self.at
        self._emit("[", start)
        self.at += 1
        if src.startswith("^", self.at):
            self._emit("^", self.at)
            self.at += 1
        depth, members = 1, 0
        first = True  # a ] first in a class (or a nested one) is itself
        single = False  # the last member is one character, not a range's end: a - after it can make a range
        ranging = False  # the next member ends a range
        while self.at < len(src):  # unterminated: Python says so, at the class's [
            at, ch = self.at, src[self.at]
            if self.comments and ch.isspace():
                self.at += 1
                continue
            if ch == "]" and not first:
                self.at += 1
                depth -= 1
                if depth == 0:
                    if members == 0:
                        raise _JavaSyntaxError("bad class syntax", start)
                    self._emit("]", at)
                    self.last = "atom"
                    return
                single = False
                continue
            if ch == "[":
                depth += 1
                self.at += 1 + src.startswith("^", at + 1)  # a nested class's negation does not change validity
                first, single = True, False
                continue
            if src.startswith("&&", at):
                self.at += 2
                first = single = False
                continue
            if ch == "-" and single and src[at + 1:at + 2] not in ("]", "[", ""):
                self._emit("-", at)  # a range; Python checks its ends and order as Java does
                self.at += 1
                single, ranging = False, True
                continue
            first = False
            members += 1
            if ch == "\\":
                single = self._class_escape() and not ranging
            else:
                self._emit(re.escape(ch) if ch in "\\]^-[" else ch, at)
                self.at += 1
                single = not ranging
            ranging = False

    def _class_escape(self) -> bool:
        """An escape inside a class; True when it is one character (it can start a range)."""
        src, start = self.src, self.at
        kind = src[start + 1:start + 2]
        if kind == "Q":
            text, self.at = self._quoted(start)
            self._emit("".join(re.escape(ch) for ch in text), start)
            return bool(text)
        if kind in ("p", "P"):
            self.at = self._property(start)
            self._emit(r"\w", start)
            return False
        if kind in _JAVA_SETS:
            self._emit(_JAVA_SETS[kind], start)
            self.at += 2
            return False
        if kind and kind in "b123456789":  # Python: a backspace, an octal escape
            raise _JavaSyntaxError("illegal/unsupported escape sequence", start)
        text, self.at = self._character(start)
        self._emit(text, start)
        return True


def _check_bounds(low: int | None, high: int | None, what: str, *, required: bool = True, also: str = "",
                  names: tuple[str, str] = ("min", "max")) -> None:
    """A rule's integer bounds: at least one given (when `required`), and in order."""
    if required and low is None and high is None:
        raise ValueError(f"{what} needs `{names[0]}` or `{names[1]}`" + (f" (or {also})" if also else ""))
    if low is not None and high is not None and low > high:
        raise _refusal((names[0],), f"{what} `{names[0]}` {low} is above `{names[1]}` {high}: nothing can pass")


def _check_date_format(date_format: str | None, temporal: bool, what: str) -> None:
    """`date_format` parses dates and timestamps: given where nothing parses one, it would be ignored."""
    if date_format is not None and not temporal:
        raise _refusal(("date_format",), f"`date_format` has no effect with {what}: it parses dates and timestamps")


def _check_one_column(rule: Any) -> None:
    """Metric types that measure one column (avg, invalid_count, ...) refuse a list of several."""
    columns = rule.target_columns
    if len(columns) != 1:
        raise _refusal(("columns",) if rule.columns else ("column",),
                       f"{rule.type} takes exactly one column, got {len(columns)}")


def _raise_first(problems: list[Any], prefix: tuple[Any, ...]) -> None:
    """Raise the first consistency problem; ctx["path"] (relative to the model) lets lint place it exactly."""
    if problems:
        first = problems[0]
        path = (*prefix, *first.path)
        raise PydanticCustomError(
            "contract_consistency", "{where}: {message}",
            {"where": ".".join(map(str, path)), "message": first.message, "path": path, "hint": first.hint or ""},
        )


FieldSpec.model_rebuild()

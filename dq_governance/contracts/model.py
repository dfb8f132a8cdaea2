"""The contract model: one pydantic model that both the native format and ODCS v3 load into.

The native YAML format maps onto these classes key for key, so `Contract.model_validate(doc)`
is the native parser; ODCS, DQX and seed-framework documents are converted into the same shape.
Field shorthands (`required`, `unique`, `allowed_values`, ...) stay on the field as written and
are expanded into rules by `Contract.rules()`, so a round trip gives back what the author wrote.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from dq_governance.contracts.consistency import duplicate_field_names, unknown_rule_columns
from dq_governance.contracts.thresholds import parse_duration, parse_threshold
from dq_governance.errors import ThresholdSyntaxError

SEMVER_RE = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")

Severity = Literal["error", "warn"]
Action = Literal["warn", "drop", "quarantine", "fail"]
OnFailure = Literal["fail", "block_publication", "warn", "skip", "quarantine"]
Dimension = Literal["completeness", "uniqueness", "validity", "consistency", "timeliness", "accuracy", "integrity"]
Number = Union[int, float]
FORMATS = ("email", "uuid", "url", "ipv4", "date", "timestamp", "cpf", "cnpj", "phone")
FormatName = Literal["email", "uuid", "url", "ipv4", "date", "timestamp", "cpf", "cnpj", "phone"]
MaskingMethod = Literal["hmac", "partial", "redact", "null", "generalize", "tokenize", "none"]


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


class DatasetInfo(_Strict):
    name: str = Field(min_length=1)
    namespace: str | None = None
    description: str | None = None
    classification: str | None = None
    path: str | None = None  # a file path or glob the dataset lives at
    table: str | None = None  # a catalog table name
    format: str | None = None  # parquet, csv, json, delta
    tags: list[str] = Field(default_factory=list)
    catalog: dict[str, str] = Field(default_factory=dict)  # e.g. openmetadata_fqn, datahub_platform


# --------------------------------------------------------------------------- schema


class MaskingSpec(_Strict):
    method: MaskingMethod
    encoding: Literal["hex", "base64"] | None = None  # hmac
    show_last: int | None = Field(default=None, ge=0)  # partial
    domain_only: bool | None = None  # partial, email
    token: str | None = None  # redact
    granularity: Literal["year", "month"] | None = None  # generalize dates
    bucket: Number | None = None  # generalize numbers
    prefix_length: int | None = Field(default=None, ge=0)  # generalize zip / CEP


class FieldSpec(_Strict):
    name: str = Field(min_length=1)
    type: str = "string"  # a Spark SQL type string: long, decimal(12,2), array<string>, struct<...>
    id: str | None = None
    description: str | None = None
    required: bool = False
    unique: bool = False
    primary_key: bool = False
    allowed_values: list[Any] | None = None
    minimum: Number | None = None
    maximum: Number | None = None
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

    @field_validator("pattern")
    @classmethod
    def _valid_regex(cls, value: str | None) -> str | None:
        if value is not None:
            _compile_regex(value)
        return value


class SchemaSpec(_Strict):
    fields: list[FieldSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_names(self) -> SchemaSpec:
        _raise_first(duplicate_field_names(self.fields), ())
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


class ServiceLevel(_Strict):
    freshness: Freshness | None = None
    volume: Volume | None = None
    latency: str | None = None

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
    type: Literal["range"]
    level: ClassVar[str] = "row"
    column: str
    min: Number | None = None
    max: Number | None = None
    min_exclusive: bool = False
    max_exclusive: bool = False

    @model_validator(mode="after")
    def _bounds(self) -> RangeRule:
        if self.min is None and self.max is None:
            raise ValueError("range needs `min` or `max`")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("range `min` is above `max`")
        return self


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


class LengthRule(_RuleBase):
    type: Literal["length"]
    level: ClassVar[str] = "row"
    column: str
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)


class TypeRule(_RuleBase):
    """Type conformance: the column's values cast to the declared Spark type (nulls excepted)."""

    type: Literal["type"]
    level: ClassVar[str] = "row"
    column: str
    data_type: str
    date_format: str | None = None


class ExpressionRule(_RuleBase):
    """A row-level SQL boolean; rows where it is false are violations."""

    type: Literal["expression"]
    level: ClassVar[str] = "row"
    expression: str


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
        return self


class ForeignKeyRule(_ColumnsRule):
    type: Literal["foreign_key"]
    level: ClassVar[str] = "row"
    reference: ReferenceSpec


class RowCountRule(_ThresholdMixin, _RuleBase):
    type: Literal["row_count"]
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)


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
        return self


class DuplicateRule(_MetricRule):
    type: Literal["duplicate_count", "duplicate_percent"]


class AggregateRule(_MetricRule):
    type: Literal["avg", "sum", "min", "max", "stddev"]


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
    required_columns: list[str] = Field(default_factory=list)
    column_types: dict[str, str] = Field(default_factory=dict)


class SqlRule(_RuleBase):
    """A query over the view `_validation_df` returning one boolean: true passes."""

    type: Literal["sql"]
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


class VolumeRule(_ThresholdMixin, _RuleBase):
    """Row count against the run history: median and MAD of the last `history_runs` runs."""

    type: Literal["volume"]
    history_runs: int = Field(default=20, ge=1)
    min_history: int = Field(default=5, ge=1)
    sensitivity: Number = 3.5
    #: explicit expected range; when unset, taken from `service_level.volume` by `Contract.rules()`
    min_rows: int | None = Field(default=None, ge=0)
    max_rows: int | None = Field(default=None, ge=0)


class SchemaDriftRule(_ThresholdMixin, _RuleBase):
    """Columns added, removed or retyped since the pipeline's last run; the metric is the change count."""

    type: Literal["schema_drift"]
    ignore_added: bool = False  # additive changes are compatible for most readers


class PiiUndeclaredRule(_RuleBase):
    """Columns whose values or names look like PII but are not declared `pii: true`; the metric is their count."""

    type: Literal["pii_undeclared"]
    min_confidence: float = Field(default=0.8, gt=0, le=1)
    sample: int = Field(default=10_000, ge=1)  # rows scanned (deterministic sample)
    ignore: list[str] = Field(default_factory=list)  # columns known not to be PII despite their look


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


class QualitySpec(_Strict):
    on_failure: OnFailure = "quarantine"
    minimum_valid_ratio: float | None = Field(default=None, ge=0, le=1)
    rules: list[Rule] = Field(default_factory=list)


# --------------------------------------------------------------------------- roles, governance


class Party(_Strict):
    name: str
    contact: str | None = None
    role: str | None = None


class Roles(_Strict):
    owner: Party | None = None
    steward: Party | None = None
    consumers: list[Party] = Field(default_factory=list)

    @field_validator("owner", "steward", mode="before")
    @classmethod
    def _party_shorthand(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value


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

    def pii_columns(self) -> list[str]:
        """Dotted paths of fields marked `pii: true`."""
        return [path for path, spec in self.iter_fields() if spec.pii]

    # -- rules -------------------------------------------------------------
    def rules(self) -> list[Any]:
        """All rules: one type rule per field, field shorthands, then `quality.rules`; names unique."""
        derived: list[Any] = []
        for spec in self.schema_.fields:
            derived.extend(_field_rules(spec.name, spec))
        derived.extend(_service_level_rules(self.service_level))
        explicit = [_with_expected_volume(rule, self.service_level) for rule in self.quality.rules]
        named: list[Any] = []
        seen: dict[str, int] = {}
        for rule in derived + explicit:
            base = rule.name or rule.default_name()
            count = seen.get(base, 0)
            seen[base] = count + 1
            name = base if count == 0 else f"{base}_{count + 1}"
            named.append(rule if rule.name == name else rule.model_copy(update={"name": name}))
        return named


def _field_rules(path: str, spec: FieldSpec) -> list[Any]:
    """Rules a field's shorthands stand for, in a fixed order."""
    out: list[Any] = [TypeRule(type="type", column=path, data_type=spec.type, date_format=spec.date_format,
                               dimension="validity", name=f"{path}_type")]
    if spec.required or spec.primary_key:
        out.append(NotNullRule(type="not_null", column=path, dimension="completeness", name=f"{path}_not_null"))
    if spec.unique or spec.primary_key:
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
        out.append(FormatRule(type="format", column=path, format=spec.format, date_format=spec.date_format,
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


def _compile_regex(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from None


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

"""What every catalog pusher shares: the interface, the sync report, lineage edges, owner names,
Spark type parsing, and the PII-safe view of a rule result.
"""

from __future__ import annotations

import math
import re
import threading
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")

from dq_governance.catalogs.naming import CatalogNaming, DatasetRef
from dq_governance.checks.disclosure import touches_pii
from dq_governance.checks.result import CheckResult, RuleResult
from dq_governance.contracts.model import Contract, FieldSpec
from dq_governance.contracts.spark_types import char_limit
from dq_governance.contracts.thresholds import parse_threshold
from dq_governance.errors import ThresholdSyntaxError

CREATED, UPDATED, UNCHANGED = "created", "updated", "unchanged"


class Transport(Protocol):
    """HttpTransport or DryRunTransport."""

    dry_run: bool
    requests_sent: int

    def request(self, method: str, path: str, *, entity: str, body: Any = None,
                params: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
                allow: tuple[int, ...] = ()) -> Any: ...

    def close(self) -> None: ...


@dataclass
class SyncReport:
    """Per-entity outcomes of one sync, for the CLI summary."""

    catalog: str
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (contract or entity, error)
    invalid: list[tuple[str, str]] = field(default_factory=list)  # contracts the catalog cannot take
    placeholders: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    writes: int = 0
    dry_run: bool = False
    server_version: str | None = None
    _lock: Any = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, outcome: str, entity: str) -> None:
        """Count one entity as created, updated or unchanged (thread-safe)."""
        with self._lock:
            {CREATED: self.created, UPDATED: self.updated, UNCHANGED: self.unchanged}[outcome].append(entity)

    def count_write(self) -> None:
        """One more write request (thread-safe)."""
        with self._lock:
            self.writes += 1

    def note(self, text: str) -> None:
        """A one-line remark for the summary (assumptions of a dry run, skipped rules)."""
        if text not in self.notes:
            self.notes.append(text)

    @property
    def exit_code(self) -> int:
        """2 when a contract was unusable (bad input), 1 when the catalog refused something, else 0."""
        return 2 if self.invalid else 1 if self.failed else 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "catalog": self.catalog,
            "dry_run": self.dry_run,
            "server_version": self.server_version,
            "created": len(self.created),
            "updated": len(self.updated),
            "unchanged": len(self.unchanged),
            "failed": len(self.failed) + len(self.invalid),
            "writes": self.writes,
            "failures": [{"what": what, "error": error} for what, error in self.invalid + self.failed],
            "placeholders": dict(self.placeholders),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class ColumnLineage:
    """Target column computed from source columns (optionally by a function)."""

    from_columns: tuple[str, ...]
    to_column: str
    function: str | None = None


@dataclass(frozen=True)
class LineageEdge:
    """input dataset -> output dataset, with column lineage where known."""

    source: DatasetRef
    target: DatasetRef
    columns: tuple[ColumnLineage, ...] = ()
    description: str | None = None


class CatalogPusher(ABC):
    """Upserts contracts, results and lineage into one catalog; reads first so unchanged input writes nothing."""

    catalog: str = ""

    def __init__(self, transport: Transport, report: SyncReport | None = None, workers: int = 1,
                 naming: CatalogNaming | None = None):
        self.transport = transport
        self.report = report or SyncReport(self.catalog, dry_run=transport.dry_run)
        self.naming = naming or CatalogNaming()
        # Independent reads/writes (one per rule) overlap on a small pool; a dry run stays sequential
        # so its request files keep a stable order.
        self._pool = ThreadPoolExecutor(workers) if workers > 1 and not transport.dry_run else None

    def _map(self, fn: Callable[[T], R], items: list[T]) -> list[R]:
        """fn over items, concurrently when a pool is configured; results (and the first error) in order."""
        if self._pool is None or len(items) < 2:
            return [fn(item) for item in items]
        return list(self._pool.map(fn, items))

    @abstractmethod
    def validate(self, contract: Contract) -> None:
        """Raise ContractError / ConfigError when the catalog cannot name the contract's dataset."""

    @abstractmethod
    def push_contract(self, contract: Contract) -> None:
        """Dataset entity, description, columns, owners, PII and classification tags, contract entity."""

    @abstractmethod
    def push_results(self, contract: Contract, result: CheckResult) -> None:
        """Test cases or assertions for the contract's rules and one result per rule for this run."""

    @abstractmethod
    def push_lineage(self, edges: list[LineageEdge]) -> None:
        """Input -> output edges, with column lineage where known."""

    def flush(self) -> None:
        """Send anything buffered (batched writes); a no-op for unbuffered pushers."""

    def close(self) -> None:
        """Flush and release the session."""
        try:
            self.flush()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
            self.transport.close()
            placeholders = getattr(self.transport, "placeholders", None)
            if placeholders:
                self.report.placeholders.update(placeholders)


# --------------------------------------------------------------------------- owners


@dataclass(frozen=True)
class Principal:
    """An owner or steward: role in the contract, kind (team, user or unknown) and bare name."""

    role: str  # "owner" | "steward"
    kind: str | None  # "team" | "user" | None when the contract does not say
    name: str


def parse_principal(text: str, role: str) -> Principal:
    """`team:x` / `user:x` / `group:x` / bare `x` -> Principal with the prefix stripped."""
    prefix, sep, rest = text.partition(":")
    kinds = {"team": "team", "group": "team", "user": "user"}
    if sep and prefix.lower() in kinds and rest:
        return Principal(role, kinds[prefix.lower()], rest.strip())
    return Principal(role, None, text.strip())


def contract_principals(contract: Contract) -> list[Principal]:
    """The owner then the steward; the header's prefixed form wins over `roles`."""
    out: list[Principal] = []
    roles = contract.roles
    for role in ("owner", "steward"):
        text = getattr(contract.contract, role, None)
        if not text and roles is not None and getattr(roles, role) is not None:
            text = getattr(roles, role).name
        if text:
            out.append(parse_principal(text, role))
    return out


# --------------------------------------------------------------------------- Spark types

_ALIASES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint", "bool": "boolean",
            "real": "float", "dec": "decimal", "numeric": "decimal", "timestamp_ltz": "timestamp"}
_DECIMAL_RE = re.compile(r"^decimal\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$")


@dataclass(frozen=True)
class SparkType:
    """A Spark SQL type string split into what catalogs need."""

    base: str  # bigint, string, decimal, array, struct, ...
    display: str  # Spark's simpleString, e.g. bigint, decimal(12,2)
    precision: int | None = None
    scale: int | None = None
    element: str | None = None  # array element type (display form)
    length: int | None = None  # char(n) and varchar(n): n


def spark_type(text: str) -> SparkType:
    """Parse `long`, `decimal(12,2)`, `array<string>`, `struct<...>` into a SparkType."""
    raw = text.strip().lower()
    if raw.startswith("array<") and raw.endswith(">"):
        element = spark_type(raw[6:-1]).display
        return SparkType("array", f"array<{element}>", element=element)
    for composite in ("struct", "map"):
        if raw.startswith(composite + "<"):
            return SparkType(composite, raw)
    match = _DECIMAL_RE.match(raw)
    if match:
        precision, scale = int(match.group(1)), int(match.group(2) or 0)
        return SparkType("decimal", f"decimal({precision},{scale})", precision, scale)
    if raw in ("decimal", "dec", "numeric"):
        return SparkType("decimal", "decimal(10,0)", 10, 0)
    base = raw.split("(")[0].strip()
    base = _ALIASES.get(base, base)
    display = base if "(" not in raw else base + raw[raw.index("("):]
    return SparkType(base, display, length=char_limit(raw))


def struct_display(fields: list[FieldSpec]) -> str:
    """`struct<a:bigint,b:string>` for a list of fields."""
    return "struct<" + ",".join(f"{f.name}:{_field_display(f)}" for f in fields) + ">"


def _field_display(spec: FieldSpec) -> str:
    if spec.fields:
        return struct_display(spec.fields)
    return spark_type(spec.type).display


def field_display(spec: FieldSpec) -> str:
    """The Spark type of a field as Spark prints it."""
    return _field_display(spec)


# --------------------------------------------------------------------------- rules


def rule_bounds(rule: Any) -> tuple[float | None, float | None]:
    """(min, max) of a range or row-count rule, from min/max or a simple must_be threshold."""
    low = getattr(rule, "min", None)
    high = getattr(rule, "max", None)
    text = getattr(rule, "must_be", None)
    if low is None and high is None and text:
        try:
            threshold = parse_threshold(text)
        except ThresholdSyntaxError:
            return None, None
        # A threshold bounds a count (row_count, volume): the inclusive integer bounds say exactly the same.
        value = threshold.value
        if threshold.operator == "between":
            return math.ceil(value), math.floor(threshold.upper)  # type: ignore[arg-type]
        if threshold.operator in (">=", ">"):
            low = math.floor(value) + 1 if threshold.operator == ">" else math.ceil(value)
        elif threshold.operator in ("<=", "<"):
            high = math.ceil(value) - 1 if threshold.operator == "<" else math.floor(value)
        elif threshold.operator == "=" and value.is_integer():
            low = high = int(value)
    return low, high


def number_text(value: float | int | None) -> str | None:
    """`1` not `1.0` for whole numbers; catalogs store parameter values as strings."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def epoch_ms(when: datetime) -> int:
    """Epoch milliseconds; naive datetimes are UTC."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return int(round(when.timestamp() * 1000))


# --------------------------------------------------------------------------- PII-safe results

#: rule types whose metric is a count or a percentage of rows, never a value taken from the data
COUNT_METRICS = frozenset({
    "not_null", "unique", "range", "regex", "allowed_values", "format", "length", "type", "expression",
    "foreign_key", "row_count", "missing_count", "missing_percent", "invalid_count", "invalid_percent",
    "duplicate_count", "duplicate_percent", "schema", "sql", "volume",
})


def safe_metric(rule: RuleResult, pii_columns: set[str]) -> float | None:
    """The metric, unless it could be a raw value of a PII column (e.g. `max` of a PII field)."""
    if rule.metric_value is None:
        return None
    if rule.type not in COUNT_METRICS and (touches_pii(rule.columns, pii_columns) or not rule.columns):
        return None
    return rule.metric_value


def safe_message(rule: RuleResult, total_rows: int | None, pii_columns: set[str]) -> str:
    """A result message built from counts only; the engine's free text may quote row values."""
    status = {"passed": "passed", "warned": "failed (warn)", "failed": "failed", "skipped": "skipped"}
    head = f"{rule.name} {status.get(rule.status, rule.status)}"
    if rule.failed_count is not None:
        of = f" of {total_rows}" if total_rows else ""
        head += f": {rule.failed_count}{of} rows violate it"
    else:
        metric = safe_metric(rule, pii_columns)
        if metric is not None:
            head += f": metric {number_text(metric)}"
    if rule.threshold:
        head += f" ({rule.threshold})"
    return head

"""Check results: plain data, no Spark import, so reports, lineage and catalogs can use them anywhere."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Callable, Literal

RuleStatus = Literal["passed", "warned", "failed", "skipped"]
RunStatus = Literal["passed", "warned", "failed"]
_OUTPUTS = ("annotated_df", "valid_df", "quarantine_df")  # a split's outputs, built on first read


@dataclass
class RuleResult:
    """The outcome of one rule in one run."""

    name: str
    type: str
    columns: list[str]
    level: str  # "row" or "dataset"
    severity: str  # "error" or "warn"
    action: str | None
    dimension: str | None
    passed: bool
    status: RuleStatus
    failed_count: int | None = None  # rows violating a row rule; None for pure dataset metrics
    metric_value: float | None = None
    threshold: str | None = None  # the threshold text that decided `passed`, e.g. "must_be < 1%"
    message: str = ""
    expected: str | None = None  # human-readable expectation, for OpenLineage `expected`
    content: str | None = None  # sql / expression text, for OpenLineage `content`
    description: str | None = None

    @property
    def column(self) -> str | None:
        """The single column, or the columns joined with a comma, or None."""
        return ",".join(self.columns) if self.columns else None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with the documented rule fields."""
        data = asdict(self)
        data["column"] = self.column
        return data


@dataclass
class ColumnMetrics:
    """Per-column metrics computed in the check pass (for the OpenLineage DQ metrics facet)."""

    null_count: int | None = None
    distinct_count: int | None = None
    count: int | None = None
    min: float | None = None
    max: float | None = None
    sum: float | None = None


@dataclass
class GateDecision:
    """Whether the run may publish, and why not."""

    passed: bool
    publish: bool
    reasons: list[str] = field(default_factory=list)


@dataclass
class CheckResult:
    """Everything one check run produced. DataFrames are attached by the engine (may be None)."""

    run_id: str
    contract_name: str
    contract_version: str
    pipeline: str
    rules: list[RuleResult]
    total_rows: int
    valid_rows: int
    invalid_rows: int
    status: RunStatus
    gate: GateDecision
    started_at: datetime
    finished_at: datetime
    column_metrics: dict[str, ColumnMetrics] = field(default_factory=dict)
    source: str | None = None
    standard: str = "native"  # native | odcs
    contract_location: str | None = None
    on_failure: str = "quarantine"
    published: bool = False
    # The three outputs have no class-level default (default_factory), so an output a split has not built yet is
    # missing from the instance and __getattr__ builds it (see outputs_from).
    annotated_df: Any = field(default_factory=lambda: None, repr=False)  # input + _dq_errors, _dq_warnings
    valid_df: Any = field(default_factory=lambda: None, repr=False)
    quarantine_df: Any = field(default_factory=lambda: None, repr=False)
    pii_columns: list[str] = field(default_factory=list)  # report rows withhold value-revealing metrics on these
    masking: str | None = None  # applied | none | disabled (recorded in report rows)
    outputs: list[dict[str, Any]] = field(default_factory=list)  # what `run` wrote: kind, location, rows
    cached: list[Any] = field(default_factory=list, repr=False)  # what the engine keeps (`unpersist()` each)
    split_storage: str | None = None  # how a split kept its rows: packed | cache (None in counts mode)
    row_outputs: str = "split"  # "split": valid / quarantine rows built; "none": a metrics-only check (no rows)
    # builds a split's output by name, over the kept rows (True) or the input again (False); see outputs_from
    output_builder: Callable[[str, bool], Any] | None = field(default=None, repr=False)
    outputs_kept: bool = field(default=False, repr=False)  # outputs built now read the kept rows
    input_schema: dict[str, str] | None = None  # {column: Spark type} as read; the history keeps it for drift
    contract: Any = field(default=None, repr=False)  # the Contract checked (masks for failed-row samples)
    failed_rows: list[dict[str, Any]] = field(default_factory=list)  # masked sample kept by run(failed_sample=N)

    @property
    def quality_score(self) -> float | None:
        """valid / total, or None on empty input."""
        return None if self.total_rows == 0 else self.valid_rows / self.total_rows

    @property
    def duration_seconds(self) -> float:
        """Wall time of the run."""
        return (self.finished_at - self.started_at).total_seconds()

    def outputs_from(self, builder: Callable[[str, bool], Any]) -> None:
        """Build the outputs on first read with builder(name, kept), over the kept rows until release()."""
        self.output_builder, self.outputs_kept = builder, True
        for name in _OUTPUTS:
            self.__dict__.pop(name, None)

    def release(self) -> None:
        """Free the rows the engine kept; later reads of the outputs recompute them. Safe to call twice."""
        while self.cached:
            self.cached.pop().unpersist()
        if self.outputs_kept:
            # The outputs built so far read the freed rows: they are built again, over the input, when read.
            # Not here: most callers release after their last read, and each build is a Spark analysis.
            self.outputs_kept = False
            for name in _OUTPUTS:
                self.__dict__.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        """A split's output read for the first time (or the first time since release()): built now."""
        builder = self.__dict__.get("output_builder")
        if name not in _OUTPUTS or builder is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        frame = self.__dict__[name] = builder(name, self.outputs_kept)
        return frame

    def failed_sample(self, limit: int = 10, rule: str | None = None, keys: Any = None) -> list[dict[str, Any]]:
        """Up to `limit` invalid rows (or rows failing `rule`) with `_dq_errors`, masked like published data."""
        from dq_governance.checks.samples import failed_sample

        return failed_sample(self, limit=limit, rule=rule, keys=keys)

    def rule(self, name: str) -> RuleResult:
        """A rule result by name; KeyError if absent."""
        for rule in self.rules:
            if rule.name == name:
                return rule
        raise KeyError(name)

    def report_rows(self) -> list[dict[str, Any]]:
        """One report-history row per rule (see dq_governance.publish.report)."""
        from dq_governance.checks.report_rows import report_rows

        return report_rows(self)

    def summary(self) -> dict[str, Any]:
        """The JSON object `dqgov check --json` prints."""
        return {
            "run_id": self.run_id,
            "contract": self.contract_name,
            "contract_version": self.contract_version,
            "pipeline": self.pipeline,
            "status": self.status,
            "published": self.published,
            "total_rows": self.total_rows,
            "valid_rows": self.valid_rows,
            "invalid_rows": self.invalid_rows,
            "quality_score": self.quality_score,
            "gate": asdict(self.gate),
            "started_at": self.started_at.isoformat(),
            "duration_seconds": self.duration_seconds,
            "split_storage": self.split_storage,
            "row_outputs": self.row_outputs,
            "rules": [rule.as_dict() for rule in self.rules],
        }

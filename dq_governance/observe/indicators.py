"""Quality indicators over report-history runs, each with its definition and denominator.

Pure Python over `history.RunSummary` objects; the HTML report and tests share these numbers.
A rate whose denominator is 0 is None ("n/a"), never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from dq_governance.observe.anomaly import flag_series
from dq_governance.observe.freshness import human_age
from dq_governance.observe.history import RunSummary

COMPLETENESS_TYPES = frozenset({"not_null", "missing_count", "missing_percent"})
UNIQUENESS_TYPES = frozenset({"unique", "duplicate_count", "duplicate_percent"})


@dataclass
class Indicator:
    """One indicator: its value for the latest run and over all runs shown, with how it is computed."""

    key: str
    name: str
    latest: float | None  # a ratio in [0, 1], seconds (freshness) or a count
    overall: float | None
    numerator: float | None  # over all runs
    denominator: float | None  # over all runs
    unit: str  # ratio | seconds
    definition: str
    denominator_text: str

    def show(self, value: float | None) -> str:
        """The value as the report prints it."""
        if value is None:
            return "n/a"
        if self.unit == "seconds":
            return human_age(value)
        return f"{100 * value:.2f}%"


def _ratio(num: float, den: float) -> float | None:
    return None if not den else num / den


def _rule_rows(run: RunSummary, types: frozenset[str]) -> list[dict]:
    return [r for r in run.rules if r.get("rule_type") in types]


def _row_rate(runs: Sequence[RunSummary], types: frozenset[str]) -> tuple[float, float]:
    """(flagged rows summed over the rules, rows x rules) for row-counting rules of `types`."""
    num = den = 0.0
    for run in runs:
        for rule in _rule_rows(run, types):
            if rule.get("failed_count") is None or rule.get("rule_status") == "skipped":
                continue
            num += rule["failed_count"]
            den += run.total_rows or 0
    return num, den


def _run_share(runs: Sequence[RunSummary], judge: Callable[[RunSummary], bool | None]) -> tuple[float, float]:
    """(runs where judge is True, runs where judge is not None)."""
    verdicts = [judge(run) for run in runs]
    return float(sum(1 for v in verdicts if v)), float(sum(1 for v in verdicts if v is not None))


def _schema_ok(run: RunSummary) -> bool | None:
    rules = [r for r in _rule_rows(run, frozenset({"schema", "schema_drift"})) if r.get("rule_status") != "skipped"]
    return None if not rules else all(r.get("passed") for r in rules)


def _gate_failed(run: RunSummary) -> bool | None:
    if run.gate_passed is not None:
        return not run.gate_passed
    return None if run.run_status is None else run.run_status == "failed"  # histories older than gate_passed


def series_key(run: RunSummary) -> tuple[str, str | None]:
    """(pipeline, contract): the runs of one governed table, the ones the report compares with each other.

    One pipeline may hold several contracts (the session extension's default pipeline is the Spark
    application name), and one table's row counts and rules say nothing about another's.
    """
    return run.pipeline, run.contract


def volume_flags(runs: Sequence[RunSummary]) -> dict[tuple[str, str, str | None], bool | None]:
    """RunSummary.key -> anomalous? from the run's volume rule; without one, median/MAD over total_rows.

    Keyed as `history.runs` folds them: an orchestrator may give several pipelines or contracts one run id.
    The median/MAD fallback judges a run against the earlier runs of its own pipeline and contract, as the
    volume rule does.
    """
    out: dict[tuple[str, str, str | None], bool | None] = {}
    by_series: dict[tuple[str, str | None], list[RunSummary]] = {}
    for run in runs:
        by_series.setdefault(series_key(run), []).append(run)
    for series_runs in by_series.values():
        series = flag_series([run.total_rows or 0 for run in series_runs])
        for run, verdict in zip(series_runs, series):
            rules = [r for r in _rule_rows(run, frozenset({"volume"})) if r.get("rule_status") != "skipped"]
            key = run.key
            if rules:
                out[key] = any(not r.get("passed") for r in rules)
            elif _rule_rows(run, frozenset({"volume"})):
                out[key] = None  # the rule ran but had too little history
            else:
                out[key] = None if verdict.skipped else verdict.anomalous
    return out


def _freshness(run: RunSummary) -> tuple[float | None, bool | None]:
    rules = [r for r in _rule_rows(run, frozenset({"freshness"})) if r.get("metric_value") is not None]
    if not rules:
        return None, None
    return max(r["metric_value"] for r in rules), all(r.get("passed") for r in rules)


def indicators(runs: Sequence[RunSummary]) -> list[Indicator]:
    """The eight indicators over `runs` (oldest first); `latest` is over the last run of each (pipeline, contract)."""
    if not runs:
        return []
    last = list({series_key(run): run for run in runs}.values())
    out: list[Indicator] = []

    def share(selected: Sequence[RunSummary], judge: Callable[[RunSummary], bool | None]) -> float | None:
        return _ratio(*_run_share(selected, judge))

    valid = sum(r.valid_rows or 0 for r in runs)
    total = sum(r.total_rows or 0 for r in runs)
    latest_valid = _ratio(sum(r.valid_rows or 0 for r in last), sum(r.total_rows or 0 for r in last))
    out.append(Indicator(
        "valid_record_ratio", "Valid record ratio", latest_valid, _ratio(valid, total), valid, total, "ratio",
        "rows that broke no error-severity rule, divided by rows checked",
        "rows checked (total_rows), summed over runs"))

    for key, name, types, what in (
        ("null_rate", "Null rate", COMPLETENESS_TYPES, "completeness (not_null, missing_*)"),
        ("duplicate_rate", "Duplicate rate", UNIQUENESS_TYPES, "uniqueness (unique, duplicate_*)"),
    ):
        num, den = _row_rate(runs, types)
        lnum, lden = _row_rate(last, types)
        out.append(Indicator(
            key, name, _ratio(lnum, lden), _ratio(num, den), num, den, "ratio",
            f"rows flagged by {what} rules, summed over those rules (every row of a duplicated key counts)"
            if key == "duplicate_rate" else f"rows flagged by {what} rules, summed over those rules",
            f"rows checked x number of {key.split('_')[0]}-checking rules, summed over runs"))

    ages = [_freshness(r) for r in runs]
    fresh_ok = [ok for _age, ok in ages if ok is not None]
    latest_ages = [age for age, _ok in (_freshness(r) for r in last) if age is not None]
    out.append(Indicator(
        "freshness", "Freshness", max(latest_ages) if latest_ages else None, _ratio(sum(fresh_ok), len(fresh_ok)),
        float(sum(fresh_ok)),
        float(len(fresh_ok)), "seconds",
        "data age of the latest run: check time minus the newest value of the contract's freshness column "
        "(event or ingestion time, as the contract says); overall: share of runs within the SLA",
        "runs with a freshness rule that measured an age"))

    num, den = _run_share(runs, _schema_ok)
    out.append(Indicator(
        "schema_compatibility", "Schema compatibility", share(last, _schema_ok), _ratio(num, den), num, den, "ratio",
        "runs whose schema and schema_drift rules all passed (no missing column, no type change, no unexpected drift)",
        "runs that evaluated a schema or schema_drift rule (first runs without history excluded)"))

    flags = volume_flags(runs)

    def flagged(run: RunSummary) -> bool | None:
        return flags.get(run.key)

    num, den = _run_share(runs, flagged)
    out.append(Indicator(
        "volume_anomaly", "Volume anomaly", share(last, flagged), _ratio(num, den), num, den, "ratio",
        "runs whose row count is off the history of their pipeline and contract (robust z of median/MAD above the "
        "sensitivity) or outside the expected range; runs without a volume rule use the defaults (20 runs, 5 minimum, "
        "3.5)",
        "runs with enough history to judge (at least the minimum history, or an explicit range)"))

    num, den = _run_share(runs, _gate_failed)
    out.append(Indicator(
        "quality_gate_failures", "Quality-gate failures", share(last, _gate_failed), _ratio(num, den), num, den,
        "ratio",
        "runs whose quality gate failed (minimum_valid_ratio missed or a failed dataset-level error rule)",
        "runs"))

    def violations(selected: Sequence[RunSummary]) -> tuple[float, float]:
        evaluated = [r for run in selected for r in run.rules if r.get("rule_status") != "skipped"]
        return float(sum(1 for r in evaluated if not r.get("passed"))), float(len(evaluated))

    num, den = violations(runs)
    lnum, lden = violations(last)
    out.append(Indicator(
        "contract_violations", "Contract violations", _ratio(lnum, lden), _ratio(num, den), num, den, "ratio",
        "rule evaluations that did not pass (any severity), divided by rule evaluations",
        "rule evaluations (rules x runs), skipped rules excluded"))
    return out

"""Volume anomaly: today's row count against the median and MAD of the same pipeline's last runs.

robust z = 0.6745 * |count - median| / MAD (Iglewicz-Hoaglin); a run is anomalous when z exceeds the
rule's `sensitivity` (3.5 by default). The median and MAD ignore one-off outliers, so the run after a
100x drop is judged against normal runs, and a slow drift moves the median along with it instead of
alarming on every run. An explicit expected range (`min_rows` / `max_rows`, from the rule or the
contract's `service_level.volume`) is checked even without history.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Sequence

#: z-score constant: MAD * 1.4826 estimates the standard deviation of normal data (1 / 1.4826 = 0.6745)
Z_CONSTANT = 0.6745
#: a perfectly constant history has MAD 0; the spread is floored at this share of the median so a
#: 0.1% wobble after identical runs is not an infinite z-score
MIN_RELATIVE_SPREAD = 0.005


@dataclass
class VolumeVerdict:
    """What the volume check found for one run."""

    count: int
    history: list[int]
    median: float | None = None
    mad: float | None = None
    score: float | None = None  # robust z; None when history is too short
    skipped: bool = False  # not enough history and no explicit range
    problems: list[str] = field(default_factory=list)

    @property
    def anomalous(self) -> bool:
        """True when the count is off the history or outside the explicit range."""
        return bool(self.problems)


def robust_z(count: float, history: Sequence[float]) -> tuple[float, float, float]:
    """(median, MAD, robust z) of `count` against `history` (non-empty)."""
    median = float(statistics.median(history))
    mad = float(statistics.median(abs(x - median) for x in history))
    spread = max(mad, MIN_RELATIVE_SPREAD * abs(median))
    if spread == 0:
        return median, mad, (0.0 if count == median else math.inf)
    return median, mad, Z_CONSTANT * abs(count - median) / spread


def volume_anomaly(
    count: int,
    history: Sequence[int],
    *,
    history_runs: int = 20,
    min_history: int = 5,
    sensitivity: float = 3.5,
    min_rows: int | None = None,
    max_rows: int | None = None,
) -> VolumeVerdict:
    """Judge one run's row count against the last `history_runs` earlier counts (oldest first)."""
    window = [int(x) for x in list(history)[-history_runs:]] if history_runs > 0 else []
    verdict = VolumeVerdict(count=int(count), history=window)
    if min_rows is not None and count < min_rows:
        verdict.problems.append(f"row count {count} is below the expected minimum {min_rows}")
    if max_rows is not None and count > max_rows:
        verdict.problems.append(f"row count {count} is above the expected maximum {max_rows}")
    if len(window) < min_history:
        verdict.skipped = min_rows is None and max_rows is None
        return verdict
    verdict.median, verdict.mad, verdict.score = robust_z(count, window)
    if verdict.score > sensitivity:
        verdict.problems.append(
            f"row count {count} is off the median {_fmt(verdict.median)} (robust z {_fmt(verdict.score)})"
        )
    return verdict


def flag_series(
    counts: Sequence[int], *, history_runs: int = 20, min_history: int = 5, sensitivity: float = 3.5
) -> list[VolumeVerdict]:
    """Judge every run of a series (oldest first) against the runs before it, as the rule would have."""
    return [
        volume_anomaly(count, counts[:i], history_runs=history_runs, min_history=min_history,
                       sensitivity=sensitivity)
        for i, count in enumerate(counts)
    ]


def _fmt(value: float | None) -> str:
    if value is None:
        return "none"
    if math.isinf(value):
        return "inf"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6g}"

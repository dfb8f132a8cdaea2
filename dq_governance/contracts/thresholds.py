"""The warn / must_be threshold DSL: `= 0`, `< 1%`, `>= 10`, `between 10 and 100`, `< 1d`."""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Callable, Union

from dq_governance.errors import ThresholdSyntaxError

_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
Metric = Union[float, int, Decimal]
_COMPARATORS: dict[str, Callable[[Metric, Metric], bool]] = {
    "=": operator.eq,
    "==": operator.eq,
    "!=": operator.ne,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_NUMBER = r"-?\d+(?:\.\d+)?"
_VALUE = rf"({_NUMBER})\s*(%|[smhdw])?"
_COMPARISON_RE = re.compile(rf"^\s*(==|=|!=|<>|<=|>=|<|>)\s*{_VALUE}\s*$")
_BETWEEN_RE = re.compile(rf"^\s*(not\s+)?between\s+{_VALUE}\s+and\s+{_VALUE}\s*$", re.IGNORECASE)
_DURATION_RE = re.compile(rf"^\s*({_NUMBER})\s*([smhdw])\s*$")


def parse_duration(text: str | int | float) -> float:
    """Seconds in a duration such as `60m`, `1d`, `30s` (a bare number means minutes)."""
    if isinstance(text, (int, float)):
        return float(text) * 60
    match = _DURATION_RE.match(str(text))
    if not match:
        raise ThresholdSyntaxError(f"invalid duration {text!r}; expected a number and a unit s, m, h, d or w, e.g. '60m'")
    return float(match.group(1)) * _DURATION_UNITS[match.group(2)]


def _scale(number: str, unit: str | None) -> tuple[float, str | None]:
    value = float(number)
    if unit in _DURATION_UNITS:
        return value * _DURATION_UNITS[unit], "duration"
    if unit == "%":
        return value, "percent"
    return value, None


def _exact(number: str, unit: str | None) -> Decimal | None:
    """The bound as written, for metrics Spark returns exactly (a plain number only; units scale as floats)."""
    return Decimal(number) if unit is None else None


@dataclass(frozen=True)
class Threshold:
    """A parsed threshold. Percent values are on a 0-100 scale; durations are in seconds."""

    text: str
    operator: str
    value: float
    upper: float | None = None
    unit: str | None = None  # None, "percent" or "duration"
    exact: tuple[Decimal, Decimal | None] | None = field(default=None, repr=False, compare=False)

    def holds(self, metric: Metric | None) -> bool:
        """True when the metric satisfies the threshold; a missing metric never does."""
        if metric is None:
            return False
        low, high = self._bounds(metric)
        if self.operator == "between":
            return low <= metric <= high  # type: ignore[operator]
        if self.operator == "not between":
            return not (low <= metric <= high)  # type: ignore[operator]
        return _COMPARATORS[self.operator](metric, low)

    def _bounds(self, metric: Metric) -> tuple[Metric, Metric | None]:
        # A decimal or long sum past 2^53 has no exact float: 12345678901234567.89 and .88 are one float.
        # Python compares int and Decimal exactly, so such metrics meet the bound as written.
        if self.exact is not None and isinstance(metric, (int, Decimal)) and not isinstance(metric, bool):
            return self.exact
        return self.value, self.upper

    def __str__(self) -> str:
        return self.text


def parse_threshold(text: str | int | float) -> Threshold:
    """Parse one threshold expression; raise ThresholdSyntaxError with the accepted forms."""
    raw = str(text).strip()
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return Threshold(raw, "=", float(text), exact=(Decimal(raw), None) if math.isfinite(text) else None)
    match = _COMPARISON_RE.match(raw)
    if match:
        op, number, unit = match.groups()
        value, kind = _scale(number, unit)
        exact = _exact(number, unit)
        return Threshold(raw, "=" if op == "==" else ("!=" if op == "<>" else op), value, None, kind,
                         None if exact is None else (exact, None))
    match = _BETWEEN_RE.match(raw)
    if match:
        negated, low, low_unit, high, high_unit = match.groups()
        low_value, low_kind = _scale(low, low_unit)
        high_value, high_kind = _scale(high, high_unit)
        if low_kind != high_kind:
            raise ThresholdSyntaxError(f"threshold {raw!r} mixes units")
        if low_value > high_value:
            raise ThresholdSyntaxError(f"threshold {raw!r} has its lower bound above its upper bound")
        low_exact, high_exact = _exact(low, low_unit), _exact(high, high_unit)
        return Threshold(raw, "not between" if negated else "between", low_value, high_value, low_kind,
                         None if low_exact is None else (low_exact, high_exact))
    raise ThresholdSyntaxError(
        f"invalid threshold {raw!r}; expected e.g. '= 0', '< 1%', '>= 10', 'between 10 and 100' or '< 1d'"
    )

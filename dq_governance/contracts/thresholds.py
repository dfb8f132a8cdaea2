"""The warn / must_be threshold DSL: `= 0`, `< 1%`, `>= 10`, `between 10 and 100`, `< 1d`."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Callable

from dq_governance.errors import ThresholdSyntaxError

_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_COMPARATORS: dict[str, Callable[[float, float], bool]] = {
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


@dataclass(frozen=True)
class Threshold:
    """A parsed threshold. Percent values are on a 0-100 scale; durations are in seconds."""

    text: str
    operator: str
    value: float
    upper: float | None = None
    unit: str | None = None  # None, "percent" or "duration"

    def holds(self, metric: float | None) -> bool:
        """True when the metric satisfies the threshold; a missing metric never does."""
        if metric is None:
            return False
        if self.operator == "between":
            return self.value <= metric <= self.upper  # type: ignore[operator]
        if self.operator == "not between":
            return not (self.value <= metric <= self.upper)  # type: ignore[operator]
        return _COMPARATORS[self.operator](metric, self.value)

    def __str__(self) -> str:
        return self.text


def parse_threshold(text: str | int | float) -> Threshold:
    """Parse one threshold expression; raise ThresholdSyntaxError with the accepted forms."""
    raw = str(text).strip()
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return Threshold(raw, "=", float(text))
    match = _COMPARISON_RE.match(raw)
    if match:
        op, number, unit = match.groups()
        value, kind = _scale(number, unit)
        return Threshold(raw, "=" if op == "==" else ("!=" if op == "<>" else op), value, None, kind)
    match = _BETWEEN_RE.match(raw)
    if match:
        negated, low, low_unit, high, high_unit = match.groups()
        low_value, low_kind = _scale(low, low_unit)
        high_value, high_kind = _scale(high, high_unit)
        if low_kind != high_kind:
            raise ThresholdSyntaxError(f"threshold {raw!r} mixes units")
        if low_value > high_value:
            raise ThresholdSyntaxError(f"threshold {raw!r} has its lower bound above its upper bound")
        return Threshold(raw, "not between" if negated else "between", low_value, high_value, low_kind)
    raise ThresholdSyntaxError(
        f"invalid threshold {raw!r}; expected e.g. '= 0', '< 1%', '>= 10', 'between 10 and 100' or '< 1d'"
    )

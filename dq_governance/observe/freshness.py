"""Freshness: data age = now - newest timestamp of the contract's declared column.

`time: event` reads the column as when things happened (an order was placed); `time: ingestion` as when
rows landed. Both give an age, but they answer different questions, so the message names which one.
Event times in the future (clock skew at the source) give age 0, never a negative age.
"""

from __future__ import annotations

from datetime import datetime, timezone

TIME_LABELS = {"event": "event time", "ingestion": "ingestion time"}


def data_age(newest_epoch: float, now: datetime | None = None) -> float:
    """Seconds between the newest timestamp (epoch seconds) and `now` (default: the wall clock)."""
    moment = (now or datetime.now(timezone.utc))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return max(0.0, moment.timestamp() - float(newest_epoch))


def human_age(seconds: float) -> str:
    """`2d 3h`, `3h 5m`, `4m 10s`, `12s`: the two largest units."""
    seconds = int(round(seconds))
    units = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
    parts = []
    for label, size in units:
        amount, seconds = divmod(seconds, size)
        if amount or parts:
            parts.append(f"{amount}{label}")
        if len(parts) == 2:
            break
    return " ".join(p for p in parts if not p.startswith("0")) or "0s"


def describe(column: str, time_kind: str, newest_epoch: float, age: float) -> str:
    """`data age 3h (newest event time in data_pedido: 2026-11-05T00:00:00Z)`."""
    newest = datetime.fromtimestamp(float(newest_epoch), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"data age {human_age(age)} (newest {TIME_LABELS.get(time_kind, time_kind)} in {column}: {newest})"

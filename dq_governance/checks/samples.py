"""Failed-row samples: a few quarantined rows to look at, masked exactly as published data is.

A sample is what people paste into tickets and chat, so PII columns leave it only under the contract's
masks; without a key those need, it fails like publication does (never an unmasked fallback). Only a run
whose masking was explicitly disabled (`masking == "disabled"`, recorded in its report) shows raw values.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from dq_governance.checks.columns import ERRORS_COL, WARNINGS_COL
from dq_governance.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from dq_governance.checks.result import CheckResult


def failed_sample(
    result: CheckResult, *, limit: int = 10, rule: str | None = None, keys: Any = None,
    base_dir: Path | None = None,
) -> list[dict[str, Any]]:
    """Up to `limit` invalid rows (or rows failing `rule`, warn rules included) with their annotations, masked."""
    if limit < 1:
        return []
    if result.quarantine_df is None:
        raise ConfigError("failed rows are only kept by a split check (mode 'split'); a counts check has none")
    frame = result.quarantine_df
    if rule is not None:
        try:
            result.rule(rule)
        except KeyError:
            raise ConfigError(f"no rule named {rule!r} in contract {result.contract_name}") from None
        frame = result.annotated_df.where(
            F.array_contains(F.col(ERRORS_COL), rule) | F.array_contains(F.col(WARNINGS_COL), rule)
        )
    if result.masking != "disabled" and result.contract is not None:
        from dq_governance.masking import apply_masks

        if base_dir is None and result.contract_location:
            base_dir = Path(result.contract_location).resolve().parent
        frame = apply_masks(frame, result.contract, keys=keys, base_dir=base_dir)
    return [row.asDict(recursive=True) for row in frame.limit(limit).collect()]

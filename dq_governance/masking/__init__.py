"""Masking and PII detection.

`masked_columns` (which columns, which method) is Spark-free; `apply_masks` and the scanner load
Spark on first use, so importing this package does not import pyspark.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from dq_governance.masking.keys import MaskingKey, resolve_key
from dq_governance.masking.policies import (
    DEFAULT_PII_SPEC,
    KEYED_METHODS,
    effective_policy,
    load_policy_file,
    masked_columns,
    needs_key,
)

# public name -> module that defines it; Spark-facing, resolved lazily
_LAZY = {
    "apply_masks": "dq_governance.masking.apply",
    "mask_column": "dq_governance.masking.methods",
    "scan_pii": "dq_governance.masking.detect",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dq_governance.masking' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = [
    "DEFAULT_PII_SPEC",
    "KEYED_METHODS",
    "MaskingKey",
    "effective_policy",
    "load_policy_file",
    "masked_columns",
    "needs_key",
    "resolve_key",
    *_LAZY,
]

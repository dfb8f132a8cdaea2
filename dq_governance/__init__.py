"""dq-governance: data contracts, data-quality checks, OpenLineage and catalog governance for Spark.

Importing the package does not import Spark: the Spark-facing API is loaded on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it; resolved lazily so contract tooling runs without Spark
_LAZY = {
    "load_contract": "dq_governance.contracts.load",
    "Contract": "dq_governance.contracts.model",
    "check": "dq_governance.api",
    "run": "dq_governance.api",
    "expect": "dq_governance.decorators",
    "expect_or_drop": "dq_governance.decorators",
    "expect_or_fail": "dq_governance.decorators",
    "expect_all": "dq_governance.decorators",
    "expect_all_or_drop": "dq_governance.decorators",
    "expect_all_or_fail": "dq_governance.decorators",
    "contract": "dq_governance.decorators",
    "spark_session": "dq_governance.lineage.spark",
    "check_stream": "dq_governance.streaming",
    "record_results": "dq_governance.lineage.jvm_registry",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dq_governance' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = ["__version__", *_LAZY]

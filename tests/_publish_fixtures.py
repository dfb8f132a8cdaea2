"""Hand-built check results for publish tests: six rows whose routing is known under every policy.

row  pedido_id  valor   _dq_errors      _dq_warnings   why
1    1          10.00   []              []             clean
2    2          20.00   []              [valor_warn]   a warning only: still valid
3    3          -5.00   [valor_range]   []             error rule, no action: follows on_failure
4    4          abc     [valor_type]    []             does not cast: follows on_failure
5    5          7.00    [id_drop]       []             error rule with action drop
6    6          8.00    []              [soft_rule]    error rule with action warn: a warning, valid
"""

from __future__ import annotations

from datetime import datetime, timezone

from dq_governance.checks.result import CheckResult, RuleResult
from dq_governance.contracts.model import Contract
from dq_governance.checks.gate import decide

RAW = [
    ("1", "10.00", [], []),
    ("2", "20.00", [], ["valor_warn"]),
    ("3", "-5.00", ["valor_range"], []),
    ("4", "abc", ["valor_type"], []),
    ("5", "7.00", ["id_drop"], []),
    ("6", "8.00", [], ["soft_rule"]),
]
RAW_SCHEMA = "pedido_id string, valor string, _dq_errors array<string>, _dq_warnings array<string>"


def contract(on_failure: str = "quarantine", minimum_valid_ratio: float | None = None) -> Contract:
    quality: dict = {"on_failure": on_failure}
    if minimum_valid_ratio is not None:
        quality["minimum_valid_ratio"] = minimum_valid_ratio
    return Contract.model_validate({
        "contract": {"name": "mini", "version": "1.2.3"},
        "dataset": {"name": "mini"},
        "schema": {"fields": [
            {"name": "pedido_id", "type": "long", "required": True},
            {"name": "valor", "type": "decimal(12,2)", "pii": True},
        ]},
        "quality": quality,
    })


def rules() -> list[RuleResult]:
    def row(name: str, rule_type: str, severity: str, action: str | None, failed: int, column: str = "valor"):
        status = "passed" if failed == 0 else ("failed" if severity == "error" else "warned")
        return RuleResult(name=name, type=rule_type, columns=[column], level="row", severity=severity,
                          action=action, dimension="validity", passed=failed == 0, status=status,
                          failed_count=failed, message=f"{name}: {failed} row(s) failed")

    return [
        row("valor_range", "range", "error", None, 1),
        row("valor_type", "type", "error", None, 1),
        row("id_drop", "expression", "error", "drop", 1, column="pedido_id"),
        row("soft_rule", "expression", "error", "warn", 1),
        row("valor_warn", "expression", "warn", None, 1),
        RuleResult(name="valor_max", type="max", columns=["valor"], level="dataset", severity="error",
                   action=None, dimension="validity", passed=True, status="passed", metric_value=20.0,
                   threshold="must_be < 100", message="max(valor) = 20.0"),
    ]


def result(spark, on_failure: str = "quarantine", *, run_id: str = "run-1", rows=RAW,
           minimum_valid_ratio: float | None = None) -> CheckResult:
    """A CheckResult shaped like the engine's, gate decided by checks.gate."""
    from pyspark.sql import functions as F

    annotated = spark.createDataFrame(rows, RAW_SCHEMA).persist()
    invalid = F.size("_dq_errors") > 0
    valid = annotated.where(~invalid).select(
        F.col("pedido_id").cast("long").alias("pedido_id"), F.col("valor").cast("decimal(12,2)").alias("valor"))
    quarantine = annotated.where(invalid)
    total = len(rows)
    n_valid = sum(1 for r in rows if not r[2])
    rule_results = rules()
    gate, status = decide(rule_results, on_failure=on_failure, minimum_valid_ratio=minimum_valid_ratio,
                          total_rows=total, valid_rows=n_valid)
    now = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
    return CheckResult(
        run_id=run_id, contract_name="mini", contract_version="1.2.3", pipeline="mini-pipe", rules=rule_results,
        total_rows=total, valid_rows=n_valid, invalid_rows=total - n_valid, status=status, gate=gate,
        started_at=now, finished_at=now, source="mem://mini", on_failure=on_failure, annotated_df=annotated,
        valid_df=valid, quarantine_df=quarantine, pii_columns=["valor"],
    )


def tree(path) -> dict[str, bytes]:
    """Every file under `path` (relative name -> bytes), hidden ones included: a byte-for-byte snapshot."""
    from pathlib import Path

    root = Path(path)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

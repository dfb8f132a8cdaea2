"""A fixed report history (two pipelines, known numbers), written with pyarrow in the writer's layout."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from dq_governance.observe.drift import encode_schema
from dq_governance.publish.report import PARTITION_COLUMNS, REPORT_COLUMNS

ORDERS_TOTALS = [100, 100, 100, 100, 100, 50]
ORDERS_VALID = [97, 98, 100, 97, 100, 50]
ORDERS_UNIQUE = [2, 2, 0, 0, 0, 0]
ORDERS_ALLOWED = [1, 0, 0, 3, 0, 0]
ORDERS_GATE = [False, False, True, False, True, False]
ORDERS_AGE = [1800.0] * 5 + [7200.0]


def _rule(name, rule_type, level, dimension, status, failed=None, metric=None, threshold=None, message=""):
    return {"check_name": name, "rule_type": rule_type, "level": level, "dimension": dimension,
            "severity": "error", "rule_status": status, "passed": status in ("passed", "skipped", "warned"),
            "failed_count": failed, "metric_value": metric, "threshold": threshold, "message": message,
            "column": None, "action": None}


def history_rows() -> list[dict]:
    """Every report row of the fixed history."""
    rows: list[dict] = []
    schema_v1 = {"pedido_id": "string", "status": "string"}
    for i in range(6):
        rules = [
            _rule("pedido_id_not_null", "not_null", "row", "completeness", "passed", 0, 0.0),
            _rule("pedido_id_unique", "unique", "row", "uniqueness", "failed" if ORDERS_UNIQUE[i] else "passed",
                  ORDERS_UNIQUE[i], float(ORDERS_UNIQUE[i])),
            _rule("status_allowed_values", "allowed_values", "row", "validity",
                  "failed" if ORDERS_ALLOWED[i] else "passed", ORDERS_ALLOWED[i], float(ORDERS_ALLOWED[i])),
            _rule("freshness_sla", "freshness", "dataset", "timeliness", "failed" if i == 5 else "passed", None,
                  ORDERS_AGE[i], "must_be < 60m"),
            _rule("volume", "volume", "dataset", "completeness", "failed" if i == 5 else "skipped", None,
                  float(ORDERS_TOTALS[i])),
        ]
        for rule in rules:
            rows.append(_run_row("orders", f"orders-run-{i + 1}", datetime(2026, 11, i + 1, 6, 0, tzinfo=timezone.utc),
                                 ORDERS_TOTALS[i], ORDERS_VALID[i], ORDERS_GATE[i], schema_v1, rule))
    for i, schema in enumerate([{"id": "string"}, {"id": "string", "email": "string"}]):
        status = "skipped" if i == 0 else "failed"
        rule = _rule("schema_drift", "schema_drift", "dataset", "consistency", status, None,
                     None if i == 0 else 1.0, None, "column email added (string)" if i else "")
        rows.append(_run_row("customers", f"customers-run-{i + 1}", datetime(2026, 11, 5 + i, 7, 0, tzinfo=timezone.utc),
                             10, 10, True, schema, rule))
    return rows


def _run_row(pipeline, run_id, at, total, valid, gate, schema, rule):
    row = {column: None for column in REPORT_COLUMNS}
    row.update(rule)
    row.update({"pipeline": pipeline, "run_id": run_id, "contract": pipeline, "contract_version": "1.0.0",
                "validated_at": at, "run_status": "passed" if gate else "failed", "published": gate,
                "total_rows": total, "valid_rows": valid, "invalid_rows": total - valid,
                "quality_score": valid / total, "gate_passed": gate, "run_schema": encode_schema(schema),
                "masking": "none", "source": f"data/{pipeline}.csv"})
    return row


def write_history(root: Path, rows: list[dict] | None = None) -> Path:
    """Write rows as `pipeline=<p>/run_id=<id>/part-0.parquet`, the layout publish.report writes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    kinds = {"string": pa.string(), "boolean": pa.bool_(), "bigint": pa.int64(), "double": pa.float64(),
             "timestamp": pa.timestamp("us", tz="UTC")}
    columns = [c for c in REPORT_COLUMNS if c not in PARTITION_COLUMNS]
    schema = pa.schema([(c, kinds[REPORT_COLUMNS[c]]) for c in columns])
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in rows if rows is not None else history_rows():
        groups.setdefault((row["pipeline"], row["run_id"]), []).append(row)
    for (pipeline, run_id), members in groups.items():
        target = root / f"pipeline={pipeline}" / f"run_id={run_id}"
        target.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist([{c: m[c] for c in columns} for m in members], schema=schema)
        pq.write_table(table, target / "part-0.parquet")
    return root

"""A contract's same-pass rules as Spark SQL text over a write's columns, for the session extension (listeners/).

The text is compiled from the engine's own rule Columns (`engine.build_rules`), never written a second time:
each condition is analysed over an empty frame of the written columns, the engine's typed stage is inlined
(Catalyst's CollapseProject, always inlining), and the resolved expression is printed as SQL. The extension
parses that text with the session's parser, so the Python engine and the JVM count the same rows.

Two variants per rule, because the engine's conditions depend on the input's types: `typed` (the written
columns have the contract's types) and `text` (the contract's non-string columns are written as strings, as
a CSV read without a schema gives them). The extension picks the variant per rule from the written schema.

Rules that need more than one pass over the written rows are listed with the reason (`NOT_SAME_PASS`).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField, StructType

from dq_governance.checks import casting
from dq_governance.contracts.thresholds import parse_threshold
from dq_governance.errors import ContractError

#: why a rule type cannot be measured in the write's own pass (the extension reports it, never evaluates it)
NOT_SAME_PASS: dict[str, str] = {
    "unique": "needs every row's key at once (an aggregation and a join beside the write)",
    "duplicate_count": "needs every row's key at once (an aggregation and a join beside the write)",
    "duplicate_percent": "needs every row's key at once (an aggregation and a join beside the write)",
    "foreign_key": "joins a reference table",
    "reconcile": "compares with a query over the source",
    "sql": "runs its own query over the checked rows",
    "freshness": "compares the newest value with the clock, after the write",
    "volume": "compares the row count with the report history",
    "schema_drift": "compares the input schema with the last run's",
    "schema": "judged on the input schema by dqgov check",
    "undeclared_columns": "judged on the input's column names by dqgov check",
    "pii_undeclared": "judged on the input's column names by dqgov check",
    "avg": "a column aggregate, judged by dqgov check",
    "sum": "a column aggregate, judged by dqgov check",
    "min": "a column aggregate, judged by dqgov check",
    "max": "a column aggregate, judged by dqgov check",
    "stddev": "a column aggregate, judged by dqgov check",
}
#: dataset rules whose metric the write pass has: the row count, or a count of flagged rows
METRIC_RULES = frozenset({"row_count", "missing_count", "missing_percent", "invalid_count", "invalid_percent"})
VARIANTS = ("typed", "text")
#: the setting that lets CollapseProject inline a typed column used twice (a range's min and max)
_ALWAYS_INLINE = "spark.sql.optimizer.collapseProjectAlwaysInline"
#: the column the ISO date parse's text reads (`isoDateParse`); the extension puts the written column in its place
ISO_DATE_COLUMN = "value"


def written_schema(contract: Any, variant: str) -> StructType:
    """The written columns a variant assumes: the contract's types, or its non-string columns as strings."""
    fields = []
    for spec in contract.fields:
        declared = casting.parse_type(spec.type, f"schema.fields.{spec.name}.type")
        fields.append(StructField(spec.name, declared if variant == "typed" else StringType(), True))
    return StructType(fields)


def _threshold(text: str | None) -> dict[str, Any] | None:
    """A parsed must_be / warn threshold, so the JVM compares without parsing the DSL."""
    if text is None:
        return None
    t = parse_threshold(text)
    return {"text": t.text, "operator": t.operator, "value": t.value, "upper": t.upper, "unit": t.unit}


def _print(spark: SparkSession, frame: DataFrame, conditions: list[Column]) -> list[str]:
    """Each condition as SQL text over `frame`'s own columns, the engine's stage inlined."""
    if not conditions:
        return []
    jvm = spark._jvm  # type: ignore[attr-defined]
    analyzed = frame.select(*[c.alias(f"__dq_c{i}") for i, c in enumerate(conditions)])._jdf.queryExecution().analyzed()
    previous = spark.conf.get(_ALWAYS_INLINE, "false")
    spark.conf.set(_ALWAYS_INLINE, "true")
    try:
        jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)  # type: ignore[attr-defined]
        collapse = getattr(getattr(jvm.org.apache.spark.sql.catalyst.optimizer, "CollapseProject$"), "MODULE$")
        plan = collapse.apply(analyzed)
    finally:
        spark.conf.set(_ALWAYS_INLINE, previous)
    if plan.getClass().getSimpleName() != "Project" or plan.child().children().size() != 0:
        raise ContractError(f"the rule conditions do not inline into one projection: {plan.getClass().getSimpleName()}")
    items = plan.projectList()
    texts = [items.apply(i).child().sql() for i in range(items.size())]
    leaked = [t for t in texts if "__dq_" in t]
    if leaked:
        raise ContractError(f"a rule condition still names the engine's stage: {leaked[0]}")
    return texts


def iso_date_parse(spark: SparkSession) -> str:
    """The engine's parse of `yyyy-MM-dd` text (formats.parse_date) as SQL text over one column, ISO_DATE_COLUMN.

    The extension finds this parse in a rule's text, for each written column, and runs it by reading the bytes
    where the text is exactly `dddd-dd-dd` (listeners' IsoDates); any other text gets this expression itself.
    """
    from dq_governance.checks.formats import ISO_DATE_FORMAT, parse_date

    frame = spark.createDataFrame([], StructType([StructField(ISO_DATE_COLUMN, StringType(), True)]))
    return _print(spark, frame, [parse_date(ISO_DATE_COLUMN, ISO_DATE_FORMAT)])[0]


def compile_contract(spark: SparkSession, contract: Any) -> dict[str, Any]:
    """The manifest's `checks` of one contract: same-pass rules with their SQL text, gate, and what is left out."""
    from dq_governance.checks.engine import build_rules
    from dq_governance.checks.registry import DEFAULT_DIMENSIONS, blocks

    declared = set(contract.column_names())
    struct_fields = set(contract.column_names(nested=True)) - declared
    candidates: list[Any] = []
    left_out: list[dict[str, str]] = []
    for rule in contract.check_rules():
        reason = NOT_SAME_PASS.get(rule.type)
        if reason is None and rule.level != "row" and rule.type not in METRIC_RULES:
            reason = "not measured in the write pass"
        missing = [c for c in rule.target_columns if c not in declared]
        if reason is None and missing:
            reason = (f"reads {missing[0]}, a struct's field: the session extension measures top-level columns"
                      if missing[0] in struct_fields else
                      f"reads column {missing[0]}, which the contract does not declare")
        if reason is not None:
            left_out.append({"name": rule.name, "type": rule.type, "reason": reason})
        else:
            candidates.append(rule)

    texts: dict[str, list[str | None]] = {}
    for variant in VARIANTS:
        frame = spark.createDataFrame([], written_schema(contract, variant))
        ctx, plans = build_rules(spark, frame, contract, candidates)
        conditions = [v for _r, _p, v in plans if v is not None]
        scopes = [ctx.scope(r) for r, _p, _v in plans]
        printed = iter(_print(spark, ctx.stage, conditions + [s for s in scopes if s is not None]))
        texts[f"{variant}:violation"] = [None if v is None else next(printed) for _r, _p, v in plans]
        texts[f"{variant}:scope"] = [None if s is None else next(printed) for s in scopes]

    rules = []
    for index, rule in enumerate(candidates):
        item: dict[str, Any] = {
            "name": rule.name, "type": rule.type, "level": rule.level, "columns": list(rule.target_columns),
            "severity": rule.severity, "action": rule.action, "blocks": blocks(rule),
            "dimension": rule.dimension or DEFAULT_DIMENSIONS.get(rule.type),
            "violation": {v: texts[f"{v}:violation"][index] for v in VARIANTS},
            "scope": {v: texts[f"{v}:scope"][index] for v in VARIANTS},
        }
        if rule.type in METRIC_RULES:
            item["metric"] = "rows" if rule.type == "row_count" else ("percent" if rule.type.endswith("_percent")
                                                                      else "count")
            item["must_be"] = _threshold(getattr(rule, "must_be", None))
            item["warn"] = _threshold(getattr(rule, "warn", None))
            item["min"] = getattr(rule, "min", None)
            item["max"] = getattr(rule, "max", None)
        rules.append(item)
    return {
        "isoDateParse": iso_date_parse(spark),
        "fields": [{"name": f.name, "type": casting.parse_type(f.type).simpleString(), "pii": bool(f.pii)}
                   for f in contract.fields],
        "rules": rules,
        "notSamePass": left_out,
        "gate": {"on_failure": contract.quality.on_failure, "minimum_valid_ratio": contract.quality.minimum_valid_ratio},
    }

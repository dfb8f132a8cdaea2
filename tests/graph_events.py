"""A fixed set of OpenLineage events with known impact answers (used by the graph, impact and collector tests).

Graph (namespace `file` unless noted; `a <- b` is a column-lineage edge):

    raw.orders --j_stage_a--> stg.orders_a     id <- raw.id (IDENTITY), cliente_id <- raw.cliente_id (IDENTITY)
    raw.orders --j_stage_b--> stg.orders_b     cliente_id <- raw.cliente_id, valor_total <- raw.valor (AGGREGATION);
                                               whole dataset <- raw.status (INDIRECT/FILTER)
    stg.orders_a + stg.orders_b --j_join--> mart.orders_joined
                                               cliente_id <- a.cliente_id, b.cliente_id; valor_total <- b.valor_total
    mart.orders_joined --j_report--> report.revenue        total <- joined.valor_total (AGGREGATION)
    report.revenue --j_export--> export.revenue_feed       amount <- revenue.total (IDENTITY)
    mart.orders_joined --j_customer (NO column lineage)--> analytics.customer_analytics
    cyc.a --j_loop_ab--> cyc.b (x <- a.x);  cyc.b --j_loop_ba--> cyc.a (x <- b.x);  cyc.b --j_loop_out--> cyc.c (x <- b.x)

The diamond is raw.orders -> (stg.orders_a, stg.orders_b) -> mart.orders_joined.
"""

from __future__ import annotations

import uuid
from typing import Any

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
NS = "file"


def facet(name: str, version: str = "1-0-1", **body: Any) -> dict[str, Any]:
    """A facet with the _producer and _schemaURL every facet carries."""
    return {"_producer": PRODUCER,
            "_schemaURL": f"https://openlineage.io/spec/facets/{version}/{name}.json#/$defs/{name}", **body}


def schema(*names: str) -> dict[str, Any]:
    """A schema facet with string fields."""
    return facet("SchemaDatasetFacet", "1-2-0", fields=[{"name": n, "type": "string"} for n in names])


def column_lineage(fields: dict[str, list[tuple[str, str, str, str]]],
                   dataset: list[tuple[str, str, str, str]] | None = None) -> dict[str, Any]:
    """fields: {out: [(input dataset, input field, type, subtype)]}; dataset: dataset-wide inputs."""

    def inputs(items: list[tuple[str, str, str, str]]) -> list[dict[str, Any]]:
        return [{"namespace": NS, "name": ds, "field": col,
                 "transformations": [{"type": kind, "subtype": sub, "description": "", "masking": False}]}
                for ds, col, kind, sub in items]

    body: dict[str, Any] = {"fields": {out: {"inputFields": inputs(items)} for out, items in fields.items()}}
    if dataset:
        body["dataset"] = inputs(dataset)
    return facet("ColumnLineageDatasetFacet", "1-2-0", **body)


def run_event(job: str, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]], *, event_type: str = "COMPLETE",
              run_id: str | None = None, time: str = "2026-11-01T10:00:00.000Z", job_facets: dict | None = None,
              job_namespace: str = "spark") -> dict[str, Any]:
    """A RunEvent as the Spark listener writes it."""
    return {
        "eventTime": time, "producer": PRODUCER, "schemaURL": SCHEMA_URL, "eventType": event_type,
        "run": {"runId": run_id or str(uuid.uuid5(uuid.NAMESPACE_URL, f"{job}/{time}")), "facets": {}},
        "job": {"namespace": job_namespace, "name": job, "facets": job_facets or {}},
        "inputs": inputs, "outputs": outputs,
    }


def ds(name: str, facets: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A dataset reference."""
    return {"namespace": NS, "name": name, "facets": facets or {}, **extra}


def owners(*names: str) -> dict[str, Any]:
    """An ownership facet."""
    return facet("OwnershipDatasetFacet", owners=[{"name": n, "type": "MAINTAINER"} for n in names])


def fixture_events() -> list[dict[str, Any]]:
    """The fixed event set described in the module docstring."""
    d, i = "DIRECT", "INDIRECT"
    raw = ds("raw.orders", {
        "schema": schema("id", "cliente_id", "valor", "status", "email"),
        "ownership": owners("team:sales-data-team"),
        "tags": facet("TagsDatasetFacet", "1-0-0", tags=[
            {"key": "classification", "value": "internal", "source": "USER"},
            {"key": "pii", "value": "true", "field": "email", "source": "USER"}]),
        "dqgov_dataContract": {"_producer": PRODUCER, "_schemaURL": "https://example.com/DataContract.json",
                               "name": "orders", "version": "1.0.0", "standard": "native", "status": "failed"},
    })
    return [
        run_event("j_stage_a", [raw], [ds("stg.orders_a", {
            "schema": schema("id", "cliente_id"),
            "columnLineage": column_lineage({"id": [("raw.orders", "id", d, "IDENTITY")],
                                             "cliente_id": [("raw.orders", "cliente_id", d, "IDENTITY")]})})]),
        run_event("j_stage_b", [ds("raw.orders")], [ds("stg.orders_b", {
            "schema": schema("cliente_id", "valor_total"),
            "columnLineage": column_lineage(
                {"cliente_id": [("raw.orders", "cliente_id", d, "IDENTITY")],
                 "valor_total": [("raw.orders", "valor", d, "AGGREGATION")]},
                dataset=[("raw.orders", "status", i, "FILTER")])})]),
        run_event("j_join", [ds("stg.orders_a"), ds("stg.orders_b")], [ds("mart.orders_joined", {
            "schema": schema("cliente_id", "valor_total"),
            "ownership": owners("team:finance-analytics"),
            "columnLineage": column_lineage(
                {"cliente_id": [("stg.orders_a", "cliente_id", d, "IDENTITY"),
                                ("stg.orders_b", "cliente_id", d, "IDENTITY")],
                 "valor_total": [("stg.orders_b", "valor_total", d, "IDENTITY")]})})]),
        run_event("j_report", [ds("mart.orders_joined")], [ds("report.revenue", {
            "schema": schema("total"),
            "columnLineage": column_lineage({"total": [("mart.orders_joined", "valor_total", d, "AGGREGATION")]})})]),
        run_event("j_export", [ds("report.revenue")], [ds("export.revenue_feed", {
            "schema": schema("amount"),
            "columnLineage": column_lineage({"amount": [("report.revenue", "total", d, "IDENTITY")]})})]),
        run_event("j_customer", [ds("mart.orders_joined")], [ds("analytics.customer_analytics", {
            "schema": schema("cliente_id", "orders"),
            "ownership": owners("team:marketing-analytics"),
        })], job_facets={"ownership": facet("OwnershipJobFacet", owners=[{"name": "user:ana"}])}),
        # quality of customer_analytics comes from a check run's assertions (all passed)
        run_event("customer_analytics.contract_check", [ds("analytics.customer_analytics", inputFacets={
            "dataQualityAssertions": facet("DataQualityAssertionsDatasetFacet", "1-1-0", assertions=[
                {"assertion": "not_null", "success": True, "column": "cliente_id"}])})], [],
            job_namespace="dqgov"),
        run_event("j_loop_ab", [ds("cyc.a")], [ds("cyc.b", {
            "schema": schema("x"), "columnLineage": column_lineage({"x": [("cyc.a", "x", d, "IDENTITY")]})})]),
        run_event("j_loop_ba", [ds("cyc.b")], [ds("cyc.a", {
            "schema": schema("x"), "columnLineage": column_lineage({"x": [("cyc.b", "x", d, "IDENTITY")]})})]),
        run_event("j_loop_out", [ds("cyc.b")], [ds("cyc.c", {
            "schema": schema("x"), "columnLineage": column_lineage({"x": [("cyc.b", "x", d, "TRANSFORMATION")]})})]),
    ]

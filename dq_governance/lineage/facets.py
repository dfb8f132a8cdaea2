"""OpenLineage facets for a contract check run, built from the contract and the check result.

Spark-free: output schemas come from the contract or, duck-typed, from a DataFrame's `.schema`.
PII safety lives here: min / max / sum / metric values of PII columns are never put in a facet.
"""

from __future__ import annotations

import logging
import re
from importlib import metadata
from typing import Any, Iterable, Mapping

import attr
from openlineage.client.event_v2 import set_producer
from openlineage.client.facet_v2 import (
    DatasetFacet,
    column_lineage_dataset,
    data_quality_assertions_dataset,
    data_quality_metrics_input_dataset,
    documentation_dataset,
    documentation_job,
    error_message_run,
    job_type_job,
    output_statistics_output_dataset,
    ownership_dataset,
    ownership_job,
    parent_run,
    processing_engine_run,
    schema_dataset,
    symlinks_dataset,
    tags_dataset,
    tags_run,
    test_run,
)

from dq_governance import __version__
from dq_governance.checks.disclosure import reveals_pii, touches_pii

log = logging.getLogger(__name__)

PROJECT_URL = "https://github.com/dq-governance/dq-governance"
#: `producer` of every event and `_producer` of every facet: the project URL at this release's tag
PRODUCER = f"{PROJECT_URL}/tree/v{__version__}"
TAG_SOURCE = "DQGOV"
#: the run tag that carries the run id as given (the runId is a UUID; emit.openlineage_run_id)
RUN_ID_TAG = "run_id"

CONTRACT_FACET_KEY = "dqgov_dataContract"
#: Immutable: the facet schema as released at tag v0.1.0. A changed schema gets a new file version
#: and a new tag, never an edit behind this URL.
CONTRACT_FACET_SCHEMA_TAG = "v0.1.0"
CONTRACT_FACET_SCHEMA_URL = (
    f"https://raw.githubusercontent.com/dq-governance/dq-governance/{CONTRACT_FACET_SCHEMA_TAG}"
    "/dq_governance/lineage/schemas/DataContractDatasetFacet.json#/$defs/DataContractDatasetFacet"
)

# Rule types carrying text the assertion's `content` should show, with its OpenLineage contentType.
CONTENT_TYPES = {"sql": "sql", "expression": "expression"}
# Rule status -> TestRunFacet status.
TEST_STATUS = {"passed": "pass", "warned": "fail", "failed": "fail", "skipped": "skip"}
# Contract roles -> OpenLineage owner prefix and type (types are DataHub OwnershipType names).
OWNER_ROLES = (("owner", "team", "TECHNICAL_OWNER"), ("steward", "user", "DATA_STEWARD"))

set_producer(PRODUCER)


@attr.define
class DataContractDatasetFacet(DatasetFacet):
    """Custom facet `dqgov_dataContract`: which contract governs the dataset and how the run went.

    A pointer to the contract (not an embedded contract), modelled on the OpenLineage proposal
    #4771 for a DataContractDatasetFacet so it can migrate to the standard facet later.
    """

    name: str
    version: str
    standard: str = attr.field(default="native")
    enforcement: str = attr.field(default="advisory")
    location: str | None = attr.field(default=None)
    id: str | None = attr.field(default=None)
    status: str | None = attr.field(default=None)
    quality_score: float | None = attr.field(default=None)
    valid_rows: int | None = attr.field(default=None)
    invalid_rows: int | None = attr.field(default=None)
    row_outputs: str | None = attr.field(default=None)  # split | none (metrics only)

    @staticmethod
    def _get_schema() -> str:
        return CONTRACT_FACET_SCHEMA_URL


# --------------------------------------------------------------------------- naming


def normalize_name(name: str) -> str:
    """The OpenLineage Spark listener's job-name normalisation: camelCase -> snake_case, non-word -> `_`."""
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return re.sub(r"[^A-Za-z0-9]+", "_", snake).strip("_").lower()


def job_namespace(contract: Any | None = None) -> str:
    """The namespace of our jobs (and of the Spark application): env OPENLINEAGE_NAMESPACE or `dqgov`."""
    import os

    return os.environ.get("OPENLINEAGE_NAMESPACE") or "dqgov"


def job_name(contract: Any, pipeline: str | None = None) -> str:
    """`<pipeline>.<dataset>.contract_check`: stable across runs of the same pipeline and contract."""
    return f"{pipeline or contract.name}.{contract.dataset.name}.contract_check"


def dataset_identity(location: str) -> tuple[str, str]:
    """OpenLineage (namespace, name) of a path or table, as the Spark listener names it."""
    import os
    from urllib.parse import urlsplit

    if "://" in location:
        parts = urlsplit(location)
        scheme = {"s3a": "s3", "s3n": "s3"}.get(parts.scheme, parts.scheme)
        if scheme == "file":
            return "file", parts.path
        if scheme in ("s3", "gs", "abfss", "wasbs", "hdfs"):
            return f"{scheme}://{parts.netloc}", parts.path if scheme == "hdfs" else parts.path.lstrip("/")
        return f"{scheme}://{parts.netloc}", parts.path
    if location.startswith("file:"):
        return "file", os.path.abspath(location[5:])
    if "/" in location or os.sep in location or os.path.exists(location):
        return "file", os.path.abspath(location)
    return "spark_catalog", location  # a table name; the listener adds the warehouse as a symlink


# --------------------------------------------------------------------------- job facets


def owners(contract: Any) -> list[tuple[str, str]]:
    """(owner name, type) pairs, deduplicated: the owner as `team:…`, the steward as `user:…`, then every other
    role of `roles` (`engineering: team:x` -> ENGINEERING) by its name as written.

    Consumers are readers, not owners: they stay out (Marquez shows every entry as an owner).
    """
    out: list[tuple[str, str]] = []
    roles = getattr(contract, "roles", None)
    for role, prefix, kind in OWNER_ROLES:
        name = getattr(contract.contract, role, None)
        if not name and roles is not None and getattr(roles, role, None) is not None:
            name = getattr(roles, role).name
        if not name:
            continue
        urn = name if ":" in name else f"{prefix}:{name}"
        if urn not in [n for n, _ in out]:
            out.append((urn, kind))
    named = {role for role, _prefix, _kind in OWNER_ROLES} | {"consumers"}
    for role, kind, party in roles.parties() if roles is not None else []:
        if role not in named and (party.name, kind) not in out:
            out.append((party.name, kind))
    return out


def job_facets(contract: Any) -> dict[str, Any]:
    """jobType, ownership and documentation of the check job."""
    doc = f"Data-contract check of dataset {contract.dataset.name} against contract {contract.name} {contract.version}."
    if contract.contract.description:
        doc += f" {contract.contract.description}"
    facets: dict[str, Any] = {
        "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="SPARK", jobType="DATA_QUALITY"),
        "documentation": documentation_job.DocumentationJobFacet(description=doc, contentType="text/plain"),
    }
    pairs = owners(contract)
    if pairs:
        facets["ownership"] = ownership_job.OwnershipJobFacet(
            owners=[ownership_job.Owner(name=name, type=kind) for name, kind in pairs]
        )
    return facets


# --------------------------------------------------------------------------- dataset facets


def _schema_fields(fields: Iterable[Any]) -> list[schema_dataset.SchemaDatasetFacetFields]:
    out = []
    for position, spec in enumerate(fields, start=1):
        nested = _schema_fields(spec.fields) if spec.fields else None
        out.append(
            schema_dataset.SchemaDatasetFacetFields(
                name=spec.name, type=spec.type, description=spec.description,
                ordinal_position=position, fields=nested or [],
            )
        )
    return out


def _spark_fields(struct: Any) -> list[schema_dataset.SchemaDatasetFacetFields]:
    """Schema fields from a Spark StructType, duck-typed so this module never imports pyspark."""
    out = []
    for position, field in enumerate(struct.fields, start=1):
        dtype = field.dataType
        inner = getattr(dtype, "elementType", dtype)  # arrays of structs list the struct's fields
        nested = _spark_fields(inner) if hasattr(inner, "fields") else []
        out.append(
            schema_dataset.SchemaDatasetFacetFields(
                name=field.name, type=spark_type_name(dtype), ordinal_position=position, fields=nested,
                description=(field.metadata or {}).get("comment"),
            )
        )
    return out


def spark_type_name(dtype: Any) -> str:
    """A Spark type named as the OpenLineage Spark listener names it (`long`, `decimal(12,2)`, `array`, `struct`)."""
    name = dtype.typeName()
    return dtype.simpleString() if name == "decimal" else name


def schema_facet(contract: Any, spark_schema: Any = None) -> schema_dataset.SchemaDatasetFacet:
    """The dataset schema: the DataFrame's when given, else the contract's, with descriptions and nesting."""
    if spark_schema is None:
        return schema_dataset.SchemaDatasetFacet(fields=_schema_fields(contract.fields))
    fields = _spark_fields(spark_schema)
    described = {path: spec.description for path, spec in contract.iter_fields() if spec.description}
    _describe(fields, described, "")
    return schema_dataset.SchemaDatasetFacet(fields=fields)


def _describe(fields: list[Any], described: Mapping[str, str], prefix: str) -> None:
    for field in fields:
        path = f"{prefix}{field.name}"
        if field.description is None and path in described:
            field.description = described[path]
        if field.fields:
            _describe(field.fields, described, f"{path}.")


def ownership_facet(contract: Any) -> ownership_dataset.OwnershipDatasetFacet | None:
    """Dataset owners from the contract (same names as the job's)."""
    pairs = owners(contract)
    if not pairs:
        return None
    return ownership_dataset.OwnershipDatasetFacet(
        owners=[ownership_dataset.Owner(name=name, type=kind) for name, kind in pairs]
    )


def masked_methods(contract: Any) -> dict[str, str]:
    """Column path -> masking method, from the masking module when present, else the fields' own `masking`."""
    try:
        from dq_governance.masking import masked_columns  # type: ignore[attr-defined]
    except ImportError:
        specs = {path: spec.masking for path, spec in contract.iter_fields() if spec.masking is not None}
    else:
        try:
            specs = masked_columns(contract)
        except Exception as exc:  # a masking-policy problem must not cost us the lineage event
            log.warning("masking policy unavailable for lineage tags: %s", type(exc).__name__)
            specs = {path: spec.masking for path, spec in contract.iter_fields() if spec.masking is not None}
    return {path: spec.method for path, spec in specs.items() if spec is not None and spec.method != "none"}


def _label(text: str, field: str | None = None) -> tags_dataset.TagsDatasetFacetFields:
    key, _, value = text.partition(":")
    return tags_dataset.TagsDatasetFacetFields(key=key, value=value or "true", source=TAG_SOURCE, field=field)


def tags_facet(contract: Any, *, masked: bool = True) -> tags_dataset.TagsDatasetFacet:
    """Dataset classification and tags, and one tag per PII / classified / masked / tagged column (`field`).

    `masked=False` (data published with masking off) leaves out the `masking` tags, which would be untrue.
    """
    tags = []
    dataset = contract.dataset
    if dataset.classification:
        tags.append(tags_dataset.TagsDatasetFacetFields(key="classification", value=dataset.classification,
                                                        source=TAG_SOURCE))
    if contract.contract.domain:
        tags.append(tags_dataset.TagsDatasetFacetFields(key="domain", value=contract.contract.domain,
                                                        source=TAG_SOURCE))
    tags.extend(_label(text) for text in dataset.tags)
    methods = masked_methods(contract) if masked else {}
    for path, spec in contract.iter_fields():
        if spec.pii:
            tags.append(tags_dataset.TagsDatasetFacetFields(key="pii", value="true", source=TAG_SOURCE, field=path))
        if spec.classification:
            tags.append(tags_dataset.TagsDatasetFacetFields(key="classification", value=spec.classification,
                                                            source=TAG_SOURCE, field=path))
        if path in methods:
            tags.append(tags_dataset.TagsDatasetFacetFields(key="masking", value=methods[path], source=TAG_SOURCE,
                                                            field=path))
        tags.extend(_label(text, path) for text in spec.tags)
    return tags_dataset.TagsDatasetFacet(tags=tags)


def documentation_facet(contract: Any) -> documentation_dataset.DocumentationDatasetFacet | None:
    """The dataset description from the contract."""
    text = contract.dataset.description or contract.contract.description
    if not text:
        return None
    return documentation_dataset.DocumentationDatasetFacet(description=text, contentType="text/plain")


def enforcement(contract: Any) -> str:
    """`blocking` when a failed gate stops publication, else `advisory`."""
    return "blocking" if contract.quality.on_failure in ("fail", "block_publication") else "advisory"


def contract_facet(
    contract: Any, result: Any = None, *, standard: str | None = None, location: str | None = None
) -> DataContractDatasetFacet:
    """The `dqgov_dataContract` facet; run numbers are filled in once the check has a result."""
    facet = DataContractDatasetFacet(
        name=contract.name,
        version=contract.version,
        standard=standard or getattr(result, "standard", None) or "native",
        enforcement=enforcement(contract),
        location=location or getattr(result, "contract_location", None),
        id=contract.contract.id,
    )
    if result is not None:
        facet.status = result.status
        facet.quality_score = result.quality_score
        facet.valid_rows = result.valid_rows
        facet.invalid_rows = result.invalid_rows
        facet.row_outputs = getattr(result, "row_outputs", None)
    return facet


def dataset_facets(
    contract: Any, result: Any = None, *, spark_schema: Any = None, location: str | None = None, masked: bool = True
) -> dict[str, Any]:
    """The facets every dataset governed by the contract carries: schema, ownership, tags, docs, contract."""
    facets: dict[str, Any] = {
        "schema": schema_facet(contract, spark_schema),
        "tags": tags_facet(contract, masked=masked),
        CONTRACT_FACET_KEY: contract_facet(contract, result, location=location),
    }
    for key, facet in (("ownership", ownership_facet(contract)), ("documentation", documentation_facet(contract))):
        if facet is not None:
            facets[key] = facet
    return facets


# --------------------------------------------------------------------------- quality facets


def _number(value: float | None) -> float | int | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else float(value)


def metrics_facet(contract: Any, result: Any) -> data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet:
    """rowCount and per-column null/distinct counts; min/max/sum only for non-PII columns."""
    pii = set(contract.pii_columns())
    columns = {}
    for column, m in (result.column_metrics or {}).items():
        safe = not touches_pii([column], pii)
        columns[column] = data_quality_metrics_input_dataset.ColumnMetrics(
            nullCount=m.null_count,
            distinctCount=m.distinct_count,
            count=m.count,
            sum=_number(m.sum) if safe else None,
            min=_number(m.min) if safe else None,
            max=_number(m.max) if safe else None,
            quantiles=None,  # not computed; None keeps an empty `{}` out of the event
        )
    return data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet(
        rowCount=result.total_rows, columnMetrics=columns
    )


def _actual(rule: Any, pii: set[str]) -> str | None:
    """What the rule observed: the failing-row count, or its metric unless that is a raw PII value."""
    if rule.failed_count is not None and rule.level == "row":
        return str(rule.failed_count)
    if rule.metric_value is None:
        return None if rule.failed_count is None else str(rule.failed_count)
    if reveals_pii(rule.type, rule.columns, pii):
        return None
    value = _number(rule.metric_value)
    return str(value)


def _expected(rule: Any) -> str | None:
    if rule.expected is not None:
        return rule.expected
    if rule.threshold is not None:
        return rule.threshold
    return "0" if rule.level == "row" else None


def _described(rule: Any, pii: set[str]) -> dict[str, Any]:
    """The fields an assertion and a test execution share: name, severity, description, expected, actual, content."""
    content_type = CONTENT_TYPES.get(rule.type) if rule.content else None
    return {"name": rule.name, "severity": rule.severity, "description": rule.description,
            "expected": _expected(rule), "actual": _actual(rule, pii),
            "content": rule.content if content_type else None, "contentType": content_type}


def assertions_facet(contract: Any, result: Any) -> data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet:
    """One 1-1-0 assertion per evaluated rule (skipped rules are only in the test facet)."""
    pii = set(contract.pii_columns())
    assertions = []
    for rule in result.rules:
        if rule.status == "skipped":
            continue
        assertions.append(
            data_quality_assertions_dataset.Assertion(
                assertion=rule.type, success=bool(rule.passed), column=rule.column, **_described(rule, pii)
            )
        )
    return data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet(assertions=assertions)


def test_facet(contract: Any, result: Any) -> test_run.TestRunFacet:
    """Every rule as a test: pass, fail or skip, with its type, severity, expected and actual."""
    pii = set(contract.pii_columns())
    tests = []
    for rule in result.rules:
        tests.append(
            test_run.TestExecution(
                status=TEST_STATUS.get(rule.status, "pass" if rule.passed else "fail"), type=rule.type,
                **_described(rule, pii),
            )
        )
    return test_run.TestRunFacet(tests=tests)


# --------------------------------------------------------------------------- run facets


def spark_version(spark: Any = None) -> str:
    """The Spark version of the session, or of the installed pyspark (read without importing it)."""
    if spark is not None:
        return str(spark.version)
    try:
        return metadata.version("pyspark")
    except metadata.PackageNotFoundError:
        return "unknown"


def processing_engine_facet(spark: Any = None) -> processing_engine_run.ProcessingEngineRunFacet:
    """The engine that ran the check: Spark and its version; the adapter is this package."""
    return processing_engine_run.ProcessingEngineRunFacet(
        version=spark_version(spark), name="spark", openlineageAdapterVersion=__version__
    )


def parent_facet(
    parent: tuple[str, str, str], root: tuple[str, str, str] | None = None
) -> parent_run.ParentRunFacet:
    """`parent` from (namespace, job name, run id), with an optional `root` of the same shape."""
    namespace, name, run_id = parent
    facet = parent_run.ParentRunFacet(
        run=parent_run.Run(runId=run_id), job=parent_run.Job(namespace=namespace, name=name)
    )
    if root is not None:
        facet.root = parent_run.Root(
            run=parent_run.RootRun(runId=root[2]), job=parent_run.RootJob(namespace=root[0], name=root[1])
        )
    return facet


def run_tags_facet(run_id: str) -> tags_run.TagsRunFacet:
    """The run's `tags`: `run_id`, the run id as given (report history, `_dq_run_id`), which the runId is only
    when it is a UUID (emit.openlineage_run_id)."""
    return tags_run.TagsRunFacet(tags=[tags_run.TagsRunFacetFields(key=RUN_ID_TAG, value=run_id, source=TAG_SOURCE)])


def error_facet(message: str, stack_trace: str | None = None) -> error_message_run.ErrorMessageRunFacet:
    """errorMessage for a FAIL event."""
    return error_message_run.ErrorMessageRunFacet(
        message=message, programmingLanguage="python", stackTrace=stack_trace
    )


# --------------------------------------------------------------------------- output facets


def symlinks_facet(namespace: str, name: str) -> symlinks_dataset.SymlinksDatasetFacet:
    """symlinks with a catalog table's identifier (`db.table` in its warehouse), as the Spark listener sends it."""
    return symlinks_dataset.SymlinksDatasetFacet(
        identifiers=[symlinks_dataset.Identifier(namespace=namespace, name=name, type="TABLE")])


def output_statistics_facet(rows: int | None) -> output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet:
    """outputStatistics with the number of rows written."""
    return output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(rowCount=rows)


def column_lineage_facet(
    contract: Any, input_namespace: str, input_name: str, columns: Iterable[str], *, masked: bool = True
) -> column_lineage_dataset.ColumnLineageDatasetFacet:
    """Each output column from the same input column: copied as is (IDENTITY), or masked (TRANSFORMATION, flagged
    `masking`: the spec's IDENTITY means the exact same value)."""
    masked = masked_methods(contract) if masked else {}
    fields = {}
    for column in columns:
        transformation = column_lineage_dataset.Transformation(
            type="DIRECT", subtype="TRANSFORMATION" if column in masked else "IDENTITY", masking=column in masked,
            description=f"masked ({masked[column]})" if column in masked else None,
        )
        fields[column] = column_lineage_dataset.Fields(
            inputFields=[
                column_lineage_dataset.InputField(
                    namespace=input_namespace, name=input_name, field=column, transformations=[transformation]
                )
            ]
        )
    return column_lineage_dataset.ColumnLineageDatasetFacet(fields=fields)

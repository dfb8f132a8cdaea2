"""DataHub pusher: RestLi `ingestProposal` (batched where the server has it), aspects as the SDK writes them.

Reads come first (`GET /aspects/{urn}?aspect=...`); an aspect we own (datasetProperties on creation,
schemaMetadata on creation, assertionInfo, dataContract*) is upserted only when absent or different.
Tags, owners and field-level tags/terms/descriptions are JSON-Patch MCPs that only add, because an
UPSERT of those aspects would wipe what people set in the UI (reference notes, sections 2.3 and 2.4).
"""

from __future__ import annotations

import datetime as _dt

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import quote

import yaml

from dq_governance.catalogs.base import (
    CREATED,
    UNCHANGED,
    UPDATED,
    CatalogPusher,
    DatasetRef,
    LineageEdge,
    SyncReport,
    Transport,
    contract_principals,
    epoch_ms,
    field_display,
    number_text,
    rule_bounds,
    safe_message,
    safe_metric,
    spark_type,
    struct_display,
)
from dq_governance.catalogs.naming import CatalogNaming
from dq_governance.catalogs.transport import Response
from dq_governance.checks.result import CheckResult, RuleResult
from dq_governance.contracts.model import OWNER_TYPES, Contract, FieldSpec
from dq_governance.contracts.thresholds import parse_threshold
from dq_governance.errors import CatalogError

log = logging.getLogger(__name__)

INGEST = "/aspects?action=ingestProposal"
INGEST_BATCH = "/aspects?action=ingestProposalBatch"
TIMESERIES = "/aspects?action=getTimeseriesAspectValues"
HEADERS = {"X-RestLi-Protocol-Version": "2.0.0"}
BATCH_MAX = 200  # the SDK's DATAHUB_REST_EMITTER_BATCH_MAX_PAYLOAD_LENGTH
BATCH_MAX_BYTES = 15 * 1024 * 1024
PLATFORM_URN = "urn:li:dataPlatform:{}"
ENGINE_PLATFORM = "urn:li:dataPlatform:spark"
UNKNOWN_STAMP = {"time": 0, "actor": "urn:li:corpuser:unknown"}
PII_TAG = "urn:li:tag:PII"
CLASSIFICATION_TAG = "urn:li:tag:DataClassification.{}"
CLASSIFICATION_TERM = "urn:li:glossaryTerm:Classification.{}"

#: aspect name -> the Pegasus class a `GET /aspects` reply keys the value by
PEGASUS = {
    "datasetProperties": "com.linkedin.dataset.DatasetProperties",
    "schemaMetadata": "com.linkedin.schema.SchemaMetadata",
    "editableSchemaMetadata": "com.linkedin.schema.EditableSchemaMetadata",
    "ownership": "com.linkedin.common.Ownership",
    "globalTags": "com.linkedin.common.GlobalTags",
    "upstreamLineage": "com.linkedin.dataset.UpstreamLineage",
    "assertionInfo": "com.linkedin.assertion.AssertionInfo",
    "dataContractProperties": "com.linkedin.datacontract.DataContractProperties",
    "dataContractStatus": "com.linkedin.datacontract.DataContractStatus",
}
#: contract role -> DataHub ownership type
#: principal kind -> URN prefix (a bare name is taken to be a user)
PRINCIPAL_URNS = {"team": "urn:li:corpGroup:", "user": "urn:li:corpuser:", None: "urn:li:corpuser:"}
#: Spark base type -> (schemaMetadata type class, fieldAssertion field type)
DH_TYPES = {
    "bigint": ("NumberType", "NUMBER"), "int": ("NumberType", "NUMBER"), "smallint": ("NumberType", "NUMBER"),
    "tinyint": ("NumberType", "NUMBER"), "double": ("NumberType", "NUMBER"), "float": ("NumberType", "NUMBER"),
    "decimal": ("NumberType", "NUMBER"), "string": ("StringType", "STRING"), "varchar": ("StringType", "STRING"),
    "char": ("StringType", "STRING"), "boolean": ("BooleanType", "BOOLEAN"), "date": ("DateType", "DATE"),
    "timestamp": ("TimeType", "TIMESTAMP"), "timestamp_ntz": ("TimeType", "TIMESTAMP"),
    "binary": ("BytesType", "BYTES"), "array": ("ArrayType", "ARRAY"), "map": ("MapType", "MAP"),
    "struct": ("RecordType", "STRUCT"),
}
#: dataset aspects read before a contract push, in this order
DATASET_ASPECTS = ("datasetProperties", "schemaMetadata", "editableSchemaMetadata", "ownership", "globalTags")
RESULT_TYPES = {"passed": "SUCCESS", "failed": "FAILURE", "warned": "FAILURE"}
_FRESHNESS_UNITS = (("DAY", 86400), ("HOUR", 3600), ("MINUTE", 60), ("SECOND", 1))


# --------------------------------------------------------------------------- urns and helpers


#: characters that delimit a tuple URN's parts, percent-encoded inside a part as the SDK's UrnEncoder does
_URN_RESERVED = {",": "%2C", "(": "%28", ")": "%29", "\u241f": "%E2%90%9F"}


def urn_part(text: str) -> str:
    """One part of a tuple URN, its delimiters percent-encoded (`a,b` -> `a%2Cb`)."""
    return "".join(_URN_RESERVED.get(char, char) for char in text)


def dataset_urn(ref: DatasetRef) -> str:
    """`urn:li:dataset:(urn:li:dataPlatform:<platform>,[<instance>.]<name>,<env>)`, as the SDK builds it."""
    name = f"{ref.datahub_platform_instance}.{ref.name}" if ref.datahub_platform_instance else ref.name
    return f"urn:li:dataset:({PLATFORM_URN.format(ref.datahub_platform)},{urn_part(name)},{ref.datahub_env})"


def platform_instance(ref: DatasetRef) -> dict[str, str] | None:
    """The dataset's dataPlatformInstance aspect when it has a platform instance, else None."""
    if not ref.datahub_platform_instance:
        return None
    platform = PLATFORM_URN.format(ref.datahub_platform)
    return {"platform": platform,
            "instance": f"urn:li:dataPlatformInstance:({platform},{ref.datahub_platform_instance})"}


def field_urn(dataset: str, path: str) -> str:
    """A schemaField URN (used inside assertions and lineage, never as an aspect owner)."""
    return f"urn:li:schemaField:({dataset},{urn_part(path)})"


def datahub_guid(obj: dict[str, Any]) -> str:
    """The SDK's `datahub_guid`: md5 of the sorted-key compact JSON."""
    return hashlib.md5(json.dumps(obj, separators=(",", ":"), sort_keys=True).encode("utf-8")).hexdigest()


def assertion_urn(contract: Contract, dataset: str, rule_name: str) -> str:
    """Stable per (contract, dataset, rule) so re-syncs hit the same assertion."""
    return f"urn:li:assertion:{datahub_guid({'contract': contract.name, 'entity': dataset, 'rule': rule_name})}"


def contract_urn(dataset: str) -> str:
    """One data contract per dataset, as `datahub datacontract upsert` derives it."""
    return f"urn:li:dataContract:{datahub_guid({'entity': dataset})}"


def patch_key(text: str) -> str:
    """Escape a JSON-Pointer segment (`~` -> `~0`, `/` -> `~1`)."""
    return text.replace("~", "~0").replace("/", "~1")


def proposal(entity_type: str, urn: str, aspect: str, value: Any, change: str = "UPSERT") -> dict[str, Any]:
    """One MetadataChangeProposal in RestLi form: the aspect value is a JSON string."""
    return {
        "entityType": entity_type,
        "entityUrn": urn,
        "changeType": change,
        "aspectName": aspect,
        "aspect": {"value": json.dumps(value),
                   "contentType": "application/json-patch+json" if change == "PATCH" else "application/json"},
    }


def contains(current: Any, wanted: Any) -> bool:
    """True when `current` holds everything in `wanted` (server-side defaults may add keys)."""
    if isinstance(wanted, dict):
        return isinstance(current, dict) and all(k in current and contains(current[k], v) for k, v in wanted.items())
    if isinstance(wanted, list):
        return isinstance(current, list) and len(current) == len(wanted) and all(
            contains(c, w) for c, w in zip(current, wanted))
    if isinstance(wanted, float) or isinstance(current, float):
        try:
            return float(current) == float(wanted)
        except (TypeError, ValueError):
            return False
    return current == wanted


def _short_name(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _field_paths(fields: list[FieldSpec], prefix: str = "") -> list[tuple[str, FieldSpec]]:
    out = []
    for spec in fields:
        path = f"{prefix}{spec.name}"
        out.append((path, spec))
        if spec.fields:
            out.extend(_field_paths(spec.fields, path + "."))
    return out


def field_tags(spec: FieldSpec) -> list[str]:
    """Tag URNs for a field: PII, its data classification, its own tags."""
    out = [PII_TAG] if spec.pii else []
    if spec.classification:
        out.append(CLASSIFICATION_TAG.format(spec.classification))
    out.extend(f"urn:li:tag:{t}" for t in spec.tags)
    return out


def field_terms(spec: FieldSpec) -> list[str]:
    """Glossary term URNs for a field: its classification as `Classification.<Level>`."""
    return [CLASSIFICATION_TERM.format(spec.classification.capitalize())] if spec.classification else []


def dataset_tags(contract: Contract) -> list[str]:
    """Tag URNs for the dataset: PII when any field is PII, its classification, its own tags."""
    out = [PII_TAG] if contract.pii_columns() else []
    if contract.dataset.classification:
        out.append(CLASSIFICATION_TAG.format(contract.dataset.classification))
    out.extend(f"urn:li:tag:{t}" for t in contract.dataset.tags)
    return out


def owner_entries(contract: Contract) -> list[dict[str, str]]:
    """`{"owner": urn, "type": TYPE}` for the owner and the steward (prefixes `user:`/`team:` stripped)."""
    out = []
    for principal in contract_principals(contract):
        out.append({"owner": PRINCIPAL_URNS[principal.kind] + principal.name, "type": OWNER_TYPES[principal.role]})
    return out


# --------------------------------------------------------------------------- aspects


def dataset_properties(contract: Contract) -> dict[str, Any]:
    """datasetProperties with the contract name and version as custom properties."""
    props = {"data_contract": contract.name, "data_contract_version": contract.version}
    if contract.dataset.classification:
        props["data_classification"] = contract.dataset.classification
    value: dict[str, Any] = {"customProperties": props, "name": _short_name(contract.dataset.name),
                             "qualifiedName": contract.dataset.name}
    description = contract.dataset.description or contract.contract.description
    if description:
        value["description"] = description
    value["tags"] = []
    return value


def schema_metadata(contract: Contract, platform: str) -> dict[str, Any]:
    """schemaMetadata from the contract's fields (written only when the dataset has none)."""
    fields = []
    for path, spec in _field_paths(contract.fields):
        st = spark_type(spec.type) if not spec.fields else spark_type("struct<>")
        entry: dict[str, Any] = {"fieldPath": path, "nullable": not (spec.required or spec.primary_key)}
        if spec.description:
            entry["description"] = spec.description
        entry["type"] = {"type": {f"com.linkedin.schema.{DH_TYPES.get(st.base, ('NullType', ''))[0]}": {}}}
        entry["nativeDataType"] = field_display(spec)
        entry["recursive"] = False
        tags = field_tags(spec)
        if tags:
            entry["globalTags"] = {"tags": [{"tag": t} for t in tags]}
        entry["isPartOfKey"] = spec.primary_key
        fields.append(entry)
    return {"schemaName": contract.dataset.name, "platform": PLATFORM_URN.format(platform), "version": 0,
            "created": dict(UNKNOWN_STAMP), "lastModified": dict(UNKNOWN_STAMP), "hash": "",
            "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": struct_display(contract.fields)}},
            "fields": fields}


def _std(value: Any, kind: str = "NUMBER") -> dict[str, str]:
    if isinstance(value, (_dt.date, _dt.datetime)):  # a date range's bound: ISO text
        return {"value": value.isoformat(), "type": "STRING"}
    return {"value": value if isinstance(value, str) else number_text(value) or "", "type": kind}


def _native_parameters(rule: Any) -> dict[str, str]:
    skip = {"name", "type", "severity", "action", "description", "dimension"}
    out = {}
    for key, value in rule.model_dump(mode="json", exclude_none=True).items():  # date bounds as ISO text
        if key in skip or value is False or value == [] or value == {}:  # not `in`: 0 == False would drop a 0 bound
            continue
        out[key] = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), sort_keys=True)
    return out


def _bounds_operator(rule: Any) -> tuple[str, dict[str, Any]]:
    # BETWEEN is inclusive: `_range` sends a rule with two bounds, one of them exclusive, as _NATIVE_ instead.
    low, high = rule_bounds(rule)
    if low is not None and high is not None:
        return "BETWEEN", {"maxValue": _std(high), "minValue": _std(low)}
    if low is not None:
        return ("GREATER_THAN" if getattr(rule, "min_exclusive", False) else "GREATER_THAN_OR_EQUAL_TO"), \
            {"value": _std(low)}
    return ("LESS_THAN" if getattr(rule, "max_exclusive", False) else "LESS_THAN_OR_EQUAL_TO"), {"value": _std(high)}


@dataclass(frozen=True)
class AssertionContext:
    contract: Contract
    dataset: str


def _column_dataset(kind: Callable[[Any, AssertionContext], dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Wrap a (aggregation, operator, parameters) builder into a DATASET/DATASET_COLUMN assertion."""
    def build(rule: Any, ctx: AssertionContext) -> dict[str, Any]:
        body = {"dataset": ctx.dataset, "scope": "DATASET_COLUMN",
                "fields": [field_urn(ctx.dataset, c) for c in rule.target_columns]}
        body.update(kind(rule, ctx))
        return {"type": "DATASET", "datasetAssertion": body}
    return build


def _native(rule: Any, ctx: AssertionContext) -> dict[str, Any]:
    body: dict[str, Any] = {"dataset": ctx.dataset}
    if rule.target_columns:
        body.update(scope="DATASET_COLUMN", fields=[field_urn(ctx.dataset, c) for c in rule.target_columns])
    else:
        body["scope"] = "DATASET_ROWS"
    body.update(aggregation="_NATIVE_", operator="_NATIVE_", nativeType=rule.type,
                nativeParameters=_native_parameters(rule))
    return {"type": "DATASET", "datasetAssertion": body}


def _field_values(operator: str, parameters: Callable[[Any], dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def build(rule: Any, ctx: AssertionContext) -> dict[str, Any]:
        spec = ctx.contract.field(rule.column)
        st = spark_type(spec.type) if spec else spark_type("string")
        field = {"path": rule.column, "type": DH_TYPES.get(st.base, ("", "STRING"))[1],
                 "nativeType": field_display(spec) if spec else "string"}
        return {"type": "FIELD", "fieldAssertion": {
            "type": "FIELD_VALUES", "entity": ctx.dataset,
            "fieldValuesAssertion": {"field": field, "operator": operator, "parameters": parameters(rule),
                                     "failThreshold": {"type": "COUNT", "value": 0}, "excludeNulls": True}}}
    return build


def _range(rule: Any, ctx: AssertionContext) -> dict[str, Any]:
    low, high = rule_bounds(rule)
    if low is not None and high is not None and (rule.min_exclusive or rule.max_exclusive):
        # No DataHub operator states `a < x < b` (BETWEEN includes both bounds): the rule as written, natively.
        return _native(rule, ctx)
    operator, parameters = _bounds_operator(rule)
    return _column_dataset(lambda r, c: {"operator": operator, "parameters": parameters,
                                         "aggregation": "IDENTITY"})(rule, ctx)


def _row_count(rule: Any, ctx: AssertionContext) -> dict[str, Any]:
    low, high = rule_bounds(rule)
    if low is None and high is None:
        return _native(rule, ctx)  # a threshold without fixed bounds (`!= 0`, `not between`, warn only)
    operator, parameters = _bounds_operator(rule)
    return {"type": "VOLUME", "volumeAssertion": {"type": "ROW_COUNT_TOTAL", "entity": ctx.dataset,
                                                  "rowCountTotal": {"operator": operator, "parameters": parameters}}}


def _sql(rule: Any, ctx: AssertionContext) -> dict[str, Any]:
    # The query returns one boolean: true passes.
    return {"type": "SQL", "sqlAssertion": {"type": "METRIC", "entity": ctx.dataset, "statement": rule.query,
                                            "operator": "IS_TRUE", "parameters": {}}}


def _freshness(rule: Any, ctx: AssertionContext) -> dict[str, Any]:
    seconds = parse_threshold(rule.must_be or rule.warn).value
    unit, size = next((u, s) for u, s in _FRESHNESS_UNITS if seconds >= s and seconds % s == 0) \
        if seconds >= 1 else ("SECOND", 1)
    return {"type": "FRESHNESS", "freshnessAssertion": {
        "type": "DATASET_CHANGE", "entity": ctx.dataset,
        "schedule": {"type": "FIXED_INTERVAL", "fixedInterval": {"unit": unit, "multiple": int(seconds // size)}}}}


#: rule type -> assertionInfo body builder; anything else is a DATASET assertion with _NATIVE_ operator (so is a
#: volume rule: its history-based check is more than a fixed row-count range)
ASSERTIONS: dict[str, Callable[[Any, AssertionContext], dict[str, Any]]] = {
    "not_null": _column_dataset(lambda r, c: {"aggregation": "IDENTITY", "operator": "NOT_NULL"}),
    "unique": _column_dataset(lambda r, c: {"aggregation": "UNIQUE_PROPORTION", "operator": "EQUAL_TO",
                                            "parameters": {"value": _std(1)}}),
    "range": _range,
    "allowed_values": _field_values("IN", lambda r: {"value": _std(
        json.dumps(list(r.values), separators=(",", ":"), ensure_ascii=False), "SET")}),
    "regex": _field_values("REGEX_MATCH", lambda r: {"value": _std(r.pattern, "STRING")}),
    "row_count": _row_count,
    "sql": _sql,
    "freshness": _freshness,
}


def assertion_info(contract: Contract, dataset: str, rule: Any) -> dict[str, Any]:
    """assertionInfo for one rule: column scope on the assertion, the dataset as its entity.

    A filtered rule is always _NATIVE_ with its filter among the native parameters: a structured assertion
    has no place for the filter and would state a check on every row.
    """
    builder = _native if getattr(rule, "filter", None) else ASSERTIONS.get(rule.type, _native)
    body = builder(rule, AssertionContext(contract, dataset))
    if body["type"] == "DATASET":
        sub = body["datasetAssertion"]
        sub.setdefault("nativeType", rule.type)
        sub.setdefault("nativeParameters", _native_parameters(rule))
    # No contract version here: a version bump alone must not rewrite every assertion.
    info: dict[str, Any] = {"customProperties": {"engine": "spark", "contract": contract.name, "rule": rule.name,
                                                 "severity": rule.severity}}
    info.update(body)
    info["source"] = {"type": "EXTERNAL"}
    info["description"] = rule.description or f"{rule.name}: {rule.type}" + (
        f" on {', '.join(rule.target_columns)}" if rule.target_columns else "")
    return info


def run_event(rule: RuleResult, assertion: str, dataset: str, run_id: str, timestamp: int,
              total: int | None, pii: set[str]) -> dict[str, Any]:
    """assertionRunEvent: the assertee is the dataset; numbers only, no row values."""
    result: dict[str, Any] = {"type": RESULT_TYPES[rule.status]}
    if total:
        result["rowCount"] = total
    if rule.failed_count is not None:
        result["unexpectedCount"] = rule.failed_count
    metric = safe_metric(rule, pii)
    if metric is not None:
        result["actualAggValue"] = float(metric)
    native = {"severity": rule.severity, "message": safe_message(rule, total, pii)}
    if rule.failed_count is not None:
        native["failedRows"] = str(rule.failed_count)
        if total:
            native["passedRowsPercentage"] = number_text(round((total - rule.failed_count) / total * 100, 2)) or "0"
    if rule.threshold:
        native["threshold"] = rule.threshold
    result["nativeResults"] = native
    return {"timestampMillis": timestamp, "runId": run_id, "asserteeUrn": dataset, "status": "COMPLETE",
            "result": result, "assertionUrn": assertion,
            "partitionSpec": {"partition": "FULL_TABLE_SNAPSHOT", "type": "FULL_TABLE"}}


_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def raw_contract(contract: Contract) -> str:
    """The contract as YAML (no data, only what the author wrote)."""
    doc = contract.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    # libyaml's emitter when present: the pure-Python one costs tens of ms per contract
    return yaml.dump(doc, Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True)


# --------------------------------------------------------------------------- the pusher


class DataHubPusher(CatalogPusher):
    """Datasets, schema, field tags/terms, owners, assertions, run events, data contracts, lineage."""

    catalog = "datahub"

    def __init__(self, transport: Transport, report: SyncReport | None = None, *,
                 batch: bool = True, batch_size: int = BATCH_MAX, workers: int = 1,
                 naming: CatalogNaming | None = None):
        super().__init__(transport, report, workers, naming)
        self.batch = batch and not transport.dry_run
        self.batch_size = max(1, min(batch_size, BATCH_MAX))
        self._queue: list[tuple[str, dict[str, Any]]] = []  # (entity label, proposal)
        self._outcomes: list[tuple[str, str]] = []  # (created/updated, entity label) waiting for their writes
        self._config: dict[str, Any] | None = None
        self._assertions: dict[tuple[str, str], str] = {}
        self._pushed: set[str] = set()
        if transport.dry_run:
            transport.simulate = self._simulate  # type: ignore[attr-defined]
            transport.describe = _describe  # type: ignore[attr-defined]
            self.report.note("dry run: every aspect assumed absent; one ingestProposal per aspect "
                             "(ingestProposalBatch is used against a server that has it)")

    # -- server ----------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        """GET /config once: must be GMS (noCode), records the version."""
        if self._config is None:
            if self.transport.dry_run:
                self._config = {}
                return self._config
            reply = self.transport.request("GET", "/config", entity="server config", allow=(404,))
            body = reply.body if isinstance(reply.body, dict) else None
            if reply.status == 404 or body is None:
                raise CatalogError("datahub: GET /config gave no JSON; is the URL the GMS (e.g. http://host:8080 "
                                   "or http://host:9002/api/gms)?")
            if str(body.get("noCode", "")).lower() != "true":
                raise CatalogError("datahub: GET /config has no noCode=true; this looks like the frontend, not GMS")
            version = (body.get("versions", {}).get("acryldata/datahub", {}) or {}).get("version")
            self.report.server_version = version
            if body.get("patchCapable") is False:
                self.report.note("datahub server does not advertise patchCapable; tag and owner patches may fail")
            self._config = body
        return self._config

    # -- reads and writes --------------------------------------------------------
    def _aspect(self, urn: str, aspect: str, entity: str) -> Any:
        reply = self.transport.request("GET", f"/aspects/{quote(urn, safe='')}", entity=entity,
                                       params={"aspect": aspect, "version": 0}, allow=(404,))
        if reply.status == 404 or not isinstance(reply.body, dict):
            return None
        value = reply.body.get("aspect", reply.body)
        if isinstance(value, dict):
            if PEGASUS.get(aspect) in value:
                return value[PEGASUS[aspect]]
            if len(value) == 1:
                return next(iter(value.values()))
        return value

    def _emit(self, entity: str, mcp: dict[str, Any]) -> None:
        self._queue.append((entity, mcp))

    def _record(self, outcome: str, entity: str) -> None:
        """An entity's outcome: counted now when nothing of it waits to be sent, else once `flush` sent it."""
        if outcome != UNCHANGED and any(label == entity for label, _ in self._queue):
            self._outcomes.append((outcome, entity))
        else:
            self.report.record(outcome, entity)

    def flush(self) -> None:
        """Send queued proposals: batches of up to 200 (and 15 MiB), or one by one.

        Writes and created/updated entities are counted once the server accepted them; when a request fails,
        the entities it carried, and those still queued behind it, are counted as failed instead.
        """
        queue, self._queue = self._queue, []
        outcomes, self._outcomes = self._outcomes, []
        accepted = sending = 0  # proposals accepted so far; end of the request in flight
        try:
            while accepted < len(queue):
                if self.batch:
                    chunk, size = [], 0
                    sending = accepted
                    while sending < len(queue) and len(chunk) < self.batch_size:
                        encoded = len(json.dumps(queue[sending][1]))
                        if chunk and size + encoded > BATCH_MAX_BYTES:
                            break
                        chunk.append(queue[sending])
                        size += encoded
                        sending += 1
                    names = sorted({e for e, _ in chunk})
                    label = names[0] if len(names) == 1 else f"{len(chunk)} aspects of {', '.join(names[:3])}" + (
                        "..." if len(names) > 3 else "")
                    reply = self.transport.request("POST", INGEST_BATCH, entity=label, headers=HEADERS,
                                                   allow=(404,),
                                                   body={"proposals": [p for _, p in chunk], "async": "false"})
                    if reply.status != 404:
                        accepted = sending
                        continue
                    # This server predates ingestProposalBatch: fall back to single proposals for good.
                    self.batch = False
                    self.report.note("datahub server has no ingestProposalBatch; sent proposals one by one")
                entity, mcp = queue[accepted]
                sending = accepted + 1
                self.transport.request("POST", INGEST, entity=entity, headers=HEADERS,
                                       body={"proposal": mcp, "async": "false"})
                accepted = sending
        except Exception:
            self._settle(queue, accepted, max(sending, accepted), outcomes)
            raise
        self._settle(queue, accepted, accepted, outcomes)

    def _settle(self, queue: list[tuple[str, dict[str, Any]]], accepted: int, attempted: int,
                outcomes: list[tuple[str, str]]) -> None:
        """Count the accepted writes and the outcomes of entities wholly written; the others failed."""
        for _ in range(accepted):
            self.report.count_write()
        refused = {entity for entity, _ in queue[accepted:attempted]}
        unsent = {entity for entity, _ in queue[attempted:]}
        for outcome, entity in outcomes:
            if entity in refused:
                self.report.failed.append((entity, "not written: the request carrying it failed"))
            elif entity in unsent:
                self.report.failed.append((entity, "not sent: an earlier request failed"))
            else:
                self.report.record(outcome, entity)

    # -- push_contract ---------------------------------------------------------
    def validate(self, contract: Contract) -> None:
        """The dataset URN must resolve: hints known, platform and env well formed."""
        self.naming.datahub_ref(contract)

    def push_contract(self, contract: Contract) -> None:
        """Dataset aspects, assertions for every rule, and the data contract bundling them."""
        self.config()
        ref = self.naming.datahub_ref(contract)
        urn = dataset_urn(ref)
        label = f"dataset {urn}"
        written = len(self._queue)
        have = dict(zip(DATASET_ASPECTS, self._map(lambda a: self._aspect(urn, a, label), list(DATASET_ASPECTS))))
        created = self._dataset_properties(contract, urn, label, have["datasetProperties"])
        if created:
            self._emit(label, proposal("dataset", urn, "status", {"removed": False}))
            instance = platform_instance(ref)
            if instance:
                self._emit(label, proposal("dataset", urn, "dataPlatformInstance", instance))
        if have["schemaMetadata"] is None:
            self._emit(label, proposal("dataset", urn, "schemaMetadata", schema_metadata(contract, ref.datahub_platform)))
        self._editable_schema(contract, urn, label, have["editableSchemaMetadata"] or {})
        self._ownership(contract, urn, label, have["ownership"] or {})
        self._global_tags(contract, urn, label, have["globalTags"] or {})
        self._record(CREATED if created else UPDATED if len(self._queue) > written else UNCHANGED, label)
        urns = self._assertion_infos(contract, urn)
        self._data_contract(contract, urn, urns)
        self._pushed.add(contract.name)
        self.flush()

    def _dataset_properties(self, contract: Contract, urn: str, label: str, current: Any) -> bool:
        wanted = dataset_properties(contract)
        if current is None:
            self._emit(label, proposal("dataset", urn, "datasetProperties", wanted))
            return True
        ops = []
        if "description" in wanted and current.get("description") != wanted["description"]:
            ops.append({"op": "add", "path": "/description", "value": wanted["description"]})
        have = current.get("customProperties") or {}
        for key, value in wanted["customProperties"].items():
            if have.get(key) != value:
                ops.append({"op": "add", "path": f"/customProperties/{patch_key(key)}", "value": value})
        if ops:
            self._emit(label, proposal("dataset", urn, "datasetProperties", ops, "PATCH"))
        return False

    def _editable_schema(self, contract: Contract, urn: str, label: str, current: dict[str, Any]) -> None:
        infos = {i.get("fieldPath"): i for i in current.get("editableSchemaFieldInfo") or []}
        ops = []
        for path, spec in _field_paths(contract.fields):
            info = infos.get(path, {})
            key = f"/editableSchemaFieldInfo/{patch_key(path)}"
            if spec.description and info.get("description") != spec.description:
                ops.append({"op": "add", "path": f"{key}/description", "value": spec.description})
            have_tags = {t.get("tag") for t in (info.get("globalTags") or {}).get("tags") or []}
            ops.extend({"op": "add", "path": f"{key}/globalTags/tags/{patch_key(t)}", "value": {"tag": t}}
                       for t in field_tags(spec) if t not in have_tags)
            have_terms = {t.get("urn") for t in (info.get("glossaryTerms") or {}).get("terms") or []}
            ops.extend({"op": "add", "path": f"{key}/glossaryTerms/terms/{patch_key(t)}", "value": {"urn": t}}
                       for t in field_terms(spec) if t not in have_terms)
        if ops:
            self._emit(label, proposal("dataset", urn, "editableSchemaMetadata", ops, "PATCH"))

    def _ownership(self, contract: Contract, urn: str, label: str, current: dict[str, Any]) -> None:
        have = {(o.get("owner"), o.get("type")) for o in current.get("owners") or []}
        ops = [{"op": "add", "path": f"/owners/{patch_key(o['owner'])}/{o['type']}", "value": o}
               for o in owner_entries(contract) if (o["owner"], o["type"]) not in have]
        if ops:
            self._emit(label, proposal("dataset", urn, "ownership", ops, "PATCH"))

    def _global_tags(self, contract: Contract, urn: str, label: str, current: dict[str, Any]) -> None:
        have = {t.get("tag") for t in current.get("tags") or []}
        ops = [{"op": "add", "path": f"/tags/{patch_key(t)}", "value": {"tag": t}}
               for t in dataset_tags(contract) if t not in have]
        if ops:
            self._emit(label, proposal("dataset", urn, "globalTags", ops, "PATCH"))

    def _assertion_infos(self, contract: Contract, dataset: str) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {"schema": [], "freshness": [], "dataQuality": []}
        rules = contract.rules()
        urns = [assertion_urn(contract, dataset, rule.name) for rule in rules]
        labels = [f"assertion {contract.name}.{rule.name}" for rule in rules]
        currents = self._map(lambda i: self._aspect(urns[i], "assertionInfo", labels[i]), list(range(len(rules))))
        for rule, urn, label, current in zip(rules, urns, labels, currents):
            wanted = assertion_info(contract, dataset, rule)
            if current is None:
                self._emit(label, proposal("assertion", urn, "assertionInfo", wanted))
                # Older UIs hide assertions without a platform (DataHub PR #4507).
                self._emit(label, proposal("assertion", urn, "dataPlatformInstance", {"platform": ENGINE_PLATFORM}))
                self._record(CREATED, label)
            elif not contains(current, wanted):
                self._emit(label, proposal("assertion", urn, "assertionInfo", wanted))
                self._record(UPDATED, label)
            else:
                self._record(UNCHANGED, label)
            self._assertions[(contract.name, rule.name)] = urn
            group = "schema" if rule.type in ("type", "schema") else "freshness" if rule.type == "freshness" \
                else "dataQuality"
            groups[group].append(urn)
        return groups

    def _data_contract(self, contract: Contract, dataset: str, groups: dict[str, list[str]]) -> None:
        urn = contract_urn(dataset)
        label = f"dataContract {contract.name}"
        properties: dict[str, Any] = {"entity": dataset}
        for key in ("schema", "freshness", "dataQuality"):
            if groups[key]:
                properties[key] = [{"assertion": a} for a in groups[key]]
        properties["rawContract"] = raw_contract(contract)
        status = {"customProperties": {}, "state": "ACTIVE"}
        current_props, current_status = self._map(lambda a: self._aspect(urn, a, label),
                                                  ["dataContractProperties", "dataContractStatus"])
        written = False
        if current_props is None or not contains(current_props, properties):
            self._emit(label, proposal("dataContract", urn, "dataContractProperties", properties))
            written = True
        if current_status is None or not contains(current_status, status):
            self._emit(label, proposal("dataContract", urn, "dataContractStatus", status))
            written = True
        self._record(CREATED if current_props is None else UPDATED if written else UNCHANGED, label)

    # -- push_results ----------------------------------------------------------
    def push_results(self, contract: Contract, result: CheckResult) -> None:
        """One assertionRunEvent per rule for this run (skipped when the run is already there)."""
        if contract.name not in self._pushed:
            self.push_contract(contract)
        dataset = dataset_urn(self.naming.datahub_ref(contract))
        timestamp = epoch_ms(result.finished_at)
        pii = set(contract.pii_columns())
        total = result.total_rows or None
        pending = [(rule, self._assertions[(contract.name, rule.name)]) for rule in result.rules
                   if (contract.name, rule.name) in self._assertions and rule.status in RESULT_TYPES]

        def already_there(item: tuple[RuleResult, str]) -> bool:
            rule, urn = item
            reply = self.transport.request("POST", TIMESERIES, entity=f"assertionRunEvent {contract.name}.{rule.name}",
                                           headers=HEADERS, body={
                                               "urn": urn, "entity": "assertion", "aspect": "assertionRunEvent",
                                               "startTimeMillis": timestamp, "endTimeMillis": timestamp, "limit": 10})
            body = reply.body if isinstance(reply.body, dict) else {}
            values = (body.get("value") or {}).get("values") or []
            return any(_run_id_of(v) == result.run_id for v in values)

        for (rule, urn), present in zip(pending, self._map(already_there, pending)):
            label = f"assertionRunEvent {contract.name}.{rule.name} run {result.run_id}"
            if present:
                self._record(UNCHANGED, label)
                continue
            event = run_event(rule, urn, dataset, result.run_id, timestamp, total, pii)
            self._emit(label, proposal("assertion", urn, "assertionRunEvent", event))
            self._record(CREATED, label)
        self.flush()

    # -- push_lineage ----------------------------------------------------------
    def push_lineage(self, edges: list[LineageEdge]) -> None:
        """upstreamLineage on each target: missing upstreams and fine-grained edges merged in."""
        self.config()
        by_target: dict[str, list[LineageEdge]] = {}
        for edge in edges:
            by_target.setdefault(dataset_urn(edge.target), []).append(edge)
        for target, target_edges in by_target.items():
            label = f"lineage into {target}"
            current = self._aspect(target, "upstreamLineage", label)
            upstreams = list((current or {}).get("upstreams") or [])
            fine = list((current or {}).get("fineGrainedLineages") or [])
            added = []
            for edge in target_edges:
                source = dataset_urn(edge.source)
                if not any(u.get("dataset") == source for u in upstreams):
                    upstreams.append({"auditStamp": dict(UNKNOWN_STAMP), "dataset": source, "type": "TRANSFORMED"})
                    added.append(source)
                for col in edge.columns:
                    entry: dict[str, Any] = {"upstreamType": "FIELD_SET",
                                             "upstreams": [field_urn(source, c) for c in col.from_columns],
                                             "downstreamType": "FIELD", "downstreams": [field_urn(target, col.to_column)]}
                    if col.function:
                        entry["transformOperation"] = col.function
                    entry["confidenceScore"] = 1.0
                    if not any(f.get("downstreams") == entry["downstreams"]
                               and sorted(f.get("upstreams") or []) == sorted(entry["upstreams"]) for f in fine):
                        fine.append(entry)
                        added.append(entry["downstreams"][0])
            if not added:
                self._record(UNCHANGED, label)
                continue
            value: dict[str, Any] = {"upstreams": upstreams}
            if fine:
                value["fineGrainedLineages"] = fine
            # Read-modify-write: what was there is kept; fine-grained patch paths differ across versions.
            self._emit(label, proposal("dataset", target, "upstreamLineage", value))
            for source in sorted({dataset_urn(e.source) for e in target_edges}):
                if source in added:
                    # Lineage search drops entities that exist only as references.
                    self._emit(label, proposal("dataset", source, "status", {"removed": False}))
            self._record(UPDATED if current is not None else CREATED, label)
        self.flush()

    # -- dry run ---------------------------------------------------------------
    def _simulate(self, method: str, path: str, body: Any) -> Response:
        if method == "GET":
            return Response(404, {"message": "dry run: assumed absent"})
        if path.startswith(TIMESERIES):
            return Response(200, {"value": {"values": []}})
        return Response(200, {"value": (body or {}).get("proposal", {}).get("entityUrn")})


def _describe(method: str, path: str, body: Any) -> str | None:
    """File-name stem for a dry-run request: action, entity type and aspect."""
    entity_type = lambda urn: urn.split(":")[2] if urn.count(":") >= 2 else "entity"  # noqa: E731
    if isinstance(body, dict) and "proposal" in body:
        mcp = body["proposal"]
        return f"ingestProposal {entity_type(mcp['entityUrn'])} {mcp['aspectName']} {mcp['changeType']}"
    if isinstance(body, dict) and "proposals" in body:
        return f"ingestProposalBatch {len(body['proposals'])}"
    if path.startswith(TIMESERIES):
        return f"getTimeseriesAspectValues {body.get('aspect')}"
    if path.startswith("/aspects/"):
        from urllib.parse import parse_qs, unquote, urlsplit

        parts = urlsplit(path)
        urn = unquote(parts.path[len("/aspects/"):])
        return f"aspect {entity_type(urn)} {parse_qs(parts.query).get('aspect', ['?'])[0]}"
    return None


def _run_id_of(value: dict[str, Any]) -> str | None:
    aspect = value.get("aspect", {})
    raw = aspect.get("value") if isinstance(aspect, dict) else None
    try:
        return (json.loads(raw) if isinstance(raw, str) else aspect or {}).get("runId")
    except (ValueError, AttributeError):
        return None

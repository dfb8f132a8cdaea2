"""OpenMetadata pusher: plain REST, branching on the server version (1.6 to 2.x).

Every write is preceded by a read and sent only when the catalog differs from the contract, so a
second sync of unchanged input writes nothing. Tags and owners are added by JSON Patch computed
against the entity just read; tags and owners someone else set are never removed, except a tag of a
mutually exclusive classification (PII, DataClassification) that contradicts the contract.
Request bodies follow the models validated in the reference notes (catalogs.md, section 1).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import quote, unquote

from dq_governance.catalogs.base import (
    CREATED,
    UNCHANGED,
    UPDATED,
    CatalogPusher,
    LineageEdge,
    Principal,
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
)
from dq_governance.catalogs.dryrun import placeholder_id
from dq_governance.catalogs.naming import CatalogNaming, quote_name, split_fqn
from dq_governance.catalogs.transport import Response
from dq_governance.checks.result import CheckResult, RuleResult
from dq_governance.contracts.model import Contract, FieldSpec
from dq_governance.errors import CatalogError, ConfigError, ContractError

log = logging.getLogger(__name__)

API = "/api/v1"
TABLE_FIELDS = "columns,tags,owners,testSuite"
PATCH_HEADERS = {"Content-Type": "application/json-patch+json"}
CLASSIFICATION = "DataClassification"
#: classifications whose tags exclude each other on one entity: ours replaces a contradicting one
EXCLUSIVE = frozenset({"PII", CLASSIFICATION, "Tier"})


# --------------------------------------------------------------------------- version profiles


@dataclass(frozen=True)
class Profile:
    """What changes between OpenMetadata minor versions (reference notes, section 1.1)."""

    name: str
    since: tuple[int, int]
    test_suite_in_case: bool  # CreateTestCaseRequest.testSuite: required <= 1.7, rejected >= 1.8
    result_write: tuple[str, str]  # method, path template ({fqn} url-quoted)
    result_read: str
    contract_shape: str | None  # None (no data contracts), "1.8", "1.9", "1.10"
    contract_results: bool


PROFILES: tuple[Profile, ...] = (
    Profile("1.6-1.7", (1, 6), True, ("PUT", API + "/dataQuality/testCases/{fqn}/testCaseResult"),
            API + "/dataQuality/testCases/{fqn}/testCaseResult", None, False),
    Profile("1.8", (1, 8), False, ("POST", API + "/dataQuality/testCases/testCaseResults/{fqn}"),
            API + "/dataQuality/testCases/testCaseResults/{fqn}", "1.8", False),
    Profile("1.9", (1, 9), False, ("POST", API + "/dataQuality/testCases/testCaseResults/{fqn}"),
            API + "/dataQuality/testCases/testCaseResults/{fqn}", "1.9", True),
    Profile("1.10-2.x", (1, 10), False, ("POST", API + "/dataQuality/testCases/testCaseResults/{fqn}"),
            API + "/dataQuality/testCases/testCaseResults/{fqn}", "1.10", True),
)


def parse_version(text: str) -> tuple[int, int, int]:
    """`1.9.11` / `2.0` / `1.6.2-SNAPSHOT` -> (major, minor, patch)."""
    parts = str(text).strip().split("-")[0].split(".")
    try:
        numbers = [int(p) for p in parts[:3]]
    except ValueError:
        raise ConfigError(f"OpenMetadata server version {text!r} is not X.Y or X.Y.Z") from None
    while len(numbers) < 3:
        numbers.append(0)
    return numbers[0], numbers[1], numbers[2]


def supported(version: tuple[int, int, int]) -> bool:
    """True for the versions this pusher speaks: 1.6 to 2.x."""
    return (1, 6) <= version[:2] and version[0] < 3


def profile_for(version: tuple[int, int, int]) -> Profile:
    """The newest profile whose `since` is <= the version; 1.6 to 2.x are supported."""
    if not supported(version):
        raise CatalogError(f"OpenMetadata server {'.'.join(map(str, version))} is not supported (1.6 to 2.x)")
    return [p for p in PROFILES if version[:2] >= p.since][-1]


def version_setting(text: str, source: str) -> tuple[int, int, int]:
    """A server version given by an option or the config: parsed, and a ConfigError naming `source` if unsupported."""
    version = parse_version(text)
    if not supported(version):
        raise ConfigError(f"{source} {text}: OpenMetadata {'.'.join(map(str, version))} is not supported "
                          "(1.6 to 2.x)")
    return version


# --------------------------------------------------------------------------- mappings (data, not if-chains)

#: Spark base type -> OpenMetadata column dataType
OM_TYPES = {
    "bigint": "BIGINT", "int": "INT", "smallint": "SMALLINT", "tinyint": "TINYINT", "string": "STRING",
    "varchar": "VARCHAR", "char": "CHAR", "boolean": "BOOLEAN", "double": "DOUBLE", "float": "FLOAT",
    "decimal": "DECIMAL", "date": "DATE", "timestamp": "TIMESTAMP", "timestamp_ntz": "TIMESTAMP",
    "binary": "BINARY", "array": "ARRAY", "map": "MAP", "struct": "STRUCT", "void": "NULL",
}
#: Spark base type -> OpenMetadata 1.8 data-contract SchemaField dataType (FieldDataType enum)
OM_FIELD_TYPES_18 = {
    "bigint": "LONG", "int": "INT", "smallint": "INT", "tinyint": "INT", "string": "STRING", "varchar": "STRING",
    "char": "STRING", "boolean": "BOOLEAN", "double": "DOUBLE", "float": "FLOAT", "date": "DATE",
    "timestamp": "TIMESTAMP", "timestamp_ntz": "TIMESTAMP", "binary": "BYTES", "array": "ARRAY", "map": "MAP",
    "struct": "RECORD",
}
#: contract classification of a PII field -> OpenMetadata PII tag
PII_TAGS = {"restricted": "PII.Sensitive", "confidential": "PII.Sensitive", "secret": "PII.Sensitive",
            "internal": "PII.NonSensitive", "public": "PII.NonSensitive"}
PII_DEFAULT_TAG = "PII.Sensitive"
STATUS = {"passed": "Success", "failed": "Failed", "warned": "Failed", "skipped": "Aborted"}


def _params_range(rule: Any) -> list[dict[str, str]]:
    # Inclusive bounds only: `skip_reason` keeps rules with an exclusive bound away from the between-tests.
    low, high = rule_bounds(rule)
    out = []
    if low is not None:
        out.append({"name": "minValue", "value": number_text(low)})
    if high is not None:
        out.append({"name": "maxValue", "value": number_text(high)})
    return out


def _params_in_set(rule: Any) -> list[dict[str, str]]:
    # OpenMetadata parses allowedValues with literal_eval: a JSON list literal works for str and numbers.
    return [{"name": "allowedValues", "value": json.dumps(list(rule.values), separators=(",", ":"),
                                                          ensure_ascii=False)}]


def _params_regex(rule: Any) -> list[dict[str, str]]:
    return [{"name": "regex", "value": rule.pattern}]


def _params_sql(rule: Any) -> list[dict[str, str]]:
    # Kept as written: the query returns one boolean over `_validation_df`; dq-governance runs it and
    # pushes the result, OpenMetadata only shows it. Parameter set as validated in the notes.
    return [{"name": "sqlExpression", "value": rule.query}, {"name": "strategy", "value": "ROWS"},
            {"name": "threshold", "value": "0"}]


@dataclass(frozen=True)
class TestMapping:
    definition: str
    column_test: bool
    params: Callable[[Any], list[dict[str, str]]]
    value_name: str | None  # testResultValue name when it means exactly the failed-row count


TEST_DEFINITIONS: dict[str, TestMapping] = {
    "not_null": TestMapping("columnValuesToBeNotNull", True, lambda r: [], "nullCount"),
    "unique": TestMapping("columnValuesToBeUnique", True, lambda r: [], None),
    "allowed_values": TestMapping("columnValuesToBeInSet", True, _params_in_set, None),
    "range": TestMapping("columnValuesToBeBetween", True, _params_range, None),
    "regex": TestMapping("columnValuesToMatchRegex", True, _params_regex, None),
    "row_count": TestMapping("tableRowCountToBeBetween", False, _params_range, None),
    "sql": TestMapping("tableCustomSQLQuery", False, _params_sql, None),
}


def skip_reason(rule: Any) -> str | None:
    """Why a rule cannot be an OpenMetadata test case stating the contract's check exactly; None when it can."""
    mapping = TEST_DEFINITIONS.get(rule.type)
    if mapping is None:
        return f"OpenMetadata has no test definition for {rule.type} rules"
    if getattr(rule, "filter", None):
        return "a test case cannot carry the rule's filter, so it would test every row"
    columns = rule.target_columns
    if mapping.column_test and len(columns) != 1:
        return f"{mapping.definition} takes one column and the rule spans {len(columns)}"
    if mapping.column_test and "." in columns[0]:
        # a test case's entity link and FQN name a top-level column; a dotted one would not resolve, or resolve wrong
        return "a test case names a top-level column and the rule checks a struct's field"
    if mapping.params is _params_range:
        low, high = rule_bounds(rule)
        if low is None and high is None:
            return f"{mapping.definition} needs fixed bounds and the rule's threshold has none"
        bounds = (("minimum", "min_exclusive", low), ("maximum", "max_exclusive", high))
        excluded = [name for name, flag, bound in bounds if bound is not None and getattr(rule, flag, False)]
        if excluded:
            return f"{mapping.definition} is inclusive and the rule excludes its {' and '.join(excluded)}"
    return None


def dotless_tags(contract: Contract) -> list[str]:
    """Contract tags OpenMetadata cannot take (not `Classification.Tag`), each with where it sits."""
    out = [f"{t} (dataset)" for t in contract.dataset.tags if "." not in t]
    out.extend(f"{t} (column {path})" for path, spec in contract.iter_fields() for t in spec.tags if "." not in t)
    return out


def tag_label(fqn: str) -> dict[str, str]:
    """A TagLabel as this tool applies it (machine-applied, confirmed)."""
    return {"tagFQN": fqn, "source": "Classification", "labelType": "Automated", "state": "Confirmed"}


def _strip_quotes(name: str) -> str:
    return name[1:-1] if len(name) >= 2 and name[0] == name[-1] == '"' else name


def _requested_column_tags(spec: FieldSpec) -> list[str]:
    out = []
    if spec.pii:
        out.append(PII_TAGS.get((spec.classification or "").lower(), PII_DEFAULT_TAG))
    if spec.classification:
        out.append(f"{CLASSIFICATION}.{spec.classification}")
    out.extend(t for t in spec.tags if "." in t)
    return out


def _requested_table_tags(contract: Contract) -> list[str]:
    out = []
    if contract.dataset.classification:
        out.append(f"{CLASSIFICATION}.{contract.dataset.classification}")
    out.extend(t for t in contract.dataset.tags if "." in t)
    return out


def _one_per_classification(tags: list[str]) -> tuple[list[str], list[str]]:
    """Each tag once, and one tag per mutually exclusive classification (the first asked for); the rest apart."""
    kept: list[str] = []
    contradicting: list[str] = []
    for tag in tags:
        classification = tag.split(".")[0]
        if tag in kept:
            continue
        if classification in EXCLUSIVE and any(k.split(".")[0] == classification for k in kept):
            contradicting.append(tag)
            continue
        kept.append(tag)
    return kept, contradicting


def column_tags(spec: FieldSpec) -> list[str]:
    """Tag FQNs a contract field asks for: PII, data classification, and its own `Class.Tag` tags (each once;
    in a mutually exclusive classification the one `pii`/`classification` sets wins over a listed tag)."""
    return _one_per_classification(_requested_column_tags(spec))[0]


def table_tags(contract: Contract) -> list[str]:
    """Tag FQNs for the table: data classification and the dataset's `Class.Tag` tags (each once, as above)."""
    return _one_per_classification(_requested_table_tags(contract))[0]


def contradicting_tags(contract: Contract) -> list[str]:
    """Listed tags not pushed because the table or column already gets another tag of their exclusive
    classification, each with where it sits."""
    out = [f"{t} (dataset)" for t in _one_per_classification(_requested_table_tags(contract))[1]]
    for path, spec in contract.iter_fields():
        out.extend(f"{t} (column {path})" for t in _one_per_classification(_requested_column_tags(spec))[1])
    return out


def _column_body(spec: FieldSpec, with_tags: bool = True) -> dict[str, Any]:
    st = spark_type(spec.type) if not spec.fields else spark_type("struct<>")
    body: dict[str, Any] = {"name": spec.name, "dataType": OM_TYPES.get(st.base, "UNKNOWN"),
                            "dataTypeDisplay": field_display(spec)}
    if st.base == "array":
        body["arrayDataType"] = OM_TYPES.get(spark_type(st.element or "string").base, "UNKNOWN")
    constraint = ("PRIMARY_KEY" if spec.primary_key else "UNIQUE" if spec.unique
                  else "NOT_NULL" if spec.required else None)
    if constraint:
        body["constraint"] = constraint
    if spec.description:
        body["description"] = spec.description
    if st.base == "decimal":
        body["precision"], body["scale"] = st.precision, st.scale
    if st.length is not None:  # OpenMetadata refuses a char, varchar or binary column without it (400)
        body["dataLength"] = st.length
    elif st.base == "binary":  # no length in Spark: 1, as OpenMetadata's own ingestion writes an unknown length
        body["dataLength"] = 1
    if with_tags and column_tags(spec):
        body["tags"] = [tag_label(t) for t in column_tags(spec)]
    if spec.fields:
        body["children"] = [_column_body(child, with_tags) for child in spec.fields]
    return body


# --------------------------------------------------------------------------- the pusher


class OpenMetadataPusher(CatalogPusher):
    """Tables, columns, tags, owners, test suites/cases/results, data contracts and lineage."""

    catalog = "openmetadata"

    def __init__(self, transport: Transport, report: SyncReport | None = None, *,
                 server_version: str | None = None, create_tables: bool = False, workers: int = 1,
                 naming: CatalogNaming | None = None):
        super().__init__(transport, report, workers, naming)
        self.create_tables = create_tables
        setting = version_setting(server_version, "server version") if server_version else None
        # a dry run targets the set version; a live sync reads the server's and refuses one that is not it
        self._version: tuple[int, int, int] | None = setting if transport.dry_run else None
        self._expected = None if transport.dry_run else setting
        self._tables: dict[str, dict[str, Any]] = {}
        self._owners: dict[tuple[str | None, str], dict[str, str] | None] = {}
        self._tags_ready: set[str] = set()
        self._test_cases: dict[tuple[str, str], dict[str, Any]] = {}  # (contract, rule) -> test case
        self._suites: dict[str, str] = {}
        self._contracts: dict[str, dict[str, Any]] = {}
        self._dry_contracts: dict[str, Contract] = {}
        self._pushed: set[str] = set()
        if transport.dry_run:
            transport.simulate = self._simulate  # type: ignore[attr-defined]
            if self._version is None:
                self._version = parse_version("2.0")
                self.report.note("dry run without --server-version: assumed OpenMetadata 2.0")
            if not create_tables:
                self.report.note("dry run: tables assumed to exist with the contract's columns and no "
                                 "descriptions, tags or owners")

    # -- version ---------------------------------------------------------------
    @property
    def version(self) -> tuple[int, int, int]:
        """The server version, read once from GET /api/v1/system/version; an unsupported one is refused here,
        before anything is written."""
        if self._version is None:
            reply = self.transport.request("GET", API + "/system/version", entity="server version")
            text = (reply.body or {}).get("version") if isinstance(reply.body, dict) else None
            if not text:
                raise CatalogError("openmetadata: GET /api/v1/system/version returned no version")
            try:
                self._version = parse_version(text)
            except ConfigError:  # the server's answer, not the user's input
                raise CatalogError(f"openmetadata: GET /api/v1/system/version returned {str(text)[:40]!r}, "
                                   "not X.Y.Z") from None
            if self._expected and self._version[:2] != self._expected[:2]:
                raise CatalogError(f"openmetadata: the server is {text}, and the server version set "
                                   f"(--server-version or openmetadata.server_version) is "
                                   f"{'.'.join(map(str, self._expected[:2]))}; nothing was written")
        self.report.server_version = ".".join(map(str, self._version))
        profile_for(self._version)  # CatalogError for a server outside 1.6 to 2.x
        return self._version

    @property
    def profile(self) -> Profile:
        """The version profile in force."""
        return profile_for(self.version)

    # -- writes ----------------------------------------------------------------
    def _write(self, method: str, path: str, *, entity: str, body: Any, headers: dict[str, str] | None = None,
               allow: tuple[int, ...] = (), retry_statuses: frozenset[int] | None = None,
               taken: Callable[[], bool] | None = None) -> Response:
        kwargs: dict[str, Any] = {}
        if retry_statuses is not None:
            kwargs["retry_statuses"] = retry_statuses
        if taken is not None:
            kwargs["taken"] = taken
        reply = self.transport.request(method, path, entity=entity, body=body, headers=headers, allow=allow, **kwargs)
        self.report.count_write()  # counted once the server took it (a refusal raised above)
        return reply

    def _get(self, path: str, *, entity: str, params: dict[str, Any] | None = None) -> Any:
        reply = self.transport.request("GET", path, entity=entity, params=params, allow=(404,))
        return None if reply.status == 404 else reply.body

    # -- push_contract ---------------------------------------------------------
    def validate(self, contract: Contract) -> None:
        """The table FQN must resolve (options, hints, dataset name, project config)."""
        self.naming.openmetadata_fqn(contract)

    def push_contract(self, contract: Contract) -> None:
        """Table (created if asked), descriptions, tags, owners, test suite and cases, data contract."""
        self.version  # noqa: B018 - read (and check) the version before anything is written
        fqn = self.naming.openmetadata_fqn(contract)
        self._note_skipped(contract)
        owners = [ref for ref in (self._resolve_owner(p) for p in self._om_principals(contract)) if ref]
        for tag in table_tags(contract) + [t for _, spec in contract.iter_fields() for t in column_tags(spec)]:
            self._ensure_tag(tag)
        table = self._table(fqn, contract, owners)
        self._patch_table(contract, table, owners)
        self._ensure_test_cases(contract, table)
        if self.profile.contract_shape:
            self._ensure_data_contract(contract, table, owners)
        self._pushed.add(contract.name)

    def _note_skipped(self, contract: Contract) -> None:
        """One note per kind of contract content this pusher does not send, naming it and saying why."""
        by_reason: dict[str, list[str]] = {}
        for rule in contract.rules():
            reason = skip_reason(rule)
            if reason:
                by_reason.setdefault(reason, []).append(rule.name)
        for reason, names in by_reason.items():
            self.report.note(f"{contract.name}: rule{'s' if len(names) > 1 else ''} {', '.join(names)} not pushed to "
                             f"OpenMetadata, nor {'their' if len(names) > 1 else 'its'} results: {reason}")
        for principal in contract_principals(contract):
            if principal.role == "steward":
                self.report.note(f"{contract.name}: steward {principal.name} not pushed to OpenMetadata: the "
                                 "table's owners are the contract owner only")
        tags = dotless_tags(contract)
        if tags:
            self.report.note(f"{contract.name}: tag{'s' if len(tags) > 1 else ''} {', '.join(tags)} not pushed to "
                             "OpenMetadata: its tags are Classification.Tag names")
        tags = contradicting_tags(contract)
        if tags:
            self.report.note(f"{contract.name}: tag{'s' if len(tags) > 1 else ''} {', '.join(tags)} not pushed to "
                             "OpenMetadata: its classification holds one tag per column or table, and pii or "
                             "classification already sets it")

    def _om_principals(self, contract: Contract) -> list[Principal]:
        # OpenMetadata allows several users or one team as owners; the contract owner is the owner.
        return [p for p in contract_principals(contract) if p.role == "owner"]

    def _table(self, fqn: str, contract: Contract, owners: list[dict[str, str]]) -> dict[str, Any]:
        if fqn in self._tables:
            return self._tables[fqn]
        self._dry_contracts[fqn] = contract
        table = self._get(f"{API}/tables/name/{quote(fqn, safe='')}", entity=f"table {fqn}",
                          params={"fields": TABLE_FIELDS, "include": "non-deleted"})
        if table is None:
            if not self.create_tables:
                raise CatalogError(f"openmetadata: table {fqn} does not exist; ingest it first or pass "
                                   "--create-tables")
            body = create_table_body(contract, owners, fqn)
            table = self._write("PUT", f"{API}/tables", entity=f"table {fqn}", body=body).body or {}
            table.setdefault("fullyQualifiedName", fqn)
            self.report.record(CREATED, f"table {fqn}")
            table["_created"] = True
        self._tables[fqn] = table
        return table

    def _patch_table(self, contract: Contract, table: dict[str, Any], owners: list[dict[str, str]]) -> None:
        fqn = table["fullyQualifiedName"]
        missing = [f.name for f in contract.fields if _find_column(table.get("columns") or [], f.name) is None]
        if missing:
            self.report.note(f"{fqn}: contract column(s) {', '.join(missing)} not in the OpenMetadata table; "
                             "their descriptions and tags are not set")
        ops = table_patch(contract, table, owners)
        if ops:
            reread: dict[str, Any] = {}

            def applied() -> bool:
                # a patch the server took before a 5xx or a timeout would add its tags and owners twice if resent
                # (and its index-based removes would hit other entries): read the table back and diff again
                reread.update(self._get(f"{API}/tables/name/{quote(fqn, safe='')}", entity=f"table {fqn}",
                                        params={"fields": TABLE_FIELDS, "include": "non-deleted"}) or {})
                again = table_patch(contract, reread, owners)
                if again and again != ops:
                    raise CatalogError(f"openmetadata: table {fqn} changed while its patch was retried; sync again")
                return not again

            reply = self._write("PATCH", f"{API}/tables/{table['id']}", entity=f"table {fqn}", body=ops,
                                headers=PATCH_HEADERS, taken=applied)
            stored = reply.body if isinstance(reply.body, dict) and reply.body.get("id") == table["id"] else reread
            if stored.get("id") == table["id"]:
                self._tables[fqn] = {**stored, "_created": table.get("_created", False)}
            if not table.get("_created"):
                self.report.record(UPDATED, f"table {fqn}")
        elif not table.get("_created"):
            self.report.record(UNCHANGED, f"table {fqn}")

    def _resolve_owner(self, principal: Principal) -> dict[str, str] | None:
        key = (principal.kind, principal.name)
        if key not in self._owners:
            kinds = [principal.kind] if principal.kind else ["team", "user"]
            found = None
            for kind in kinds:
                entity = self._get(f"{API}/{kind}s/name/{quote(principal.name, safe='')}",
                                   entity=f"{kind} {principal.name}")
                if entity and entity.get("id"):
                    found = {"id": entity["id"], "type": kind}
                    break
            if found is None:
                self.report.note(f"owner {principal.name!r} not found in OpenMetadata (as {' or '.join(kinds)}); "
                                 "not set")
            self._owners[key] = found
        return self._owners[key]

    def _ensure_tag(self, tag_fqn: str) -> None:
        classification, _, name = tag_fqn.partition(".")
        if classification != CLASSIFICATION or tag_fqn in self._tags_ready:
            return  # PII and Tier are seeded by OpenMetadata; other contract tags must already exist
        if CLASSIFICATION not in self._tags_ready:
            if self._get(f"{API}/classifications/name/{CLASSIFICATION}", entity=f"classification {CLASSIFICATION}") is None:
                self._write("PUT", f"{API}/classifications", entity=f"classification {CLASSIFICATION}", body={
                    "name": CLASSIFICATION,
                    "description": "Data classification levels declared in data contracts (dq-governance)",
                    "mutuallyExclusive": True,
                })
                self.report.record(CREATED, f"classification {CLASSIFICATION}")
            self._tags_ready.add(CLASSIFICATION)
        if self._get(f"{API}/tags/name/{quote(tag_fqn, safe='')}", entity=f"tag {tag_fqn}") is None:
            self._write("PUT", f"{API}/tags", entity=f"tag {tag_fqn}", body={
                "classification": CLASSIFICATION, "name": name,
                "description": f"Data classified as {name} by a data contract",
            })
            self.report.record(CREATED, f"tag {tag_fqn}")
        self._tags_ready.add(tag_fqn)

    # -- test suite and cases --------------------------------------------------
    def _ensure_suite(self, table: dict[str, Any]) -> str:
        fqn = table["fullyQualifiedName"]
        if fqn in self._suites:
            return self._suites[fqn]
        suite = table.get("testSuite") or {}
        suite_fqn = suite.get("fullyQualifiedName")
        if not suite_fqn:
            old_route = self.version < (1, 6, 2)  # `/basic` exists from 1.6.2
            path = f"{API}/dataQuality/testSuites/{'executable' if old_route else 'basic'}"
            ref = "executableEntityReference" if old_route else "basicEntityReference"
            body = {"name": f"{fqn}.testSuite", ref: fqn}
            reply = self._write("PUT", path, entity=f"test suite of {fqn}", body=body).body or {}
            suite_fqn = reply.get("fullyQualifiedName") or body["name"]
            self.report.record(CREATED, f"testSuite {suite_fqn}")
        self._suites[fqn] = suite_fqn
        return suite_fqn

    def _ensure_test_cases(self, contract: Contract, table: dict[str, Any]) -> None:
        fqn = table["fullyQualifiedName"]
        table_name = _strip_quotes(split_fqn(fqn)[-1])
        suite_fqn = self._ensure_suite(table)
        items = []
        for rule in contract.rules():
            if skip_reason(rule):  # noted by _note_skipped
                continue
            mapping = TEST_DEFINITIONS[rule.type]
            body = test_case_body(table_name, fqn, rule, mapping, contract,
                                  suite_fqn if self.profile.test_suite_in_case else None)
            items.append((rule.name, body, test_case_fqn(fqn, rule, mapping, body["name"])))
        for (name, _, _), case in zip(items, self._map(self._ensure_test_case, items)):
            self._test_cases[(contract.name, name)] = case

    def _ensure_test_case(self, item: tuple[str, dict[str, Any], str]) -> dict[str, Any]:
        _, body, case_fqn = item
        current = self._get(f"{API}/dataQuality/testCases/name/{quote(case_fqn, safe='')}",
                            entity=f"test case {case_fqn}", params={"fields": "testDefinition,testSuite"})
        existed = current is not None
        if existed and not test_case_differs(current, body):
            self.report.record(UNCHANGED, f"testCase {case_fqn}")
        else:
            # 404 right after the suite is created is a known race (OM #13072): retry it.
            reply = self._write("PUT", f"{API}/dataQuality/testCases", entity=f"test case {case_fqn}",
                                body=body, retry_statuses=frozenset({404, 429, 500, 502, 503, 504}))
            current = {**(current or {}), **body, **(reply.body or {})}
            self.report.record(UPDATED if existed else CREATED, f"testCase {case_fqn}")
        current.setdefault("fullyQualifiedName", case_fqn)
        return current

    # -- data contract ---------------------------------------------------------
    def _ensure_data_contract(self, contract: Contract, table: dict[str, Any], owners: list[dict[str, str]]) -> None:
        shape = self.profile.contract_shape
        cases = [self._test_cases[(contract.name, r.name)] for r in contract.rules()
                 if (contract.name, r.name) in self._test_cases]
        body = data_contract_body(contract, table, owners, cases, shape)  # type: ignore[arg-type]
        entity = f"data contract {body['name']}"
        current = self._get(f"{API}/dataContracts/entity", entity=entity,
                            params={"entityId": table["id"], "entityType": "table"})
        if current is not None and not data_contract_differs(current, body):
            self.report.record(UNCHANGED, entity)
        else:
            reply = self._write("PUT", f"{API}/dataContracts", entity=entity, body=body).body or {}
            self.report.record(UPDATED if current is not None else CREATED, entity)
            current = {**(current or {}), **reply}
        self._contracts[contract.name] = current

    # -- push_results ----------------------------------------------------------
    def push_results(self, contract: Contract, result: CheckResult) -> None:
        """One test-case result per rule per run; on 1.9+ the data contract result too."""
        if contract.name not in self._pushed:
            self.push_contract(contract)
        timestamp = epoch_ms(result.finished_at)
        pii = set(contract.pii_columns())
        total = result.total_rows or None
        pending = [(rule, self._test_cases[(contract.name, rule.name)]) for rule in result.rules
                   if (contract.name, rule.name) in self._test_cases]
        self._map(lambda item: self._push_result(item[0], item[1], timestamp, total, pii), pending)
        if self.profile.contract_results and contract.name in self._contracts:
            self._push_contract_result(contract, result, timestamp)

    def _push_result(self, rule: RuleResult, case: dict[str, Any], timestamp: int, total: int | None,
                     pii: set[str]) -> None:
        method, template = self.profile.result_write
        case_fqn = case["fullyQualifiedName"]
        quoted = quote(case_fqn, safe="")
        entity = f"test case result {case_fqn} @ {timestamp}"

        def stored() -> bool:  # results are keyed by timestamp: one there is this run's
            existing = self._get(self.profile.result_read.format(fqn=quoted), entity=entity,
                                 params={"startTs": timestamp, "endTs": timestamp})
            return bool(existing and (existing.get("data") if isinstance(existing, dict) else existing))

        if stored():
            self.report.record(UNCHANGED, entity)
            return
        body = test_result_body(rule, timestamp, total, pii, TEST_DEFINITIONS[rule.type])
        # a result write may add a record each time it is taken: a retry first asks whether the last try was stored
        self._write(method, template.format(fqn=quoted), entity=entity, body=body, taken=stored)
        self.report.record(CREATED, entity)

    def _push_contract_result(self, contract: Contract, result: CheckResult, timestamp: int) -> None:
        entity_doc = self._contracts[contract.name]
        contract_id = entity_doc.get("id")
        entity = f"data contract result {contract.name} @ {timestamp}"
        latest = self._get(f"{API}/dataContracts/{contract_id}/results/latest", entity=entity)
        if latest and latest.get("timestamp") == timestamp:
            self.report.record(UNCHANGED, entity)
            return
        body = contract_result_body(entity_doc.get("fullyQualifiedName") or entity_doc.get("name"), result, timestamp)

        def stored() -> bool:  # each PUT adds a result: a retry first asks whether the last try was stored
            again = self._get(f"{API}/dataContracts/{contract_id}/results/latest", entity=entity)
            return bool(again and again.get("timestamp") == timestamp)

        self._write("PUT", f"{API}/dataContracts/{contract_id}/results", entity=entity, body=body, taken=stored)
        self.report.record(CREATED, entity)

    # -- push_lineage ----------------------------------------------------------
    def push_lineage(self, edges: list[LineageEdge]) -> None:
        """PUT /api/v1/lineage per edge whose column lineage is not already there (merged, never dropped)."""
        self.version  # noqa: B018
        for edge in edges:
            source, target = edge.source.openmetadata_fqn, edge.target.openmetadata_fqn
            if not source or not target:
                raise ContractError(f"lineage edge {edge.source.name} -> {edge.target.name}: both datasets need "
                                    "dataset.catalog.openmetadata_fqn")
            entity = f"lineage {source} -> {target}"
            src = self._lineage_table(source)
            dst = self._lineage_table(target)
            wanted = [{"fromColumns": [f"{source}.{c}" for c in col.from_columns], "toColumn": f"{target}.{col.to_column}",
                       **({"function": col.function} if col.function else {})} for col in edge.columns]
            current = self._get(f"{API}/lineage/getLineageEdge/{src['id']}/{dst['id']}", entity=entity)
            details = ((current or {}).get("edge", current or {}) or {}).get("lineageDetails") or {}
            have = list(details.get("columnsLineage") or [])
            missing = [c for c in wanted if not any(_same_column_lineage(c, h) for h in have)]
            if current is not None and not missing:
                self.report.record(UNCHANGED, entity)
                continue
            body = {"edge": {"fromEntity": {"id": src["id"], "type": "table"},
                             "toEntity": {"id": dst["id"], "type": "table"},
                             "lineageDetails": {"source": "SparkLineage",
                                                **({"description": edge.description} if edge.description else {}),
                                                "columnsLineage": have + missing}}}
            self._write("PUT", f"{API}/lineage", entity=entity, body=body)
            self.report.record(UPDATED if current is not None else CREATED, entity)

    def _lineage_table(self, fqn: str) -> dict[str, Any]:
        if fqn not in self._tables:
            table = self._get(f"{API}/tables/name/{quote(fqn, safe='')}", entity=f"table {fqn}",
                              params={"fields": TABLE_FIELDS, "include": "non-deleted"})
            if table is None:
                raise CatalogError(f"openmetadata: lineage needs table {fqn}, which does not exist")
            self._tables[fqn] = table
        return self._tables[fqn]

    # -- dry run ---------------------------------------------------------------
    def _simulate(self, method: str, path: str, body: Any) -> Response:
        """Replies a dry run pretends to get: entities absent, except tables assumed to exist bare."""
        bare = path.split("?")[0]
        transport = self.transport
        if method == "GET":
            if bare.startswith(f"{API}/tables/name/"):
                fqn = next((f for f in self._dry_contracts if bare.endswith(quote(f, safe=""))), None)
                if fqn and not self.create_tables:
                    contract = self._dry_contracts[fqn]
                    return Response(200, bare_table(contract, fqn, placeholder_id("table", fqn)))
                if fqn is None:  # a lineage-only table
                    name = unquote(bare.rsplit("/", 1)[-1])
                    return Response(200, {"id": placeholder_id("table", name),
                                          "fullyQualifiedName": name, "columns": []})
            for kind in ("team", "user"):
                if bare.startswith(f"{API}/{kind}s/name/"):
                    name = unquote(bare.rsplit("/", 1)[-1])
                    return Response(200, {"id": transport.placeholder(kind, name), "name": name})  # type: ignore[attr-defined]
            return Response(404, {"message": "dry run: assumed absent"})
        reply = dict(body) if isinstance(body, dict) else {}
        if method == "PUT" and bare == f"{API}/tables":
            fqn = f"{body['databaseSchema']}.{body['name']}"
            reply.update(id=placeholder_id("table", fqn), fullyQualifiedName=fqn)
        elif method == "PUT" and bare.startswith(f"{API}/dataQuality/testSuites/"):
            reply.update(id=placeholder_id("testSuite", body["name"]), fullyQualifiedName=body["name"])
        elif method == "PUT" and bare == f"{API}/dataQuality/testCases":
            reply.update(id=placeholder_id("testCase", body["name"]))
        elif method == "PUT" and bare == f"{API}/dataContracts":
            reply.update(id=placeholder_id("dataContract", body["name"]), fullyQualifiedName=body["name"])
        return Response(200, reply)


# --------------------------------------------------------------------------- bodies and diffs


def table_fqn(contract: Contract, naming: CatalogNaming | None = None) -> str:
    """`service.database.schema.table` for the contract's dataset (see catalogs/naming.py)."""
    return (naming or CatalogNaming()).openmetadata_fqn(contract)


def create_table_body(contract: Contract, owners: list[dict[str, str]], fqn: str | None = None) -> dict[str, Any]:
    """CreateTableRequest for PUT /api/v1/tables (into `fqn`, default the contract's own)."""
    parts = split_fqn(fqn or table_fqn(contract))
    body: dict[str, Any] = {"name": _strip_quotes(parts[-1]), "databaseSchema": ".".join(parts[:-1])}
    description = contract.dataset.description or contract.contract.description
    if description:
        body["description"] = description
    body["tableType"] = "Regular"
    body["columns"] = [_column_body(spec) for spec in contract.fields]
    if owners:
        body["owners"] = owners
    tags = table_tags(contract)
    if tags:
        body["tags"] = [tag_label(t) for t in tags]
    return body


def bare_table(contract: Contract, fqn: str, table_id: str) -> dict[str, Any]:
    """The table a dry run assumes: the contract's columns, nothing else."""
    def column(spec: FieldSpec, prefix: str) -> dict[str, Any]:
        body = _column_body(spec, with_tags=False)
        body.pop("description", None)
        body["fullyQualifiedName"] = f"{prefix}.{spec.name}"
        body["tags"] = []
        if spec.fields:
            body["children"] = [column(child, body["fullyQualifiedName"]) for child in spec.fields]
        return body

    return {"id": table_id, "fullyQualifiedName": fqn, "name": _strip_quotes(split_fqn(fqn)[-1]),
            "columns": [column(spec, fqn) for spec in contract.fields], "tags": [], "owners": []}


def _tag_ops(path: str, have: list[dict[str, Any]], wanted: list[str]) -> list[dict[str, Any]]:
    """Add missing tags; for an exclusive classification, remove the contradicting tag first."""
    ops: list[dict[str, Any]] = []
    present = [t.get("tagFQN") for t in have]
    removes: list[int] = []
    for fqn in wanted:
        if fqn in present:
            continue
        classification = fqn.split(".")[0]
        if classification in EXCLUSIVE:
            removes.extend(i for i, other in enumerate(present)
                           if other and other.split(".")[0] == classification and other not in wanted)
    for index in sorted(set(removes), reverse=True):  # highest index first so the others keep theirs
        ops.append({"op": "remove", "path": f"{path}/{index}"})
    for fqn in wanted:
        if fqn not in present:
            ops.append({"op": "add", "path": f"{path}/-", "value": tag_label(fqn)})
    return ops


def _column_ops(prefix: str, column: dict[str, Any], spec: FieldSpec) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    if spec.description and column.get("description") != spec.description:
        ops.append({"op": "add", "path": f"{prefix}/description", "value": spec.description})
    wanted = column_tags(spec)
    if wanted:
        if column.get("tags") is None:
            ops.append({"op": "add", "path": f"{prefix}/tags", "value": [tag_label(t) for t in wanted]})
        else:
            ops.extend(_tag_ops(f"{prefix}/tags", column["tags"], wanted))
    for child_spec in spec.fields or []:
        children = column.get("children") or []
        index = _find_column(children, child_spec.name)
        if index is not None:
            ops.extend(_column_ops(f"{prefix}/children/{index}", children[index], child_spec))
    return ops


def _find_column(columns: list[dict[str, Any]], name: str) -> int | None:
    for i, column in enumerate(columns):
        if column.get("name") == name:
            return i
    for i, column in enumerate(columns):
        if str(column.get("name", "")).lower() == name.lower():
            return i
    return None


def _owner_ops(have: list[dict[str, Any]] | None, owners: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Add the contract owner. OpenMetadata holds several users or one team, so a team owner replaces the
    table's owners, and a user owner replaces a team (the table's other users stay)."""
    present = [{"id": o.get("id"), "type": o.get("type")} for o in have or []]
    missing = [o for o in owners if o["id"] not in {p["id"] for p in present}]
    if any(o["type"] == "team" for o in owners):
        kept = [o for o in present if o["id"] in {w["id"] for w in owners}]
    else:
        kept = [o for o in present if o["type"] != "team"]
    if not missing and kept == present:
        return []
    if kept == present and have is not None:
        return [{"op": "add", "path": "/owners/-", "value": o} for o in missing]
    return [{"op": "add", "path": "/owners", "value": kept + missing}]  # JSON Patch add on a member replaces it


def table_patch(contract: Contract, table: dict[str, Any], owners: list[dict[str, str]]) -> list[dict[str, Any]]:
    """JSON Patch (RFC 6902) turning the table as read into the table the contract describes; [] if equal."""
    ops: list[dict[str, Any]] = []
    description = contract.dataset.description or contract.contract.description
    if description and table.get("description") != description:
        ops.append({"op": "add", "path": "/description", "value": description})
    columns = table.get("columns") or []
    for spec in contract.fields:
        index = _find_column(columns, spec.name)
        if index is not None:
            ops.extend(_column_ops(f"/columns/{index}", columns[index], spec))
    ops.extend(_owner_ops(table.get("owners"), owners))
    wanted = table_tags(contract)
    if wanted:
        if table.get("tags") is None:
            ops.append({"op": "add", "path": "/tags", "value": [tag_label(t) for t in wanted]})
        else:
            ops.extend(_tag_ops("/tags", table["tags"], wanted))
    return ops


def test_case_fqn(table: str, rule: Any, mapping: TestMapping, name: str) -> str:
    """`{table}.{column}.{name}` for column tests, `{table}.{name}` for table tests (a dotted name quoted, as
    OpenMetadata builds it)."""
    name = quote_name(name)
    return f"{table}.{rule.target_columns[0]}.{name}" if mapping.column_test else f"{table}.{name}"


def test_case_body(table_name: str, fqn: str, rule: Any, mapping: TestMapping, contract: Contract,
                   suite_fqn: str | None) -> dict[str, Any]:
    """CreateTestCaseRequest; `testSuite` only where the version requires it (<= 1.7)."""
    link = (f"<#E::table::{fqn}::columns::{rule.target_columns[0]}>" if mapping.column_test
            else f"<#E::table::{fqn}>")
    body: dict[str, Any] = {
        "name": f"{table_name}_{rule.name}",
        "testDefinition": mapping.definition,
        "entityLink": link,
        "parameterValues": mapping.params(rule),
    }
    if rule.level == "row":
        body["computePassedFailedRowCount"] = True
    body["description"] = rule.description or f"from contract {contract.name} v{contract.version}"
    if suite_fqn:
        body["testSuite"] = suite_fqn
    return body


def test_case_differs(current: dict[str, Any], body: dict[str, Any]) -> bool:
    """True when the stored test case's definition, parameters, link or description differ."""
    definition = current.get("testDefinition")
    if isinstance(definition, dict):
        definition = definition.get("fullyQualifiedName") or definition.get("name")
    params = sorted((p.get("name"), p.get("value")) for p in current.get("parameterValues") or [])
    wanted = sorted((p["name"], p["value"]) for p in body["parameterValues"])
    return (definition != body["testDefinition"] or params != wanted
            or current.get("entityLink") != body["entityLink"]
            or (current.get("description") or "") != body.get("description", ""))


def test_result_body(rule: RuleResult, timestamp: int, total: int | None, pii: set[str],
                     mapping: TestMapping) -> dict[str, Any]:
    """CreateTestCaseResult: status, counts and percentages (0-100); no row values, ever."""
    values: list[dict[str, str]] = []
    if rule.failed_count is not None:
        values.append({"name": mapping.value_name or "failedRows", "value": str(rule.failed_count)})
    else:
        metric = safe_metric(rule, pii)
        if metric is not None:
            values.append({"name": "rowCount" if rule.type == "row_count" else "metricValue",
                           "value": number_text(metric) or ""})
    body: dict[str, Any] = {"timestamp": timestamp, "testCaseStatus": STATUS.get(rule.status, "Failed"),
                            "result": safe_message(rule, total, pii), "testResultValue": values}
    if rule.failed_count is not None and total:
        passed = max(total - rule.failed_count, 0)
        body.update(passedRows=passed, failedRows=rule.failed_count,
                    passedRowsPercentage=round(passed / total * 100, 2),
                    failedRowsPercentage=round(rule.failed_count / total * 100, 2))
    elif rule.failed_count is not None:
        body["failedRows"] = rule.failed_count
    return body


_LATENCY_UNITS = (("day", 86400), ("hour", 3600), ("minute", 60))


def _sla(contract: Contract) -> dict[str, Any] | None:
    level = contract.service_level
    if not level or not level.freshness:
        return None
    seconds = level.freshness.seconds
    for unit, size in _LATENCY_UNITS:
        if seconds >= size and seconds % size == 0:
            return {"maxLatency": {"value": int(seconds // size), "unit": unit}}
    return {"maxLatency": {"value": max(1, int(round(seconds / 60))), "unit": "minute"}}


def data_contract_body(contract: Contract, table: dict[str, Any], owners: list[dict[str, str]],
                       cases: list[dict[str, Any]], shape: str) -> dict[str, Any]:
    """CreateDataContractRequest in the shape of the server's version (1.8, 1.9 or 1.10+)."""
    body: dict[str, Any] = {"name": f"{contract.name}_contract"}
    if contract.contract.description:
        body["description"] = contract.contract.description
    if shape == "1.10":
        body["entityStatus"] = "Approved"
    else:
        body["status"] = "Active"
    body["entity"] = {"id": table["id"], "type": "table"}
    if shape == "1.8":
        body["schema"] = [{"name": f.name, "dataType": OM_FIELD_TYPES_18.get(spark_type(f.type).base, "UNKNOWN")}
                          for f in contract.fields]
    else:
        body["schema"] = [{"name": f.name, "dataType": OM_TYPES.get(spark_type(f.type).base, "UNKNOWN")}
                          for f in contract.fields]
    if owners:
        body["semantics"] = [{"name": "has_owner", "description": "Table must have an owner",
                              "rule": json.dumps({"!!": [{"var": "owners"}]}), "enabled": True}]
    if shape == "1.8":
        body["qualityExpectations"] = [
            {"name": c["name"], "definition": c["testDefinition"] if isinstance(c["testDefinition"], str)
             else c["testDefinition"].get("name"), **({"testCase": {"id": c["id"], "type": "testCase"}}
                                                      if c.get("id") else {})} for c in cases]
    else:
        body["qualityExpectations"] = [{"id": c["id"], "type": "testCase"} for c in cases if c.get("id")]
    if shape == "1.10":
        if owners:
            body["owners"] = owners
        sla = _sla(contract)
        if sla:
            body["sla"] = sla
    return body


def _refs(items: Any) -> list[str]:
    """Comparable keys of quality expectations: the test-case id (1.9+) or the expectation name (1.8)."""
    return sorted(str(item.get("id") or item.get("name")) for item in items or [] if isinstance(item, dict))


def data_contract_differs(current: dict[str, Any], body: dict[str, Any]) -> bool:
    """True when the stored contract's description, status, schema, expectations, owners or SLA differ."""
    for key in ("description", "status", "entityStatus"):
        if key in body and current.get(key) != body[key]:
            return True
    schema = [(c.get("name"), c.get("dataType")) for c in current.get("schema") or []]
    if schema != [(c["name"], c["dataType"]) for c in body["schema"]]:
        return True
    if _refs(current.get("qualityExpectations")) != _refs(body.get("qualityExpectations")):
        return True
    if "owners" in body and not {o["id"] for o in body["owners"]} <= {o.get("id") for o in current.get("owners") or []}:
        return True
    return "sla" in body and current.get("sla", {}).get("maxLatency") != body["sla"].get("maxLatency")


def contract_result_body(contract_fqn: str, result: CheckResult, timestamp: int) -> dict[str, Any]:
    """DataContractResult (1.9+): schema checks are the type/schema rules, quality checks the rest."""
    schema_rules = [r for r in result.rules if r.type in ("type", "schema") and r.status != "skipped"]
    quality_rules = [r for r in result.rules if r.type not in ("type", "schema") and r.status != "skipped"]

    def tally(rules: list[RuleResult]) -> dict[str, int]:
        passed = sum(1 for r in rules if r.passed)
        return {"passed": passed, "failed": len(rules) - passed, "total": len(rules)}

    schema, quality = tally(schema_rules), tally(quality_rules)
    failed = schema["failed"] + quality["failed"]
    total = schema["total"] + quality["total"]
    status = "Success" if failed == 0 else ("Failed" if result.status == "failed" else "PartialSuccess")
    quality_block: dict[str, Any] = dict(quality)
    if quality["total"]:
        quality_block["qualityScore"] = round(quality["passed"] / quality["total"] * 100, 1)
    return {"dataContractFQN": contract_fqn, "timestamp": timestamp, "contractExecutionStatus": status,
            "result": f"{failed} of {total} checks failed", "schemaValidation": schema,
            "qualityValidation": quality_block}


def _same_column_lineage(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("toColumn") == b.get("toColumn") and sorted(a.get("fromColumns") or []) == sorted(b.get("fromColumns") or [])

"""The lineage graph store: OpenLineage events into an embedded SQLite database (WAL mode).

Nodes are datasets (namespace, name), their fields, jobs and runs. Edges are dataset -> job (a job
reads it), job -> dataset (a job writes it) and field -> field through a job, taken from the
`columnLineage` facet with its DIRECT/INDIRECT type and subtype. Per dataset the latest ownership,
tags, quality status and contract facets are kept (latest by eventTime, so late events never win).

Edges are the union of everything ingested: union is order-independent, which makes ingest
idempotent and indifferent to START/COMPLETE arriving out of order. A malformed event is skipped
with a counted, logged reason; it never stops the ingest. The store is read with indexed queries,
never loaded whole.

A contract file attaches to the node its dataset already has (`contract_dataset`: by name or `dataset.table`,
alias, or `dataset.path` as the Spark listener names it); a `dataset.name` that is not that node's name is kept
as an alias of it, which `impact` and `diff --lineage` resolve. So is every identifier of a dataset's `symlinks`
facet: the Spark listener names a catalog table by its location and gives `db.table` only as a symlink.
A facet sent with `_deleted: true` (OpenLineage's deletion) clears what the store kept from it.

Bulk ingest (JSONL, thousands of events): one transaction per _BATCH events; rows gathered in memory and
written with multi-row INSERTs (runs as upserts, in arrival order); new fields numbered in memory while
the transaction holds the write lock; one `IN (...)` query per chunk of lines finds the digests already
stored, so a known line is not even parsed; ids come from bounded two-generation caches. Each event is
first turned into a plan (plain tuples, no ids: _plan_event), then written (LineageGraph._apply). A large
JSONL file is read, parsed, validated and planned in a second process (`_prepare_lines`) that streams plans
to this one over a pipe, so parsing and writing use two cores; the rows are the same as the serial path's.
"""

from __future__ import annotations

import gc
import json
import logging
import marshal
import os
import re
import sqlite3
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from hashlib import blake2b
from itertools import chain
from pathlib import Path
from sys import intern
from typing import Any, Iterable, Iterator

from dq_governance.errors import InputDataError

try:  # an optional fast JSON parser; a line it rejects is parsed again by json.loads, so results are identical
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - depends on the environment
    _fast_loads = None

log = logging.getLogger(__name__)

DEFAULT_DB = Path(".dqgov") / "lineage.db"
CONTRACT_FACET = "dqgov_dataContract"
#: the owners a contract last wrote, kept beside its node's contract identity (a later contract replaces
#: them; an event's owners it never does)
_OWNERS_KEY = "_owners_written"
QUALITY_STATUSES = ("passed", "warned", "failed")
EVENT_TYPES = ("START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER")
# A terminal state outranks START/RUNNING whatever the arrival order; OTHER never changes the state.
_STATE_RANK = {"OTHER": 0, "START": 1, "RUNNING": 1, "COMPLETE": 2, "ABORT": 2, "FAIL": 2}
_IN_CHUNK = 500  # ids per `IN (...)` query
_BATCH = 20_000  # events per transaction (fewer commits and WAL page rewrites; ~25 MB of queued rows at most)
_PARALLEL_MIN_BYTES = 8 << 20  # JSONL files from this size are parsed in a second process
_FRAME = struct.Struct(">cI")  # parser -> writer frames: kind (D data, E error, Z end), payload length
_CACHE_LIMIT = 100_000  # entries per generation of an id cache (see LineageGraph._bounded)
_MAX_REASONS_KEPT = 100

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS datasets (
  id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL,
  owners TEXT, owners_time REAL, tags TEXT, tags_time REAL,
  quality_status TEXT, quality_time REAL, contract TEXT, contract_time REAL,
  description TEXT, description_time REAL,
  UNIQUE (namespace, name));
CREATE INDEX IF NOT EXISTS datasets_name ON datasets (name);
CREATE TABLE IF NOT EXISTS fields (
  id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL, name TEXT NOT NULL, type TEXT,
  pii INTEGER NOT NULL DEFAULT 0, tags TEXT, tags_time REAL,
  UNIQUE (dataset_id, name));
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL, owners TEXT, owners_time REAL,
  UNIQUE (namespace, name));
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, job_id INTEGER, state TEXT, state_time REAL, start_time REAL, end_time REAL,
  parent_run_id TEXT) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS runs_job ON runs (job_id, state_time);
CREATE TABLE IF NOT EXISTS io (
  job_id INTEGER NOT NULL, dataset_id INTEGER NOT NULL, direction TEXT NOT NULL,
  PRIMARY KEY (job_id, direction, dataset_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS io_dataset ON io (dataset_id, direction, job_id);
CREATE TABLE IF NOT EXISTS field_edges (
  src INTEGER NOT NULL, dst INTEGER NOT NULL, job_id INTEGER NOT NULL, type TEXT NOT NULL, subtype TEXT NOT NULL,
  PRIMARY KEY (src, dst, job_id, type, subtype)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS field_edges_dst ON field_edges (dst);
CREATE TABLE IF NOT EXISTS dataset_deps (
  src INTEGER NOT NULL, dst_dataset INTEGER NOT NULL, job_id INTEGER NOT NULL, type TEXT NOT NULL,
  subtype TEXT NOT NULL, PRIMARY KEY (src, dst_dataset, job_id, type, subtype)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS dataset_deps_dst ON dataset_deps (dst_dataset);
CREATE TABLE IF NOT EXISTS column_lineage (
  job_id INTEGER NOT NULL, dataset_id INTEGER NOT NULL, PRIMARY KEY (job_id, dataset_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (digest BLOB PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dataset_aliases (
  namespace TEXT NOT NULL, name TEXT NOT NULL, dataset_id INTEGER NOT NULL, seen_time REAL,
  PRIMARY KEY (namespace, name)) WITHOUT ROWID;
"""
#: columns added to a table after stores were written without them: (table, column, its SQL type)
_ADDED_COLUMNS = (("dataset_aliases", "seen_time", "REAL"),)
# A contract's `dataset.name` that names another node (the one its `dataset.path` is, as the Spark listener
# names it) is kept in dataset_aliases, so `impact curated.orders` and `diff --lineage` reach that node; so are
# the identifiers of a `symlinks` facet (`default.crm_customers` for a table's warehouse path).


@dataclass(frozen=True)
class Attachment:
    """Where attach_contract put a contract: the dataset node, and whether the contract created it."""

    dataset_id: int
    namespace: str
    name: str
    created: bool


# The rank of a run's state in SQL, as _STATE_RANK: NULL (an OTHER event) ranks 0.
_RANK_SQL = "CASE {0} WHEN 'START' THEN 1 WHEN 'RUNNING' THEN 1 WHEN 'COMPLETE' THEN 2 WHEN 'ABORT' THEN 2 " \
            "WHEN 'FAIL' THEN 2 ELSE 0 END"
# A state is newer when it ranks higher, or ranks the same (not OTHER) with an eventTime at least as late.
_NEWER_SQL = (f"({_RANK_SQL.format('excluded.state')} > {_RANK_SQL.format('state')} OR "
              f"({_RANK_SQL.format('excluded.state')} = {_RANK_SQL.format('state')} AND excluded.state IS NOT NULL "
              f"AND (state_time IS NULL OR excluded.state_time >= state_time)))")

#: rows gathered per transaction, written in this order as (INSERT head, columns, tail) by _write_rows
_BATCHED = {
    "events": ("INSERT OR IGNORE INTO events (digest)", 1, ""),
    # One upsert per run event, in arrival order: SET expressions all read the row as it was before.
    "runs": ("INSERT INTO runs (run_id, job_id, state, state_time, start_time, end_time, parent_run_id)", 7,
             "ON CONFLICT (run_id) DO UPDATE SET "
             f"state = CASE WHEN {_NEWER_SQL} THEN excluded.state ELSE state END, "
             f"state_time = CASE WHEN {_NEWER_SQL} THEN excluded.state_time ELSE state_time END, "
             "start_time = CASE WHEN excluded.start_time IS NULL THEN start_time "
             "ELSE min(coalesce(start_time, excluded.start_time), excluded.start_time) END, "
             "end_time = CASE WHEN excluded.end_time IS NULL THEN end_time "
             "ELSE max(coalesce(end_time, excluded.end_time), excluded.end_time) END, "
             "parent_run_id = coalesce(parent_run_id, excluded.parent_run_id)"),
    "io": ("INSERT OR IGNORE INTO io (job_id, dataset_id, direction)", 3, ""),
    "column_lineage": ("INSERT OR IGNORE INTO column_lineage (job_id, dataset_id)", 2, ""),
    "field_edges": ("INSERT OR IGNORE INTO field_edges (src, dst, job_id, type, subtype)", 5, ""),
    "dataset_deps": ("INSERT OR IGNORE INTO dataset_deps (src, dst_dataset, job_id, type, subtype)", 5, ""),
    # A symlink names one node: the newest event (by eventTime) that carries it decides, so a moved table
    # follows its move whatever order the events are ingested in. A contract's alias (seen_time NULL) gives way.
    "dataset_aliases": ("INSERT INTO dataset_aliases (namespace, name, dataset_id, seen_time)", 4,
                        "ON CONFLICT (namespace, name) DO UPDATE SET dataset_id = excluded.dataset_id, "
                        "seen_time = excluded.seen_time WHERE seen_time IS NULL OR excluded.seen_time >= seen_time"),
}
_ROWS_PER_INSERT = 100  # multi-row VALUES: a third less CPU per row than executemany (7 x 100 < 999 parameters)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic GC during a bulk ingest: it allocates millions of acyclic tuples, and the collector's passes
    over them cost more than the ingest itself (a marshal.loads of a chunk: 4x slower with it on)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _write_rows(db: sqlite3.Connection, head: str, width: int, tail: str, rows: list[tuple]) -> None:
    """`head VALUES (..), (..) tail` for every row, in order: 100 rows a statement, the rest by executemany."""
    one = "(" + ", ".join("?" * width) + ")"
    whole = len(rows) - len(rows) % _ROWS_PER_INSERT
    if whole:
        sql = f"{head} VALUES {', '.join([one] * _ROWS_PER_INSERT)} {tail}"
        flat = chain.from_iterable
        for begin in range(0, whole, _ROWS_PER_INSERT):
            db.execute(sql, list(flat(rows[begin:begin + _ROWS_PER_INSERT])))
    if whole < len(rows):
        db.executemany(f"{head} VALUES {one} {tail}", rows[whole:])


@dataclass
class IngestStats:
    """What one ingest did: events read, stored, duplicates, and skipped with their reasons."""

    read: int = 0
    stored: int = 0
    duplicates: int = 0
    skipped: int = 0
    reasons: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)  # the first few skip messages, with their location

    def skip(self, where: str, reason: str) -> None:
        """Count a skipped event, keep its message (the first few), and log it at debug (the caller reports)."""
        self.skipped += 1
        self.reasons[reason.split(":", 1)[0]] += 1
        message = f"{where}: {reason}"
        if len(self.errors) < _MAX_REASONS_KEPT:
            self.errors.append(message)
        log.debug("skipped lineage event at %s", message)

    def merge(self, other: IngestStats) -> None:
        """Add another ingest's counts to this one."""
        self.read += other.read
        self.stored += other.stored
        self.duplicates += other.duplicates
        self.skipped += other.skipped
        self.reasons.update(other.reasons)
        self.errors.extend(other.errors[: max(0, _MAX_REASONS_KEPT - len(self.errors))])

    def as_dict(self) -> dict[str, Any]:
        """A JSON-friendly summary."""
        return {"read": self.read, "stored": self.stored, "duplicates": self.duplicates,
                "skipped": self.skipped, "reasons": dict(self.reasons), "errors": list(self.errors)}


class MalformedEvent(ValueError):
    """An event that does not have the OpenLineage shape the store needs."""


# --------------------------------------------------------------------------- validation

_FRACTION_RE = re.compile(r"\.(\d+)")
# From 3.11 fromisoformat reads "Z" and any number of fractional digits (truncated to microseconds), as below.
_FAST_ISO = sys.version_info >= (3, 11)


def parse_time(text: Any) -> float:
    """Epoch seconds of an ISO-8601 eventTime; a time without an offset is taken as UTC."""
    if not isinstance(text, str) or not text:
        raise MalformedEvent("eventTime: missing or not a string")
    if text[-1:] == "Z" and _FAST_ISO:  # the usual shape; Python >= 3.11 reads it as it is
        try:
            return datetime.fromisoformat(text).timestamp()
        except ValueError:
            pass
    value = text.strip().replace("Z", "+00:00").replace("z", "+00:00")
    # Python 3.10 accepts only 3 or 6 fractional digits; Java emits 1-9.
    value = _FRACTION_RE.sub(lambda m: "." + (m.group(1) + "000000")[:6], value, count=1)
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        raise MalformedEvent(f"eventTime: not ISO-8601: {text!r}") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return stamp.timestamp()


def _need_str(obj: dict, key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise MalformedEvent(f"{where}.{key}: missing or not a non-empty string")
    return value


def _need_dict(value: Any, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MalformedEvent(f"{where}: not an object")
    return value


def _is_name(value: Any) -> bool:
    return type(value) is str and value != ""


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def validate_event(event: Any) -> float:
    """Raise MalformedEvent naming the first field that breaks the OpenLineage shape we read; return eventTime."""
    # Locations are formatted only on failure: this runs for every event of a bulk ingest.
    if not isinstance(event, dict):
        raise MalformedEvent("event: not a JSON object")
    when = parse_time(event.get("eventTime"))
    event_type = event.get("eventType")
    if event_type is not None and event_type not in EVENT_TYPES:
        raise MalformedEvent(f"eventType: {event_type!r} is not one of {', '.join(EVENT_TYPES)}")
    if "dataset" in event and "job" not in event:  # a DatasetEvent
        _validate_dataset(event["dataset"], "dataset", None)
        return when
    job = event.get("job")
    if not isinstance(job, dict):
        raise MalformedEvent("job: missing or not an object")
    _need_str(job, "namespace", "job")
    _need_str(job, "name", "job")
    _need_dict(job.get("facets"), "job.facets")
    if "run" in event or event_type is not None:  # a RunEvent
        run = event.get("run")
        if not isinstance(run, dict):
            raise MalformedEvent("run: missing or not an object")
        _need_str(run, "runId", "run")
        if not _UUID.fullmatch(run["runId"]):  # the spec's `format: uuid`; a store keyed by a typo'd id splits runs
            raise MalformedEvent(f"run.runId: {run['runId']!r} is not a UUID")
        _need_dict(run.get("facets"), "run.facets")
    for side in ("inputs", "outputs"):
        items = event.get(side)
        if items is None:
            continue
        if not isinstance(items, list):
            raise MalformedEvent(f"{side}: not a list")
        for index, dataset in enumerate(items):
            _validate_dataset(dataset, side, index)
    return when


def _validate_dataset(dataset: Any, side: str, index: int | None) -> None:
    if type(dataset) is dict and _is_name(dataset.get("namespace")) and _is_name(dataset.get("name")):
        facets, input_facets, output_facets = dataset.get("facets"), dataset.get("inputFacets"), dataset.get("outputFacets")
        if ((facets is None or type(facets) is dict) and (input_facets is None or type(input_facets) is dict)
                and (output_facets is None or type(output_facets) is dict)):
            lineage = facets.get("columnLineage") if facets else None
            if lineage is not None:
                _validate_lineage(lineage, side, index)
            return
    where = side if index is None else f"{side}[{index}]"
    if not isinstance(dataset, dict):
        raise MalformedEvent(f"{where}: not an object")
    _need_str(dataset, "namespace", where)
    _need_str(dataset, "name", where)
    for key in ("facets", "inputFacets", "outputFacets"):
        _need_dict(dataset.get(key), f"{where}.{key}")
    lineage = (dataset.get("facets") or {}).get("columnLineage")  # a dict subclass lands here
    if lineage is not None:
        _validate_lineage(lineage, side, index)


def _validate_lineage(lineage: Any, side: str, index: int | None) -> None:
    if _lineage_ok(lineage):
        return
    here = f"{side}[{index}].facets.columnLineage" if index is not None else f"{side}.facets.columnLineage"
    lineage = _need_dict(lineage, here)
    fields_ = _need_dict(lineage.get("fields"), f"{here}.fields")
    for out_name, spec in fields_.items():
        if type(spec) is not dict:
            raise MalformedEvent(f"{here}.fields.{out_name}: not an object")
        items = spec.get("inputFields")
        if items is not None and not _input_fields_ok(items):
            _validate_input_fields(items, f"{here}.fields.{out_name}.inputFields")
    items = lineage.get("dataset")
    if items is not None and not _input_fields_ok(items):
        _validate_input_fields(items, f"{here}.dataset")


def _lineage_ok(lineage: Any) -> bool:
    """The fast check of a columnLineage facet, without building a location; False sends it to the slow one."""
    if type(lineage) is not dict:
        return False
    fields_ = lineage.get("fields")
    if fields_ is not None:
        if type(fields_) is not dict:
            return False
        for spec in fields_.values():
            if type(spec) is not dict:
                return False
            items = spec.get("inputFields")
            if items is not None and not _input_fields_ok(items):
                return False
    items = lineage.get("dataset")
    return items is None or _input_fields_ok(items)


def _input_fields_ok(items: Any) -> bool:
    """The fast check; on False the slow one finds and names the culprit."""
    if type(items) is not list:
        return False
    for item in items:
        if type(item) is not dict:
            return False
        namespace, name, field_ = item.get("namespace"), item.get("name"), item.get("field")
        if not (namespace and name and field_ and type(namespace) is str and type(name) is str
                and type(field_) is str):
            return False
        transformations = item.get("transformations")
        if transformations is not None:
            if type(transformations) is not list:
                return False
            for t in transformations:
                if type(t) is not dict:
                    return False
    return True


def _validate_input_fields(items: Any, where: str) -> None:
    if not isinstance(items, list):
        raise MalformedEvent(f"{where}: not a list")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise MalformedEvent(f"{where}[{index}]: not an object")
        for key in ("namespace", "name", "field"):
            _need_str(item, key, f"{where}[{index}]")
        transformations = item.get("transformations")
        if transformations is not None and not (
            isinstance(transformations, list) and all(isinstance(t, dict) for t in transformations)
        ):
            raise MalformedEvent(f"{where}[{index}].transformations: not a list of objects")


# --------------------------------------------------------------------------- facet readers


def quality_status(dataset: dict) -> str | None:
    """passed / warned / failed from our contract facet, else from dataQualityAssertions; None if neither."""
    facets = dataset.get("facets") or {}
    contract = _live(facets.get(CONTRACT_FACET))
    if str(contract.get("status", "")).lower() in QUALITY_STATUSES:
        return str(contract["status"]).lower()
    for container in (_obj(dataset.get("inputFacets")), facets):
        assertions = _live(container.get("dataQualityAssertions")).get("assertions")
        if isinstance(assertions, list) and assertions:
            failed = [a for a in assertions if isinstance(a, dict) and a.get("success") is False]
            if not failed:
                return "passed"
            return "warned" if all(str(a.get("severity", "error")).lower() == "warn" for a in failed) else "failed"
    return None


def _obj(value: Any) -> dict:
    """A facet (or part of one) as a dict; anything else reads as empty, so odd facets never stop an ingest."""
    return value if isinstance(value, dict) else {}


def _deleted(facet: Any) -> bool:
    """Whether a facet is OpenLineage's deletion of it (`_deleted: true`): it clears, it carries no content."""
    return type(facet) is dict and facet.get("_deleted") is True


def _live(facet: Any) -> dict:
    """A facet's content as a dict; a deleted or odd facet reads as empty."""
    return {} if _deleted(facet) else _obj(facet)


def _quality_cleared(dataset: dict) -> bool:
    """Whether the event deletes a facet the quality status is read from (then no status means: clear it)."""
    facets = dataset.get("facets") or {}
    return (_deleted(facets.get(CONTRACT_FACET)) or _deleted(facets.get("dataQualityAssertions"))
            or _deleted(_obj(dataset.get("inputFacets")).get("dataQualityAssertions")))


def _symlinks(facet: Any, own: tuple[str, str]) -> tuple[tuple[str, str], ...] | None:
    """The (namespace, name) identifiers of a `symlinks` facet other than the dataset's own; None without any."""
    found = []
    for item in _live(facet).get("identifiers") or ():
        if type(item) is dict and _is_name(item.get("namespace")) and _is_name(item.get("name")):
            key = (item["namespace"], item["name"])
            if key != own and key not in found:
                found.append(key)
    return tuple(found) or None


def _strip_meta(facet: dict) -> dict:
    return {k: v for k, v in facet.items() if not k.startswith("_")}


def _flatten_schema(fields_: Any, prefix: str = "") -> list[tuple[str, str | None]]:
    """(dotted path, type) of every schema field, nested struct fields included."""
    out: list[tuple[str, str | None]] = []
    if not isinstance(fields_, list):
        return out
    for item in fields_:
        if isinstance(item, dict):
            name = item.get("name")
            if isinstance(name, str):
                path = prefix + name if prefix else name
                type_ = item.get("type")
                out.append((path, type_ if isinstance(type_, str) else None))
                if item.get("fields"):
                    out.extend(_flatten_schema(item["fields"], path + "."))
    return out


def _shared_schema(fields_: Any) -> tuple[tuple[str, str | None], ...]:
    """_flatten_schema as a tuple, one shared object per distinct schema (a dataset's schema comes back on every
    run): a plan holds a reference, and marshal sends a schema once per chunk, not once per event."""
    schema = tuple(_flatten_schema(fields_))
    shared = _SCHEMAS.setdefault(schema, schema)
    if len(_SCHEMAS) > _SCHEMAS_KEPT:
        _SCHEMAS.clear()
    return shared


_SCHEMAS: dict[tuple, tuple] = {}
_SCHEMAS_KEPT = 2_000
_NO_KIND = (("", ""),)
_SINGLE_KINDS: dict[tuple[str, str], tuple[tuple[str, str]]] = {}
#: the dataset facets whose latest value is kept per dataset (read by _plan_dataset and quality_status)
_KEPT_FACETS = frozenset(("ownership", "tags", CONTRACT_FACET, "dataQualityAssertions", "documentation"))
_CLEARED = ""  # a job owners value in a plan: the ownership facet was deleted (written as NULL)


def _edge_kinds(item: dict) -> tuple[tuple[str, str], ...] | list[tuple[str, str]]:
    """(type, subtype) pairs of an input field; '' where the producer gave none."""
    transformations = item.get("transformations")
    if not transformations:
        return _NO_KIND
    if len(transformations) == 1:  # the common case, without building a list per edge
        t = transformations[0]
        kind, sub = t.get("type"), t.get("subtype")
        if type(kind) is str and type(sub) is str:
            # one shared tuple per pair: fewer objects to build, and marshal sends it once per chunk
            kinds = _SINGLE_KINDS.get((kind, sub))
            if kinds is None:
                kinds = ((kind.upper(), sub.upper()),)
                if len(_SINGLE_KINDS) < _CACHE_LIMIT:
                    _SINGLE_KINDS[(kind, sub)] = kinds
            return kinds
    return [(str(t.get("type") or "").upper(), str(t.get("subtype") or "").upper()) for t in transformations]


# --------------------------------------------------------------------------- event plans
# An event's writes as plain tuples of str/float/None, with no ids and no database: built from a validated
# event by _plan_event (in this process, or in the parser process of a parallel ingest, which sends them
# marshalled), and written by LineageGraph._apply_plans: the datasets and jobs of a chunk's plans get their
# ids first (numbered in order of first appearance), then each plan is applied in order (fields numbered as
# met). Both ingest paths go through the same two steps, so they store the same rows, ids included.
#   DatasetEvent: (when, dataset, keys)
#   RunEvent / JobEvent: (when, job namespace, job name, job owners JSON | None, run | None, inputs, outputs, keys)
#   keys: the (namespace, name) of every dataset the event names, in order of first appearance; a dataset
#         is referred to by its index in them
#   dataset: (key index, schema [(path, type)] | None, field tags [(field, tags JSON, pii)] | None,
#             updates [(datasets column, value; None clears it)] | None, symlinks [(namespace, name)] | None)
#   run: (runId, state | None, state time | None, start time | None, end time | None, parent runId | None)
#   outputs: [(dataset, column lineage | None)]; column lineage: ([(output field, [input])], [input]) where
#   an input is (key index, field, ((type, subtype), ...))


def _plan_event(event: dict, when: float) -> tuple:
    """The writes of one validated event, as plain tuples (see above)."""
    keys: dict[tuple[str, str], int] = {}  # (namespace, name) -> its index in the plan's dataset keys
    if "dataset" in event and "job" not in event:
        return (when, _plan_dataset(event["dataset"], keys), tuple(keys))
    job = event["job"]
    job_owners = None
    job_facets = job.get("facets")
    if job_facets:
        ownership = job_facets.get("ownership")
        owners = _obj(ownership).get("owners")
        if _deleted(ownership):
            job_owners = _CLEARED
        elif isinstance(owners, list):
            job_owners = json.dumps(_owner_names(owners))
    run = event.get("run")
    run_plan = None
    if isinstance(run, dict):
        state = event.get("eventType") or "OTHER"
        facets = run.get("facets")
        parent = _obj(_obj(facets.get("parent")).get("run")).get("runId") if facets else None
        other = state == "OTHER"
        run_plan = (run["runId"], None if other else state, None if other else when,
                    when if state == "START" else None, when if _STATE_RANK.get(state) == 2 else None,
                    parent if isinstance(parent, str) else None)
    inputs = [_plan_dataset(dataset, keys) for dataset in event.get("inputs") or ()]
    outputs = []
    for dataset in event.get("outputs") or ():
        planned = _plan_dataset(dataset, keys)
        facets = dataset.get("facets")
        lineage = facets.get("columnLineage") if facets else None
        outputs.append((planned, _plan_lineage(lineage, keys) if isinstance(lineage, dict) else None))
    return (when, job["namespace"], job["name"], job_owners, run_plan, inputs, outputs, tuple(keys))


def _plan_dataset(dataset: dict, keys: dict[tuple[str, str], int]) -> tuple:
    """A dataset's key index, schema fields, field tags, the kept facets that change its row, and its symlinks."""
    key = (dataset["namespace"], dataset["name"])
    index = keys.setdefault(key, len(keys))
    facets = dataset.get("facets")
    if not facets and not dataset.get("inputFacets"):
        return (index, None, None, None, None)
    facets = facets or {}
    schema_fields = _obj(facets.get("schema")).get("fields")
    schema = _shared_schema(schema_fields) if schema_fields else None
    symlinks = _symlinks(facets["symlinks"], key) if "symlinks" in facets else None
    if facets.keys().isdisjoint(_KEPT_FACETS) and not dataset.get("inputFacets"):
        return (index, schema, None, None, symlinks)  # e.g. only schema, columnLineage and symlinks
    updates: list[tuple[str, Any]] = []
    field_tags = None
    # A deleted facet writes NULL to its column (under the same latest-by-eventTime rule as content).
    ownership, tags_facet, documentation = facets.get("ownership"), facets.get("tags"), facets.get("documentation")
    owners = _obj(ownership).get("owners")
    if _deleted(ownership):
        updates.append(("owners", None))
    elif isinstance(owners, list):
        updates.append(("owners", json.dumps(_owner_names(owners))))
    tags = _obj(tags_facet).get("tags")
    if _deleted(tags_facet):
        updates.append(("tags", None))
    elif isinstance(tags, list):
        dataset_tags, field_tags = _split_tags(tags)
        updates.append(("tags", json.dumps(dataset_tags)))
    status = quality_status(dataset)
    if status or _quality_cleared(dataset):
        updates.append(("quality_status", status))
    contract = facets.get(CONTRACT_FACET)
    if _deleted(contract):
        updates.append(("contract", None))
    elif isinstance(contract, dict):
        updates.append(("contract", json.dumps(_strip_meta(contract), sort_keys=True)))
    description = _obj(documentation).get("description")
    if _deleted(documentation):
        updates.append(("description", None))
    elif isinstance(description, str):
        updates.append(("description", description))
    return (index, schema, field_tags, updates, symlinks)


def _split_tags(tags: list) -> tuple[list[dict], list[tuple[str, str, int]]]:
    """Dataset tags, and per field (name, tags JSON, pii) where pii = a `pii` tag with a true value."""
    dataset_tags: list[dict] = []
    by_field: dict[str, list[dict]] = {}
    for tag in tags:
        if not isinstance(tag, dict) or not isinstance(tag.get("key"), str):
            continue
        item = {"key": tag["key"], "value": str(tag.get("value", ""))}
        if isinstance(tag.get("field"), str) and tag["field"]:
            by_field.setdefault(tag["field"], []).append(item)
        else:
            dataset_tags.append(item)
    field_tags = [(name, json.dumps(items),
                   int(any(t["key"].lower() == "pii" and t["value"].lower() in ("true", "1", "yes") for t in items)))
                  for name, items in by_field.items()]
    return dataset_tags, field_tags


def _plan_lineage(lineage: dict, keys: dict[tuple[str, str], int]) -> tuple:
    """A validated columnLineage facet as (output fields with their inputs, inputs affecting the whole dataset)."""
    def planned(item: dict) -> tuple:  # interned names: marshal sends a repeated one once per chunk
        return (keys.setdefault((item["namespace"], item["name"]), len(keys)), intern(item["field"]), _edge_kinds(item))

    return ([(intern(out_name), [planned(item) for item in spec.get("inputFields") or ()])
             for out_name, spec in (lineage.get("fields") or {}).items()],
            [planned(item) for item in lineage.get("dataset") or ()])

# --------------------------------------------------------------------------- the store


class LineageGraph:
    """A lineage graph in one SQLite file; open it, ingest events, query neighbours."""

    def __init__(self, path: str | Path = DEFAULT_DB, *, create: bool = True):
        self.path = Path(path)
        if not create and not self.path.exists():
            raise InputDataError(f"{self.path}: lineage store not found (run `dqgov lineage ingest` first)")
        try:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise InputDataError(f"{self.path}: cannot open the lineage store: {_reason(exc)}") from None
        try:
            # Nothing is written before the file is known to be ours: another application's SQLite file
            # must not get our tables (nor WAL mode). A new, empty file is ours only when creating.
            tables = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "meta" not in tables and (tables or not create):
                raise InputDataError(f"{self.path}: not a lineage store (no `meta` table; "
                                     "`dqgov lineage ingest --db` writes one)")
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA cache_size=-65536")  # 64 MiB page cache at most
            self.db.execute("PRAGMA temp_store=MEMORY")
            self.db.executescript(_SCHEMA)
            for table, column, kind in _ADDED_COLUMNS:
                if column not in {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise InputDataError(f"{self.path}: not a lineage store: {_reason(exc)}") from None
        except BaseException:
            self.db.close()
            raise
        self._dataset_ids: dict[tuple[str, str], int] = {}
        self._dataset_ids_old: dict[tuple[str, str], int] = {}
        self._field_ids: dict[tuple[int, str], int] = {}
        self._field_ids_old: dict[tuple[int, str], int] = {}
        self._job_ids: dict[tuple[str, str], int] = {}
        self._job_ids_old: dict[tuple[str, str], int] = {}
        self._field_types: dict[int, str] = {}  # last type written per field, to skip unchanged updates
        self._field_types_old: dict[int, str] = {}
        self._fresh: set[int] = set()  # datasets created in the open transaction
        self._seen: set[bytes] = set()  # digests of the events stored in the open transaction
        self._next_field: int | None = None  # the next field id, while this connection holds the write lock
        self._new_fields: list[tuple[int, int, str, str | None]] = []
        self._retyped: list[tuple[str, int]] = []
        self._rows: dict[str, list[tuple]] = {table: [] for table in _BATCHED}

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def __enter__(self) -> LineageGraph:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- ids ---------------------------------------------------------------
    # Each id cache is two generations of dicts: a hit in the old one is promoted to the young one, and at a
    # commit a young one past _CACHE_LIMIT becomes the old one (the previous old one is dropped). Memory stays
    # bounded (2 x _CACHE_LIMIT entries per cache) while recently used ids stay cached, unlike a plain clear.
    def _bounded(self) -> None:
        if len(self._dataset_ids) > _CACHE_LIMIT:
            self._dataset_ids_old, self._dataset_ids = self._dataset_ids, {}
        if len(self._field_ids) > _CACHE_LIMIT:
            self._field_ids_old, self._field_ids = self._field_ids, {}
        if len(self._job_ids) > _CACHE_LIMIT:
            self._job_ids_old, self._job_ids = self._job_ids, {}
        if len(self._field_types) > _CACHE_LIMIT:
            self._field_types_old, self._field_types = self._field_types, {}

    def _forget(self) -> None:
        """Drop every cache and pending row (after a rollback nothing cached can be trusted)."""
        for cache in (self._dataset_ids, self._dataset_ids_old, self._field_ids, self._field_ids_old,
                      self._job_ids, self._job_ids_old, self._field_types, self._field_types_old, self._fresh,
                      self._seen):
            cache.clear()
        for rows in (self._new_fields, self._retyped, *self._rows.values()):
            rows.clear()
        self._next_field = None

    def _begin(self) -> None:
        """Take the write lock; from here on this connection alone writes, so it may number new fields itself."""
        self.db.execute("BEGIN IMMEDIATE")  # take the write lock now: a second writer waits, never fails late
        self._next_field = self.db.execute("SELECT coalesce(max(id), 0) + 1 FROM fields").fetchone()[0]
        self._fresh.clear()

    def _commit(self) -> None:
        """Write what is pending and commit."""
        self._flush()
        self.db.execute("COMMIT")
        self._next_field = None
        self._fresh.clear()
        self._bounded()

    def _rollback(self) -> None:
        self.db.execute("ROLLBACK")
        self._forget()

    def dataset_id(self, namespace: str, name: str) -> int:
        """The id of a dataset, created when new."""
        key = (namespace, name)
        found = self._dataset_ids.get(key)
        if found is None:
            found = self._dataset_ids_old.get(key)
            if found is None:
                cur = self.db.execute("INSERT OR IGNORE INTO datasets (namespace, name) VALUES (?, ?)", key)
                if cur.rowcount:
                    found = cur.lastrowid
                    self._fresh.add(found)  # created in this transaction: it has no field yet but ours
                else:
                    found = self.db.execute("SELECT id FROM datasets WHERE namespace = ? AND name = ?",
                                            key).fetchone()[0]
            self._dataset_ids[key] = found
        return found

    def field_id(self, dataset_id: int, name: str) -> int:
        """The id of a field of a dataset, created when new."""
        key = (dataset_id, name)
        found = self._field_ids.get(key)
        if found is None:
            found = self._field_ids_old.get(key)
            if found is None:
                if self._next_field is None:  # outside an ingest transaction
                    cur = self.db.execute("INSERT OR IGNORE INTO fields (dataset_id, name) VALUES (?, ?)", key)
                    found = cur.lastrowid if cur.rowcount else self.db.execute(
                        "SELECT id FROM fields WHERE dataset_id = ? AND name = ?", key).fetchone()[0]
                else:
                    row = None if dataset_id in self._fresh else self.db.execute(
                        "SELECT id FROM fields WHERE dataset_id = ? AND name = ?", key).fetchone()
                    found = row[0] if row else self._add_field(dataset_id, name, None)
            self._field_ids[key] = found
        return found

    def _add_field(self, dataset_id: int, name: str, type_: str | None) -> int:
        """Number a new field and queue its row (written in the batch's executemany, before any field update)."""
        field_id = self._next_field
        self._next_field = field_id + 1
        self._new_fields.append((field_id, dataset_id, name, type_))
        if type_:
            self._field_types[field_id] = type_
        return field_id

    def _flush_fields(self) -> None:
        """Write queued field rows and retypes, in order (an UPDATE of a field must see its row)."""
        if self._new_fields:
            _write_rows(self.db, "INSERT INTO fields (id, dataset_id, name, type)", 4, "", self._new_fields)
            self._new_fields.clear()
        if self._retyped:
            self.db.executemany("UPDATE fields SET type = ? WHERE id = ?", self._retyped)
            self._retyped.clear()

    def _schema_fields(self, dataset_id: int, fields_: list[tuple[str, str | None]]) -> None:
        """Create or retype the fields of a schema facet; a known dataset's unseen fields cost one SELECT."""
        ids, old_ids, types, old_types = self._field_ids, self._field_ids_old, self._field_types, self._field_types_old
        if dataset_id in self._fresh:  # created in this transaction: every field not cached is new
            next_id, new = self._next_field, self._new_fields
            for path, type_ in fields_:
                key = (dataset_id, path)
                field_id = ids.get(key)
                if field_id is None:
                    ids[key] = next_id
                    new.append((next_id, dataset_id, path, type_))
                    if type_:
                        types[next_id] = type_
                    next_id += 1
                elif type_ and types.get(field_id) != type_:
                    self._retyped.append((type_, field_id))
                    types[field_id] = type_
            self._next_field = next_id
            return
        missing = []
        for path, type_ in fields_:
            key = (dataset_id, path)
            field_id = ids.get(key)
            if field_id is None:
                field_id = old_ids.get(key)
                if field_id is None:
                    missing.append((path, type_))
                    continue
                ids[key] = field_id
            if type_ and types.get(field_id, old_types.get(field_id)) != type_:
                self._retyped.append((type_, field_id))
                types[field_id] = type_
        if not missing:
            return
        known = {} if dataset_id in self._fresh else {
            name: (field_id, type_) for field_id, name, type_ in self.db.execute(
                "SELECT id, name, type FROM fields WHERE dataset_id = ?", (dataset_id,))}
        for path, type_ in missing:
            found = known.get(path)
            if found is None:
                ids[(dataset_id, path)] = self._add_field(dataset_id, path, type_)
                continue
            field_id, old_type = found
            ids[(dataset_id, path)] = field_id
            if type_ and old_type != type_:  # the field existed with another type
                self._retyped.append((type_, field_id))
                old_type = type_
            if old_type:
                types[field_id] = old_type

    def job_id(self, namespace: str, name: str) -> int:
        """The id of a job, created when new."""
        key = (namespace, name)
        found = self._job_ids.get(key)
        if found is None:
            found = self._job_ids_old.get(key)
            if found is None:
                cur = self.db.execute("INSERT OR IGNORE INTO jobs (namespace, name) VALUES (?, ?)", key)
                found = cur.lastrowid if cur.rowcount else self.db.execute(
                    "SELECT id FROM jobs WHERE namespace = ? AND name = ?", key).fetchone()[0]
            self._job_ids[key] = found
        return found

    # -- ingest ------------------------------------------------------------
    def ingest_events(self, events: Iterable[tuple[str, Any]], *, batch: int = _BATCH) -> IngestStats:
        """Store (location, event) pairs in transactions of `batch` events; skip and count bad ones."""
        return self._ingest(((where, event, None) for where, event in events), batch)

    def ingest_event(self, event: Any, where: str = "event") -> IngestStats:
        """Store one event (dict)."""
        return self.ingest_events([(where, event)])

    def ingest_file(self, path: str | Path, *, parallel: bool | None = None) -> IngestStats:
        """Ingest an OpenLineage JSONL file (one event per line), or a JSON file holding a list of events.

        `parallel` (default: a JSONL file of at least _PARALLEL_MIN_BYTES on a machine with 2+ CPUs) parses
        in a second process while this one writes; the store ends the same either way.
        """
        path = Path(path)
        try:
            handle = path.open("rb")
        except OSError as exc:
            raise InputDataError(f"{path}: cannot read lineage file: {exc.strerror}") from None
        with handle, _gc_paused():
            if path.suffix != ".json":
                if parallel is None:
                    parallel = (os.cpu_count() or 1) > 1 and os.fstat(handle.fileno()).st_size >= _PARALLEL_MIN_BYTES
                if parallel and sys.executable:  # an embedded interpreter has no executable to start: serial
                    return self._ingest_parallel(path)
            return self._ingest(_read_events(path, handle), _BATCH)

    def _ingest_parallel(self, path: Path) -> IngestStats:
        """A JSONL file through a parser process (_prepare_lines) feeding this writer over a pipe.

        The parser reads, hashes, parses, validates and plans every line, in order, and sends frames of
        _IN_CHUNK (line number, digest, plan or skip reason); this process does what the serial path does
        after its parse: the duplicate check, ids and rows, the same transactions. A full pipe blocks the
        parser, so at most a pipe buffer and a chunk or two are in flight.
        """
        package_root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        with tempfile.TemporaryFile() as errors:
            parser = subprocess.Popen(
                [sys.executable, "-c", "import sys; from dq_governance.lineage.graph import _prepare_lines; "
                 "_prepare_lines(sys.argv[1], int(sys.argv[2]))", str(path), str(_IN_CHUNK)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors, env=env)
            try:
                return self._ingest_frames(path, parser.stdout, parser, errors)
            finally:
                if parser.poll() is None:
                    parser.kill()  # only on an error: after its end frame the parser exits by itself
                parser.stdout.close()
                parser.wait()

    def _ingest_frames(self, path: Path, pipe: Any, parser: subprocess.Popen, errors: Any) -> IngestStats:
        """Apply the parser's frames in order, one transaction per _BATCH events (as _ingest)."""
        stats = IngestStats()
        pending = 0
        self._begin()
        try:
            while True:
                header = pipe.read(_FRAME.size)
                if len(header) < _FRAME.size:
                    parser.wait()
                    errors.seek(0)
                    last = errors.read().decode(errors="replace").strip().splitlines()[-1:]
                    raise InputDataError(f"{path}: the lineage parser process stopped (exit code "
                                         f"{parser.returncode}){': ' + last[0] if last else ''}")
                kind, length = _FRAME.unpack(header)
                payload = pipe.read(length)
                if kind == b"Z":
                    break
                if kind == b"E":
                    raise InputDataError(f"{path}: {payload.decode()}")
                if kind != b"D" or len(payload) != length:
                    raise InputDataError(f"{path}: unexpected output from the lineage parser process")
                items = marshal.loads(payload)
                self._apply_chunk(path, items, stats)
                pending += len(items)
                if pending >= _BATCH:
                    self._commit()
                    self._begin()
                    pending = 0
            self._commit()
        except BaseException:
            self._rollback()
            raise
        return stats

    def _apply_chunk(self, path: Path, items: list[tuple[int, bytes, Any]], stats: IngestStats) -> None:
        """(line number, digest, plan or skip reason) from the parser process: as _ingest_chunk after its parse."""
        stats.read += len(items)
        known = {row[0] for row in self.db.execute(
            f"SELECT digest FROM events WHERE digest IN ({','.join('?' * len(items))})", [i[1] for i in items])}
        seen, queued, plans = self._seen, self._rows["events"], []
        for number, digest, plan in items:
            if digest in known or digest in seen:
                stats.duplicates += 1
                continue
            if type(plan) is str:
                stats.skip(f"{path}:{number}", plan)
                continue
            seen.add(digest)
            queued.append((digest,))
            plans.append(plan)
        stats.stored += len(plans)
        self._apply_plans(plans)

    def _ingest(self, items: Iterable[tuple[str, Any, bytes | None]], batch: int) -> IngestStats:
        """(location, event, raw JSONL line) -> the store, one transaction per batch; see _ingest_chunk."""
        stats = IngestStats()
        pending = 0
        size = max(1, min(batch, _IN_CHUNK))
        chunk: list[tuple[str, Any, bytes | None]] = []
        self._begin()
        try:
            for item in items:
                chunk.append(item)
                if len(chunk) >= size:
                    self._ingest_chunk(chunk, stats)
                    pending += len(chunk)
                    chunk = []
                    if pending >= batch:
                        self._commit()
                        self._begin()
                        pending = 0
            self._ingest_chunk(chunk, stats)
            self._commit()
        except BaseException:
            self._rollback()
            raise
        return stats

    def _ingest_chunk(self, chunk: list[tuple[str, Any, bytes | None]], stats: IngestStats) -> None:
        """Store a chunk of events in order; an event whose digest the store already has is a duplicate.

        Writes are idempotent on their own (upserts, unions, latest-by-time); the digest only spares work and
        counts duplicates. A raw JSONL line (event None) is hashed as read, and parsed only when it is new, so
        a chunk holds bytes, not parsed events; a dict is validated, then hashed in canonical form. One IN (...)
        query per chunk asks which digests the store already has.
        """
        if not chunk:
            return
        skip = stats.skip
        work: list[tuple[str, Any, bytes | None, bytes, float | None]] = []
        for where, event, raw in chunk:
            stats.read += 1
            if raw is not None:
                work.append((where, event, raw, blake2b(raw, digest_size=16).digest(), None))
            elif isinstance(event, MalformedEvent):
                skip(where, str(event))
            else:
                try:
                    when = validate_event(event)
                except MalformedEvent as exc:
                    skip(where, str(exc))
                    continue
                text = json.dumps(event, sort_keys=True, separators=(",", ":")).encode()
                try:
                    _refuse_lone_surrogates(event, text)
                except MalformedEvent as exc:
                    skip(where, str(exc))
                    continue
                work.append((where, event, None, blake2b(text, digest_size=16).digest(), when))
        if not work:
            return
        known = {row[0] for row in self.db.execute(
            f"SELECT digest FROM events WHERE digest IN ({','.join('?' * len(work))})", [w[3] for w in work])}
        seen, queued, plans = self._seen, self._rows["events"], []
        for where, event, raw, digest, when in work:
            if digest in known or digest in seen:
                stats.duplicates += 1
                continue
            if when is None:
                try:
                    if event is None:
                        event = _parse_line(raw)
                    when = validate_event(event)
                except MalformedEvent as exc:
                    skip(where, str(exc))
                    continue
            seen.add(digest)
            queued.append((digest,))
            plans.append(_plan_event(event, when))
        stats.stored += len(plans)
        self._apply_plans(plans)

    def _flush(self) -> None:
        """Write the rows gathered in this transaction: fields first, then one executemany per table."""
        self._flush_fields()
        for table, (head, width, tail) in _BATCHED.items():
            rows = self._rows[table]
            if rows:
                self._rows[table] = []
                if table == "io":
                    rows = list(dict.fromkeys(rows))  # a START and its COMPLETE name the same datasets
                elif table == "dataset_aliases":  # every run repeats them; per name the newest (then the last)
                    newest: dict[tuple, tuple] = {}
                    for row in rows:
                        kept = newest.get(row[:2])
                        if kept is None or row[3] >= kept[3]:
                            newest[row[:2]] = row
                    rows = list(newest.values())
                elif table == "events":
                    rows.sort()  # random digests: in key order each B-tree page is visited once
                    self._seen.clear()
                _write_rows(self.db, head, width, tail, rows)
                if table == "dataset_aliases":
                    self._adopt_contract_nodes(rows)

    def _adopt_contract_nodes(self, aliases: list[tuple]) -> None:
        """A symlink naming a node that only a contract made (ingested before any event named the table): its
        owners, contract and field types and PII move to the node the symlink names, and it goes, so the answer
        does not depend on the order of ingest."""
        for namespace, name, dataset_id, _ in aliases:
            # in the symlink's namespace, or in `file`: a contract that declares no namespace (as contract_dataset)
            stale = self.db.execute("SELECT id, owners, contract, namespace FROM datasets WHERE name = ? AND "
                                    "namespace IN (?, 'file') AND id != ? AND contract IS NOT NULL ORDER BY "
                                    "namespace = ? DESC", (name, namespace, dataset_id, namespace)).fetchone()
            if stale is None or self.has_lineage(stale[0]):
                continue
            namespace = stale[3]
            self.db.execute("UPDATE datasets SET owners = coalesce(nullif(owners, '[]'), ?), contract = "
                            "coalesce(contract, ?) WHERE id = ?", (stale[1], stale[2], dataset_id))
            moved = self.db.execute("SELECT name, type, pii FROM fields WHERE dataset_id = ?", (stale[0],)).fetchall()
            field_ids = [self.field_id(dataset_id, field_name) for field_name, _, _ in moved]
            self._flush_fields()  # the UPDATEs below must see rows still queued
            for field_id, (_, field_type, pii) in zip(field_ids, moved):
                self.db.execute("UPDATE fields SET type = coalesce(type, ?), pii = max(pii, ?) WHERE id = ?",
                                (field_type, pii, field_id))
            self.db.execute("DELETE FROM fields WHERE dataset_id = ?", (stale[0],))
            self.db.execute("DELETE FROM datasets WHERE id = ?", (stale[0],))
            self.db.execute("UPDATE dataset_aliases SET dataset_id = ? WHERE dataset_id = ?", (dataset_id, stale[0]))
            for cache in (self._dataset_ids, self._dataset_ids_old):
                cache.pop((namespace, name), None)
            self._field_ids.clear()
            self._field_ids_old.clear()

    def _apply_plans(self, plans: list[tuple]) -> None:
        """Write the plans of new events in order, their datasets and jobs looked up (or created) first."""
        if not plans:
            return
        # Ids for every dataset and job of the chunk at once, numbered in order of first appearance: one
        # query finds the stored ones, one multi-row INSERT adds the new ones (not one statement each).
        self._preload("datasets", self._dataset_ids, self._dataset_ids_old,
                      dict.fromkeys(chain.from_iterable([plan[-1] for plan in plans])))
        self._preload("jobs", self._job_ids, self._job_ids_old,
                      dict.fromkeys([(plan[1], plan[2]) for plan in plans if len(plan) == 8]))
        apply = self._apply
        for plan in plans:
            apply(plan)

    def _preload(self, table: str, cache: dict, old: dict, keys: Iterable[tuple[str, str]]) -> None:
        """Put the ids of these (namespace, name) keys of `table` in `cache`, adding rows for new ones."""
        missing = []
        for key in keys:
            if key not in cache:
                found = old.get(key)
                if found is None:
                    missing.append(key)
                else:
                    cache[key] = found
        if not missing:
            return
        for begin in range(0, len(missing), _IN_CHUNK):
            part = missing[begin:begin + _IN_CHUNK]
            values = ", ".join(["(?, ?)"] * len(part))
            for found, namespace, name in self.db.execute(
                    f"SELECT t.id, t.namespace, t.name FROM (VALUES {values}) AS v JOIN {table} t "
                    "ON t.namespace = v.column1 AND t.name = v.column2", list(chain.from_iterable(part))):
                cache[(namespace, name)] = found
        new = [key for key in missing if key not in cache]
        if not new:
            return
        first = self.db.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {table}").fetchone()[0]
        rows = []
        for found, key in enumerate(new, first):
            cache[key] = found
            rows.append((found, key[0], key[1]))
        _write_rows(self.db, f"INSERT INTO {table} (id, namespace, name)", 3, "", rows)
        if table == "datasets":
            self._fresh.update(range(first, first + len(new)))  # no field yet but those this transaction adds

    def _apply(self, plan: tuple) -> None:
        """Write one event's plan (see _plan_event); its datasets and job are in the id caches (_apply_plans)."""
        when, dataset_cache = plan[0], self._dataset_ids
        if len(plan) == 3:  # a DatasetEvent
            self._apply_dataset(plan[1], when, [dataset_cache[key] for key in plan[2]])
            return
        _, job_namespace, job_name, job_owners, run, inputs, outputs, keys = plan
        ids = [dataset_cache[key] for key in keys]
        job_id = self._job_ids[(job_namespace, job_name)]
        if job_owners is not None:
            self.db.execute(
                "UPDATE jobs SET owners = ?, owners_time = ? WHERE id = ? AND (owners_time IS NULL OR owners_time <= ?)",
                (job_owners or None, when, job_id, when))  # _CLEARED ("") is NULL
        if run is not None:
            self._rows["runs"].append((run[0], job_id, run[1], run[2], run[3], run[4], run[5]))
        io_rows = self._rows["io"]
        apply_dataset = self._apply_dataset
        for dataset in inputs:
            io_rows.append((job_id, apply_dataset(dataset, when, ids), "in"))
        for dataset, lineage in outputs:
            dataset_id = apply_dataset(dataset, when, ids)
            io_rows.append((job_id, dataset_id, "out"))
            if lineage is not None:
                self._apply_column_lineage(lineage, job_id, dataset_id, ids)

    def _apply_dataset(self, plan: tuple, when: float, ids: list[int]) -> int:
        """A dataset's id; its schema fields, field tags and kept facets written (latest by eventTime), its
        symlinks queued as aliases of it."""
        index, schema, field_tags, updates, symlinks = plan
        dataset_id = ids[index]
        if symlinks:
            aliases = self._rows["dataset_aliases"]
            for namespace, name in symlinks:
                aliases.append((namespace, name, dataset_id, when))
        if schema:
            self._schema_fields(dataset_id, schema)
        if field_tags:
            field_ids = [self.field_id(dataset_id, field_name) for field_name, _, _ in field_tags]
            self._flush_fields()  # the UPDATEs below must see rows still queued
            for (_, items, pii), field_id in zip(field_tags, field_ids):
                self.db.execute(
                    "UPDATE fields SET tags = ?, pii = ?, tags_time = ? WHERE id = ? AND (tags_time IS NULL OR tags_time <= ?)",
                    (items, pii, when, field_id, when))
        if updates:
            for column, value in updates:
                # latest by eventTime: an older event arriving late leaves the newer facet alone
                time_column = "owners_time" if column == "owners" else f"{column.split('_')[0]}_time"
                self.db.execute(
                    f"UPDATE datasets SET {column} = ?, {time_column} = ? "
                    f"WHERE id = ? AND ({time_column} IS NULL OR {time_column} <= ?)",
                    (value, when, dataset_id, when))
        return dataset_id

    def _apply_column_lineage(self, lineage: tuple, job_id: int, dataset_id: int, ids: list[int]) -> None:
        rows = self._rows
        rows["column_lineage"].append((job_id, dataset_id))
        # The hot loop of a bulk ingest: cached ids are read inline, the method only runs on a miss.
        fields_ids, field_id = self._field_ids, self.field_id
        edges = rows["field_edges"]
        out_fields, dataset_inputs = lineage
        for out_name, items in out_fields:
            dst = fields_ids.get((dataset_id, out_name)) or field_id(dataset_id, out_name)
            for index, field_name, kinds in items:
                src_dataset = ids[index]
                src = fields_ids.get((src_dataset, field_name)) or field_id(src_dataset, field_name)
                for kind, sub in kinds:
                    edges.append((src, dst, job_id, kind, sub))
        deps = rows["dataset_deps"]
        for index, field_name, kinds in dataset_inputs:
            src = field_id(ids[index], field_name)
            for kind, sub in kinds:
                deps.append((src, dataset_id, job_id, kind, sub))

    # -- contracts ---------------------------------------------------------
    def contract_dataset(self, contract: Any, base_dir: str | Path | None = None) -> tuple[int, str, str] | None:
        """(id, namespace, name) of the node a contract describes, or None when no node matches.

        Tried in order, for `dataset.name` and then `dataset.table`: the name in its namespace, in any namespace
        (if unique), an alias (an earlier attach, a `symlinks` facet: in the contract's namespace, else in any);
        then `dataset.path` as the Spark listener names it (relative to base_dir, else the cwd). A node that
        only a contract ever named (a store written before aliases) gives way to one with lineage.
        """
        ds = contract.dataset
        candidates: list[tuple[int, str, str]] = []
        for name in dict.fromkeys(n for n in (ds.name, ds.table) if n):
            tries: list[tuple[str, str | None]] = [(name, ds.namespace)] if ds.namespace else []
            tries.append((name, None))
            candidates += [found[0] for found in (self.find_datasets(n, ns) for n, ns in tries) if len(found) == 1]
            candidates += self.find_aliases(name, ds.namespace) or (self.find_aliases(name) if ds.namespace else [])
        path = _contract_path_identity(contract, base_dir)
        if path is not None:
            candidates += self.find_datasets(path[1], path[0])
        candidates = list(dict.fromkeys(candidates))
        linked = [c for c in candidates if self.has_lineage(c[0])]
        return (linked or candidates or [None])[0]

    def attach_contract(self, contract: Any, location: str | None = None,
                        base_dir: str | Path | None = None) -> Attachment:
        """Record a contract on the node it describes: owners, PII fields and the contract identity (no events needed).

        The node is contract_dataset's; when there is none, a new one under the identity the listener will give
        `dataset.path` (so later events meet it), else under (namespace or `file`, name). A `dataset.name` that is
        not the node's own name becomes an alias of it; a node only an earlier attach created under that name
        (it has no lineage) is removed, so a contract never leaves a second node.
        """
        info, ds = contract.contract, contract.dataset
        declared = (ds.namespace or "file", ds.name)
        found = self.contract_dataset(contract, base_dir)
        created = found is None
        if found is None:
            namespace, name = _contract_path_identity(contract, base_dir) or declared
            found = (self.dataset_id(namespace, name), namespace, name)
        dataset_id = found[0]
        owners = []
        roles = contract.roles
        for party in ([roles.owner, roles.steward] if roles else []):
            if party is not None:
                owners.append(party.name)
        for name in (info.owner, info.steward):
            if name and name not in owners and name.split(":", 1)[-1] not in owners:
                owners.append(name)
        self._begin()
        try:
            row = self.db.execute("SELECT owners, contract, owners_time FROM datasets WHERE id = ?",
                                  (dataset_id,)).fetchone()
            existing = json.loads(row[1]) if row and row[1] else {}
            identity = {"name": info.name, "version": info.version, "standard": existing.get("standard", "native")}
            if location:
                identity["location"] = location
            merged = {**existing, **identity}
            # ownership seen in events wins; a contract fills a gap, or replaces the owners a contract wrote (no
            # event has set them since: they are still what the last contract wrote, _OWNERS_KEY)
            written = json.loads(row[0]) if row and row[0] else None
            if not written or row[2] is None or written == existing.get(_OWNERS_KEY):
                self.db.execute("UPDATE datasets SET owners = ? WHERE id = ?", (json.dumps(owners), dataset_id))
                merged[_OWNERS_KEY] = owners
            self.db.execute("UPDATE datasets SET contract = ? WHERE id = ?",
                            (json.dumps(merged, sort_keys=True), dataset_id))
            field_ids = [(self.field_id(dataset_id, path), spec) for path, spec in contract.iter_fields()]
            self._flush_fields()  # the UPDATEs below must see rows still queued
            for field_id, spec in field_ids:
                self.db.execute("UPDATE fields SET type = coalesce(type, ?), pii = max(pii, ?) WHERE id = ?",
                                (spec.type, int(spec.pii), field_id))
            removed = self._alias(declared, found)
            self._commit()
        except BaseException:
            self._rollback()
            raise
        if removed:
            self._forget()  # cached ids of the removed node must not be handed out again
        return Attachment(dataset_id, found[1], found[2], created)

    def _alias(self, declared: tuple[str, str], node: tuple[int, str, str]) -> bool:
        """Point the declared (namespace, name) at the node (in the open transaction); True if a stale node went."""
        if declared == node[1:]:
            self.db.execute("DELETE FROM dataset_aliases WHERE namespace = ? AND name = ?", declared)
            return False
        self.db.execute("INSERT OR REPLACE INTO dataset_aliases (namespace, name, dataset_id, seen_time) "
                        "VALUES (?, ?, ?, NULL)", (*declared, node[0]))
        stale = self.db.execute("SELECT id FROM datasets WHERE namespace = ? AND name = ?", declared).fetchone()
        if stale is None or stale[0] == node[0] or self.has_lineage(stale[0]):
            return False
        self.db.execute("DELETE FROM fields WHERE dataset_id = ?", stale)
        self.db.execute("DELETE FROM datasets WHERE id = ?", stale)
        return True

    def has_lineage(self, dataset_id: int) -> bool:
        """Whether any event named the dataset: a job reads or writes it, or column lineage touches a field."""
        return bool(self.db.execute(
            "SELECT EXISTS (SELECT 1 FROM io WHERE dataset_id = ?1) OR EXISTS (SELECT 1 FROM fields f WHERE "
            "f.dataset_id = ?1 AND (EXISTS (SELECT 1 FROM field_edges WHERE src = f.id) OR EXISTS (SELECT 1 FROM "
            "field_edges WHERE dst = f.id) OR EXISTS (SELECT 1 FROM dataset_deps WHERE src = f.id)))",
            (dataset_id,)).fetchone()[0])

    # -- reads -------------------------------------------------------------
    def find_datasets(self, name: str, namespace: str | None = None) -> list[tuple[int, str, str]]:
        """(id, namespace, name) of datasets with this exact name (in a namespace, if given)."""
        if namespace is None:
            rows = self.db.execute("SELECT id, namespace, name FROM datasets WHERE name = ?", (name,))
        else:
            rows = self.db.execute("SELECT id, namespace, name FROM datasets WHERE name = ? AND namespace = ?",
                                   (name, namespace))
        return [tuple(r) for r in rows]

    def find_aliases(self, name: str, namespace: str | None = None) -> list[tuple[int, str, str]]:
        """(id, namespace, name) of the datasets `name` is an alias of: a contract's `dataset.name`
        (attach_contract) or a `symlinks` identifier; `namespace` is the alias's or the dataset's."""
        sql = ("SELECT DISTINCT d.id, d.namespace, d.name FROM dataset_aliases a JOIN datasets d "
               "ON d.id = a.dataset_id WHERE a.name = ?")
        args: tuple[str, ...] = (name,)
        if namespace is not None:
            sql, args = sql + " AND (a.namespace = ? OR d.namespace = ?)", (name, namespace, namespace)
        return [tuple(r) for r in self.db.execute(sql + " ORDER BY d.id", args)]

    def find_named(self, name: str, namespace: str | None = None) -> list[tuple[int, str, str]]:
        """(id, namespace, name) of the datasets a name denotes: those of that name, else those it is an alias of.

        A node of that name that no event names (only a contract created it) gives way to an aliased node
        with lineage: a table's contract ingested before the listener's events named it by its location.
        """
        own = self.find_datasets(name, namespace)
        if own and any(self.has_lineage(found[0]) for found in own):
            return own
        aliased = [found for found in self.find_aliases(name, namespace) if found not in own]
        return [found for found in aliased if self.has_lineage(found[0])] or own or aliased

    def nested_fields(self, dataset_id: int, name: str) -> list[int]:
        """Ids of the known fields nested in a struct field (`address.city` in `address`), by name."""
        rows = self.db.execute("SELECT id FROM fields WHERE dataset_id = ? AND name > ? AND name < ? ORDER BY name",
                               (dataset_id, name + ".", name + "/"))  # "/" sorts right after "."
        return [row[0] for row in rows]

    def dataset(self, dataset_id: int) -> dict[str, Any]:
        """A dataset's identity and latest facets."""
        row = self.db.execute(
            "SELECT namespace, name, owners, tags, quality_status, contract, description FROM datasets WHERE id = ?",
            (dataset_id,)).fetchone()
        if row is None:
            raise KeyError(dataset_id)
        contract = json.loads(row[5]) if row[5] else None
        if contract is not None:
            contract.pop(_OWNERS_KEY, None)  # bookkeeping, not the contract's identity
        return {"id": dataset_id, "namespace": row[0], "name": row[1], "owners": json.loads(row[2] or "[]"),
                "tags": json.loads(row[3] or "[]"), "quality_status": row[4], "contract": contract,
                "description": row[6]}

    def fields_of(self, dataset_id: int) -> list[dict[str, Any]]:
        """The known fields of a dataset, by name."""
        rows = self.db.execute("SELECT id, name, type, pii FROM fields WHERE dataset_id = ? ORDER BY name",
                               (dataset_id,))
        return [{"id": r[0], "name": r[1], "type": r[2], "pii": bool(r[3])} for r in rows]

    def field(self, field_id: int) -> tuple[int, str, bool]:
        """(dataset id, name, pii) of a field."""
        row = self.db.execute("SELECT dataset_id, name, pii FROM fields WHERE id = ?", (field_id,)).fetchone()
        return row[0], row[1], bool(row[2])

    def find_field(self, dataset_id: int, name: str) -> int | None:
        """A field id by name, or None."""
        row = self.db.execute("SELECT id FROM fields WHERE dataset_id = ? AND name = ?", (dataset_id, name)).fetchone()
        return row[0] if row else None

    def job(self, job_id: int, *, last_run: bool = True) -> dict[str, Any]:
        """A job's identity, owners and (unless `last_run=False`) its latest run's state."""
        row = self.db.execute("SELECT namespace, name, owners FROM jobs WHERE id = ?", (job_id,)).fetchone()
        out = {"id": job_id, "namespace": row[0], "name": row[1], "owners": json.loads(row[2] or "[]")}
        if last_run:
            last = self.db.execute(
                "SELECT state FROM runs WHERE job_id = ? AND state IS NOT NULL ORDER BY state_time DESC LIMIT 1",
                (job_id,)).fetchone()
            out["last_run_state"] = last[0] if last else None
        return out

    def run(self, run_id: str) -> dict[str, Any] | None:
        """A run's job, state and times, or None."""
        row = self.db.execute(
            "SELECT job_id, state, start_time, end_time, parent_run_id FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        return {"run_id": run_id, "job_id": row[0], "state": row[1], "start_time": row[2], "end_time": row[3],
                "parent_run_id": row[4]}

    # Neighbour queries take many ids at once: a walk asks once per frontier level, not once per node.
    def _grouped(self, sql: str, ids: Iterable[int]) -> dict[int, list[tuple]]:
        """Run `sql` (an `IN ({ids})` query whose first column is the id) in chunks; rows grouped by id."""
        ids = list(dict.fromkeys(ids))
        out: dict[int, list[tuple]] = {}
        for begin in range(0, len(ids), _IN_CHUNK):
            chunk = ids[begin:begin + _IN_CHUNK]
            for row in self.db.execute(sql.format(ids=",".join("?" * len(chunk))), chunk):
                out.setdefault(row[0], []).append(row[1:])
        return out

    def field_out_many(self, field_ids: Iterable[int]) -> dict[int, list[tuple[int, int, int, str, str, str, int]]]:
        """Per field: (dst field, its dataset, job, type, subtype, dst name, dst pii) of the edges leaving it."""
        return self._grouped(
            "SELECT e.src, e.dst, f.dataset_id, e.job_id, e.type, e.subtype, f.name, f.pii FROM field_edges e "
            "JOIN fields f ON f.id = e.dst WHERE e.src IN ({ids}) ORDER BY e.src, e.dst, e.job_id, e.type, e.subtype",
            field_ids)

    def field_in_many(self, field_ids: Iterable[int]) -> dict[int, list[tuple[int, int, int, str, str, str, int]]]:
        """Per field: (src field, its dataset, job, type, subtype, src name, src pii) of the edges entering it."""
        return self._grouped(
            "SELECT e.dst, e.src, f.dataset_id, e.job_id, e.type, e.subtype, f.name, f.pii FROM field_edges e "
            "JOIN fields f ON f.id = e.src WHERE e.dst IN ({ids}) ORDER BY e.dst, e.src, e.job_id, e.type, e.subtype",
            field_ids)

    def dataset_deps_out_many(self, field_ids: Iterable[int]) -> dict[int, list[tuple[int, int, str, str]]]:
        """Per field: (dataset, job, type, subtype) of the outputs it affects as a whole (filter, join...)."""
        return self._grouped(
            "SELECT src, dst_dataset, job_id, type, subtype FROM dataset_deps WHERE src IN ({ids}) "
            "ORDER BY src, dst_dataset, job_id, type, subtype", field_ids)

    def dataset_deps_in_many(self, dataset_ids: Iterable[int]) -> dict[int, list[tuple[int, int, int, str, str, str, int]]]:
        """Per dataset: (src field, its dataset, job, type, subtype, name, pii) of the fields affecting it whole."""
        return self._grouped(
            "SELECT d.dst_dataset, d.src, f.dataset_id, d.job_id, d.type, d.subtype, f.name, f.pii FROM dataset_deps d "
            "JOIN fields f ON f.id = d.src WHERE d.dst_dataset IN ({ids}) "
            "ORDER BY d.dst_dataset, d.src, d.job_id, d.type, d.subtype", dataset_ids)

    def downstream_jobs_many(self, dataset_ids: Iterable[int]) -> dict[int, list[tuple[int, int, int]]]:
        """Per dataset: (job, output dataset, 1 if the job has column lineage for it) for each job reading it."""
        return self._grouped(
            "SELECT i.dataset_id, o.job_id, o.dataset_id, EXISTS (SELECT 1 FROM column_lineage c "
            "WHERE c.job_id = o.job_id AND c.dataset_id = o.dataset_id) "
            "FROM io i JOIN io o ON o.job_id = i.job_id AND o.direction = 'out' "
            "WHERE i.dataset_id IN ({ids}) AND i.direction = 'in' ORDER BY i.dataset_id, o.job_id, o.dataset_id",
            dataset_ids)

    def upstream_jobs_many(self, dataset_ids: Iterable[int]) -> dict[int, list[tuple[int, int, int]]]:
        """Per dataset: (job, input dataset, 1 if the job has column lineage for this dataset) per job writing it."""
        return self._grouped(
            "SELECT o.dataset_id, i.job_id, i.dataset_id, EXISTS (SELECT 1 FROM column_lineage c "
            "WHERE c.job_id = o.job_id AND c.dataset_id = o.dataset_id) "
            "FROM io o JOIN io i ON i.job_id = o.job_id AND i.direction = 'in' "
            "WHERE o.dataset_id IN ({ids}) AND o.direction = 'out' ORDER BY o.dataset_id, i.job_id, i.dataset_id",
            dataset_ids)

    def field_out(self, field_id: int) -> list[tuple[int, int, int, str, str]]:
        """(dst field, its dataset, job, type, subtype) of edges leaving a field."""
        return [row[:5] for row in self.field_out_many([field_id]).get(field_id, [])]

    def field_in(self, field_id: int) -> list[tuple[int, int, int, str, str]]:
        """(src field, its dataset, job, type, subtype) of edges entering a field."""
        return [row[:5] for row in self.field_in_many([field_id]).get(field_id, [])]

    def dataset_deps_out(self, field_id: int) -> list[tuple[int, int, str, str]]:
        """(dataset, job, type, subtype): datasets a field affects as a whole (filter, join, group by...)."""
        return self.dataset_deps_out_many([field_id]).get(field_id, [])

    def downstream_jobs(self, dataset_id: int) -> list[tuple[int, int, int]]:
        """(job, output dataset, has column lineage) for each job reading the dataset."""
        return self.downstream_jobs_many([dataset_id]).get(dataset_id, [])

    def counts(self) -> dict[str, int]:
        """Row counts per table (for reports and tests)."""
        tables = ("datasets", "fields", "jobs", "runs", "io", "field_edges", "dataset_deps", "events")
        return {t: self.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def _contract_path_identity(contract: Any, base_dir: str | Path | None) -> tuple[str, str] | None:
    """(namespace, name) the listener gives the contract's `dataset.path`; None without one or for a glob."""
    path = contract.dataset.path
    if not path:
        return None
    from dq_governance.lineage.manifest import is_glob, path_identity  # the listener's naming (openlineage client)

    return None if is_glob(path) else path_identity(path, Path(base_dir) if base_dir is not None else None)


def _reason(exc: BaseException) -> str:
    """One line for an OSError or sqlite3 error: its strerror, else its message."""
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return text.splitlines()[0]


@contextmanager
def store_errors(path: str | Path) -> Iterator[None]:
    """A sqlite3 error while a command reads or writes the store, as one InputDataError naming the file."""
    try:
        yield
    except sqlite3.Error as exc:  # locked past the timeout, disk full, a damaged or foreign schema
        raise InputDataError(f"{path}: lineage store error: {_reason(exc)}") from None


def _owner_names(owners: list) -> list[str]:
    return [o["name"] for o in owners if isinstance(o, dict) and isinstance(o.get("name"), str)]


def _parse_line(line: bytes) -> Any:
    """One JSONL line as JSON; the optional fast parser first, json.loads decides what it rejects."""
    if _fast_loads is not None:
        try:
            return _fast_loads(line)
        except ValueError:  # json.loads may still accept it (NaN, huge ints) or it names the error
            pass
    try:
        event = json.loads(line)
    except ValueError as exc:
        raise MalformedEvent(f"invalid JSON: {exc}") from None
    except RecursionError:
        raise MalformedEvent("invalid JSON: nested too deeply") from None
    _refuse_lone_surrogates(event, line)
    return event


#: a JSON escape of a UTF-16 surrogate; a pair decodes to one character, a lone one is no text the store can keep
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _refuse_lone_surrogates(event: Any, text: bytes) -> None:
    """MalformedEvent when a string of the event holds a lone surrogate (`text`: its JSON, searched first)."""
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(event, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise MalformedEvent("string: holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which is not text"
                                 ) from None


def _read_events(path: Path, handle: Any) -> Iterator[tuple[str, Any, bytes | None]]:
    """(location, event, raw line): a JSONL line comes unparsed (event None, parsed once known to be new);
    a `.json` file holds one event or a list of events (parsed, raw None)."""
    if path.suffix == ".json":
        try:
            data = json.loads(handle.read())
        except ValueError as exc:
            yield f"{path}", MalformedEvent(f"invalid JSON: {exc}"), None
            return
        items = data if isinstance(data, list) else data.get("events", [data]) if isinstance(data, dict) else [data]
        for index, item in enumerate(items):
            yield f"{path}[{index}]", item, None
        return
    for number, line in enumerate(handle, 1):
        line = line.strip()
        if line:
            yield f"{path}:{number}", None, line


def _prepare_lines(path: str, size: int) -> None:
    """The parser process of a parallel ingest: every non-blank line of a JSONL file, in order, as
    (line number, digest, plan or skip reason), written to stdout in marshalled frames of `size` lines;
    an end frame closes it, an error frame carries a one-line message. A full pipe blocks it."""
    out = sys.stdout.buffer
    gc.disable()  # see _gc_paused; this process only builds acyclic tuples and exits
    try:
        import fcntl  # a bigger pipe lets the parser run a chunk or two ahead (Linux; best effort)

        fcntl.fcntl(out.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass
    try:
        items: list[tuple[int, bytes, Any]] = []
        with open(path, "rb") as handle:
            for number, line in enumerate(handle, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    event = _parse_line(line)
                    plan: Any = _plan_event(event, validate_event(event))
                except MalformedEvent as exc:
                    plan = str(exc)
                items.append((number, blake2b(line, digest_size=16).digest(), plan))
                if len(items) >= size:
                    data = marshal.dumps(items)
                    out.write(_FRAME.pack(b"D", len(data)) + data)
                    items = []
        if items:
            data = marshal.dumps(items)
            out.write(_FRAME.pack(b"D", len(data)) + data)
        out.write(_FRAME.pack(b"Z", 0))
    except Exception as exc:  # noqa: BLE001 - sent to the writer, which raises it as one line
        message = f"lineage parser failed: {type(exc).__name__}: {exc}".encode()
        out.write(_FRAME.pack(b"E", len(message)) + message)
    out.flush()

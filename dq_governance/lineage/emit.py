"""Emit START / COMPLETE / FAIL OpenLineage events for a contract check run.

The transport comes from a `--lineage` spec (`file:PATH`, `http(s)://…`, `console`, `none`) or the
standard openlineage-python sources (`openlineage.yml`, `OPENLINEAGE__*`). Emission failures are
logged on one line and never fail the pipeline unless `strict`. Tokens never reach logs or events.
"""

from __future__ import annotations

import logging
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState

from dq_governance.errors import ConfigError, LineageError
from dq_governance.lineage import facets as F
from dq_governance.scrub import contract_identifiers, redact, scrub_message
from dq_governance.urls import http_url_problem

log = logging.getLogger(__name__)

#: `--lineage` values that mean "use openlineage.yml / OPENLINEAGE__* env vars"
STANDARD_SPECS = frozenset({"", "default", "env", "auto", "openlineage"})
DEFAULT_ENDPOINT = "/api/v1/lineage"
#: Fewer, faster retries than the client default (5, backoff 0.3): a dead endpoint costs seconds, not minutes.
HTTP_RETRY = {"total": 3, "backoff_factor": 0.2, "status_forcelist": [429, 500, 502, 503, 504]}
API_KEY_ENV = "OPENLINEAGE_API_KEY"
PARENT_ENV = "OPENLINEAGE_PARENT_ID"  # namespace/job/runId, as Airflow and dbt integrations pass it
ROOT_PARENT_ENV = "OPENLINEAGE_ROOT_PARENT_ID"

Ref = tuple[str, str, str]  # (namespace, job name, run id)
OBJECT_STORES = ("s3://", "gs://", "abfss://", "wasbs://")
#: uuid5 namespace of the OpenLineage runId of a run whose run id is not a UUID. Fixed forever: every attempt of
#: a run (same pipeline, same run id) must get the same runId, in this release and the next.
RUN_ID_NAMESPACE = uuid.UUID("5875cc1a-1356-486e-ad3a-892693080c43")


class _RedactUrls(logging.Filter):
    """Drops URL userinfo and query strings from openlineage-python's own log lines.

    Its HTTP transport logs its URL at debug level (`dqgov -vv`); a URL from openlineage.yml or OPENLINEAGE_URL
    can carry `user:password@`, which no spec of ours is allowed to.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except Exception:  # a broken record is logging's to report
            return True
        clean = redact(text)
        if clean != text:
            record.msg, record.args = clean, None
        return True


# A logger's filters do not reach its children, so each module that logs a transport's config gets one.
for _name in ("openlineage.client.client", "openlineage.client.transport.http",
              "openlineage.client.transport.async_http", "openlineage.client.transport.composite",
              "openlineage.client.transport.factory"):
    logging.getLogger(_name).addFilter(_RedactUrls())


# --------------------------------------------------------------------------- transport specs


def has_userinfo(url: str) -> bool:
    """Whether a URL carries `user[:password]@` before its host (split_http_url drops it)."""
    return "@" in urlsplit(url).netloc


def refuse_url_credentials(spec: str | None, flag: str = "--lineage") -> None:
    """ConfigError (never echoing them) when an http(s) spec carries `user:password@`: the transport keeps only
    scheme://host:port, so they would be dropped and the events sent unauthenticated."""
    text = (spec or "").strip()
    if text.startswith(("http://", "https://")) and has_userinfo(text):
        raise ConfigError(f"{flag}: credentials in the URL are never sent (OpenLineage's HTTP transport takes an API "
                          f"key); set {API_KEY_ENV} instead")


def split_http_url(url: str) -> tuple[str, str | None]:
    """(scheme://host:port, path or None): the path goes to `endpoint`, never into `url`."""
    parts = urlsplit(url)
    base = urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], "", "", ""))
    path = parts.path if parts.path not in ("", "/") else None
    if path and parts.query:
        path = f"{path}?{parts.query}"
    return base, path


def transport_config(spec: str | None, *, flag: str = "--lineage", local: bool = True) -> dict[str, Any] | None:
    """The openlineage-python transport dict for a `--lineage` spec; None = standard config sources.

    `flag`: the option the spec came from, named in errors (`--transport` for `dqgov listener-conf`).
    `local`: events go from this machine, so a `file:` spec's directory is created here; settings printed for
    another machine (`dqgov listener-conf`) create nothing.
    """
    text = (spec or "").strip()
    if text.lower() in STANDARD_SPECS:
        return None
    if text == "console":
        return {"type": "console"}
    if text.startswith("file:"):
        path = text[len("file:"):]
        if not path:
            raise ConfigError(f"{flag} file: needs a path, e.g. file:out/lineage.jsonl")
        if local:
            Path(path).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
        return {"type": "file", "log_file_path": str(Path(path).expanduser().resolve()), "append": True}
    if text.startswith(("http://", "https://")):
        problem = http_url_problem(text)
        if problem is not None:
            raise ConfigError(f"{flag} {redact(text)!r}: the URL {problem}")
        base, path = split_http_url(text)
        config: dict[str, Any] = {"type": "http", "url": base, "endpoint": path or DEFAULT_ENDPOINT,
                                  "retry": dict(HTTP_RETRY)}
        key = os.environ.get(API_KEY_ENV)
        if key:
            config["auth"] = {"type": "api_key", "apiKey": key}
        return config
    if text.endswith((".yml", ".yaml")):
        import yaml

        try:
            doc = yaml.safe_load(Path(text).read_text(encoding="utf-8")) or {}
        except OSError as exc:
            raise ConfigError(f"{text}: cannot read OpenLineage config: {exc.strerror}") from None
        except UnicodeDecodeError:  # its message quotes a byte, maybe of the API key
            raise ConfigError(f"{text}: OpenLineage config is not UTF-8 text") from None
        except yaml.YAMLError as exc:  # its message quotes the offending line, which may hold the API key
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
            raise ConfigError(f"{text}{where}: OpenLineage config is not valid YAML") from None
        if not isinstance(doc, dict):
            raise ConfigError(f"{text}: OpenLineage config has no `transport` mapping")
        if not isinstance(doc.get("transport"), dict):
            raise ConfigError(f"{text}: OpenLineage config has no `transport` mapping")
        transport = doc["transport"]
        problem = http_url_problem(str(transport.get("url", ""))) if transport.get("type") == "http" else None
        if problem is not None:
            raise ConfigError(f"{text}: transport.url: the URL {problem}")
        return transport
    raise ConfigError(
        f"{flag} {redact(text)!r}: expected file:PATH, http(s)://HOST[:PORT][/PATH], console, none, "
        "default (openlineage.yml / OPENLINEAGE__* env) or a path to an openlineage.yml"
    )


def make_client(spec: str | None) -> OpenLineageClient:
    """An OpenLineageClient for the spec (standard sources when the spec does not name a transport)."""
    refuse_url_credentials(spec)
    transport = transport_config(spec)
    return OpenLineageClient() if transport is None else OpenLineageClient(config={"transport": transport})


# --------------------------------------------------------------------------- parents


def parse_ref(text: str, what: str) -> Ref:
    """`namespace/job/runId` (the OPENLINEAGE_PARENT_ID format) -> (namespace, job, run id)."""
    head, _, run_id = text.strip().rpartition("/")
    namespace, _, name = head.partition("/")
    if not (namespace and name and is_uuid(run_id)):
        raise ConfigError(f"{what}: expected NAMESPACE/JOB/RUN_UUID, got {text!r}")
    return namespace, name, run_id


def is_uuid(text: str) -> bool:
    """Whether `text` spells a UUID (OpenLineage's run ids must)."""
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def openlineage_run_id(pipeline: str, run_id: str) -> str:
    """The OpenLineage runId of a run: its run id if a UUID, else uuid5(RUN_ID_NAMESPACE, pipeline + newline + run id).

    OpenLineage requires a UUID; dq-governance run ids need not be one (Airflow's `scheduled__…`). The uuid5 is
    deterministic, so a retried run's events share one runId, as its published rows share one run id.
    """
    if is_uuid(run_id):
        return str(uuid.UUID(run_id))  # the canonical spelling: lower case, hyphenated
    return str(uuid.uuid5(RUN_ID_NAMESPACE, f"{pipeline}\n{run_id}"))


def orchestrator_parent(
    parent_run_id: str | None, parent_job: str | None, default_namespace: str
) -> tuple[Ref | None, Ref | None]:
    """(parent, root) from --parent-run-id / --parent-job, else OPENLINEAGE_PARENT_ID / _ROOT_PARENT_ID."""
    parent: Ref | None = None
    if parent_run_id or parent_job:
        if not (parent_run_id and parent_job):
            raise ConfigError("--parent-run-id and --parent-job go together (job as NAMESPACE/NAME or NAME)")
        if not is_uuid(parent_run_id):
            raise ConfigError(f"--parent-run-id: {parent_run_id!r} is not a UUID")
        namespace, _, name = parent_job.partition("/") if "/" in parent_job else (default_namespace, "", parent_job)
        parent = (namespace, name, parent_run_id)
    elif os.environ.get(PARENT_ENV):
        parent = parse_ref(os.environ[PARENT_ENV], PARENT_ENV)
    root = parse_ref(os.environ[ROOT_PARENT_ENV], ROOT_PARENT_ENV) if os.environ.get(ROOT_PARENT_ENV) else None
    if parent is not None and root is None:
        root = parent
    return parent, root


def spark_application(spark: Any) -> Ref | None:
    """(namespace, job, run id) of the Spark application run the listener reports, if it was configured."""
    from dq_governance.session import conf_value, is_connect

    if spark is None or is_connect(spark):  # the listener does not run on Spark Connect (OpenLineage #4288)
        return None
    run_id = conf_value(spark, "spark.openlineage.applicationRunId")
    listeners = conf_value(spark, "spark.extraListeners", "") or ""
    if not run_id or "OpenLineageSparkListener" not in listeners:
        return None
    if not is_uuid(run_id):  # the listener cannot report such a run, so no event could link to it
        raise ConfigError(f"spark.openlineage.applicationRunId {run_id!r} is not a UUID")
    namespace = conf_value(spark, "spark.openlineage.namespace") or "default"
    name = conf_value(spark, "spark.openlineage.appName") or conf_value(spark, "spark.app.name", "spark")
    return namespace, F.normalize_name(name), run_id


# --------------------------------------------------------------------------- the emitter


class LineageEmitter:
    """Emits one run's START and COMPLETE or FAIL events; every failure is logged, raised only when strict."""

    def __init__(
        self,
        client: OpenLineageClient,
        contract: Any,
        *,
        run_id: str,
        pipeline: str,
        strict: bool = False,
        parent: Ref | None = None,
        root: Ref | None = None,
        spark: Any = None,
        contract_location: str | None = None,
        namespace: str | None = None,
    ) -> None:
        self.client = client
        self.contract = contract
        self.run_id = run_id
        self.pipeline = pipeline
        self.strict = strict
        self.parent = parent
        self.root = root
        self.spark = spark
        self.contract_location = contract_location
        self.namespace = namespace or F.job_namespace(contract)
        self.job_name = F.job_name(contract, pipeline)
        # the run id stays in the events (the `tags` run facet) and in our logs; the runId must be a UUID
        self.openlineage_run_id = openlineage_run_id(pipeline or contract.name, run_id)
        self.input: tuple[str, str] | None = None
        self.input_symlink: tuple[str, str] | None = None
        self.emitted: list[RunEvent] = []
        self.failures = 0

    # -- public API -------------------------------------------------------
    def start(self, input_namespace: str | None = None, input_name: str | None = None,
              input_symlink: tuple[str, str] | None = None) -> None:
        """START: the job with its facets and the input with its contract facets (and its `symlinks` identifier,
        a catalog table's `db.table`, when given)."""
        self.input = self._input_identity(input_namespace, input_name)
        self.input_symlink = input_symlink
        self._guarded("START", lambda: self._emit(RunState.START, self._run_facets(), [InputDataset(
            namespace=self.input[0], name=self.input[1], facets=self._input_facets(None))], []))

    def complete(self, result: Any, outputs: Iterable[Mapping[str, Any]] = ()) -> None:
        """COMPLETE: quality metrics and assertions on the input, the test facet, and the written outputs."""
        self._guarded("COMPLETE", lambda: self._finish(RunState.COMPLETE, result, outputs, None))

    def fail(self, result: Any, message: str, outputs: Iterable[Mapping[str, Any]] = (),
             stack_trace: str | None = None) -> None:
        """FAIL with an errorMessage facet (the gate blocked, or the run errored; `result` may be None).

        The message is scrubbed (first line, quoted values hidden); a stack trace is sent only when given.
        """
        self._guarded("FAIL", lambda: self._finish(
            RunState.FAIL, result, outputs,
            F.error_facet(scrub_message(message, contract_identifiers(self.contract)), stack_trace)))

    def close(self) -> None:
        """Flush and close the transport (async transports); never raises unless strict."""
        try:
            self.client.close(timeout=5.0)
        except Exception as exc:  # closing is best effort, like emitting
            self._failed("close", exc)

    def _guarded(self, what: str, build_and_emit: Any) -> None:
        """Run one event's build + emit; a bug while building is logged like a transport error."""
        try:
            build_and_emit()
        except LineageError:
            raise
        except Exception as exc:  # lineage must never fail the data pipeline unless strict
            self._failed(what, exc)

    # -- building ----------------------------------------------------------
    def _input_identity(self, namespace: str | None, name: str | None) -> tuple[str, str]:
        if namespace and name:
            if namespace.startswith(OBJECT_STORES):
                name = name.lstrip("/")  # OpenLineage names objects without a leading slash, as the listener does
            return namespace, name
        dataset = self.contract.dataset
        location = dataset.path or dataset.table or dataset.name
        return F.dataset_identity(location)

    def _dataset_facets(self, result: Any, spark_schema: Any = None, masked: bool = True) -> dict[str, Any]:
        return F.dataset_facets(self.contract, result, spark_schema=spark_schema, location=self.contract_location,
                                masked=masked)

    def _input_facets(self, result: Any, spark_schema: Any = None) -> dict[str, Any]:
        facets = self._dataset_facets(result, spark_schema)
        if self.input_symlink is not None:
            facets["symlinks"] = F.symlinks_facet(*self.input_symlink)
        return facets

    def _run_facets(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        facets: dict[str, Any] = {"processing_engine": F.processing_engine_facet(self.spark),
                                  "tags": F.run_tags_facet(self.run_id)}
        if self.parent is not None:
            facets["parent"] = F.parent_facet(self.parent, self.root)
        facets.update(extra or {})
        return facets

    def _finish(self, state: RunState, result: Any, outputs: Iterable[Mapping[str, Any]], error: Any) -> None:
        if self.input is None:
            self.input = self._input_identity(None, None)
        extra: dict[str, Any] = {}
        input_facets: dict[str, Any] = {}
        dataset_facets = self._input_facets(result, _schema_of(getattr(result, "annotated_df", None), drop_dq=True))
        try:
            if result is not None:
                extra["test"] = F.test_facet(self.contract, result)
                assertions = F.assertions_facet(self.contract, result)
                input_facets = {"dataQualityMetrics": F.metrics_facet(self.contract, result),
                                "dataQualityAssertions": assertions}
                dataset_facets["dataQualityAssertions"] = assertions  # also here, as dbt does, for consumers reading `facets`
        except Exception as exc:  # a malformed result must not cost the whole event
            self._failed("facets", exc)
        if error is not None:
            extra["errorMessage"] = error
        inputs = [InputDataset(namespace=self.input[0], name=self.input[1], facets=dataset_facets,
                               inputFacets=input_facets)]
        outs = [self._output(spec, result) for spec in outputs]
        self._emit(state, self._run_facets(extra), inputs, outs)

    def _output(self, spec: Mapping[str, Any], result: Any) -> OutputDataset:
        kind = spec.get("kind", "target")
        df = getattr(result, "quarantine_df" if kind == "quarantine" else "valid_df", None)
        spark_schema = spec.get("schema") or _schema_of(df, drop_dq=False)
        # Masking tags / flags on outputs only when masks were applied (`--no-mask` publishes raw values).
        masked = getattr(result, "masking", None) != "disabled"
        facets = self._dataset_facets(result, spark_schema, masked=masked)
        if kind == "quarantine":
            facets.pop(F.CONTRACT_FACET_KEY, None)  # the quarantine is not the contracted dataset
        columns = [f.name for f in facets["schema"].fields if not f.name.startswith("_dq")] if facets.get("schema") else []
        if self.input is not None and columns:
            known = set(self.contract.column_names())
            facets["columnLineage"] = F.column_lineage_facet(
                self.contract, self.input[0], self.input[1], [c for c in columns if c in known], masked=masked)
        return OutputDataset(
            namespace=spec["namespace"], name=spec["name"], facets=facets,
            outputFacets={"outputStatistics": F.output_statistics_facet(spec.get("rows"))},
        )

    # -- sending -----------------------------------------------------------
    def _emit(self, state: RunState, run_facets: dict[str, Any], inputs: list[InputDataset],
              outputs: list[OutputDataset]) -> None:
        event = RunEvent(
            eventType=state,
            eventTime=datetime.now(timezone.utc).isoformat(),
            run=Run(runId=self.openlineage_run_id, facets=run_facets),
            job=Job(namespace=self.namespace, name=self.job_name, facets=F.job_facets(self.contract)),
            inputs=inputs,
            outputs=outputs,
            producer=F.PRODUCER,
        )
        try:
            self.client.emit(event)
        except Exception as exc:  # lineage must never fail the data pipeline unless asked to
            self._failed(state.value, exc)
            return
        self.emitted.append(event)

    def _failed(self, what: str, exc: Exception) -> None:
        self.failures += 1
        text = f"OpenLineage {what} event for run {self.run_id} not emitted: {type(exc).__name__}: {redact(str(exc))}"
        if self.strict:
            raise LineageError(text) from None
        log.warning(text)


def _schema_of(df: Any, drop_dq: bool) -> Any:
    """A DataFrame's schema (no Spark job), optionally without the `_dq_*` annotation columns."""
    if df is None:
        return None
    try:
        schema = df.schema
    except Exception:  # a DataFrame that cannot analyse its plan: fall back to the contract schema
        return None
    if not drop_dq:
        return schema
    kept = [f for f in schema.fields if not f.name.startswith("_dq_")]
    return type(schema)(kept)


# --------------------------------------------------------------------------- factory


def build_emitter(
    spec: str | None,
    contract: Any,
    *,
    run_id: str,
    pipeline: str,
    strict: bool = False,
    parent_run_id: str | None = None,
    parent_job: str | None = None,
    spark: Any = None,
    contract_location: str | None = None,
) -> LineageEmitter | None:
    """An emitter for the `--lineage` spec, or None for `none` (or when the transport cannot start, unless strict)."""
    if spec is not None and spec.strip().lower() == "none":
        return None
    if isinstance(contract, (str, Path)):
        from dq_governance.contracts.load import load_contract  # type: ignore[import-not-found]

        contract_location = contract_location or str(contract)
        contract = load_contract(contract)
    namespace = F.job_namespace(contract)
    orchestrator, orchestrator_root = orchestrator_parent(parent_run_id, parent_job, namespace)
    application = spark_application(spark)
    if application is not None:
        parent, root = application, orchestrator_root or application
    else:
        parent, root = orchestrator, orchestrator_root
    try:
        client = make_client(spec)
    except ConfigError:
        raise
    except Exception as exc:  # e.g. a broken openlineage.yml: lineage is optional unless strict
        text = f"OpenLineage transport could not start: {type(exc).__name__}: {redact(str(exc))}"
        if strict:
            raise LineageError(text) from None
        log.warning(text + "; continuing without lineage")
        return None
    _refuse_run_tag_overrides(client)
    return LineageEmitter(
        client, contract, run_id=str(run_id), pipeline=pipeline, strict=strict, parent=parent, root=root,
        spark=spark, contract_location=contract_location, namespace=namespace,
    )


def _refuse_run_tag_overrides(client: OpenLineageClient) -> None:
    """A user run tag (openlineage.yml `tags.run`, OPENLINEAGE__TAGS__RUN__*) named like ours would replace it."""
    tags = getattr(getattr(client, "config", None), "tags", None)
    user_keys = {str(key).lower() for key in (getattr(tags, "run", None) or {})}
    if F.RUN_ID_TAG in user_keys:
        raise ConfigError(f"OpenLineage run tag {F.RUN_ID_TAG!r}: dq-governance sets it to the run id; "
                          "name your tag otherwise")

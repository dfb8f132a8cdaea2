"""A SparkSession with the OpenLineage Spark listener configured, linked to our check-run events.

We generate the application run id here and set `spark.openlineage.applicationRunId`, so the
listener's application run and our emitter's `parent` facet name the same run.

Job names stay the same from run to run (`stable_name_settings`). The listener (1.53.0) names a SQL job
`<app>.<plan node>.<suffix>`, the suffix being the last two path segments of the output; it computes the
suffix before `spark.openlineage.dataset.removePath.pattern` cleans the event's datasets, so a staged write
to `<parent>/.dqgov-staging-<run id>/quarantine` got a new job every run. The extension jar's
RemovePathTrimmer (a dataset-name trimmer, which the suffix does go through) applies the same pattern, so the
suffix is the target's. RDD jobs are named after the RDD, and the RDDs a check caches are named after their
plan text with Spark's expression ids: RDD events are off.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import uuid
from pathlib import Path
from typing import Any

from dq_governance.checks import compat
from dq_governance.publish.staging import STAGING_REMOVE_PATTERN
from dq_governance.errors import ConfigError
from dq_governance.lineage import emit
from dq_governance.lineage import facets as F

log = logging.getLogger(__name__)

LISTENER_CLASS = "io.openlineage.spark.agent.OpenLineageSparkListener"
#: Matches openlineage-python in pyproject.toml (1.54.0 of the Spark jar does not resolve on Maven Central).
OPENLINEAGE_SPARK_VERSION = compat.OPENLINEAGE_SPARK_VERSION
#: The listener is built per Scala line: _2.12 for Spark 3.5, _2.13 for Spark 4.0 (the installed pyspark's).
SCALA_VERSION = compat.scala_version()
ARTIFACT = compat.openlineage_artifact()
MAVEN_COORDINATES = compat.openlineage_coordinates()
JAR_NAME = compat.openlineage_jar_name()
JAR_ENV = "DQGOV_OPENLINEAGE_JAR"
REPO_ROOT = Path(__file__).resolve().parents[2]
HOW_TO_GET_JAR = (
    f"run `make listener-jar` (or listeners/fetch-openlineage-spark), set {JAR_ENV}=/path/to/{JAR_NAME}, "
    f"or pass spark.jars.packages={MAVEN_COORDINATES}"
)
# Spark's default redaction misses `apiKey`; extend it so the token never shows in the UI or event log. Spark
# matches keys and values: the last branch hides a value holding a URL query (`?sig=...`), where tokens also hide.
REDACTION_REGEX = r"(?i)secret|password|token|access[.]?key|api[._-]?key|auth|[?&][^=&\s]+="
APP_RUN_ID_KEY = "spark.openlineage.applicationRunId"
#: in the extension jar: job-name suffixes are built from dataset names with removePath applied
REMOVE_PATH_TRIMMER = "io.github.dqgovernance.listener.RemovePathTrimmer"
TRIMMERS_KEY = "spark.openlineage.dataset.extraTrimmers"
TRANSPORT_PREFIX = "spark.openlineage.transport."


# --------------------------------------------------------------------------- the jar


def jar_candidates() -> list[Path]:
    """Where the listener jar is looked for, in order (after DQGOV_OPENLINEAGE_JAR)."""
    m2 = Path.home() / ".m2" / "repository" / "io" / "openlineage" / ARTIFACT / OPENLINEAGE_SPARK_VERSION / JAR_NAME
    return [REPO_ROOT / "listeners" / "lib" / JAR_NAME, Path.cwd() / "listeners" / "lib" / JAR_NAME, m2]


def find_listener_jar() -> str | None:
    """The listener jar path: DQGOV_OPENLINEAGE_JAR, the fetch script's cache, or the local Maven repo."""
    explicit = os.environ.get(JAR_ENV)
    if explicit:
        if not Path(explicit).is_file():
            raise ConfigError(f"{JAR_ENV}={explicit}: no such file; {HOW_TO_GET_JAR}")
        return str(Path(explicit).resolve())
    for path in jar_candidates():
        if path.is_file():
            return str(path)
    return None


def require_listener_jar() -> str:
    """The listener jar, or a ConfigError saying how to get it."""
    jar = find_listener_jar()
    if jar is None:
        raise ConfigError(f"OpenLineage Spark listener jar {JAR_NAME} not found; {HOW_TO_GET_JAR}")
    return jar


# --------------------------------------------------------------------------- settings


def transport_settings(lineage: str | None, *, secrets: bool = True, flag: str = "--lineage") -> dict[str, str]:
    """`spark.openlineage.transport.*` for a `--lineage` spec; {} leaves it to openlineage.yml / env.

    HTTP keeps url (scheme://host:port) and endpoint (the path) apart: the listener drops a URL's path.
    With `secrets=False` the API key is written as a placeholder, for printing, and a URL with credentials
    (`user:password@`) is refused: dropped they would leave a config that cannot authenticate, printed they
    would leak, and a `file:` spec's directory is not created here (the settings are for another machine).
    `flag` is the option the spec came from, named in errors.
    """
    if secrets:  # a session's listener: dropped credentials would send its events unauthenticated
        emit.refuse_url_credentials(lineage, flag)
    transport = emit.transport_config(lineage, flag=flag, local=secrets)
    if transport is None:
        return {}
    prefix = TRANSPORT_PREFIX
    kind = transport["type"]
    out = {f"{prefix}type": kind}
    if kind == "file":
        out[f"{prefix}location"] = transport["log_file_path"]
    elif kind == "http":
        if not secrets:
            _refuse_url_credentials(lineage or "", transport, flag)
        out[f"{prefix}url"] = transport["url"]
        endpoint = _absolute_path(transport.get("endpoint") or emit.DEFAULT_ENDPOINT)
        if not secrets and "?" in endpoint:  # a query may carry a credential (`?code=`): printed as a placeholder
            endpoint = endpoint.split("?", 1)[0] + "?<query of --transport>"
        out[f"{prefix}endpoint"] = endpoint
        key = _api_key(lineage or "", transport, flag)
        if key:
            out[f"{prefix}auth.type"] = "api_key"
            out[f"{prefix}auth.apiKey"] = key if secrets else f"<{emit.API_KEY_ENV}>"
    elif kind != "console":
        raise ConfigError(f"{flag}: the listener cannot be configured for transport {kind!r} from a spec; "
                          "use openlineage.yml or spark.openlineage.transport.* keys")
    return out


def _refuse_url_credentials(spec: str, transport: dict[str, Any], flag: str) -> None:
    """A ConfigError, naming no credential, when the spec's URL or its openlineage.yml url has userinfo."""
    auth = f"set {TRANSPORT_PREFIX}auth.type=api_key and {TRANSPORT_PREFIX}auth.apiKey yourself"
    if spec.strip().startswith(("http://", "https://")) and emit.has_userinfo(spec.strip()):
        raise ConfigError(f"{flag}: credentials in the URL are not printed; {auth}")
    if emit.has_userinfo(str(transport.get("url", ""))):
        raise ConfigError(f"{flag} {spec}: transport.url: credentials in the URL are not printed; {auth}")


def _api_key(spec: str, transport: dict[str, Any], flag: str) -> str | None:
    """The transport's API key, spelled as openlineage-python reads it; a ConfigError for auth it cannot pass on.

    Dropping an openlineage.yml's auth would send the listener's events unauthenticated.
    """
    auth = transport.get("auth")
    if not auth:
        return None
    if not isinstance(auth, dict):
        raise ConfigError(f"{flag} {spec}: transport.auth: expected a mapping")
    kind = auth.get("type")
    key = next((auth[k] for k in ("apiKey", "apikey", "api_key") if auth.get(k)), None)
    if kind == "api_key" and key:
        return str(key)
    # the type is named only when it is one openlineage-python knows or a class path: never a mistyped secret
    named = kind == "jwt" or (isinstance(kind, str) and re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+", kind))
    found = ("auth with no type" if kind is None else "auth type 'api_key' without its apiKey" if kind == "api_key"
             else f"auth type {kind!r}" if named else "an auth type it does not know")
    raise ConfigError(f"{flag} {spec}: transport.auth: the listener cannot be configured for {found} from a spec; "
                      "use spark.openlineage.transport.auth.* keys")


def _absolute_path(endpoint: str) -> str:
    return endpoint if endpoint.startswith("/") else f"/{endpoint}"


def _tag_value(text: str) -> str:
    # `key:value;key:value` is the listener's tag syntax; keep separators out of values.
    return re.sub(r"[:;\s]+", "_", text)


def contract_settings(contract: Any) -> dict[str, str]:
    """Job owners and tags from the contract, in the listener's `job.owners.<type>` / `job.tags` syntax."""
    out: dict[str, str] = {}
    for name, kind in F.owners(contract):
        out[f"spark.openlineage.job.owners.{kind}"] = name
    tags = [f"contract:{_tag_value(contract.name)}", f"contract_version:{_tag_value(contract.version)}",
            f"dataset:{_tag_value(contract.dataset.name)}"]
    if contract.contract.domain:
        tags.append(f"domain:{_tag_value(contract.contract.domain)}")
    if contract.dataset.classification:
        tags.append(f"classification:{_tag_value(contract.dataset.classification)}")
    out["spark.openlineage.job.tags"] = ";".join(tags)
    return out


def parent_settings(parent_run_id: str | None, parent_job: str | None, namespace: str) -> dict[str, str]:
    """The orchestrator parent / root of the application run (from flags or OPENLINEAGE_PARENT_ID)."""
    parent, root = emit.orchestrator_parent(parent_run_id, parent_job, namespace)
    out: dict[str, str] = {}
    if parent is not None:
        out.update({"spark.openlineage.parentJobNamespace": parent[0], "spark.openlineage.parentJobName": parent[1],
                    "spark.openlineage.parentRunId": parent[2]})
    if root is not None:
        out.update({"spark.openlineage.rootParentJobNamespace": root[0],
                    "spark.openlineage.rootParentJobName": root[1], "spark.openlineage.rootParentRunId": root[2]})
    return out


def stable_name_settings(*, extension: bool) -> dict[str, str]:
    """The keys that keep the listener's dataset and job names the same from run to run (module docstring).

    `extension`: the dq-governance extension jar is on spark.jars, so its RemovePathTrimmer can be named.
    """
    out = {"spark.openlineage.dataset.removePath.pattern": STAGING_REMOVE_PATTERN,  # staged writes named as targets
           "spark.openlineage.filter.rddEventsDisabled": "true"}
    if extension:
        out[TRIMMERS_KEY] = REMOVE_PATH_TRIMMER
    return out


def listener_settings(
    *,
    lineage: str | None = None,
    contract: Any = None,
    jar: str | None = None,
    packages: bool = False,
    application_run_id: str | None = None,
    parent_run_id: str | None = None,
    parent_job: str | None = None,
    secrets: bool = True,
    extension: bool = False,
    flag: str = "--lineage",
) -> dict[str, str]:
    """Every conf key that turns the listener on for one application (no session is created).

    `extension`: the dq-governance extension jar will be on spark.jars (stable job names for staged writes).
    `flag`: the option `lineage` came from, named in errors.
    """
    namespace = F.job_namespace(contract)
    out = {"spark.extraListeners": LISTENER_CLASS, "spark.openlineage.namespace": namespace,
           "spark.redaction.regex": REDACTION_REGEX, **stable_name_settings(extension=extension)}
    if packages:
        out["spark.jars.packages"] = MAVEN_COORDINATES
    elif jar:
        out["spark.jars"] = jar
    if application_run_id:
        if not emit.is_uuid(application_run_id):
            raise ConfigError(f"{APP_RUN_ID_KEY} {application_run_id!r} is not a UUID")
        out[APP_RUN_ID_KEY] = application_run_id
    out.update(transport_settings(lineage, secrets=secrets, flag=flag))
    out.update(parent_settings(parent_run_id, parent_job, namespace))
    if contract is not None:
        out.update(contract_settings(contract))
    return out


def _enrich_settings(settings: dict[str, str], contract: Any, enrich: Any, *, cluster: bool = False,
                     extension_jar: str | None = None) -> dict[str, str]:
    """`settings` with the transport wrapped in the dq-governance listener extension's transform transport.

    enrich: True (DQGOV_MANIFEST, else the contract compiled) or a manifest / contracts-dir path. For cluster
    config nothing is compiled or required locally: the manifest path and the jar are printed as given.
    """
    from dq_governance.lineage import enrich as extension

    if not cluster:
        return extension.session_settings(settings, contract, enrich)
    manifest = "manifest.json" if enrich is True else str(enrich)
    jar = extension_jar or extension.find_extension_jar() or extension.JAR_NAME
    return extension.enrich_settings(settings, manifest=manifest, jar=jar)


# --------------------------------------------------------------------------- builders


def configure(
    builder: Any,
    *,
    lineage: str | None = None,
    contract: Any = None,
    listener: bool = True,
    enrich: bool | str | Path = False,
    application_run_id: str | None = None,
    parent_run_id: str | None = None,
    parent_job: str | None = None,
    conf: dict[str, Any] | None = None,
) -> tuple[Any, str | None]:
    """Add the listener settings to a SparkSession builder; returns (builder, application run id or None).

    The dq-governance extension jar goes on spark.jars whenever it is built (its masking UDF is used with
    or without the listener). With the listener jar missing, logs one line saying how to get it and returns
    the builder without the listener.
    """
    conf = {k: str(v) for k, v in (conf or {}).items()}
    settings, run_id = _listener_part(conf, lineage=lineage, contract=contract, listener=listener, enrich=enrich,
                                      application_run_id=application_run_id, parent_run_id=parent_run_id,
                                      parent_job=parent_job)
    for key, value in with_extension_jar(settings).items():
        builder = builder.config(key, value)
    return builder, run_id


def _listener_part(conf: dict[str, str], *, lineage: str | None, contract: Any, listener: bool,
                   enrich: bool | str | Path, application_run_id: str | None, parent_run_id: str | None,
                   parent_job: str | None) -> tuple[dict[str, str], str | None]:
    """The caller's conf plus the listener settings (when wanted and its jar is found), and the run id."""
    if not listener or (lineage or "").strip().lower() == "none":
        return conf, None
    packages = "openlineage-spark" in conf.get("spark.jars.packages", "")
    jar = None if packages else find_listener_jar()
    if jar is None and not packages:
        log.warning("OpenLineage Spark listener jar %s not found; %s. Continuing without the listener "
                    "(--no-listener turns it off explicitly).", JAR_NAME, HOW_TO_GET_JAR)
        return conf, None
    run_id = application_run_id or str(uuid.uuid4())
    extension = _extension_for_names()
    settings = listener_settings(lineage=lineage, contract=contract, jar=jar, application_run_id=run_id,
                                 parent_run_id=parent_run_id, parent_job=parent_job, extension=extension)
    if jar and conf.get("spark.jars"):
        settings["spark.jars"] = f"{conf.pop('spark.jars')},{jar}"
    if enrich:
        settings = _enrich_settings(settings, contract, enrich)
    settings.update(conf)  # the caller's explicit conf wins
    return settings, run_id


def _extension_for_names() -> bool:
    """Whether the extension jar is built (configure puts it on spark.jars); one warning line if it is not."""
    from dq_governance.lineage.enrich import HOW_TO_BUILD, JAR_NAME as EXTENSION_JAR, find_extension_jar

    if find_extension_jar() is not None:
        return True
    log.warning("dq-governance listener extension %s not built: the listener's job names for staged writes "
                "will carry the run id (a new job per run in the lineage store); %s", EXTENSION_JAR, HOW_TO_BUILD)
    return False


def with_extension_jar(settings: dict[str, str]) -> dict[str, str]:
    """`settings` with the dq-governance extension jar (masking UDF, listener transformer) on spark.jars, if built."""
    from dq_governance.lineage.enrich import find_extension_jar

    jar = find_extension_jar()
    if jar is None:
        return settings
    jars = [j for j in settings.get("spark.jars", "").split(",") if j]
    if jar not in jars:
        jars.append(jar)
    return {**settings, "spark.jars": ",".join(jars)}


def spark_session(
    app_name: str = "dqgov",
    *,
    lineage: str | None = None,
    contract: Any = None,
    listener: bool = True,
    enrich: bool | str | Path = False,
    master: str | None = None,
    parent_run_id: str | None = None,
    parent_job: str | None = None,
    **conf: Any,
) -> Any:
    """A started SparkSession (getOrCreate) with the OpenLineage listener when its jar is available.

    Conf keys with dots go through `**{"spark.sql.shuffle.partitions": "2"}`. The application run id is
    readable afterwards with `application_run_id(session)`. `enrich=True` (or a manifest / contracts-dir
    path) adds the dq-governance listener extension: contract facets on the listener's own events. A new
    session runs with `spark.sql.ansi.enabled=true` (Spark 4's default) unless `conf` says otherwise; a session
    already running keeps its own ANSI mode. PySpark's query-context loggers are silenced
    (`compat.quiet_query_context_loggers`): dqgov reports a failed check's cause itself, PII values scrubbed.
    """
    from pyspark.sql import SparkSession

    if isinstance(contract, (str, Path)):
        from dq_governance.contracts.load import load_contract  # type: ignore[import-not-found]

        contract = load_contract(contract)
    active = SparkSession.getActiveSession()
    if active is not None and listener:
        log.warning("a SparkSession is already running; its listener configuration cannot change "
                    "(one SparkContext per JVM)")
        return active
    compat.quiet_query_context_loggers()
    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    conf = _with_driver_defaults(conf, new_session=active is None)
    builder, _ = configure(builder, lineage=lineage, contract=contract, listener=listener, enrich=enrich,
                           parent_run_id=parent_run_id, parent_job=parent_job, conf=conf)
    return builder.getOrCreate()


# The listener reflects into java.security on Java 17 (it logs a stack trace without this opening).
_DRIVER_JAVA_OPTIONS = "--add-opens=java.base/java.security=ALL-UNNAMED"
# The JVM never compiles a method of more than 8,000 bytes of bytecode. The engine keeps its generated methods
# under that (checks.engine._BitLayout; tests/test_checks_wide.py), but a user's own expressions or a wide
# select may not: this option lets the JIT compile them anyway (an extra speed-up, not a requirement).
_COMPILE_HUGE_METHODS = "-XX:-DontCompileHugeMethods"
_QUIET_LOG4J = Path(__file__).with_name("log4j2-quiet.properties")
ANSI_KEY = "spark.sql.ansi.enabled"


def _with_driver_defaults(conf: dict[str, Any], *, new_session: bool = True) -> dict[str, Any]:
    """JVM options and SQL settings every dqgov session needs; the caller's own options are kept and extended.

    `new_session` False: the session is already running (getOrCreate applies these settings to it), so its
    ANSI mode, the caller's choice, is left alone.
    """
    conf = dict(conf)
    options = [conf.get("spark.driver.extraJavaOptions", ""), _DRIVER_JAVA_OPTIONS]
    if "log4j2.configurationFile" not in options[0]:  # the caller's own log config wins
        options.append(f"-Dlog4j2.configurationFile={_QUIET_LOG4J.as_uri()}")
    conf["spark.driver.extraJavaOptions"] = " ".join(o for o in options if o)
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        if "DontCompileHugeMethods" not in conf.get(key, ""):  # the caller's own choice wins
            conf[key] = f"{conf.get(key, '')} {_COMPILE_HUGE_METHODS}".strip()
    conf.setdefault("spark.ui.showConsoleProgress", "false")
    # Date rules need the CORRECTED parser (compat.check_time_parser); Spark 3.5 defaults to EXCEPTION.
    conf.setdefault(compat.TIME_PARSER_POLICY_KEY, compat.TIME_PARSER_POLICY)
    if new_session:
        # Spark 4's default: 3.5's (off) turned an `expression` rule's CAST('x' AS INT) into null, a passing row,
        # where 4.0 fails the check. The contract's own casts are try_cast, so bad values still go to quarantine.
        conf.setdefault(ANSI_KEY, "true")
    return conf


def application_run_id(spark: Any) -> str | None:
    """The `spark.openlineage.applicationRunId` of a session configured with the listener, else None; a value
    that is not a UUID is a ConfigError (the listener cannot report that run)."""
    app = emit.spark_application(spark)
    return app[2] if app else None


# --------------------------------------------------------------------------- cluster configuration


#: the session extension that measures every write to a contracted dataset (listeners/, Spark 4.0)
SESSION_EXTENSION = "io.github.dqgovernance.spark.GovernanceExtensions"
ENFORCE_MODES = ("observe", "block")


def enforce_settings(manifest: str, enforce: str, *, history: str | None = None,
                     pipeline: str | None = None) -> dict[str, str]:
    """The session extension's keys: spark.sql.extensions, the manifest, the enforce mode, the report history."""
    if enforce not in ENFORCE_MODES:
        raise ConfigError(f"--enforce {enforce!r}: expected observe or block")
    out = {"spark.sql.extensions": SESSION_EXTENSION, "spark.dqgov.manifest": manifest, "spark.dqgov.enforce": enforce}
    if history:
        out["spark.dqgov.history"] = history
    if pipeline:
        out["spark.dqgov.pipeline"] = pipeline
    return out


def listener_conf(contract: Any, transport: str | None = None, *, jar: str | None = None,
                  style: str = "conf", enrich: bool | str = False, extension_jar: str | None = None,
                  enforce: str | None = None, history: str | None = None, pipeline: str | None = None) -> list[str]:
    """The listener settings for cluster config: `key=value` (conf), spark-defaults lines or --conf flags.

    No applicationRunId (each application must get its own), the API key only as a placeholder, and a
    transport URL with credentials refused (ConfigError). With
    `enrich` or an `extension_jar`, the extension jar goes on spark.jars and keeps job names stable. With
    `enforce` (observe | block), the session extension measures every write to a contracted dataset; it
    implies `enrich` (the results ride on the listener's events).
    """
    if enforce is not None and not enrich:
        enrich = "manifest.json"
    extension = bool(enrich or extension_jar)
    settings = listener_settings(lineage=transport, contract=contract, jar=jar, packages=jar is None,
                                 secrets=False, extension=extension, flag="--transport")
    if enrich and not any(key.startswith(TRANSPORT_PREFIX) for key in settings):
        # the transform transport wraps an inner one; said here, where the user's own option is known
        option = "--enforce" if enforce is not None else "--enrich"
        raise ConfigError(f"{option} needs an explicit --transport for the listener to hand events to: "
                          "file:PATH, http(s)://HOST[:PORT][/PATH] or console")
    if enrich:
        settings = _enrich_settings(settings, contract, enrich, cluster=True, extension_jar=extension_jar)
    elif extension_jar:
        settings["spark.jars"] = ",".join(j for j in (settings.get("spark.jars"), extension_jar) if j)
    if enforce is not None:
        manifest = "manifest.json" if enrich is True else str(enrich)
        settings.update(enforce_settings(manifest, enforce, history=history, pipeline=pipeline))
    if style == "spark-defaults":
        return [f"{key} {value}" for key, value in settings.items()]
    if style == "submit":
        return [f"--conf {shlex.quote(f'{key}={value}')}" for key, value in settings.items()]
    if style == "conf":
        return [f"{key}={value}" for key, value in settings.items()]
    raise ConfigError(f"listener_conf style {style!r}: expected conf, spark-defaults or submit")

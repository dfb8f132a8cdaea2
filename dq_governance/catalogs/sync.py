"""Sync contracts and results to a catalog: pick the pusher and transport, load inputs, keep going on failure.

`sync_run` is what `dqgov check --sync CATALOG` calls for one run; `sync` is what `dqgov sync` calls
for many contracts. Without a URL (argument or `DQGOV_<CATALOG>_URL`) the sync is a dry run that
writes request files. No Spark here: the report history is read with pyarrow.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dq_governance.catalogs.base import CatalogPusher, LineageEdge, SyncReport
from dq_governance.catalogs.datahub import HEADERS as DATAHUB_HEADERS
from dq_governance.catalogs.datahub import DataHubPusher
from dq_governance.catalogs.dryrun import DryRunTransport
from dq_governance.catalogs.naming import CATALOG_SETTINGS, SETTINGS, CatalogNaming, NameSettings
from dq_governance.catalogs.openmetadata import OpenMetadataPusher, version_setting
from dq_governance.catalogs.transport import HttpTransport, RetryPolicy, Secret, check_base_url, load_token
from dq_governance.checks.result import CheckResult, GateDecision, RuleResult
from dq_governance.contracts.model import Contract
from dq_governance.errors import CatalogError, ConfigError, ContractError, InputDataError

if TYPE_CHECKING:  # imported where used: project_config imports this package (catalogs.naming)
    from dq_governance.project_config import ProjectConfig

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CatalogSpec:
    """How to build one catalog's pusher: token and URL variables, fixed headers, pusher class."""

    token_env: str
    url_env: str
    headers: dict[str, str]
    pusher: type[CatalogPusher]


CATALOGS: dict[str, CatalogSpec] = {
    "openmetadata": CatalogSpec("DQGOV_OPENMETADATA_TOKEN", "DQGOV_OPENMETADATA_URL", {}, OpenMetadataPusher),
    "datahub": CatalogSpec("DQGOV_DATAHUB_TOKEN", "DQGOV_DATAHUB_URL", DATAHUB_HEADERS, DataHubPusher),
}


def default_out(catalog: str) -> Path:
    """Where a dry run writes when no `--out` is given."""
    return Path("catalog-requests") / catalog


def make_pusher(
    catalog: str,
    *,
    url: str | None = None,
    dry_run: bool = False,
    out: str | Path | None = None,
    server_version: str | None = None,
    create_tables: bool = False,
    token: Secret | None = None,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
    timeout: tuple[float, float] = (5.0, 30.0),
    batch: bool = True,
    workers: int = 8,
    names: NameSettings | None = None,
    project: ProjectConfig | None = None,
) -> CatalogPusher:
    """A pusher for `catalog` talking HTTP to `url`, or writing request files when dry-running.

    Each setting comes from the argument (a CLI option), else the environment (URL only), else the
    project config; catalog names resolve per contract as catalogs/naming.py says.
    """
    from dq_governance.project_config import ProjectConfig

    spec = _spec(catalog)
    project = project or ProjectConfig()
    names = names or NameSettings()
    url = catalog_url(catalog, url, project)
    if catalog == "openmetadata" and server_version:  # before any request file or request: bad input is exit 2
        version_setting(server_version, "--server-version")
    report = SyncReport(catalog)
    if dry_run or not url:
        transport: Any = DryRunTransport(out or default_out(catalog), catalog)
        report.dry_run = True
        if url:
            report.note("dry run: nothing was sent to the catalog URL that is set")
    else:
        if catalog == "openmetadata" and url.rstrip("/").endswith("/api"):
            url = url.rstrip("/")[: -len("/api")]  # paths carry /api/v1 themselves
        transport = HttpTransport(url, catalog, token=token or _token(spec, catalog, project),
                                  headers=spec.headers, retry=retry, sleep=sleep, rng=rng, timeout=timeout,
                                  pool_size=workers)
    naming = CatalogNaming(names, project.names(), project.file)
    ignored = [SETTINGS[s][0] for s in names.given() if s not in CATALOG_SETTINGS[catalog]]
    if ignored:
        report.note(f"{', '.join(ignored)}: not used by {catalog}; ignored")
    if catalog == "openmetadata":
        om = project.openmetadata
        return OpenMetadataPusher(transport, report, server_version=server_version or om.server_version,
                                  create_tables=create_tables or bool(om.create_tables), workers=workers,
                                  naming=naming)
    for given, flag in ((server_version, "--server-version"), (create_tables, "--create-tables")):
        if given:
            report.note(f"{flag} applies to OpenMetadata only; ignored")
    return DataHubPusher(transport, report, batch=batch, workers=workers, naming=naming)


def _spec(catalog: str) -> CatalogSpec:
    spec = CATALOGS.get(catalog)
    if spec is None:
        raise ConfigError(f"unknown catalog {catalog!r}; expected one of {', '.join(CATALOGS)}")
    return spec


def catalog_url(catalog: str, url: str | None, project: ProjectConfig | None) -> str | None:
    """The catalog URL: the argument, else `DQGOV_<CATALOG>_URL`, else the project config; None when none is set."""
    from dq_governance.project_config import ProjectConfig

    spec = _spec(catalog)
    if url is not None and not url.strip():  # `--url "$UNSET_VAR"`: a mistake, not a request for a dry run
        raise ConfigError(f"the {catalog} URL given is blank; leave it out for a dry run")
    return url or os.environ.get(spec.url_env) or (project or ProjectConfig()).section(catalog).url or None


def check_settings(catalog: str, *, url: str | None, dry_run: bool, project: ProjectConfig | None) -> None:
    """Raise the ConfigError a sync would raise for its URL or token, before the work that precedes the sync."""
    from dq_governance.project_config import ProjectConfig

    spec = _spec(catalog)
    url = catalog_url(catalog, url, project)
    if dry_run or not url:
        return
    check_base_url(catalog, url)
    _token(spec, catalog, project or ProjectConfig())


def _token(spec: CatalogSpec, catalog: str, project: ProjectConfig) -> Secret | None:
    """The token from the variable the project config names, else the catalog's default variable."""
    named = project.section(catalog).token_env
    token = load_token(named or spec.token_env)
    if token is None and named:
        # A variable named on purpose but unset would send unauthenticated requests: refuse.
        raise ConfigError(f"{project.file}: {catalog}.token_env names {named}, which is not set (nor {named}_FILE)")
    return token


def sync(
    pusher: CatalogPusher,
    contracts: list[Contract],
    results: dict[str, CheckResult] | None = None,
    edges: list[LineageEdge] | None = None,
    progress: Callable[[Contract], None] | None = None,
) -> SyncReport:
    """Push every contract (and its latest result, if any); a failing contract is recorded, not fatal."""
    results = results or {}
    try:
        for contract in sorted(contracts, key=lambda c: c.name):
            try:
                pusher.validate(contract)
                pusher.push_contract(contract)
                if contract.name in results:
                    pusher.push_results(contract, results[contract.name])
            except (ContractError, ConfigError) as exc:  # this contract cannot be named in the catalog
                pusher.report.invalid.append((f"contract {contract.name}", str(exc)))
            except CatalogError as exc:
                pusher.report.failed.append((f"contract {contract.name}", str(exc)))
                log.warning("%s", exc)
            if progress:
                progress(contract)
        if edges:
            try:
                pusher.push_lineage(edges)
            except CatalogError as exc:
                pusher.report.failed.append(("lineage", str(exc)))
    finally:
        try:
            pusher.close()
        except CatalogError as exc:
            pusher.report.failed.append(("flush", str(exc)))
    return pusher.report


def sync_run(
    catalog: str,
    contract: Contract,
    result: CheckResult | None,
    *,
    url: str | None = None,
    out: str | Path | None = None,
    dry_run: bool = False,
    server_version: str | None = None,
    create_tables: bool = False,
    edges: list[LineageEdge] | None = None,
    names: NameSettings | None = None,
    project: ProjectConfig | None = None,
    **transport_options: Any,
) -> SyncReport:
    """Push one check run (its contract, results and lineage edges): what `dqgov check --sync` calls.

    `names` are the naming options, `project` the project config (see `make_pusher`); neither is read
    implicitly here, so a library call never depends on the current directory.
    """
    pusher = make_pusher(catalog, url=url, dry_run=dry_run, out=out, server_version=server_version,
                         create_tables=create_tables, names=names, project=project, **transport_options)
    return sync(pusher, [contract], {contract.name: result} if result is not None else None, edges)


# --------------------------------------------------------------------------- inputs


def load_contracts(paths: list[str | Path]) -> tuple[list[Contract], list[str]]:
    """Contracts from files and directories, plus notes; a name found twice keeps its first file."""
    from dq_governance.contracts.lint import contract_files
    from dq_governance.contracts.load import load_contract

    files, issues = contract_files(list(paths))
    if issues:
        raise issues[0].to_error()
    contracts: list[Contract] = []
    seen: dict[str, Path] = {}
    notes = []
    for path in files:
        contract = load_contract(path)
        if contract.name in seen:
            # e.g. contracts/orders.yaml and its ODCS twin contracts/orders.odcs.yaml
            notes.append(f"contract {contract.name!r} in {path} skipped: already read from {seen[contract.name]}")
            continue
        seen[contract.name] = path
        contracts.append(contract)
    return contracts, notes


def _status(rule_status: str | None, passed: bool, severity: str) -> str:
    if rule_status in ("passed", "warned", "failed", "skipped"):
        return rule_status
    return "passed" if passed else ("warned" if severity == "warn" else "failed")


def load_results(report_path: str | Path) -> dict[str, CheckResult]:
    """The latest run per contract from a `dqgov check --report` parquet history (read with pyarrow)."""
    import pyarrow.dataset as ds

    path = Path(report_path)
    if not path.exists():
        raise InputDataError(f"--results {path}: no such report history")
    if (path / "_delta_log").is_dir():
        raise InputDataError(f"--results {path}: a Delta history cannot be read without Spark; "
                             "write the report as parquet for `dqgov sync`")
    try:
        dataset = ds.dataset(str(path), format="parquet", partitioning="hive")
        table = dataset.to_table()
    except (OSError, ValueError) as exc:
        raise InputDataError(f"--results {path}: not a parquet report history: {exc}") from None
    rows = table.to_pylist()
    needed = {"contract", "run_id", "check_name", "rule_type", "passed", "validated_at"}
    missing = needed - set(table.column_names)
    if missing:
        raise InputDataError(f"--results {path}: report history lacks column(s) {', '.join(sorted(missing))}")
    latest: dict[str, tuple[datetime, str]] = {}
    for row in rows:
        at = _utc(row["validated_at"])
        key = row["contract"]
        if key not in latest or at > latest[key][0] or (at == latest[key][0] and str(row["run_id"]) > latest[key][1]):
            latest[key] = (at, str(row["run_id"]))
    out: dict[str, CheckResult] = {}
    for contract, (at, run_id) in latest.items():
        run = [r for r in rows if r["contract"] == contract and str(r["run_id"]) == run_id]
        out[contract] = _result_from_rows(contract, run_id, at, run)
    return out


def _result_from_rows(contract: str, run_id: str, at: datetime, rows: list[dict[str, Any]]) -> CheckResult:
    rules = []
    for row in rows:
        severity = row.get("severity") or "error"
        column = row.get("column")
        rules.append(RuleResult(
            name=row["check_name"], type=row["rule_type"], columns=column.split(",") if column else [],
            level=row.get("level") or "row", severity=severity, action=row.get("action"),
            dimension=row.get("dimension"), passed=bool(row["passed"]),
            status=_status(row.get("rule_status"), bool(row["passed"]), severity),  # type: ignore[arg-type]
            failed_count=row.get("failed_count"), metric_value=row.get("metric_value"),
            threshold=row.get("threshold"), message=row.get("message") or ""))
    first = rows[0]
    total = int(first.get("total_rows") or 0)
    valid = int(first.get("valid_rows") or 0)
    status = first.get("run_status") or ("failed" if any(r.status == "failed" for r in rules)
                                         else "warned" if any(r.status == "warned" for r in rules) else "passed")
    return CheckResult(
        run_id=run_id, contract_name=contract, contract_version=first.get("contract_version") or "",
        pipeline=str(first.get("pipeline") or ""), rules=rules, total_rows=total, valid_rows=valid,
        invalid_rows=int(first.get("invalid_rows") or 0), status=status,
        gate=GateDecision(passed=status != "failed", publish=bool(first.get("published"))),
        started_at=at, finished_at=at, source=first.get("source"), published=bool(first.get("published")))


def _utc(moment: Any) -> datetime:
    if not isinstance(moment, datetime):
        raise InputDataError(f"report history: validated_at {moment!r} is not a timestamp")
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)

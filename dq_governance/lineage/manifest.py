"""Compile contracts into the governance manifest read by the JVM listener extension (listeners/).

The manifest is a small JSON file: per contract, how to recognise its dataset in the OpenLineage Spark
listener's events (exact namespace + name, a path glob, a table name) and the facets to add, built by the same
code as our own events (`dq_governance.lineage.facets`), so both sides describe a dataset alike.

Version 2 adds, per contract, `checks`: its same-pass rules compiled to Spark SQL text by the engine's own
rule builders (`dq_governance.checks.sql_text`, which needs a local Spark session), for the session extension
that measures writes (`spark.sql.extensions=io.github.dqgovernance.spark.GovernanceExtensions`), and
`reportColumns`, the report history's columns, so the extension appends rows `dqgov report` reads.
PII safety: the manifest names PII columns (field tags) but never holds a value.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from dq_governance import __version__
from dq_governance.checks.gate import BLOCKING_POLICIES
from dq_governance.checks.report_rows import REPORT_COLUMNS
from dq_governance.errors import ConfigError
from dq_governance.lineage import facets as F

#: The listener extension rejects any other version with a one-line message and passes events through.
MANIFEST_VERSION = 2
CONTRACT_SUFFIXES = (".yaml", ".yml")
GLOB_CHARS = frozenset("*?")
# Keys of the serialised facets that belong to the facet envelope, not to the manifest entry.
ENVELOPE = ("_producer", "_schemaURL")


@dataclass
class Compiled:
    """A compiled manifest document plus what was left out, for the CLI to report."""

    document: dict[str, Any]
    skipped: list[str] = field(default_factory=list)  # one line per contract file not in the manifest


def _facet_dict(facet: Any) -> dict[str, Any]:
    """An openlineage-python facet as JSON-ready dict, without the envelope and None values."""
    from openlineage.client.serde import Serde

    data = Serde.to_dict(facet)
    return {k: v for k, v in data.items() if k not in ENVELOPE and v is not None}


def location(namespace: str, name: str) -> str:
    """The form a glob is matched against (same rule as the listener extension): a path, or namespace/name."""
    path = name.rstrip("/") if len(name) > 1 else name
    if namespace == "file":
        return path
    return f"{namespace}{path}" if path.startswith("/") else f"{namespace}/{path}"


def _resolve(path: str, base_dir: Path) -> str:
    """A contract path as the listener names it: URIs as they are, relative paths against base_dir."""
    if "://" in path or path.startswith("file:") or os.path.isabs(path):
        return path
    return os.path.abspath(os.path.join(base_dir, path))


def path_identity(path: str, base_dir: Path | None = None) -> tuple[str, str]:
    """The (namespace, name) the Spark listener gives a contract's `dataset.path` (relative to base_dir, else cwd)."""
    namespace, name = F.dataset_identity(_resolve(path, base_dir or Path.cwd()))
    return namespace, name.rstrip("/") or name


def is_glob(path: str) -> bool:
    """Whether a `dataset.path` is a glob (it names files, not one dataset)."""
    return bool(GLOB_CHARS.intersection(path))


def match_spec(contract: Any, base_dir: Path, extra_globs: Iterable[str] = ()) -> dict[str, list[Any]]:
    """How the listener extension recognises the contract's dataset: datasets, tables and globs."""
    dataset = contract.dataset
    datasets: list[dict[str, str]] = []
    globs: list[str] = []
    tables: list[str] = []
    if dataset.path:
        namespace, name = path_identity(dataset.path, base_dir)
        if is_glob(dataset.path):
            globs.append(location(namespace, name))
        else:
            datasets.append({"namespace": namespace, "name": name})
            # Spark names single part files of a dataset directory on some reads (schema inference).
            globs.append(location(namespace, name).rstrip("/") + "/**")
    if dataset.table:
        tables.append(dataset.table)
    if dataset.namespace and not dataset.path and not dataset.table:
        # An explicit OpenLineage identity: namespace + dataset name as the lineage platform knows it.
        datasets.append({"namespace": dataset.namespace, "name": dataset.name})
    for text in extra_globs:
        namespace, name = F.dataset_identity(_resolve(text, base_dir))
        globs.append(location(namespace, name))
    spec: dict[str, list[Any]] = {"datasets": datasets, "tables": tables, "globs": globs}
    return {k: v for k, v in spec.items() if v}


def entry(contract: Any, *, standard: str = "native", location_uri: str | None = None,
          base_dir: Path | None = None, extra_globs: Iterable[str] = (), spark: Any = None) -> dict[str, Any]:
    """One manifest entry: match rules, owners, classification, tags, documentation, contract identity, and
    with a Spark session the same-pass checks."""
    out: dict[str, Any] = {
        "contract": _facet_dict(F.contract_facet(contract, standard=standard, location=location_uri)),
        "match": match_spec(contract, base_dir or Path.cwd(), extra_globs),
    }
    ownership = F.ownership_facet(contract)
    if ownership is not None:
        out["owners"] = _facet_dict(ownership)["owners"]
    if contract.dataset.classification:
        out["classification"] = contract.dataset.classification
    tags = _facet_dict(F.tags_facet(contract))["tags"]
    if tags:
        out["tags"] = tags
    documentation = F.documentation_facet(contract)
    if documentation is not None:
        out["documentation"] = _facet_dict(documentation)
    if spark is not None:
        from dq_governance.checks.sql_text import compile_contract

        checks = compile_contract(spark, contract)
        note = quarantine_note(checks)
        if note:
            checks["notes"] = [note]
        out["checks"] = checks
    return out


def quarantine_note(checks: dict[str, Any]) -> str | None:
    """What the session extension does with the rows of quarantine rules (it has no quarantine to keep them in)."""
    gate = checks["gate"]
    # as GovernedWrite.quarantinesRowsOf: fail / block_publication route rows only under minimum_valid_ratio
    policy_routes = gate["on_failure"] == "quarantine" or (
        gate["on_failure"] in BLOCKING_POLICIES and gate.get("minimum_valid_ratio") is not None)
    names = [r["name"] for r in checks["rules"]
             if r["level"] == "row" and r["blocks"] and r.get("metric") is None
             and (r["action"] == "quarantine" or (r["action"] is None and policy_routes))]
    if not names:
        return None
    return (f"quarantine rules ({', '.join(names)}): in block mode the session extension leaves their failing rows "
            "out of the write and keeps no copy of them (the source still has them); observe mode only counts them")


@contextlib.contextmanager
def compile_session() -> Iterator[Any]:
    """The classic Spark session the checks compile in: the active one, else a small local one, stopped after."""
    from pyspark.sql import SparkSession

    from dq_governance import session as sessions

    active = SparkSession.getActiveSession()
    if active is not None:
        if sessions.kind(active) != "classic":
            raise ConfigError("dqgov manifest compiles checks in a classic Spark session, not over Spark Connect; "
                              "run it where pyspark starts a local session")
        yield active
        return
    own = (SparkSession.builder.master("local[1]").appName("dqgov-manifest")
           .config("spark.ui.enabled", "false").getOrCreate())
    own.sparkContext.setLogLevel("ERROR")
    try:
        yield own
    finally:
        own.stop()  # a later getOrCreate in this process must not inherit the compile session's settings


def contract_files(directory: str | Path) -> list[Path]:
    """The contract files of a directory (YAML, not recursive), in name order."""
    root = Path(directory)
    if not root.is_dir():
        raise ConfigError(f"{directory}: not a directory of contracts")
    return sorted(p for p in root.iterdir() if p.is_file() and p.suffix in CONTRACT_SUFFIXES)


def contract_sources(paths: Iterable[str | Path]) -> list[Path]:
    """Contract files named directly, and the contract files of directories, in the order given."""
    out: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            files = contract_files(path)
            if not files:
                raise ConfigError(f"{text}: no contract files (*.yaml, *.yml)")
            out.extend(files)
        elif path.is_file():
            out.append(path)
        else:
            raise ConfigError(f"{text}: no such contract file or directory")
    return out


def parse_match_options(values: Iterable[str]) -> dict[str, list[str]]:
    """`NAME=GLOB` options -> {contract name: [globs]}."""
    out: dict[str, list[str]] = {}
    for text in values:
        name, sep, glob = text.partition("=")
        if not sep or not name.strip() or not glob.strip():
            raise ConfigError(f"--match {text!r}: expected CONTRACT_NAME=GLOB, e.g. orders=s3://lake/orders/**")
        out.setdefault(name.strip(), []).append(glob.strip())
    return out


def compile_manifest(
    sources: Iterable[str | Path], *, base_dir: str | Path | None = None,
    extra_globs: dict[str, list[str]] | None = None, checks: bool = True,
) -> Compiled:
    """The manifest for these contract files (`checks`: compile the same-pass checks, in a Spark session).

    The same contract (name and version) in two formats is listed once, native first. Two different
    contracts claiming the same dataset or table is an error naming both files.
    """
    from dq_governance.contracts.load import load_contract_with_source

    base = Path(base_dir) if base_dir is not None else Path.cwd()
    extra = dict(extra_globs or {})
    loaded = [(Path(p), *load_contract_with_source(p)) for p in sources]
    loaded.sort(key=lambda item: (item[2].standard != "native", str(item[0])))
    unknown = sorted(set(extra) - {contract.name for _, contract, _ in loaded})
    if unknown:  # refused before a Spark session starts for the checks
        raise ConfigError(f"--match {unknown[0]}=…: no contract of that name among the inputs")
    with compile_session() if checks and loaded else contextlib.nullcontext() as spark:
        entries, skipped = _entries(loaded, base, extra, spark)
    return Compiled(manifest_document(entries), skipped)


def _entries(loaded: list[tuple[Path, Any, Any]], base: Path, extra: dict[str, list[str]],
             spark: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """The entries of the loaded contracts (each once), and one line per contract file left out."""
    entries: list[dict[str, Any]] = []
    skipped: list[str] = []
    kept: dict[tuple[str, str], Path] = {}
    claims: dict[tuple[str, ...], tuple[str, Path]] = {}
    for path, contract, source in loaded:
        identity = (contract.name, contract.version)
        if identity in kept:
            skipped.append(f"{path}: contract {contract.name} {contract.version} already compiled "
                           f"from {kept[identity]}")
            continue
        item = entry(contract, standard=source.standard, location_uri=source.location, base_dir=base,
                     extra_globs=extra.pop(contract.name, []), spark=spark)
        if not item["match"]:
            skipped.append(f"{path}: contract {contract.name} has no dataset path, table or namespace to match")
            continue
        for claim in _claims(item["match"]):
            owner = claims.setdefault(claim, (contract.name, path))
            if owner[0] != contract.name:
                raise ConfigError(f"{path}: {claim[0]} {' '.join(claim[1:])} is already governed by contract "
                                  f"{owner[0]} ({owner[1]}); one dataset, one contract")
        kept[identity] = path
        entries.append(item)
    return entries, skipped


def manifest_document(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The manifest around its entries: version, generator, our producer and the contract facet's schema URL."""
    return {
        "manifestVersion": MANIFEST_VERSION,
        "generator": f"dq-governance {__version__}",
        "producer": F.PRODUCER,
        "contractFacetSchemaURL": F.CONTRACT_FACET_SCHEMA_URL,
        "reportColumns": dict(REPORT_COLUMNS),
        "contracts": entries,
    }


def _claims(match: dict[str, list[Any]]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [("dataset", d["namespace"], d["name"]) for d in match.get("datasets", [])]
    out.extend(("table", t.lower()) for t in match.get("tables", []))
    return out


def compile_directory(directory: str | Path, **kw: Any) -> Compiled:
    """The manifest for every contract file in a directory."""
    files = contract_files(directory)
    if not files:
        raise ConfigError(f"{directory}: no contract files (*.yaml, *.yml)")
    return compile_manifest(files, **kw)


def manifest_target(path: str | Path) -> Path:
    """The manifest's absolute path, its folder created; refused when it cannot be written (checked first)."""
    target = Path(path).expanduser().resolve()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the manifest: {exc.strerror}") from None
    if target.is_dir():
        raise ConfigError(f"{path}: cannot write the manifest: Is a directory")
    if not os.access(target if target.exists() else target.parent, os.W_OK):
        raise ConfigError(f"{path}: cannot write the manifest: Permission denied")
    return target


def write_manifest(document: dict[str, Any], path: str | Path) -> Path:
    """Write the manifest as indented JSON; returns the absolute path."""
    target = manifest_target(path)
    try:
        target.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the manifest: {exc.strerror}") from None
    return target

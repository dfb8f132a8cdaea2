"""Spark settings for the dq-governance listener extension: the OpenLineage transform transport.

The listener's transport becomes `transform`, with our transformer class and the governance manifest; the
transport it had (file, http or console) becomes the inner transport. Both jars go on `spark.jars`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from dq_governance import __version__
from dq_governance.errors import ConfigError

TRANSFORMER_CLASS = "io.github.dqgovernance.listener.GovernanceTransformer"
JAR_NAME = f"dq-governance-listener-{__version__}.jar"
JAR_ENV = "DQGOV_LISTENER_JAR"
MANIFEST_ENV = "DQGOV_MANIFEST"
REPO_ROOT = Path(__file__).resolve().parents[2]
HOW_TO_BUILD = f"run `make listener` (mvn -q -f listeners/pom.xml package) or set {JAR_ENV}=/path/to/{JAR_NAME}"
TRANSPORT = "spark.openlineage.transport."
#: Where compiled manifests go when spark_session(enrich=True) compiles one (git-ignored .dqgov/).
MANIFEST_CACHE = Path(".dqgov") / "manifests"


def find_extension_jar() -> str | None:
    """The extension jar: DQGOV_LISTENER_JAR, else listeners/target/ of this checkout (or of the cwd)."""
    explicit = os.environ.get(JAR_ENV)
    if explicit:
        if not Path(explicit).is_file():
            raise ConfigError(f"{JAR_ENV}={explicit}: no such file (the dq-governance listener extension jar); "
                              f"{HOW_TO_BUILD}")
        return str(Path(explicit).resolve())
    for root in (REPO_ROOT, Path.cwd()):
        path = root / "listeners" / "target" / JAR_NAME
        if path.is_file():
            return str(path)
    return None


def require_extension_jar() -> str:
    """The extension jar, or a ConfigError saying how to build it."""
    jar = find_extension_jar()
    if jar is None:
        raise ConfigError(f"dq-governance listener extension {JAR_NAME} not found; {HOW_TO_BUILD}")
    return jar


def resolve_manifest(contract: Any = None, source: str | Path | None = None) -> str:
    """An absolute manifest path: a manifest file as given, or one compiled from a contract directory / file.

    With no source: DQGOV_MANIFEST, else the session's contract compiled into .dqgov/manifests/. Compiled here
    before the session starts, so without the same-pass checks (those need a session: `dqgov manifest`).
    """
    from dq_governance.lineage.manifest import (
        compile_directory, compile_manifest, entry, manifest_document, write_manifest,
    )

    source = source or os.environ.get(MANIFEST_ENV)
    if source is not None:
        path = Path(source)
        if path.is_dir():
            compiled = compile_directory(path, checks=False)
            return str(write_manifest(compiled.document, _cache_path(path.resolve())))
        if path.suffix in (".yaml", ".yml"):
            compiled = compile_manifest([path], checks=False)
            return str(write_manifest(compiled.document, _cache_path(path.resolve())))
        if not path.is_file():
            raise ConfigError(f"{source}: no such manifest; compile one with "
                              f"`dqgov manifest CONTRACTS_DIR -o {source}`")
        return str(path.resolve())
    if contract is None:
        raise ConfigError(f"enrich=True needs a manifest: pass enrich='manifest.json' (or a contracts directory), "
                          f"a contract, or set {MANIFEST_ENV}")
    document = manifest_document([entry(contract)])
    return str(write_manifest(document, MANIFEST_CACHE / f"{contract.name}-{contract.version}.json"))


def _cache_path(source: Path) -> Path:
    digest = hashlib.sha256(str(source).encode()).hexdigest()[:12]
    return MANIFEST_CACHE / f"{source.stem}-{digest}.json"


def enrich_settings(settings: dict[str, str], *, manifest: str, jar: str) -> dict[str, str]:
    """`settings` with the transport wrapped in the transform transport and the extension jar on spark.jars."""
    inner = {key[len(TRANSPORT):]: value for key, value in settings.items() if key.startswith(TRANSPORT)}
    if not inner:
        raise ConfigError("enrich needs an explicit transport for the listener to hand events to: "
                          "file:PATH, http(s)://HOST[:PORT][/PATH] or console")
    out = {key: value for key, value in settings.items() if not key.startswith(TRANSPORT)}
    out[f"{TRANSPORT}type"] = "transform"
    out[f"{TRANSPORT}transformerClass"] = TRANSFORMER_CLASS
    out[f"{TRANSPORT}transformerProperties.manifest"] = manifest
    for key, value in inner.items():
        out[f"{TRANSPORT}transport.{key}"] = value
    out["spark.jars"] = ",".join(j for j in (settings.get("spark.jars"), jar) if j)
    return out


def session_settings(settings: dict[str, str], contract: Any = None, enrich: Any = True) -> dict[str, str]:
    """For spark_session(enrich=...): True = DQGOV_MANIFEST or the session's contract; a path = that manifest,
    contract file or contracts directory."""
    jar = require_extension_jar()  # first: no manifest is compiled for a session that cannot use it
    source = None if enrich is True else enrich
    return enrich_settings(settings, manifest=resolve_manifest(contract, source), jar=jar)

"""Hand a check's results to the listener extension in the driver JVM, through py4j.

After `record_results`, the OpenLineage Spark listener's next events that read the dataset carry
`dataQualityAssertions` and `dataQualityMetrics` input facets, and events that write it carry the contract
status in `dqgov_dataContract`. The facets are built by `dq_governance.lineage.facets`, exactly as in our own
events (no raw value of a PII column). On Spark Connect (no driver JVM, and the OpenLineage listener does not
run there) recording is skipped with one info line per run; without the extension jar on the driver it is
skipped quietly (debug): lineage never fails the data pipeline.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from dq_governance.errors import ConfigError
from dq_governance.lineage import facets as F
from dq_governance.session import is_connect, java_class, log_once

log = logging.getLogger(__name__)

REGISTRY_CLASS = "io.github.dqgovernance.listener.QualityRegistry"


def payload(result: Any, contract: Any) -> dict[str, Any]:
    """The JSON document QualityRegistry.record takes: input facets and the contract facet with the run status."""
    from openlineage.client.serde import Serde

    location = _location_uri(getattr(result, "contract_location", None))
    return {
        "inputFacets": {
            "dataQualityAssertions": Serde.to_dict(F.assertions_facet(contract, result)),
            "dataQualityMetrics": Serde.to_dict(F.metrics_facet(contract, result)),
        },
        "contract": Serde.to_dict(F.contract_facet(contract, result, location=location)),
    }


def _location_uri(location: str | None) -> str | None:
    if not location or "://" in location:
        return location
    return Path(location).resolve().as_uri()


def registry(spark: Any) -> Any | None:
    """The JVM QualityRegistry class through py4j, or None (Spark Connect, no gateway, jar not loaded)."""
    return java_class(spark, REGISTRY_CLASS)


def record_results(spark: Any, namespace: str, name: str, result: Any, contract: Any = None) -> bool:
    """Record a check result for dataset (namespace, name), named as the listener names it.

    `contract` defaults to the one at `result.contract_location`. Returns True when recorded, False when
    skipped (Spark Connect: one info line per run; no gateway or jar: debug; a JVM-side error: one warning).
    """
    contract = _contract(result, contract)
    if is_connect(spark):
        log_once(getattr(result, "run_id", None), "listener-registry",
                 "Spark Connect session: quality results not recorded for the OpenLineage Spark listener (it does "
                 "not run on Connect); this run's own OpenLineage events carry them", logger=log)
        return False
    target = registry(spark)
    if target is None:
        log.debug("dq-governance listener extension not reachable through py4j; quality results not recorded")
        return False
    document = json.dumps(payload(result, contract), allow_nan=False)
    try:
        target.record(namespace, name, document)
    except Exception as exc:  # a JVM-side rejection must not fail the pipeline
        log.warning("could not record quality results for %s %s in the listener: %s", namespace, name,
                    str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
        return False
    return True


def _contract(result: Any, contract: Any) -> Any:
    if contract is not None and not isinstance(contract, (str, Path)):
        return contract
    source = contract or getattr(result, "contract_location", None)
    if not source:
        raise ConfigError("record_results: pass contract= (the result does not say where its contract is)")
    from dq_governance.contracts.load import load_contract

    text = str(source)
    return load_contract(text[len("file://"):] if text.startswith("file://") else text)

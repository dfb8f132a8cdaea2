"""Catalog sync: contracts, owners, PII tags, quality results and lineage into OpenMetadata or DataHub.

`sync_run(catalog, contract, result)` pushes one check run; `make_pusher` + `sync` push many contracts.
Without a URL the sync is a dry run that writes each request as a numbered JSON file.
"""

from dq_governance.catalogs.base import ColumnLineage, DatasetRef, LineageEdge, SyncReport
from dq_governance.catalogs.sync import load_contracts, load_results, make_pusher, sync, sync_run

__all__ = ["ColumnLineage", "DatasetRef", "LineageEdge", "SyncReport", "load_contracts", "load_results",
           "make_pusher", "sync", "sync_run"]

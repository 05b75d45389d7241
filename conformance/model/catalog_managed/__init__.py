"""An executable model of the catalog-managed RFC (Delta ``catalogManaged``), small enough to read.

Three parts, each transition named after the RFC section that allows it:

- ``catalog``: what a managing catalog holds per table and may answer: ratify (v only after v-1,
  at most once), list (a range, always with the latest version), forget published commits, inline
  commits, maintenance policies. Several tables at once (``CatalogModel``).
- ``table``: one table as its clients see it: the rows of every version and its in-commit
  timestamp, publication, checkpoints, log compaction, metadata cleanup (which versions stay
  readable), reads by version and by timestamp.
- ``storage``: what ``_delta_log`` and ``_delta_log/_staged_commits`` may and must hold.

The model is permissive where the RFC is (a catalog may keep published commits, a client may decline
a maintenance job) and exact where it binds. Checks compare a target with it after every step of a
generated history (``conformance/checks/delta/*/test_model.py`` and ``test_histories.py``).
"""

from conformance.model.catalog_managed.catalog import (
    MAINTENANCE_OPS,
    CatalogModel,
    CatalogTable,
    Commit,
    Expect,
    ListingFault,
)
from conformance.model.catalog_managed.storage import LogEntry, LogFault, judge_log
from conformance.model.catalog_managed.table import TableModel

__all__ = [
    "MAINTENANCE_OPS",
    "CatalogModel",
    "CatalogTable",
    "Commit",
    "Expect",
    "ListingFault",
    "LogEntry",
    "LogFault",
    "TableModel",
    "judge_log",
]

"""The reference Iceberg REST catalog, with a schedule controller that holds commits for the harness.

Modules: ``app`` (routes of ``rest-catalog-open-api.yaml``), ``catalog`` (operations, on pyiceberg's
metadata, update and requirement models), ``store`` (SQLite pointers), ``controller`` (holds),
``admin`` (holds over HTTP), ``requests`` (body parsing), ``errors`` (the error shape), ``names``
(namespaces in paths), ``runner`` (uvicorn in a thread). See ``docs/iceberg-rest.md``.
"""

from reference_impl.iceberg_rest.controller import (
    CommitOutcome,
    CommitRecord,
    HeldCommit,
    Hold,
    ScheduleController,
    ScheduleTimeout,
)
from reference_impl.iceberg_rest.runner import IcebergRestServer

__all__ = [
    "CommitOutcome",
    "CommitRecord",
    "HeldCommit",
    "Hold",
    "IcebergRestServer",
    "ScheduleController",
    "ScheduleTimeout",
]

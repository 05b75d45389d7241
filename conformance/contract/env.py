"""What lakecert hands a target when it builds its parts (``TargetEnv``), and how clients in other
processes reach the run's store and catalogs. The bottom of the contract: every other contract
module may import it, and it imports only the storage protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.contract.delta import Storage


@dataclass(frozen=True)
class S3Settings:
    """How to reach an S3-compatible store; what a client in another process (a JVM) needs as well."""

    endpoint_url: str
    region: str = "us-east-1"
    access_key_id: str | None = None
    secret_access_key: str | None = None


@dataclass(frozen=True)
class UCEndpoint:
    """Where a client reaches a catalog over Unity Catalog's API, and where its tables are named.

    Given to a client target (``TargetEnv.catalog_endpoint``) when its client is bound to such a
    catalog (interop profile), so a client that talks to catalogs over HTTP itself (a JVM) goes
    to that server rather than to the Python ``Catalog`` object it is handed."""

    url: str
    token: str | None = None
    catalog: str = "unity"
    schema: str = "default"
    name_suffix: str = ""  # appended to every table name (run-scoped names of the ``uc`` target)

    def full_name(self, name: str) -> tuple[str, str, str]:
        """The three-part UC name of a check's table ``name``."""
        return self.catalog, self.schema, name + self.name_suffix


@dataclass
class TargetEnv:
    """What lakecert hands a target when it builds its parts."""

    workdir: Path  # private scratch space for this run (e.g. an embedded database)
    warehouse_uri: str  # where tables of this run live (file:// or s3://)
    storage: Storage  # the object store lakecert observes; clients should use it
    options: dict[str, Any] = field(default_factory=dict)  # the target's `options` from the config
    s3: S3Settings | None = None  # the store's settings when the warehouse is on S3, for clients in other processes
    seed: int = 0  # the run's seed: a target that generates names or UUIDs should derive them from it
    # Interop: the client is bound to a catalog reachable over UC's API at this endpoint (None: use
    # the ``Catalog`` object ``make_client`` is given, e.g. the reference catalog).
    catalog_endpoint: UCEndpoint | None = None

"""What a target is: the system under test, able to build a catalog, a client, or both."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from conformance.targets.contract import Catalog, DeltaClient, Storage
from reference_impl.storage.s3 import S3Settings

Kind = Literal["reference", "faulty", "third-party"]
Side = Literal["catalog", "client", "engine", "iceberg-catalog"]


@dataclass
class TargetEnv:
    """What lakecert hands a target when it builds its parts."""

    workdir: Path  # private scratch space for this run (e.g. an embedded database)
    warehouse_uri: str  # where tables of this run live (file:// or s3://)
    storage: Storage  # the object store lakecert observes; clients should use it
    options: dict[str, Any] = field(default_factory=dict)  # the target's `options` from the config
    s3: S3Settings | None = None  # the store's settings when the warehouse is on S3, for clients in other processes


@runtime_checkable
class Target(Protocol):
    """A third-party adapter implements this; built-in targets do too.

    ``sides`` says what the target provides. For a side it lacks, lakecert uses
    its reference implementation as the counterpart (e.g. a client target is
    bound to the reference catalog, which records what the client does).
    """

    name: str
    kind: Kind
    sides: frozenset[Side]

    def version(self) -> str: ...

    def make_catalog(self, env: TargetEnv) -> Catalog:
        """Called once per run when "catalog" is in ``sides``."""

    def make_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        """Called once per check when "client" is in ``sides``; bind the client to ``catalog``."""

    # Targets with the "engine" side (Iceberg profiles) also provide
    # ``make_engine(env) -> IcebergEngine`` (see conformance/targets/iceberg_contract.py).

    def close(self) -> None: ...

"""The REST catalog Spark commits through: lakecert's reference catalog, or any other one behind the
holding proxy (option ``catalog`` of ``spark-iceberg``: ``reference``, ``nessie``, or a catalog's URI).

Either way the engine gets a ``controller`` that holds its commits (the reference catalog's own, or
the same kind of controller in the proxy), the URI Spark is pointed at, and the table metadata the
catalog serves. A catalog that serves only its current snapshot (Nessie 0.99) cannot be asked for
an older version afterwards, so behind the proxy the engine records each version's rows while the
version is current (``observe``), read at that very snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pyiceberg.table.metadata import TableMetadata, TableMetadataUtil

from conformance.adapters.catalog_proxy import HoldingCatalogProxy
from conformance.contract.iceberg import Row
from conformance.contract.iceberg_catalog import call, endpoint_of
from conformance.contract.target import TargetEnv
from reference_impl.iceberg_rest.controller import ScheduleController
from reference_impl.iceberg_rest.fileio import s3_properties
from reference_impl.iceberg_rest.runner import IcebergRestServer
from reference_impl.storage.s3 import S3Settings

# Reads the table's rows at one snapshot id (the engine's Spark session does it).
ReadAt = Callable[[str, int], tuple[Row, ...]]


class CatalogAccess(Protocol):
    controller: ScheduleController
    uri: str

    def client_properties(self) -> dict[str, str]: ...
    def spark_properties(self) -> dict[str, str]: ...
    def metadata(self, namespace: str, table: str) -> TableMetadata: ...
    def observe(self, table: str) -> None: ...
    def seen(self, table: str, version: int) -> tuple[Row, ...] | None: ...
    def close(self) -> None: ...


class ReferenceCatalog:
    """lakecert's reference REST catalog, served for the run; its controller holds inside it."""

    def __init__(self, env: TargetEnv, hold_timeout_s: float) -> None:
        # Tables on S3: the catalog's own FileIO and every client's (through LoadTableResult.config).
        io = s3_properties(env.s3) if env.s3 is not None and env.warehouse_uri.startswith("s3://") else {}
        self.server = IcebergRestServer(
            f"{env.warehouse_uri}/iceberg",
            env.workdir / "iceberg-catalog.sqlite",
            io_properties=io,
            table_config=io,
            hold_timeout_s=hold_timeout_s,
        ).start()
        self.controller = self.server.controller
        self.uri = self.server.url

    def client_properties(self) -> dict[str, str]:
        return self.server.client_properties()

    def spark_properties(self) -> dict[str, str]:
        return {}

    def metadata(self, namespace: str, table: str) -> TableMetadata:
        return self.server.service.load_table((namespace,), table).metadata

    def observe(self, table: str) -> None:
        return None  # every snapshot stays served

    def seen(self, table: str, version: int) -> tuple[Row, ...] | None:
        return None

    def close(self) -> None:
        self.server.stop()


class ProxiedCatalog:
    """Any REST catalog at ``upstream``, Spark's requests going through a holding proxy."""

    def __init__(
        self,
        upstream: str,
        hold_timeout_s: float,
        read_at: ReadAt,
        namespace: str,
        *,
        s3: S3Settings | None = None,
        on_close: Callable[[], None] = lambda: None,
    ) -> None:
        self.holding = HoldingCatalogProxy(upstream, controller=ScheduleController(hold_timeout_s)).start()
        self.controller = self.holding.controller
        self.uri = self.holding.uri
        self._endpoint = endpoint_of(upstream)  # lakecert's own reads go straight to the catalog
        self._s3 = s3
        self._read_at = read_at
        self._on_close = on_close
        self._seen: dict[tuple[str, int], tuple[Row, ...]] = {}
        self.namespace = namespace

    def client_properties(self) -> dict[str, str]:
        return {"type": "rest", "uri": self.uri, **self.spark_properties()}

    def spark_properties(self) -> dict[str, str]:
        # The store's settings for S3FileIO; a catalog's own table config (LoadTableResult) wins over them.
        return s3_properties(self._s3) if self._s3 is not None else {}

    def metadata(self, namespace: str, table: str) -> TableMetadata:
        loaded = call(f"{self._endpoint.base}/namespaces/{namespace}/tables/{table}", "GET")
        if loaded.status != 200 or not isinstance(loaded.body, dict):
            raise LookupError(f"the catalog answered {loaded.status} loading {namespace}.{table}")
        return TableMetadataUtil.parse_obj(loaded.body["metadata"])

    def observe(self, table: str) -> None:
        """Record the rows of the table's current version, read at its snapshot."""
        meta = self.metadata(self.namespace, table)
        snap = meta.snapshot_by_id(meta.current_snapshot_id) if meta.current_snapshot_id is not None else None
        version = int(snap.sequence_number or 0) if snap is not None else 0
        if snap is not None and (table, version) not in self._seen:
            self._seen[(table, version)] = self._read_at(table, snap.snapshot_id)

    def seen(self, table: str, version: int) -> tuple[Row, ...] | None:
        return self._seen.get((table, version))

    def close(self) -> None:
        try:
            self.holding.stop()
        finally:
            self._on_close()


def open_catalog(
    env: TargetEnv, catalog: str, hold_timeout_s: float, nessie: dict[str, Any], read_at: ReadAt, namespace: str
) -> CatalogAccess:
    """``reference``, ``nessie`` (started for the run, options ``nessie: {...}`` as the nessie
    target's), or the URI of a running REST catalog (its tables on the run's store)."""
    if catalog == "reference":
        return ReferenceCatalog(env, hold_timeout_s)
    if catalog == "nessie":
        from conformance.adapters.nessie.target import NessieOptions, start_nessie

        server = start_nessie(env, NessieOptions(**nessie))
        try:
            return ProxiedCatalog(
                server.iceberg_uri, hold_timeout_s, read_at, namespace, s3=server.s3, on_close=server.stop
            )
        except BaseException:
            server.stop()
            raise
    if catalog.startswith("http://"):  # the proxy forwards plain HTTP (a catalog on loopback or a LAN)
        return ProxiedCatalog(catalog, hold_timeout_s, read_at, namespace, s3=env.s3)
    raise ValueError(f"catalog must be reference, nessie or a REST catalog's http:// URI, not {catalog!r}")

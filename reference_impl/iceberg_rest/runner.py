"""The catalog, its controller and uvicorn in one object: in a daemon thread (tests, an in-process
harness) or in the foreground (``python -m reference_impl.iceberg_rest``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType

from reference_impl.asgi_thread import DEFAULT_LIMITS, ConnectionLimits, ServerThread
from reference_impl.iceberg_rest.app import build_app
from reference_impl.iceberg_rest.body import DEFAULT_BODY_TIMEOUT_S, DEFAULT_MAX_BODY_BYTES
from reference_impl.iceberg_rest.catalog import RestCatalogService
from reference_impl.iceberg_rest.controller import WRITER_HEADER, ScheduleController
from reference_impl.iceberg_rest.files import DEFAULT_MAX_METADATA_BYTES, DEFAULT_READ_TIMEOUT_S
from reference_impl.iceberg_rest.store import PointerStore

DEFAULT_PREFIX = "lakecert"


class IcebergRestServer:
    """A reference Iceberg REST catalog on ``host:port`` (port 0: any free port).

    ``database`` is the SQLite file of the pointer store (``":memory:"``: gone when stopped);
    ``warehouse`` is where new tables go, and with ``allowed_locations`` where tables may be put.
    The controller's holds default to ``hold_timeout_s``; bodies over ``max_body_bytes`` are a 413, bodies
    not there within ``body_timeout_s`` a 408; metadata files a client names are read up to
    ``max_metadata_bytes`` within ``read_timeout_s`` (``files.py``); ``limits`` bound connections
    (``asgi_thread.py``). ``service_cls`` is the catalog's implementation (a faulty variant in the self-test).
    """

    def __init__(
        self,
        warehouse: str,
        database: str | Path = ":memory:",
        *,
        io_properties: Mapping[str, str] | None = None,
        table_config: Mapping[str, str] | None = None,
        allowed_locations: Iterable[str] = (),
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        service_cls: type[RestCatalogService] = RestCatalogService,
        prefix: str = DEFAULT_PREFIX,
        host: str = "127.0.0.1",
        port: int = 0,
        hold_timeout_s: float = 10.0,
        log_level: str = "warning",
        body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
        max_metadata_bytes: int = DEFAULT_MAX_METADATA_BYTES,
        read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
        limits: ConnectionLimits = DEFAULT_LIMITS,
    ) -> None:
        self.store = PointerStore(database)
        self.service = service_cls(
            self.store,
            warehouse,
            io_properties,
            table_config,
            allowed_locations,
            max_metadata_bytes=max_metadata_bytes,
            read_timeout_s=read_timeout_s,
        )
        self.controller = ScheduleController(hold_timeout_s)
        self.app = build_app(self.service, self.controller, prefix, max_body_bytes, body_timeout_s)
        self._server = ServerThread(self.app, host, port, log_level, limits)

    @property
    def url(self) -> str:
        return self._server.url

    def client_properties(self, writer: str | None = None) -> dict[str, str]:
        """Catalog properties for pyiceberg's ``load_catalog(type="rest", ...)``; ``writer`` tags its commits."""
        properties = {"type": "rest", "uri": self.url}
        if writer is not None:
            properties[f"header.{WRITER_HEADER}"] = writer
        return properties

    def serve_forever(self) -> None:
        """Serve until SIGTERM or SIGINT, then release everything as ``stop()`` does (the store closed,
        so SQLite leaves no ``-wal``/``-shm`` file) and return: the process exits 0."""
        try:
            self._server.serve_forever()
        finally:
            self.controller.close()
            self.store.close()

    def start(self, timeout_s: float = 15.0) -> IcebergRestServer:
        self._server.start(timeout_s)
        return self

    def stop(self) -> None:
        self.controller.close()  # no request may stay held while the server drains
        self._server.stop()
        self.store.close()

    def __enter__(self) -> IcebergRestServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

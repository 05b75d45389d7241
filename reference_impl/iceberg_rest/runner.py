"""The catalog, its controller and uvicorn in one object: in a daemon thread (tests, an in-process
harness) or in the foreground (``python -m reference_impl.iceberg_rest``)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

import uvicorn

from reference_impl.iceberg_rest.app import build_app
from reference_impl.iceberg_rest.catalog import RestCatalogService
from reference_impl.iceberg_rest.controller import WRITER_HEADER, ScheduleController
from reference_impl.iceberg_rest.store import PointerStore

DEFAULT_PREFIX = "lakecert"


def _listen(host: str, port: int) -> socket.socket:
    """A bound TCP socket with TCP_NODELAY, which accepted connections inherit: without it a response
    sent in two writes waits for the client's delayed ACK, some 40 ms per request."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    return sock


class IcebergRestServer:
    """A reference Iceberg REST catalog on ``host:port`` (port 0: any free port).

    ``database`` is the SQLite file of the pointer store (``":memory:"``: gone when stopped);
    ``warehouse`` is where new tables go. The controller's holds default to ``hold_timeout_s``.
    """

    def __init__(
        self,
        warehouse: str,
        database: str | Path = ":memory:",
        *,
        io_properties: Mapping[str, str] | None = None,
        table_config: Mapping[str, str] | None = None,
        prefix: str = DEFAULT_PREFIX,
        host: str = "127.0.0.1",
        port: int = 0,
        hold_timeout_s: float = 10.0,
        log_level: str = "warning",
    ) -> None:
        self.store = PointerStore(database)
        self.service = RestCatalogService(self.store, warehouse, io_properties, table_config)
        self.controller = ScheduleController(hold_timeout_s)
        self.app = build_app(self.service, self.controller, prefix)
        self._sock = _listen(host, port)
        self.host, self.port = host, int(self._sock.getsockname()[1])
        config = uvicorn.Config(self.app, log_level=log_level, lifespan="off", timeout_graceful_shutdown=5)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def client_properties(self, writer: str | None = None) -> dict[str, str]:
        """Catalog properties for pyiceberg's ``load_catalog(type="rest", ...)``; ``writer`` tags its commits."""
        properties = {"type": "rest", "uri": self.url}
        if writer is not None:
            properties[f"header.{WRITER_HEADER}"] = writer
        return properties

    def serve_forever(self) -> None:
        self._server.run(sockets=[self._sock])

    def start(self, timeout_s: float = 15.0) -> IcebergRestServer:
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the Iceberg REST server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        self.controller.close()  # no request may stay held while the server drains
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=15)
        self._sock.close()
        self.store.close()

    def __enter__(self) -> IcebergRestServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

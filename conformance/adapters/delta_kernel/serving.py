"""The run's reference catalog served over Unity Catalog's HTTP API, for clients that do their own I/O.

A client target is bound to the run's (recording) reference catalog. Delta Kernel cannot be handed
a Python object: it talks to a catalog over HTTP. ``ServedCatalog`` serves ``lakecert serve``'s
app (``reference_impl.server``) on a loopback port, over whichever catalog the current check bound
the client to, so every call Kernel makes lands in that check's transcript like a Python client's.

Names: the checks name tables plainly (``table_name``) and resolve them on the reference catalog
by that name; UC names are three-part. The catalog is shown to the server as ``CATALOG.SCHEMA.n``
for the check's ``n`` (``UC_CATALOG``/``UC_SCHEMA`` below), and the server's own records (UC
namespaces, columns, properties) live in the reference catalog's database, as in ``lakecert serve``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast

from conformance.contract.delta import Catalog, NotSupported, StagingTable, TableInfo
from conformance.observe.http_transcript import exchange, record
from conformance.observe.object_proxy import ProxyEvent, RecordingProxy
from reference_impl.asgi_thread import ServerThread
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.server.app import build_app
from reference_impl.server.auth import Authenticator
from reference_impl.server.meta import MetaStore
from reference_impl.server.service import CatalogService, Limits

UC_CATALOG = "unity"
UC_SCHEMA = "default"
_PREFIX = f"{UC_CATALOG}.{UC_SCHEMA}."


def uc_name(name: str) -> str:
    """The three-part UC name of a check's table."""
    return name if name.count(".") == 2 else _PREFIX + name


def _plain(full_name: str) -> str:
    return full_name.removeprefix(_PREFIX)


class _BoundCatalog:
    """The catalog the current check bound the client to, under UC's three-part names."""

    def __init__(self) -> None:
        self.current: Catalog | None = None

    def _catalog(self) -> Catalog:
        if self.current is None:
            raise RuntimeError("no check has bound a catalog to the served client yet")
        return self.current

    def create_staging_table(self) -> StagingTable:
        return self._catalog().create_staging_table()

    def register_table(self, name: str, table_id: str) -> TableInfo:
        info = self._catalog().register_table(_plain(name), table_id)
        return dataclasses.replace(info, name=uc_name(info.name))

    def resolve(self, name: str) -> TableInfo:
        info = self._catalog().resolve(_plain(name))
        return dataclasses.replace(info, name=uc_name(info.name))

    def __getattr__(self, name: str) -> Any:
        # commit, get_commits, mark_published, maintenance_policy: by table id, unchanged.
        return getattr(self._catalog(), name)


def reference_database(catalog: Catalog) -> Path | str:
    """The database of the reference catalog behind ``catalog`` (a recording wrapper or itself)."""
    inner = getattr(catalog, "inner", catalog)
    if not isinstance(inner, ReferenceCatalog):
        raise TypeError(f"client targets are served over the reference catalog, not {type(inner).__name__}")
    location: Path | str = inner._store.location  # the server's records share its database, as in `lakecert serve`
    return location


class ServedCatalog:
    """``lakecert serve``'s app over the bound catalog, on 127.0.0.1 (any free port), in a thread."""

    def __init__(self, catalog: Catalog, storage: Any) -> None:
        self._bound = _BoundCatalog()
        self._bound.current = catalog
        self._meta = MetaStore(reference_database(catalog))
        # No cap on unpublished commits: the in-process reference catalog the other clients are bound
        # to has none, and the writer checks build histories past ten versions before publishing
        # (UC's own cap of 10 is a catalog policy, judged on catalogs, not a rule for writers).
        self._service = CatalogService(
            cast(ReferenceCatalog, self._bound),
            self._meta,
            storage,
            server_name="lakecert-reference (served)",
            limits=Limits(max_unpublished=None),
        )
        self._service.ensure_namespace(UC_CATALOG, UC_SCHEMA)
        # "error": the JDK HTTP client asks every request for an h2c upgrade, which uvicorn warns about.
        app = build_app(self._service, Authenticator(None))
        self._server = ServerThread(app, log_level="error").start()
        # Kernel reaches the server through a recording proxy: what it sent, in order, goes into
        # the check's HTTP transcript (its reproducer's curl replay), as the uc target's does.
        self._proxy = RecordingProxy(self._server.url, hold_timeout_s=None).start()
        self._proxy.exchange_observers.append(self._recorded)

    def _recorded(self, event: ProxyEvent, headers: list[tuple[str, str]], body: bytes, answer: bytes) -> None:
        target = event.path + (f"?{event.query}" if event.query else "")
        record(exchange(self._proxy.url, event.method, target, event.status, headers, body, answer))

    @property
    def url(self) -> str:
        return self._proxy.url

    def bind(self, catalog: Catalog) -> None:
        """Serve ``catalog`` from now on (each check binds its own recording catalog)."""
        if reference_database(catalog) != reference_database(self._bound._catalog()):
            # One JVM per run, started against one served database: a check that brings a catalog of its
            # own (the nemesis's restart) cannot reach this client.
            raise NotSupported("the served catalog is bound to the run's reference catalog for its whole life")
        self._bound.current = catalog

    def close(self) -> None:
        self._proxy.stop()
        self._server.stop()
        self._meta.close()

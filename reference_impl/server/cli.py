"""``lakecert serve``: the reference catalog (or one faulty variant) over HTTP.

``add_serve_arguments(parser)`` declares the options; ``serve_main(args)`` runs the server
until SIGTERM or SIGINT and returns an exit code (0 after a clean stop, or 2 for bad usage
or a database it cannot use, found at start-up). ``build(args)`` builds the app without
running it (tests, embedding).
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the server's dependencies (extra `server`) are imported only when serving
    import uvicorn
    from fastapi import FastAPI

    from reference_impl.asgi_thread import ConnectionLimits
    from reference_impl.catalog.catalog import ReferenceCatalog
    from reference_impl.server.meta import MetaStore
    from reference_impl.server.service import CatalogService

USAGE_ERROR = 2
DEFAULT_MAX_BODY_BYTES = 1024 * 1024  # reference_impl.server.edge uses the same default
DEFAULT_BODY_TIMEOUT_S = 30.0  # and this
DEFAULT_MAX_COMMIT_BYTES = 16 * 1024 * 1024  # reference_impl.storage.commit_file uses the same defaults
DEFAULT_COMMIT_READ_TIMEOUT_S = 10.0
GRACEFUL_SHUTDOWN_S = 10
SERVER_NAME = "lakecert-reference-0.1"


class ServeError(ValueError):
    """Bad usage of ``lakecert serve`` (unknown fault, bad tokens file, ...)."""


def add_serve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        default="lakecert-serve/catalog.sqlite",
        help="the catalog's database: a SQLite file, or a postgresql:// URL (extra `postgres`)",
    )
    p.add_argument("--warehouse", help="where tables live, file:// or s3:// (default: <db dir>/warehouse)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    p.add_argument("--port", type=int, default=8080, help="port (0: any free port)")
    p.add_argument("--fault", help="serve this faulty catalog variant (see `lakecert targets`)")
    p.add_argument("--tokens", help="YAML tokens file (token -> role, optional table scope); none: open server")
    p.add_argument("--catalog", default="unity", help="catalog created at start-up (default: unity)")
    p.add_argument("--schema", default="default", help="schema created at start-up (default: default)")
    p.add_argument(
        "--max-unpublished",
        type=int,
        default=10,
        help="UC's limit on unpublished commits per table, refused with 429 (default 10, UC's; 0: no limit)",
    )
    p.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES, help="largest request body")
    p.add_argument(
        "--body-timeout",
        type=float,
        default=DEFAULT_BODY_TIMEOUT_S,
        help="seconds a request body may take to arrive, else 408 (default 30)",
    )
    p.add_argument(
        "--max-commit-bytes",
        type=int,
        default=DEFAULT_MAX_COMMIT_BYTES,
        help="largest staged or published commit file the server reads (default 16 MiB)",
    )
    p.add_argument(
        "--commit-read-timeout",
        type=float,
        default=DEFAULT_COMMIT_READ_TIMEOUT_S,
        help="seconds reading one commit file may take (default 10)",
    )
    # None: asgi_thread's defaults (imported only when serving: uvicorn is the `server` extra's).
    p.add_argument("--max-connections", type=int, help="open connections at most; more are closed (default 10000)")
    p.add_argument(
        "--header-timeout", type=float, help="seconds a connection may take to send a request's headers (default 10)"
    )
    p.add_argument("--idle-timeout", type=float, help="seconds a kept-alive connection may stay idle (default 5)")
    p.add_argument("--s3-endpoint-url", help="S3 endpoint for s3:// warehouses (credentials: AWS environment)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])


def parse_serve_args(argv: list[str]) -> argparse.Namespace:
    """``lakecert serve ARGV`` as a namespace (tests, embedding)."""
    parser = argparse.ArgumentParser(prog="lakecert serve")
    add_serve_arguments(parser)
    return parser.parse_args(argv)


@dataclass
class Built:
    app: FastAPI
    service: CatalogService
    catalog: ReferenceCatalog
    meta: MetaStore

    def close(self) -> None:
        self.meta.close()
        self.catalog.close()


def _catalog_class(fault_name: str | None) -> type[ReferenceCatalog]:
    from reference_impl.catalog.catalog import ReferenceCatalog

    if not fault_name:
        return ReferenceCatalog
    from reference_impl.faults.registry import all_faults

    fault = all_faults().get(fault_name.removeprefix("faulty:"))
    if fault is None or fault.side != "catalog":
        names = sorted(f.name for f in all_faults().values() if f.side == "catalog")
        raise ServeError(f"unknown catalog fault {fault_name!r}; one of: {', '.join(names)}")
    assert isinstance(fault.cls, type) and issubclass(fault.cls, ReferenceCatalog)
    return fault.cls


def build(args: argparse.Namespace) -> Built:
    """The app for ``args`` (the options of ``add_serve_arguments``); ``ServeError`` on bad usage."""
    from reference_impl.catalog.store import StoreError, is_postgres_url

    try:
        from reference_impl.server.app import build_app
        from reference_impl.server.auth import Authenticator, TokenFileError, load_tokens
        from reference_impl.server.meta import MetaStore
        from reference_impl.server.service import CatalogService, Limits
        from reference_impl.storage import make_storage
        from reference_impl.storage.local import path_to_uri
    except ImportError as e:
        raise ServeError(f"the server needs the `server` extra (pip install 'lakecert[server]'): {e}") from e
    from reference_impl.storage.commit_file import ReadLimits

    if args.max_unpublished < 0 or args.max_body_bytes < 1 or args.max_commit_bytes < 1:
        raise ServeError("--max-unpublished must be >= 0, --max-body-bytes and --max-commit-bytes >= 1")
    if not (args.body_timeout > 0 and args.commit_read_timeout > 0):
        raise ServeError("--body-timeout and --commit-read-timeout must be > 0")
    cls = _catalog_class(args.fault)
    try:
        tokens = load_tokens(args.tokens) if args.tokens else None
    except TokenFileError as e:
        raise ServeError(str(e)) from e
    db: str | Path
    if is_postgres_url(args.db):
        # Several servers may share the database: they must share the warehouse too, so no default.
        if not args.warehouse:
            raise ServeError("a PostgreSQL --db needs --warehouse (the servers sharing the database share it)")
        db = args.db
    else:
        db = Path(args.db).resolve()
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ServeError(f"cannot create the database's directory {db.parent}: {e.strerror}") from e
    warehouse = args.warehouse or path_to_uri(Path(db).parent / "warehouse")
    if not warehouse.startswith(("file:///", "s3://")):
        raise ServeError(f"--warehouse must be an absolute file:// or an s3:// URI, not {warehouse!r}")
    storage = make_storage(args.s3_endpoint_url)
    limits_read = ReadLimits(max_bytes=args.max_commit_bytes, timeout_s=args.commit_read_timeout)
    try:
        catalog = cls(db, warehouse, storage, read_limits=limits_read)
    except StoreError as e:
        raise ServeError(str(e)) from e
    try:
        meta = MetaStore(db)
    except StoreError as e:
        catalog.close()
        raise ServeError(str(e)) from e
    limits = Limits(max_unpublished=args.max_unpublished or None)
    name = SERVER_NAME + (f" (faulty:{args.fault.removeprefix('faulty:')})" if args.fault else "")
    service = CatalogService(catalog, meta, storage, limits=limits, server_name=name)
    from reference_impl.server.errors import ApiError

    try:
        service.ensure_namespace(args.catalog, args.schema)
    except ApiError as e:
        meta.close()
        catalog.close()
        raise ServeError(e.message) from e
    app = build_app(
        service, Authenticator(tokens), max_body_bytes=args.max_body_bytes, body_timeout_s=args.body_timeout
    )
    return Built(app, service, catalog, meta)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def connection_limits(args: argparse.Namespace) -> ConnectionLimits:
    """The connection limits ``args`` ask for (``ValueError`` for a value that is not positive)."""
    from reference_impl.asgi_thread import DEFAULT_LIMITS, ConnectionLimits

    return ConnectionLimits(
        DEFAULT_LIMITS.max_connections if args.max_connections is None else args.max_connections,
        DEFAULT_LIMITS.header_timeout_s if args.header_timeout is None else args.header_timeout,
        DEFAULT_LIMITS.idle_timeout_s if args.idle_timeout is None else args.idle_timeout,
    )


def _server(app: FastAPI, log_level: str, limits: ConnectionLimits) -> uvicorn.Server:
    """uvicorn with the shared connection limits (``asgi_thread``), stopped cleanly by SIGTERM or SIGINT:
    the signal ends the serving loop and the process then exits 0 after closing the database (uvicorn
    itself re-raises the signal after its shutdown, which kills the process with 143 before the
    database is closed). Requests still running get ``GRACEFUL_SHUTDOWN_S``."""
    from reference_impl.asgi_thread import QuietServer, server_config

    config = server_config(
        app, log_level=log_level, limits=limits, graceful_shutdown_s=GRACEFUL_SHUTDOWN_S, lifespan="auto"
    )
    return QuietServer(config)


def serve_main(args: argparse.Namespace) -> int:
    try:
        limits = connection_limits(args)
    except ValueError as e:
        print(f"lakecert serve: --max-connections, --header-timeout and --idle-timeout: {e}", file=sys.stderr)
        return USAGE_ERROR
    try:
        built = build(args)
    except ServeError as e:
        print(f"lakecert serve: {e}", file=sys.stderr)
        return USAGE_ERROR
    from reference_impl.asgi_thread import bind_socket

    try:
        sock = bind_socket(args.host, args.port)
    except OSError as e:
        built.close()
        print(f"lakecert serve: cannot bind {args.host}:{args.port}: {e}", file=sys.stderr)
        return USAGE_ERROR
    if not _is_loopback(args.host) and not args.tokens:
        warning = f"{args.host} is not loopback and there is no --tokens: anyone who can connect can commit"
        print(f"lakecert serve: WARNING: {warning}", file=sys.stderr)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"lakecert serve: {built.service.server_name} listening on http://{host}:{sock.getsockname()[1]}"
        f" (API under /api/2.1/unity-catalog; warehouse {built.catalog.warehouse_uri};"
        f" {'bearer tokens required' if args.tokens else 'open: no tokens configured'})",
        file=sys.stderr,
        flush=True,
    )
    try:
        _server(built.app, args.log_level, limits).run(sockets=[sock])
    finally:
        sock.close()
        built.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m reference_impl.server.cli``: the same as ``lakecert serve``."""
    parser = argparse.ArgumentParser(prog="lakecert serve", description=__doc__)
    add_serve_arguments(parser)
    return serve_main(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

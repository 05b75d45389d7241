"""``python -m reference_impl.iceberg_rest --warehouse URI [--database FILE] [--port N]``: serve in the foreground.

Storage settings for the server's own FileIO (``s3.endpoint``, keys...) come as ``--io KEY=VALUE``,
settings handed to clients in every LoadTableResult as ``--table-config KEY=VALUE``. Tables may
live in the warehouse and under each ``--allow-location URI``.
"""

from __future__ import annotations

import argparse

from reference_impl.asgi_thread import DEFAULT_LIMITS, ConnectionLimits
from reference_impl.iceberg_rest.body import DEFAULT_BODY_TIMEOUT_S, DEFAULT_MAX_BODY_BYTES
from reference_impl.iceberg_rest.files import DEFAULT_MAX_METADATA_BYTES, DEFAULT_READ_TIMEOUT_S
from reference_impl.iceberg_rest.runner import DEFAULT_PREFIX, IcebergRestServer


def _pairs(items: list[str]) -> dict[str, str]:
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"expected KEY=VALUE, got {item!r}")
        pairs[key] = value
    return pairs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m reference_impl.iceberg_rest", description=__doc__)
    parser.add_argument("--warehouse", required=True, help="file:///path or s3://bucket/prefix")
    parser.add_argument("--database", default="iceberg-rest.sqlite", help="SQLite file of the pointer store")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8181)
    parser.add_argument("--prefix", default=DEFAULT_PREFIX)
    parser.add_argument("--io", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--table-config", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--hold-timeout-s", type=float, default=60.0)
    parser.add_argument("--allow-location", action="append", default=[], metavar="URI")
    parser.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES)
    parser.add_argument("--body-timeout", type=float, default=DEFAULT_BODY_TIMEOUT_S, help="seconds (408 after)")
    parser.add_argument("--max-metadata-bytes", type=int, default=DEFAULT_MAX_METADATA_BYTES)
    parser.add_argument("--metadata-read-timeout", type=float, default=DEFAULT_READ_TIMEOUT_S)
    parser.add_argument("--max-connections", type=int, default=DEFAULT_LIMITS.max_connections)
    parser.add_argument("--header-timeout", type=float, default=DEFAULT_LIMITS.header_timeout_s)
    parser.add_argument("--idle-timeout", type=float, default=DEFAULT_LIMITS.idle_timeout_s)
    args = parser.parse_args(argv)
    positive = (args.body_timeout, args.max_metadata_bytes, args.metadata_read_timeout, args.max_body_bytes)
    if min(positive) <= 0:
        parser.error("sizes and timeouts must be > 0")
    try:
        limits = ConnectionLimits(args.max_connections, args.header_timeout, args.idle_timeout)
    except ValueError as e:
        parser.error(str(e))
    server = IcebergRestServer(
        args.warehouse,
        args.database,
        io_properties=_pairs(args.io),
        table_config=_pairs(args.table_config),
        allowed_locations=args.allow_location,
        max_body_bytes=args.max_body_bytes,
        prefix=args.prefix,
        host=args.host,
        port=args.port,
        hold_timeout_s=args.hold_timeout_s,
        log_level="info",
        body_timeout_s=args.body_timeout,
        max_metadata_bytes=args.max_metadata_bytes,
        read_timeout_s=args.metadata_read_timeout,
        limits=limits,
    )
    print(f"Iceberg REST catalog at {server.url} (warehouse {args.warehouse})", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

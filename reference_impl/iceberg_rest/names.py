"""Namespaces and table names as the REST paths carry them.

A multipart namespace travels as one path segment whose parts are joined by the namespace
separator, ``0x1F`` unless the server advertises ``namespace-separator`` (this server does not).
"""

from __future__ import annotations

Namespace = tuple[str, ...]
SEPARATOR = "\x1f"


def dotted(parts: Namespace) -> str:
    return ".".join(parts)


# One level becomes one directory of a default table location: a file system's name limit (bytes).
MAX_NAME_BYTES = 255


def valid_name(name: str) -> bool:
    """A non-empty level that cannot be confused with a separator nor name another directory.

    Control characters (NUL cannot be in a file name at all), ``.`` and ``..`` (they would place a
    default table location outside its namespace's directory) and lone surrogates (no UTF-8 form)
    are refused, as is a level longer than a file name may be.
    """
    if not name or name in (".", "..") or any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return False
    try:
        return len(name.encode("utf-8")) <= MAX_NAME_BYTES
    except UnicodeEncodeError:
        return False


def split_namespace(segment: str) -> Namespace | None:
    """The namespace of a path segment, or None when a level is empty."""
    parts = tuple(segment.split(SEPARATOR))
    return parts if all(valid_name(p) for p in parts) else None

"""Namespaces and table names as the REST paths carry them.

A multipart namespace travels as one path segment whose parts are joined by the namespace
separator, ``0x1F`` unless the server advertises ``namespace-separator`` (this server does not).
"""

from __future__ import annotations

Namespace = tuple[str, ...]
SEPARATOR = "\x1f"


def dotted(parts: Namespace) -> str:
    return ".".join(parts)


def valid_name(name: str) -> bool:
    """A non-empty level that cannot be confused with a separator."""
    return bool(name) and SEPARATOR not in name


def split_namespace(segment: str) -> Namespace | None:
    """The namespace of a path segment, or None when a level is empty."""
    parts = tuple(segment.split(SEPARATOR))
    return parts if all(valid_name(p) for p in parts) else None

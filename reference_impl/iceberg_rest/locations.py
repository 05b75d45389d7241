"""Where the catalog lets tables live: the warehouse, plus any roots the operator allows.

A client chooses locations through a namespace's ``location`` property, a table's ``location``
(create, ``set-location``) and the ``write.*.path`` table properties; the catalog writes metadata
files there and hands the location to every engine. Without a bound, one client could make the
server write anywhere it can (``["..", ...]``, ``/etc``) or point other engines' writes there.
Locations are compared by scheme, authority and path segments, never by string prefix, and a
location with ``.`` or ``..`` segments or control characters is refused outright rather than
resolved (a storage layer may or may not resolve them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from reference_impl.iceberg_rest import errors

# Table properties that direct where a writer or the catalog puts files (Iceberg TableProperties).
PATH_PROPERTIES = ("write.metadata.path", "write.data.path", "write.folder-storage.path", "write.object-storage.path")
# Spellings of one storage: Hadoop's S3 connectors read the same buckets as s3://.
_SCHEME_ALIASES = {"": "file", "s3a": "s3", "s3n": "s3"}


@dataclass(frozen=True)
class _Parsed:
    scheme: str
    authority: str
    segments: tuple[str, ...]


def _parse(location: str) -> _Parsed | None:
    """None for a location no storage should be asked to resolve."""
    if not location or any(ord(c) < 0x20 or ord(c) == 0x7F for c in location):
        return None
    try:
        parts = urlsplit(location)
    except ValueError:
        return None
    scheme = _SCHEME_ALIASES.get(parts.scheme.lower(), parts.scheme.lower())
    authority = parts.netloc
    if scheme == "file":
        if authority not in ("", "localhost"):
            return None
        authority = ""
    segments = tuple(s for s in parts.path.split("/") if s)
    if any(s in (".", "..") for s in segments) or parts.query or parts.fragment:
        return None
    return _Parsed(scheme, authority, segments)


class AllowedLocations:
    """The roots a location must lie in (a root itself counts as inside)."""

    def __init__(self, roots: Iterable[str]) -> None:
        self._roots = []
        for root in roots:
            parsed = _parse(root)
            if parsed is None:
                raise ValueError(f"not a usable storage root: {root!r}")
            self._roots.append(parsed)

    def contains(self, location: str) -> bool:
        parsed = _parse(location)
        return parsed is not None and any(
            parsed.scheme == r.scheme
            and parsed.authority == r.authority
            and parsed.segments[: len(r.segments)] == r.segments
            for r in self._roots
        )

    def split(self, location: str) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
        """(scheme, the segments of the innermost allowed root holding ``location``, the segments below
        it), or None when no root holds it: file access is confined to that root."""
        parsed = _parse(location)
        if parsed is None:
            return None
        roots = [
            r
            for r in self._roots
            if parsed.scheme == r.scheme
            and parsed.authority == r.authority
            and parsed.segments[: len(r.segments)] == r.segments
        ]
        if not roots:
            return None
        root = max(roots, key=lambda r: len(r.segments))
        return parsed.scheme, root.segments, parsed.segments[len(root.segments) :]

    def check(self, location: str, what: str) -> None:
        """400 unless ``location`` is inside an allowed root."""
        if not self.contains(location):
            raise errors.bad_request(f"{what} is outside the catalog's allowed locations: {location!r}")

    def check_table(
        self, location: str, properties: Mapping[str, str], before: Mapping[str, str] | None = None
    ) -> None:
        """A table's location and path properties; only values that differ from ``before`` (an older
        table keeps working if the allowed roots shrank)."""
        previous = dict(before or {})
        if location != previous.get("location"):
            self.check(location, "Table location")
        for key in PATH_PROPERTIES:
            value = properties.get(key)
            if value is not None and value != previous.get(key):
                self.check(value, f"Table property {key}")

"""``file://`` storage with atomic, race-safe put-if-absent.

Writers never expose half-written objects: content goes to a temp file in the
target directory first and only then appears under its real name, either by
``os.link`` (fails if the name exists: put-if-absent, RFC "Commit Protocol"
option 3) or by ``os.replace`` (plain put).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from conformance.contract.delta import FileInfo

SCHEME = "file://"
# Temp files start with this; ``list`` never reports them.
TEMP_PREFIX = ".tmp-"


def uri_to_path(uri: str) -> Path:
    """``file:///a/b`` -> ``/a/b``. Only absolute, host-less URIs are accepted."""
    if not uri.startswith(SCHEME + "/"):
        raise ValueError(f"not an absolute file:// URI: {uri!r}")
    return Path(uri[len(SCHEME) :])


def path_to_uri(path: str | os.PathLike[str]) -> str:
    """``/a/b`` -> ``file:///a/b`` (the path must be absolute)."""
    p = os.fspath(path)
    if not os.path.isabs(p):
        raise ValueError(f"not an absolute path: {p!r}")
    return SCHEME + p


class LocalStorage:
    """``contract.Storage`` over the local file system.

    ``fsync=True`` flushes object content before it becomes visible (slower;
    only needed when surviving a machine crash matters).
    """

    def __init__(self, *, fsync: bool = False) -> None:
        self._fsync = fsync

    def put(self, uri: str, data: bytes, *, if_absent: bool = False) -> None:
        target = uri_to_path(uri)
        tmp = target.parent / f"{TEMP_PREFIX}{uuid.uuid4().hex}"
        try:
            try:
                f = open(tmp, "xb")  # noqa: SIM115 - closed below, once the folder exists
            except FileNotFoundError:
                # The folder is made only when missing: most puts go to a table's existing
                # folders, where a mkdir per put (2,800 in a default run) only costs system time.
                target.parent.mkdir(parents=True, exist_ok=True)
                f = open(tmp, "xb")  # noqa: SIM115
            with f:
                f.write(data)
                if self._fsync:
                    f.flush()
                    os.fsync(f.fileno())
            if if_absent:
                # link() is atomic and refuses an existing name, so exactly one of
                # several racing writers wins, and readers only see full content.
                os.link(tmp, target)
            else:
                os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)

    def get(self, uri: str) -> bytes:
        return uri_to_path(uri).read_bytes()

    def list(self, prefix_uri: str) -> list[FileInfo]:
        """Files below the directory ``prefix_uri`` (recursively), sorted by URI."""
        root = uri_to_path(prefix_uri)
        found: list[FileInfo] = []
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                if name.startswith(TEMP_PREFIX):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                except FileNotFoundError:  # deleted while we walked
                    continue
                found.append(FileInfo(path_to_uri(path), st.st_size, st.st_mtime_ns // 1_000_000))
        found.sort(key=lambda f: f.uri)
        return found

    def delete(self, uri: str) -> None:
        uri_to_path(uri).unlink(missing_ok=True)

    def exists(self, uri: str) -> bool:
        return uri_to_path(uri).is_file()

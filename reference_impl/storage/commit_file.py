"""Reading a commit file a writer put in a table: bounded, never blocking, never leaving the table.

A staged commit (RFC "Terminology: Commits", staged commit) is written by a client, so to the
catalog its path is hostile input: it may be a FIFO (an open would wait for a writer for ever),
a directory, a device, a symbolic link (out of the table, or a loop), or a sparse file of any
size. ``read_commit_file`` reads only a regular file reached from the table's root without
following any link below it, opened non-blocking, at most ``max_bytes`` long, within
``timeout_s``; anything else is a ``CommitFileError``. Every kind of refusal is the same
exception, so a writer learns nothing about paths outside the table from the answer.

``file://`` URIs are read with ``os.open`` relative to directory descriptors (``O_NOFOLLOW``,
``O_NONBLOCK``, ``fstat`` before any read). Other storages (S3) are read through ``Storage.get``
and only the size cap applies after the read; their clients have their own timeouts.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass

from conformance.contract.delta import Storage
from reference_impl.storage.local import SCHEME, uri_to_path

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
DEFAULT_TIMEOUT_S = 10.0
_CHUNK = 1024 * 1024
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY


class CommitFileError(ValueError):
    """The commit file cannot be used: absent, not a regular file, a link, too large or too slow."""


@dataclass(frozen=True)
class ReadLimits:
    """How much a catalog reads of one commit file, and for how long."""

    max_bytes: int = DEFAULT_MAX_BYTES
    timeout_s: float = DEFAULT_TIMEOUT_S


DEFAULT_READ_LIMITS = ReadLimits()


def read_commit_file(storage: Storage | None, uri: str, root: str, limits: ReadLimits = DEFAULT_READ_LIMITS) -> bytes:
    """The content of ``uri``, a file below the table root ``root``; ``CommitFileError`` otherwise."""
    root = root.rstrip("/")
    if not uri.startswith(root + "/"):
        raise CommitFileError("not a file of this table")
    relative = uri[len(root) + 1 :].split("/")
    if any(part in ("", ".", "..") for part in relative):
        raise CommitFileError("not a plain path below the table")
    if uri.startswith(SCHEME):
        return _read_local(root, relative, limits)
    if storage is None:
        raise CommitFileError("no storage to read the commit from")
    try:
        content = storage.get(uri)
    except (FileNotFoundError, ValueError, OSError) as e:
        raise CommitFileError("the commit file cannot be read") from e
    if len(content) > limits.max_bytes:
        raise CommitFileError("the commit file is over the size limit")
    return content


def _read_local(root: str, relative: list[str], limits: ReadLimits) -> bytes:
    deadline = time.monotonic() + limits.timeout_s
    fds: list[int] = []
    try:
        # The table root is the catalog's own location: links above it are the operator's business.
        fds.append(os.open(uri_to_path(root), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
        for part in relative[:-1]:
            fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
        fds.append(os.open(relative[-1], _FILE_FLAGS, dir_fd=fds[-1]))
        return _read_regular(fds[-1], limits.max_bytes, deadline)
    except (OSError, ValueError) as e:  # ENOENT, ELOOP (a link), ENOTDIR, ENAMETOOLONG, EACCES, ...
        raise CommitFileError("the commit file cannot be read") from e
    finally:
        for fd in fds:
            os.close(fd)


def _read_regular(fd: int, max_bytes: int, deadline: float) -> bytes:
    st = os.fstat(fd)
    # Checked on the open descriptor, so a rename after the open cannot swap the file.
    if not stat.S_ISREG(st.st_mode):
        raise CommitFileError("not a regular file")
    if st.st_size > max_bytes:
        raise CommitFileError("the commit file is over the size limit")
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise CommitFileError("reading the commit file took too long")
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > max_bytes:  # it grew after the fstat
            raise CommitFileError("the commit file is over the size limit")
        chunks.append(chunk)

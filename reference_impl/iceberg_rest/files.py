"""Every file the Iceberg REST catalog reads, writes or deletes at a location a client named.

A client names locations (``metadata-location`` of a register, a table's or namespace's
``location``, ``write.metadata.path``), so to the server each is hostile input: a FIFO (an open
would wait for a writer for ever, holding a worker thread), a directory, a device, a symbolic link
a client planted in the warehouse (reading a secrets file, writing metadata outside the
warehouse), or a sparse file of any size. ``.`` and ``..`` segments are refused by
``AllowedLocations`` before anything here runs.

On ``file://`` storage every access is confined to the allowed root the location lies in: the
root itself is opened as the operator configured it (links above it are the operator's), and
every segment below it is opened relative to its parent's descriptor with ``O_NOFOLLOW``, so no
link below the root is followed. Reads go through ``read_commit_file``, the bounded,
non-blocking, no-follow reader the UC server uses for staged commits (a regular file only, at
most ``max_bytes``, within ``timeout_s``); writes create the file with
``O_CREAT|O_EXCL|O_NOFOLLOW`` in a directory reached the same way. Other storages (S3) have no
links, FIFOs or directories a client could plant: the size is checked from the object's length
before it is read. Failures carry no file content, only which location could not be used.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pyiceberg.io import FileIO

from reference_impl.iceberg_rest.locations import AllowedLocations
from reference_impl.storage.commit_file import CommitFileError, ReadLimits, read_commit_file

DEFAULT_MAX_METADATA_BYTES = 64 * 1024 * 1024  # far above a table with thousands of snapshots
DEFAULT_READ_TIMEOUT_S = 10.0
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
_PROBE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY


class FileAccessError(Exception):
    """A location the server cannot use; ``missing``: nothing is there (a 404 rather than a 400)."""

    def __init__(self, message: str, *, missing: bool = False, client_fault: bool = True) -> None:
        super().__init__(message)
        self.missing = missing
        self.client_fault = client_fault


@dataclass(frozen=True)
class _Local:
    root: str  # file:///... of the allowed root (canonical form)
    relative: tuple[str, ...]  # the segments below it, at least one

    @property
    def uri(self) -> str:
        return "/".join((self.root, *self.relative))


class WarehouseFiles:
    """Reads, writes and deletes of files at client-named locations, confined to ``locations``."""

    def __init__(
        self,
        io: FileIO,
        locations: AllowedLocations,
        *,
        max_bytes: int = DEFAULT_MAX_METADATA_BYTES,
        timeout_s: float = DEFAULT_READ_TIMEOUT_S,
    ) -> None:
        self.io = io
        self.locations = locations
        self.limits = ReadLimits(max_bytes=max_bytes, timeout_s=timeout_s)

    def _local(self, location: str) -> _Local | None:
        """The location as a path below its allowed ``file`` root; None for other storages.
        ``FileAccessError`` for a location outside every root (callers check first: a second guard)."""
        split = self.locations.split(location)
        if split is None:
            raise FileAccessError(f"not inside the catalog's allowed locations: {location!r}")
        scheme, root_segments, relative = split
        if scheme != "file":
            return None
        if not relative:
            raise FileAccessError(f"not a file below an allowed location: {location!r}")
        return _Local("file:///" + "/".join(root_segments), relative)

    # reads

    def read(self, location: str) -> bytes:
        local = self._local(location)
        if local is None:
            return self._read_remote(location)
        try:
            return read_commit_file(None, local.uri, local.root, self.limits)
        except CommitFileError as e:
            missing = isinstance(e.__cause__, FileNotFoundError)
            # Every other kind (a FIFO, a link, a directory, too large, too slow) is the same answer.
            raise FileAccessError(f"cannot read {location!r} as a metadata file", missing=missing) from None

    def _read_remote(self, location: str) -> bytes:
        source = self.io.new_input(location)
        try:
            size = len(source)
            if size > self.limits.max_bytes:
                raise FileAccessError(f"{location!r} is over {self.limits.max_bytes} bytes")
            with source.open() as stream:
                data = stream.read(self.limits.max_bytes + 1)
        except FileNotFoundError:
            raise FileAccessError(f"cannot read {location!r} as a metadata file", missing=True) from None
        except OSError:
            raise FileAccessError(f"cannot read {location!r} as a metadata file") from None
        if len(data) > self.limits.max_bytes:
            raise FileAccessError(f"{location!r} is over {self.limits.max_bytes} bytes")
        return bytes(data)

    def exists(self, location: str) -> bool:
        """Whether a regular file is there (reached without following a link below its root)."""
        local = self._local(location)
        if local is None:
            return bool(self.io.new_input(location).exists())
        try:
            with self._directory(local, create=False) as parent:
                fd = os.open(local.relative[-1], _PROBE_FLAGS, dir_fd=parent)
                try:
                    return stat.S_ISREG(os.fstat(fd).st_mode)
                finally:
                    os.close(fd)
        except (OSError, ValueError):
            return False

    # writes

    def create(self, location: str, data: bytes) -> None:
        """Write a new file (never replacing one); ``FileAccessError`` when the path cannot hold one."""
        local = self._local(location)
        if local is None:
            with self.io.new_output(location).create(overwrite=False) as out:
                out.write(data)
            return
        try:
            with self._directory(local, create=True) as parent:
                name = local.relative[-1]
                fd = os.open(name, _NEW_FILE_FLAGS, 0o644, dir_fd=parent)
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                except BaseException:
                    os.close(fd)
                    os.unlink(name, dir_fd=parent)
                    raise
                os.close(fd)
        except OSError as e:
            # ENOSPC, EIO, EACCES: the server's storage, not the request; the rest is the path's fault.
            server_side = e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EACCES)
            reason = os.strerror(e.errno) if e.errno is not None else "cannot be written"
            raise FileAccessError(
                f"cannot write a metadata file at {location!r}: {reason}", client_fault=not server_side
            ) from None

    def delete(self, location: str) -> None:
        """Remove a file the server wrote; anything that is not there (or not reachable) is left alone."""
        local = self._local(location)
        if local is None:
            self.io.delete(location)
            return
        try:
            with self._directory(local, create=False) as parent:
                os.unlink(local.relative[-1], dir_fd=parent)
        except OSError:
            pass

    @contextmanager
    def _directory(self, local: _Local, *, create: bool) -> Iterator[int]:
        """A descriptor of the file's directory, every segment below the root opened without
        following a link (and made when ``create`` and missing)."""
        root = local.root[len("file://") :]
        if create:
            # The root is the operator's (the warehouse, an allowed location): made as configured, as
            # pyiceberg's FileIO made it for the first table.
            os.makedirs(root, exist_ok=True)
        fds = [os.open(root, _ROOT_FLAGS)]
        try:
            for part in local.relative[:-1]:
                try:
                    fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
                except FileNotFoundError:
                    if not create:
                        raise
                    # Made by a concurrent writer meanwhile, or a link: the O_NOFOLLOW open below decides.
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o755, dir_fd=fds[-1])
                    fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
            yield fds[-1]
        finally:
            for fd in fds:
                os.close(fd)

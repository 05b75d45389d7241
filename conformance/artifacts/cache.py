"""Where fetched releases live, one folder per artifact and version, filled once under a lock.

The folder is ``LAKECERT_CACHE`` (setting ``paths.cache``), else the checkout's ``.cache/versions``
when lakecert runs from a checkout, else ``~/.cache/lakecert``. A folder is complete when its
``.complete`` marker exists: a fetch that died half-way is redone, never used.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

CACHE_ENV = "LAKECERT_CACHE"
CHECKOUT = Path(__file__).resolve().parents[2]
MARKER = ".complete"


class ReleaseUnavailable(ValueError):
    """A registry lacks what a release needs, refused to hand it over, or lakecert's driver does not
    build against it: a set-up error (a ``ValueError``, so a target raising it while it is built
    stops the run with exit 2 and one line), never a verdict on the product."""


def cache_root() -> Path:
    found = os.environ.get(CACHE_ENV)
    if found:
        return Path(found)
    if (CHECKOUT / ".cache").is_dir():
        return CHECKOUT / ".cache" / "versions"
    return Path.home() / ".cache" / "lakecert"


def source_digest(*folders: Path) -> str:
    """A short digest of the sources lakecert compiles against a release (its drivers): a folder
    built from other sources than today's is rebuilt, never reused."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:10]


def say(text: str) -> None:
    """A progress line on stderr: a fetch can take minutes, and a CI log must show it is alive."""
    print(f"lakecert: {text}", file=sys.stderr, flush=True)


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One fetcher per folder across processes (pytest-xdist workers, two runs on one machine)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def complete(key: str) -> Path | None:
    """The cache folder ``key`` when a fetch filled it completely (no registry is asked then: a
    fetched release runs offline)."""
    folder = cache_root() / key
    return folder if (folder / MARKER).exists() else None


def filled(key: str, what: str, fill: Callable[[Path], None], *, verb: str = "fetching") -> Path:
    """The cache folder ``key`` (``kernel/4.3.1``), filled by ``fill(folder)`` unless already complete.

    ``what`` names the release in the progress lines. A failed fill leaves nothing behind."""
    folder = cache_root() / key
    if (folder / MARKER).exists():
        return folder
    with _locked(folder):
        if (folder / MARKER).exists():  # another process filled it while this one waited
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        say(f"{verb} {what} into {folder} (once; later runs reuse it)")
        started = time.monotonic()
        try:
            fill(folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        (folder / MARKER).touch()
        say(f"done {verb} {what} in {time.monotonic() - started:.0f} s")
    return folder

"""hypothesis keeps its files in lakecert's cache folder, not in the folder lakecert was started in.

By default hypothesis writes a ``.hypothesis/`` folder into the current folder: a cache of the
literals it parses from the source of the "local" modules it sees (those outside site-packages:
lakecert's own in a checkout, a vendor's adapter on ``PYTHONPATH``). A run must not leave files
where it was started, but the cache is worth keeping between runs: parsing lakecert's modules
again took ~0.15 s of CPU in each process of every run started from a checkout (docs/benchmarks.md).
So it goes to ``$XDG_CACHE_HOME/lakecert/hypothesis`` (``~/.cache/...``; the temporary folder
when there is no home). No draw depends on the cache (hypothesis rebuilds it when it is missing),
and hypothesis ignores writes to it that fail, so an unwritable home only costs the parsing. Its
files are named by the hash of the source they were parsed from and written atomically: runs in
parallel share it safely.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis.configuration import set_hypothesis_home_dir


def cache_folder() -> Path:
    """lakecert's cache for hypothesis; ``XDG_CACHE_HOME`` counts only when absolute (XDG Base Directory)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        # No home (a user id a container does not know): the temporary folder, never the current one.
        base = os.path.join(home, ".cache") if os.path.isabs(home) else tempfile.gettempdir()
    return Path(base) / "lakecert" / "hypothesis"


def pytest_sessionstart(session: pytest.Session) -> None:
    set_hypothesis_home_dir(cache_folder())


def pytest_unconfigure(config: pytest.Config) -> None:
    set_hypothesis_home_dir(None)  # hypothesis's default again, for a process that goes on

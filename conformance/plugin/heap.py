"""Keeps what a run builds before its first check (imported modules, the collected checks, the
target) out of the garbage collector's full passes while the checks run.

A full pass walks every object the collector tracks; after the imports and the collection those
are about 80,000 (81,500 in a default Delta run), none of them garbage, and a run makes several
full passes (hypothesis forces one when it starts). ``gc.freeze`` moves them to a generation the
collector skips; ``gc.unfreeze`` hands them back when the session ends, so a process that runs
several sessions (lakecert's own tests) frees what each leaves behind. Measured in
docs/benchmarks.md.
"""

from __future__ import annotations

import gc

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()  # the set-up's garbage is freed now, not kept for the run
    gc.freeze()


def pytest_unconfigure(config: pytest.Config) -> None:
    gc.unfreeze()

"""hypothesis keeps its files in the run's work folder, not in the folder lakecert was started in.

By default hypothesis writes a ``.hypothesis/`` folder into the current folder: a cache of the
literals it parses from the source of the "local" modules it sees (those outside site-packages:
lakecert's own in a checkout, a vendor's adapter on ``PYTHONPATH``). A run writes only under its
``--out``; a check's draws do not depend on such a cache, which hypothesis rebuilds when it is
missing. Each process of a shared run has its own work folder, hence its own cache.
"""

from __future__ import annotations

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

from conformance.run_context import RunContext


def pytest_sessionstart(session: pytest.Session) -> None:
    set_hypothesis_home_dir(RunContext.of(session.config).env.workdir / "hypothesis")


def pytest_unconfigure(config: pytest.Config) -> None:
    set_hypothesis_home_dir(None)  # hypothesis's default again, for a process that goes on

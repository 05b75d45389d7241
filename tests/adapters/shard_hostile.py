"""In-process targets that misbehave in a run shared among processes (``--jobs``,
conformance/plugin/shards.py): tests/test_shards_hostile.py says what such a run must report."""

from __future__ import annotations

import os
import threading

from conformance.contract import Catalog, GetCommitsResponse, TargetEnv
from conformance.contract.target import TargetUnavailable
from tests.adapters.memory_catalog import MemoryCatalog, MemoryCatalogTarget

# The process that built the first target of the run: lakecert's own (process 0). A process forked
# from it inherits the value, so a target knows whether it was built in another process of the run.
_FIRST_PID: int | None = None


class _InProcess(MemoryCatalogTarget):
    in_process = True

    def __init__(self, max_unpublished: int = 1000) -> None:
        global _FIRST_PID
        super().__init__(max_unpublished)
        if _FIRST_PID is None:
            _FIRST_PID = os.getpid()


class UnavailableSharedTarget(_InProcess):
    """Its preflight fails: every check must end in ERROR with that cause, in whichever process."""

    def preflight(self) -> None:
        raise TargetUnavailable("the vendor's service does not answer (test adapter)")


class ExitingCatalog(MemoryCatalog):
    """Ends its process at its first listing when it lives in a process forked for the run."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        if os.getpid() != _FIRST_PID:
            os._exit(3)  # an interpreter crash: no exception, no atexit, no results file
        return super().get_commits(table_id, start_version, end_version)


class ExitingSharedTarget(_InProcess):
    """A crash of another process of the run: the run must be incomplete, never certified."""

    def make_catalog(self, env: TargetEnv) -> Catalog:
        return ExitingCatalog(env.warehouse_uri, env.storage, self.max_unpublished)


class ChildHangCatalog(MemoryCatalog):
    """Never answers a listing in a process forked for the run; answers in the run's own."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        if os.getpid() != _FIRST_PID:
            threading.Event().wait()
        return super().get_commits(table_id, start_version, end_version)


class ChildHangTarget(_InProcess):
    """The run's own process finishes its share and waits for the other one, which hangs."""

    def make_catalog(self, env: TargetEnv) -> Catalog:
        return ChildHangCatalog(env.warehouse_uri, env.storage, self.max_unpublished)

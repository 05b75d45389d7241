"""Broken harness targets: each misbehaves in one way that the outcome machinery must classify
(tests/test_verdict_integrity.py says which outcome each must get, like WPT's infrastructure tests)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from conformance.contract import Catalog, GetCommitsResponse, TargetEnv
from tests.adapters.memory_catalog import MemoryCatalog, MemoryCatalogTarget


class HangingCatalog(MemoryCatalog):
    """Never answers a listing: the call deadline must end the check in ERROR, not hang the run."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        threading.Event().wait()
        raise AssertionError("unreachable")


class AnnouncedHangCatalog(HangingCatalog):
    """Hangs like HangingCatalog, after creating the file ``BROKEN_HANG_MARKER`` names: a test then
    knows the run is inside a check without timing it (tests/test_verdict_integrity.py)."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        Path(os.environ["BROKEN_HANG_MARKER"]).touch()
        return super().get_commits(table_id, start_version, end_version)


class SkippingCatalog(MemoryCatalog):
    """Skips instead of answering: a skip that is not a verified NOT_APPLICABLE is an ERROR."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        pytest.skip("the vendor's adapter skipped")


class CrashingCatalog(MemoryCatalog):
    """Its own code crashes while answering: the product is wrong, a FAIL."""

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        versions: list[int] = []
        (only,) = versions  # the kind of bug a vendor ships: ValueError from its own code
        raise AssertionError(only)


class FlippingCatalog(MemoryCatalog):
    """Every other listing forgets the latest commit: nondeterministic, which is a product fault."""

    _calls = 0

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        self._calls += 1
        answer = super().get_commits(table_id, start_version, end_version)
        if self._calls % 2 and answer.commits:
            return GetCommitsResponse(answer.commits[:-1], answer.latest_version)
        return answer


class _Broken(MemoryCatalogTarget):
    catalog_class: type[MemoryCatalog] = MemoryCatalog

    def make_catalog(self, env: TargetEnv) -> Catalog:
        return self.catalog_class(env.warehouse_uri, env.storage, 1000)


class HangingTarget(_Broken):
    catalog_class = HangingCatalog


class AnnouncedHangTarget(_Broken):
    catalog_class = AnnouncedHangCatalog


class SkippingTarget(_Broken):
    catalog_class = SkippingCatalog


class CrashingTarget(_Broken):
    catalog_class = CrashingCatalog


class FlippingTarget(_Broken):
    catalog_class = FlippingCatalog


class UnbuildableTarget(MemoryCatalogTarget):
    """The adapter cannot even build its catalog: nothing is known about the product, an ERROR."""

    def make_catalog(self, env: TargetEnv) -> Catalog:
        raise RuntimeError("the vendor's adapter failed to start")

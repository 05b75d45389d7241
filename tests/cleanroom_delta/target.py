"""The clean-room Delta engine as a third-party lakecert target (docs/certify.md, sections 2 and 6).

Run it with ``lakecert run --target tests.cleanroom_delta.target:CleanDeltaTarget --profile
delta-row-conflicts``; each faulty variant in ``variants.py`` is a subclass naming its engine.
"""

from __future__ import annotations

from typing import ClassVar

from conformance.contract import Catalog, DeltaClient, NotSupported, TargetBase, TargetEnv
from conformance.contract.target import Kind, Side
from tests.cleanroom_delta.engine import CleanDeltaEngine


class CleanDeltaTarget(TargetBase):
    name = "cleanroom-delta"
    kind: Kind = "third-party"
    sides: frozenset[Side] = frozenset({"engine"})
    profiles = frozenset({"delta-row-conflicts"})
    engine_class: ClassVar[type[CleanDeltaEngine]] = CleanDeltaEngine

    def version(self) -> str:
        return self.engine_class.version_label

    def make_catalog(self, env: TargetEnv) -> Catalog:
        raise NotSupported("an engine target has no catalog")

    def make_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        raise NotSupported("an engine target has no Delta client")

    def make_delta_engine(self, env: TargetEnv) -> CleanDeltaEngine:
        return self.engine_class()

    def close(self) -> None:
        pass

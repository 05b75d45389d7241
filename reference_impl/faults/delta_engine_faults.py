"""Faulty variants of the reference Delta engine: each is the Delta model with one preset switch
flipped. The registered ``cls`` takes the run's ``TargetEnv`` and returns the engine."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from conformance.contract.target import TargetEnv
from conformance.model.delta import CORRECTED, Preset
from reference_impl.delta_conflicts import DeltaModelEngine
from reference_impl.faults.base import fault
from reference_impl.faults.catalog_faults import RatifyTwice


class _PresetDeltaEngine(DeltaModelEngine):
    PRESET: ClassVar[Preset]

    def __init__(self, env: TargetEnv | None = None) -> None:
        super().__init__(self.PRESET)


@fault(
    "delta-ignores-shared-removes",
    "engine",
    ("DELTA-NO-RESURRECTION", "DELTA-COMPACTION-PRESERVES-ROWS", "DELTA-ISOLATION-LEVEL"),
    "Delta conflict checker ignores a winner's remove of a file the loser also removes.",
)
class IgnoresSharedRemoves(_PresetDeltaEngine):
    PRESET = replace(CORRECTED, name="ignores-shared-removes", ignore_shared_removes=True)


@fault(
    "delta-drops-concurrent-dv",
    "engine",
    ("DELTA-NO-RESURRECTION", "DELTA-ISOLATION-LEVEL"),
    "Row-level Delta rebase keeps its own deletion vector, dropping the winner's concurrent one.",
)
class DropsConcurrentDv(_PresetDeltaEngine):
    PRESET = replace(CORRECTED, name="drops-concurrent-dv", merge_winner_dvs=False)


@fault(
    "delta-write-serializable-all-blind",
    "engine",
    ("DELTA-WRITE-SERIALIZABLE-ORDER", "DELTA-NO-DUPLICATE-ROW", "DELTA-ISOLATION-LEVEL"),
    "Under WriteSerializable Delta DELETE, UPDATE and MERGE treat every concurrently added file as a blind append.",
)
class WriteSerializableAllBlind(_PresetDeltaEngine):
    PRESET = replace(CORRECTED, name="write-serializable-all-blind", write_serializable_all_blind=True)


@fault(
    "delta-serializable-skips-appends",
    "engine",
    ("DELTA-SERIALIZABLE-COMMIT-ORDER", "DELTA-ISOLATION-LEVEL"),
    "Serializable Delta tables checked like WriteSerializable: writes miss concurrent blind appends.",
)
class SerializableSkipsAppends(_PresetDeltaEngine):
    PRESET = replace(CORRECTED, name="serializable-skips-appends", serializable_skips_blind_appends=True)


@fault(
    "delta-optimize-unchecked",
    "engine",
    ("DELTA-COMPACTION-PRESERVES-ROWS", "DELTA-ISOLATION-LEVEL"),
    "Delta OPTIMIZE commits its rewritten files without any conflict check.",
)
class OptimizeUnchecked(_PresetDeltaEngine):
    PRESET = replace(CORRECTED, name="optimize-unchecked", optimize_checks=False)


@fault(
    "delta-log-overwrite",
    "engine",
    ("DELTA-ONE-VERSION-PER-COMMIT", "DELTA-ISOLATION-LEVEL"),
    "Delta commit files written without put-if-absent: a later commit overwrites a version.",
)
class LogOverwrite(_PresetDeltaEngine):
    PRESET = replace(CORRECTED, name="log-overwrite", put_if_absent=False)


@fault(
    "delta-abort-after-commit-file",
    "engine",
    # The aborted writer's commit stays in the log: under Serializable its rows land twice.
    ("DELTA-ABORT-LEAVES-NO-TRACE", "DELTA-NO-DUPLICATE-ROW", "DELTA-ISOLATION-LEVEL"),
    "A Delta writer writes its commit file first and reports a conflict (abort) after.",
)
class AbortAfterCommitFile(_PresetDeltaEngine):
    PRESET = replace(CORRECTED, name="abort-after-commit-file", check_before_write=False)


@fault(
    "delta-cm-published-winners-only",
    "engine",
    ("DELTA-CM-CHECK-RATIFIED-WINNERS", "DELTA-ISOLATION-LEVEL"),
    "On a catalog-managed Delta table a losing writer checks only the winners already in _delta_log, "
    "missing ratified but unpublished ones.",
)
class PublishedWinnersOnly(_PresetDeltaEngine):
    PRESET = replace(CORRECTED, name="cm-published-winners-only", winners_from_catalog=False)


@fault(
    "delta-cm-repropose-unchecked",
    "engine",
    ("DELTA-CM-CHECK-BEFORE-REPROPOSE", "DELTA-CM-CHECK-RATIFIED-WINNERS", "DELTA-ISOLATION-LEVEL"),
    "On a catalog-managed Delta table a losing writer proposes its unchanged commit at the next version "
    "without checking the winners.",
)
class ReproposeUnchecked(_PresetDeltaEngine):
    PRESET = replace(CORRECTED, name="cm-repropose-unchecked", recheck_before_repropose=False)


@fault(
    "delta-cm-catalog-ratifies-twice",
    "engine",
    ("DELTA-ONE-VERSION-PER-COMMIT", "DELTA-ISOLATION-LEVEL"),
    "The catalog of a catalog-managed Delta table ratifies a second proposal for a version it already "
    "ratified (the reference catalog's ratify-twice variant as the commit arbiter).",
)
class CatalogRatifiesTwice(_PresetDeltaEngine):
    PRESET = replace(CORRECTED, name="cm-catalog-ratifies-twice", catalog_ratifies_once=False)

    def __init__(self, env: TargetEnv | None = None) -> None:
        DeltaModelEngine.__init__(self, self.PRESET, catalog=RatifyTwice)


@fault(
    "delta-checks-only-latest-winner",
    "engine",
    ("DELTA-ISOLATION-LEVEL",),
    "A losing Delta writer checks only the newest commit since its snapshot, not every winner.",
)
class ChecksOnlyLatestWinner(_PresetDeltaEngine):
    PRESET = replace(CORRECTED, name="checks-only-latest-winner", check_every_winner=False)


@fault(
    "delta-phantom-blind-row-writes",
    "engine",
    ("DELTA-SERIALIZABLE-COMMIT-ORDER",),
    "Under Serializable a Delta UPDATE or DELETE judges a concurrent append by the ids it matched, "
    "not by its predicate: a new row matching a non-key predicate is missed.",
)
class PhantomBlindRowWrites(_PresetDeltaEngine):
    PRESET = replace(CORRECTED, name="phantom-blind-row-writes", added_rows_by_predicate=False)

"""Round 11 (writer E): faulty catalog variants of the durable clean-room catalog.

Each target swaps exactly one side of ``DurableTarget`` for a faulty subclass. Written from the RFC, the
public contract, docs/certify.md and the clean-room baselines only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from conformance.contract.delta import RatifiedCommit
from tests.cleanroom.catalog import CleanCatalog, TableState
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget
from tests.cleanroom_r3.variant import Variant, variant_of

# ================================================================ catalog faults


class IctSecondColumnCatalog(DurableCatalog):
    """cr11-cat-ict-second-column. CAT-RATIFY-DURABLE (MUST), RFC "Commit Protocol" and "Terminology -
    Commits" (ratified commit). The catalog's state store keeps a ratified commit's in-commit timestamp in
    a second-precision timestamp column (ISO-8601 ``%Y-%m-%dT%H:%M:%SZ``), as its schema's TIMESTAMP(0)
    does. In memory the commit is served exactly; after a restart it is rebuilt from the store and served
    with the milliseconds of its in-commit timestamp dropped, so it is no longer served unchanged (and
    time travel by timestamp through the catalog goes to the wrong version). A shallow suite misses it:
    it checks versions and content after a restart, or uses whole-second timestamps, or never restarts."""

    def encode_table(self, t: TableState) -> dict[str, Any]:
        doc = super().encode_table(t)
        for c in doc["stored"]:
            if c["ict"] is not None:
                c["ict"] = datetime.fromtimestamp(c["ict"] / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return doc

    def decode_table(self, doc: dict[str, Any]) -> TableState:
        t = super().decode_table(doc)
        for v, c in list(t.stored.items()):
            ict: object = c.in_commit_timestamp
            if isinstance(ict, str):
                when = datetime.strptime(ict, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
                t.stored[v] = RatifiedCommit(c.version, c.staged_uri, c.inline_content, int(when.timestamp()) * 1000)
        return t


class IctSecondColumnTarget(DurableTarget):
    catalog_cls: ClassVar[type[CleanCatalog]] = IctSecondColumnCatalog


# ================================================================ registry


VARIANTS: list[Variant] = [
    variant_of(
        "cr11-cat-ict-second-column",
        IctSecondColumnTarget,
        "catalog",
        "delta-cm-catalog",
        ("CAT-RATIFY-DURABLE",),
        "MUST",
        ("restarts", "time", "encodings"),
    ),
]

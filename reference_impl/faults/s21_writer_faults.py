"""Faults for the round-15 blind misses (issue 28, session 21): see docs/mutation.md, round 15."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import ClassVar

from conformance.contract.delta import TableInfo
from reference_impl.delta.actions import Action
from reference_impl.delta.client import Builder, Proposals, ReferenceClient, wall_clock_ms
from reference_impl.delta.data_files import Row, write_data_file
from reference_impl.delta.log_paths import staged_uri
from reference_impl.delta.snapshot import LogReader
from reference_impl.faults.base import fault


@fault(
    "staged-name-kept-after-lost-answer",
    "client",
    breaks=("WRT-STAGED-NAME",),
    description="After a proposal whose answer was lost and which the catalog did not ratify as the"
    " writer's (a rival took the version), the writer's next attempt rebuilds the commit for the next"
    " version but stages it under the name of the version the lost proposal was for (a fresh UUID): a"
    " strict catalog refuses the proposal, a lax one ratifies a file named for another version. First"
    " attempts, and retries after a conflict that was answered, are named right.",
)
class StagedNameKeptAfterLostAnswer(ReferenceClient):
    _pinned: int | None = None  # the version of the proposal whose answer was lost, within one commit

    def _commit(self, table: TableInfo, operation: str, build: Builder) -> int:
        self._pinned = None
        try:
            return super()._commit(table, operation, build)
        finally:
            self._pinned = None

    def _after_lost_answer(self, table: TableInfo, version: int, mine: Proposals) -> int | None:
        landed = super()._after_lost_answer(table, version, mine)
        if landed is None and self._pinned is None:
            self._pinned = version
        return landed

    def _staged_uri(self, location: str, version: int) -> str:
        return staged_uri(location, version if self._pinned is None else self._pinned, self._uuid())


def _cesu8(text: str) -> bytes:
    """Java's modified UTF-8 (CESU-8): a character beyond U+FFFF as its UTF-16 surrogate pair, each
    surrogate encoded as three bytes; invalid UTF-8 (RFC 3629 forbids encoded surrogates)."""
    units = text.encode("utf-16-le", "surrogatepass")
    paired = "".join(chr(int.from_bytes(units[i : i + 2], "little")) for i in range(0, len(units), 2))
    return paired.encode("utf-8", "surrogatepass")


class _Cesu8TolerantReader(LogReader):
    """Reads back what the faulty writer wrote: encoded surrogates are paired up again."""

    def _decode(self, content: bytes) -> list[Action]:
        text = content.decode("utf-8", "surrogatepass").encode("utf-16-le", "surrogatepass").decode("utf-16-le")
        return super()._decode(text.encode())


@fault(
    "staged-cesu8-astral-values",
    "client",
    breaks=("WRT-STAGED-FORMAT",),
    description="The writer keeps string statistics (minValues/maxValues of value, as engines do) and writes"
    " its commits as raw text through Java's modified UTF-8: a character outside the Basic Multilingual"
    " Plane (an astral letter, an emoji) becomes two encoded surrogates of three bytes each, which is not"
    " UTF-8. Its own reader pairs them up again, so its round trip works; ASCII, accented and CJK values"
    " are encoded right, and only an astral value shows the fault.",
)
class StagedCesu8AstralValues(ReferenceClient):
    log_class: ClassVar[type[LogReader]] = _Cesu8TolerantReader
    reader_class: ClassVar[type[LogReader]] = _Cesu8TolerantReader

    def append(self, name: str, rows: Sequence[Row]) -> int:
        table = self._table(name)
        add = write_data_file(
            self.storage, table.location, rows, modification_time=wall_clock_ms(), file_id=self._uuid()
        )
        values = sorted(str(r["value"]) for r in rows if r.get("value") is not None)
        if values:
            stats = json.loads(add["add"]["stats"])
            stats["minValues"]["value"], stats["maxValues"]["value"] = values[0], values[-1]
            add["add"]["stats"] = json.dumps(stats, separators=(",", ":"), ensure_ascii=False)
        return self._commit(table, "WRITE", lambda snap: [add])

    def _encode(self, actions: list[Action]) -> bytes:
        return b"".join(_cesu8(json.dumps(a, separators=(",", ":"), ensure_ascii=False)) + b"\n" for a in actions)

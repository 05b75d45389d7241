"""Time travel by timestamp uses in-commit timestamps (RFC "Publishing Commits", note)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks.delta.builders import ICT_STEP, LogBuilder, expected_rows, ict_of, premise, version0, when
from conformance.checks.delta.evidence import attempt
from conformance.contract.delta import RatifiedCommit
from conformance.nemesis import in_time_zone
from conformance.observe.recording import RecordingClient
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta import actions as A
from reference_impl.delta.checkpoint import write_checkpoint
from reference_impl.delta.log_paths import delta_uri

# The reader's process time zone for each round of reads (POSIX strings: no tz database needed).
# An in-commit timestamp is milliseconds since the epoch, the same instant in every zone: a reader that
# passes it through a local wall-clock time reads hours away once the zone is not UTC. The offsets are
# not whole hours, east and west, so a reader that corrects by whole hours only is off too.
READER_ZONES = {
    "UTC": "UTC0",
    "UTC+5:30": "LKI-5:30",
    "UTC-3:30": "LKN3:30",
}


@pytest.mark.req("RDR-TIME-TRAVEL-ICT")
def test_timestamps_resolve_by_in_commit_timestamp(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    # Published late and newest first: file times say nothing about when v1-v3 were committed;
    # commitInfo.timestamp (builders.engine_timestamp_of) runs backwards: only the ICT is right.
    commits = {v: seeded.data_commit(v) for v in (1, 2, 3)}
    for v in (3, 2, 1):
        seeded.publish(v, commits[v])
    seeded.publish(0, version0(seeded.location))
    staged = RatifiedCommit(4, staged_uri=seeded.stage(4, seeded.data_commit(4)), in_commit_timestamp=ict_of(4))
    ref_admin.import_table(table_name, seeded.location, 4, [staged], 3)
    # At a commit's ICT and between two commits. A timestamp past the latest commit is left out:
    # Delta readers may refuse it (Kernel and Spark do), and the RFC says nothing of it.
    # The same reads in each zone (a client in this process sees the zone; one in another process
    # keeps its own, and reads as in UTC).
    for zone, tz in READER_ZONES.items():
        with in_time_zone(tz):
            for ts, version in ((ict_of(1), 1), (ict_of(2) + 1, 2), (ict_of(3) - 1, 2), (ict_of(4), 4)):
                result = client.read(table_name, timestamp_ms=ts)
                assert result.version == version, (
                    f"with the reader's local time zone {zone}, timestamp {when(ts)} resolved to"
                    f" v{result.version}, not v{version}: in-commit timestamps are UTC epoch milliseconds,"
                    " and the version at a timestamp does not depend on the reader's zone"
                )
                assert result.rows == expected_rows(range(version + 1)), (
                    f"with the reader's local time zone {zone}, timestamp {when(ts)} read v{version} with"
                    f" rows {result.rows}; v{version} holds rows 0-{version}"
                )


def _before_the_oldest(client: RecordingClient, table_name: str, ts: int, why: str) -> None:
    """A read at ``ts``, a moment before the oldest version the reader can build: the version at
    ``ts`` is the latest commit at or before it, which is older than that or does not exist. Refusing
    is right; an answer is right only as that version with its own rows, never a later version (the
    oldest there is, "the closest we have") answered for a moment before it was committed."""
    got = attempt(lambda: client.read(table_name, timestamp_ms=ts))
    if got.value is None:
        return  # refused
    version, rows = got.value.version, got.value.rows
    at_ts = (ts - ict_of(0)) // ICT_STEP  # the builders' ICTs: v is committed at ict_of(v)
    assert at_ts >= 0 and (version, rows) == (at_ts, expected_rows(range(at_ts + 1))), (
        f"a read at {when(ts)} ({why}) answered v{version} with rows {rows}, committed at {when(ict_of(version))}:"
        " the version at a timestamp is the latest commit at or before it (PROTOCOL, time travel; RFC"
        ' "Publishing Commits", in-commit timestamps), so the read must be refused'
        + ("" if at_ts < 0 else f" or give v{at_ts} with rows {expected_rows(range(at_ts + 1))}")
    )


@pytest.mark.req("RDR-TIME-TRAVEL-ICT")
def test_timestamp_before_the_history_is_refused(
    client_factory: Callable[[], RecordingClient], ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str
) -> None:
    # v0-v5 published, v6 ratified and staged. A timestamp inside the history resolves (the control);
    # one before v0's in-commit timestamp has no version: a millisecond and a day before creation.
    commits = {v: seeded.data_commit(v) for v in range(1, 6)}
    seeded.publish(0, version0(seeded.location))
    for v, content in commits.items():
        seeded.publish(v, content)
    staged = RatifiedCommit(6, staged_uri=seeded.stage(6, seeded.data_commit(6)), in_commit_timestamp=ict_of(6))
    ref_admin.import_table(table_name, seeded.location, 6, [staged], 5)
    client = client_factory()
    inside = client.read(table_name, timestamp_ms=ict_of(2) + 1)
    assert (inside.version, inside.rows) == (2, expected_rows(range(3))), (
        f"a read at {when(ict_of(2) + 1)} gave v{inside.version} with rows {inside.rows}; v2 (rows 1-2) is the"
        " latest commit at or before it"
    )
    for ts, why in ((ict_of(0) - 1, "a millisecond before v0"), (ict_of(0) - 1440 * ICT_STEP, "a day before v0")):
        _before_the_oldest(client, table_name, ts, f"{why}, the table's creation")
    # Metadata cleanup: a checkpoint of v4 and commits 0-3 deleted; v4 is the oldest version left. Before
    # it, the versions at the timestamps existed but cannot be built: refused, or built exactly (which a
    # reader cannot, and Delta Kernel and delta-spark refuse: "timestamp before the earliest available
    # commit"). Answering v4 labels a later version as the state at an earlier moment.
    with premise("the suite's metadata cleanup (a checkpoint of v4, commits 0-3 deleted)"):
        v0 = A.decode_commit(version0(seeded.location))
        state = [a for a in v0 if "protocol" in a or "metaData" in a]
        state += [a for v in range(1, 5) for a in A.decode_commit(commits[v]) if "add" in a]
        write_checkpoint(seeded.storage, seeded.location, 4, state)
        for v in range(4):
            seeded.storage.delete(delta_uri(seeded.location, v))
    cleaned = client_factory()  # a fresh client: nothing remembered from before the cleanup
    for ts, why in ((ict_of(0) - 1, "before v0"), (ict_of(2), "v2's own ICT"), (ict_of(4) - 1, "just before v4")):
        _before_the_oldest(cleaned, table_name, ts, f"{why}; metadata cleanup left v4 the oldest version")

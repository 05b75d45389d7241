"""Time travel by timestamp uses in-commit timestamps (RFC "Publishing Commits", note)."""

from __future__ import annotations

import random
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
    client_factory: Callable[[], RecordingClient],
    ref_admin: ReferenceCatalog,
    seeded: LogBuilder,
    table_name: str,
    seed: int,
) -> None:
    # v0-v5 published, v6 ratified and staged. A timestamp inside the history and v0's own ICT resolve
    # (the controls); every one before v0's in-commit timestamp has no version.
    commits = {v: seeded.data_commit(v) for v in range(1, 6)}
    seeded.publish(0, version0(seeded.location))
    for v, content in commits.items():
        seeded.publish(v, content)
    staged = RatifiedCommit(6, staged_uri=seeded.stage(6, seeded.data_commit(6)), in_commit_timestamp=ict_of(6))
    ref_admin.import_table(table_name, seeded.location, 6, [staged], 5)
    client = client_factory()
    for ts, version in ((ict_of(2) + 1, 2), (ict_of(0), 0)):
        inside = client.read(table_name, timestamp_ms=ts)
        assert (inside.version, inside.rows) == (version, expected_rows(range(version + 1))), (
            f"a read at {when(ts)} gave v{inside.version} with rows {inside.rows}; v{version} (rows"
            f" {expected_rows(range(version + 1))}) is the latest commit at or before it"
        )
    # Every moment before v0 has no version, the edges of the argument first: the epoch itself and the
    # milliseconds around it (a reader that tests the argument, or the argument in seconds, for truth
    # reads them as "no timestamp"), a moment before the epoch, then seed-drawn ones up to v0's ICT.
    rng = random.Random(seed)
    drawn = sorted(rng.randrange(2, ict_of(0) - 1) for _ in range(3))
    edges = [(-1, "a millisecond before the epoch"), (0, "the epoch"), (1, "a millisecond after the epoch")]
    edges += [(rng.randrange(2, 1000), "inside the epoch's first second")] + [(ts, "drawn") for ts in drawn]
    edges += [(ict_of(0) - 1440 * ICT_STEP, "a day before v0"), (ict_of(0) - 1, "a millisecond before v0")]
    for ts, why in edges:
        _before_the_oldest(client, table_name, ts, f"{why}, before the table's creation")
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


@pytest.mark.req("RDR-TIME-TRAVEL-ICT")
def test_timestamps_asked_again_as_the_table_grows(
    client: RecordingClient, ref_admin: ReferenceCatalog, seeded: LogBuilder, table_name: str, seed: int
) -> None:
    # The version at a moment is fixed once a commit at or after it exists; for a moment after the
    # newest commit it is not: a later commit at or before that moment becomes the answer. One client
    # is asked the same timestamps again after each growth (a reader that keeps its answer, or its
    # timeline, from the first ask answers the old version), and new ones each time: at a commit,
    # between two, just after the newest, at the next commit's ICT and farther ahead.
    seeded.publish(0, version0(seeded.location))
    for v in (1, 2):
        seeded.publish(v, seeded.data_commit(v))
    staged = RatifiedCommit(3, staged_uri=seeded.stage(3, seeded.data_commit(3)), in_commit_timestamp=ict_of(3))
    table = ref_admin.import_table(table_name, seeded.location, 3, [staged], 2)
    rng = random.Random(seed)
    latest = 3
    asked: set[int] = set()
    for _ in range(3):
        asked |= {
            ict_of(rng.randint(0, latest)),
            ict_of(rng.randrange(latest)) + rng.randrange(1, ICT_STEP),
            ict_of(latest) + 1,
            ict_of(latest + 1),
            ict_of(latest + rng.randint(2, 4)) + rng.randrange(ICT_STEP),
        }
        for ts in sorted(asked):
            _judge_at(client, table_name, ts, latest)
        for _ in range(rng.randint(1, 3)):
            latest += 1
            with premise(f"the suite committing v{latest} in the catalog"):
                uri = seeded.stage(latest, seeded.data_commit(latest))
                ref_admin.commit(table.table_id, latest, staged_uri=uri, in_commit_timestamp=ict_of(latest))


def _judge_at(client: RecordingClient, table_name: str, ts: int, latest: int) -> None:
    """A read at ``ts`` on a table whose versions 0..``latest`` were committed at ``ict_of(v)``."""
    at_ts = min(latest, (ts - ict_of(0)) // ICT_STEP)
    got = attempt(lambda: client.read(table_name, timestamp_ms=ts))
    after_newest = ts > ict_of(latest)
    if got.value is None and after_newest:
        return  # after the newest commit: Delta readers may refuse (Kernel and Spark do)
    answer = "refused" if got.value is None else f"gave v{got.value.version} with rows {got.value.rows}"
    assert got.value is not None and (got.value.version, got.value.rows) == (at_ts, expected_rows(range(at_ts + 1))), (
        f"a read at {when(ts)} {answer}, with v0-v{latest} committed and v{latest} at {when(ict_of(latest))}:"
        f" v{at_ts} (rows {expected_rows(range(at_ts + 1))}) is the latest commit at or before it"
        + (" (or a refusal: the moment is after the newest commit)" if after_newest else "")
        + "; the answer for a moment after the newest commit changes when a later commit at or before it lands"
    )

"""Time travel by timestamp uses in-commit timestamps (RFC "Publishing Commits", note)."""

from __future__ import annotations

import pytest

from conformance.checks.delta.builders import LogBuilder, expected_rows, ict_of, version0, when
from conformance.contract.delta import RatifiedCommit
from conformance.nemesis import in_time_zone
from conformance.observe.recording import RecordingClient
from reference_impl.catalog.catalog import ReferenceCatalog

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

"""delta-rs: two OPTIMIZE (compact) operations started from the same version both commit, and the
table then holds every row twice.

Standalone (only `deltalake` and `pyarrow`, local filesystem); found by lakecert's profile
delta-row-conflicts (target delta-rs-engine, every two-operation schedule). Expected: the second
compaction fails with a commit conflict (its files were removed by the first one, Delta's
ConcurrentDeleteReadException / ConcurrentDeleteDeleteException), or rebases without duplicating.

Usage: python delta_rs_concurrent_optimize.py  -> exit 1 and the duplicated rows when the bug shows.
"""

import sys
import tempfile

import deltalake
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

with tempfile.TemporaryDirectory() as path:
    write_deltalake(path, pa.table({"id": ["jack", "jill"]}))  # v0: one data file
    write_deltalake(path, pa.table({"id": ["kim"]}), mode="append")  # v1: a second data file
    first, second = DeltaTable(path), DeltaTable(path)  # two writers, both at v1
    first.optimize.compact()  # commits v2: removes both files, adds one with the three rows
    try:
        second.optimize.compact()  # still at v1: removes the same two files, adds its own copy
    except deltalake.exceptions.CommitFailedError as e:
        print(f"deltalake {deltalake.__version__}: second compaction refused as expected: {e}")
        sys.exit(0)
    rows = sorted(r["id"] for r in DeltaTable(path).to_pyarrow_table().to_pylist())
    print(f"deltalake {deltalake.__version__}: both compactions committed; version {DeltaTable(path).version()}")
    print(f"rows: {rows}")
    sys.exit(1 if len(rows) != 3 else 0)

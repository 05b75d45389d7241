"""Which conflict checks a Delta engine runs and how: an engine's choices as data.

The switches follow the phases of Delta's ``ConflictChecker.checkConflicts`` (delta-io/delta,
spark module), which run for every commit that won the race since the transaction's snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Preset:
    name: str
    # checkProtocolCompatibility: a winner's protocol change fails a transaction that changes it too
    check_protocol: bool = True
    # checkNoMetadataUpdates: any metadata change by a winner fails the transaction
    check_metadata: bool = True
    # checkForUpdatedApplicationTransactionIdsThatCurrentTxnDependsOn: txn app ids it read
    check_app_ids: bool = True
    # checkForAddedFilesThatShouldHaveBeenReadByCurrentTxn, per the isolation level
    check_added_files: bool = True
    # checkForDeletedFilesAgainstCurrentTxnReadFiles
    check_deleted_read: bool = True
    # checkForDeletedFilesAgainstCurrentTxnDeletedFiles
    check_deleted_deleted: bool = True
    # a transaction without data change (OPTIMIZE) runs at SnapshotIsolation: no added-files check
    no_data_change_is_snapshot: bool = True
    # a winner's remove with dataChange=false (OPTIMIZE's) counts in the deleted-file checks
    quiet_removes_conflict: bool = True
    # With deletion vectors and row tracking: overlaps that are only deletion-vector updates of one
    # file are resolved row by row (disjoint rows rebase, the vectors merged) instead of failing.
    # Gated on row tracking as row-level concurrency is documented; vector positions alone would do
    # for the disjointness test (the design of delta-io/delta#7357).
    row_level_concurrency: bool = False
    # The engine writes catalog-managed tables (the catalogManaged table feature, catalog-managed
    # RFC); False: it refuses them and those configurations are NOT_APPLICABLE.
    catalog_managed: bool = True
    # ---- switches that only faulty variants flip
    merge_winner_dvs: bool = True  # row-level rebase unions the winner's deletion vector into its own
    ignore_shared_removes: bool = False  # removes of a file the loser also removes are not conflicts
    serializable_skips_blind_appends: bool = False  # Serializable checks only non-blind adds
    write_serializable_all_blind: bool = False  # WriteSerializable row-level writes check no added file
    optimize_checks: bool = True  # False: OPTIMIZE commits without any conflict check
    put_if_absent: bool = True  # False: the commit file overwrites a version another writer wrote
    check_before_write: bool = True  # False: write the commit file first, check (and abort) after
    # Catalog-managed tables (RFC "Commit Protocol", "Reading Catalog-managed Tables"):
    winners_from_catalog: bool = True  # False: a loser checks only the winners already published
    recheck_before_repropose: bool = True  # False: a loser re-proposes its commit unchecked
    catalog_ratifies_once: bool = True  # False: the catalog ratifies a second proposal for a version
    # ConflictChecker runs for every commit since the snapshot; False: a loser checks only the newest
    check_every_winner: bool = True
    # False: an UPDATE or DELETE judges a winner's added rows by the ids of the rows it matched, not
    # by its predicate, so a new row matching a non-key predicate (a phantom) is missed
    added_rows_by_predicate: bool = True


# Delta Lake on Spark (OSS, 3.x-4.x) as ConflictChecker and the concurrency-control page document
# it: file-level checks only; in an unpartitioned table any data-changing file a winner adds
# conflicts with a transaction that read the table (blind appends too under Serializable).
# On path-based tables only: catalog-managed tables commit through a catalog client (the Unity
# Catalog connector), which is not available here.
DELTA_SPARK = Preset(name="delta-spark", catalog_managed=False)

# Delta Kernel's conflict checker as delta-io/delta#7163 describes it before that change: protocol,
# metadata, domain metadata and row ids only; a loser is rebased past any file-level overlap.
DELTA_KERNEL_BEFORE_7163 = replace(
    DELTA_SPARK,
    name="delta-kernel-before-7163",
    check_added_files=False,
    check_deleted_read=False,
    check_deleted_deleted=False,
    catalog_managed=True,  # Kernel commits catalog-managed tables through a catalog committer
)

# delta-rs 1.6 as observed (docs/compatibility.md): Delta's checks, except that a winner's removes
# with dataChange=false never conflict (what delta-io/delta-rs#3982 describes), so two concurrent
# OPTIMIZEs both commit and every row is there twice. It writes path-based tables only (it
# inherits catalog_managed=False): it has no catalog commit API.
DELTA_RS_1_6 = replace(DELTA_SPARK, name="delta-rs-1.6", quiet_removes_conflict=False)

# The fix this model proposes for engines adding row-level concurrency (Kernel's and delta-rs's
# conflict checkers are being written now): resolve deletion-vector overlaps row by row, and
# always merge the winner's deletion vector into the rebased one. On catalog-managed tables a loser
# learns the winners from the catalog (published or not) and checks them before re-proposing.
CORRECTED = replace(DELTA_SPARK, name="corrected", row_level_concurrency=True, catalog_managed=True)

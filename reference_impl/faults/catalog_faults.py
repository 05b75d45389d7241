"""Faulty variants of the reference catalog, one broken behaviour each.

Each variant overrides one hook of ``ReferenceCatalog`` (two where the correct
code has two guards for the same rule); everything else stays correct.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

from conformance.contract.delta import (
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    MaintenancePolicy,
    RatifiedCommit,
    TableInfo,
)
from reference_impl.catalog.catalog import ReferenceCatalog, _is_int, check_commit, delta_file_uri, staged_dir_uri
from reference_impl.catalog.store import TableRow, Tx
from reference_impl.faults.base import fault
from reference_impl.storage.commit_file import read_commit_file


@fault(
    "accept-gap",
    "catalog",
    breaks=("CAT-RATIFY-SEQUENTIAL",),
    description="Ratifies version v even when v-1 is not ratified.",
)
class AcceptGap(ReferenceCatalog):
    def _check_version(self, latest: int, version: int) -> None:
        if version <= latest:
            raise CommitConflict("taken", latest_version=latest)


@fault(
    "ratify-twice",
    "catalog",
    breaks=("CAT-RATIFY-ONCE", "INT-NO-LOST-COMMIT"),
    description="A later proposal for an already ratified version overwrites it.",
)
class RatifyTwice(ReferenceCatalog):
    def _check_version(self, latest: int, version: int) -> None:
        if version > latest + 1:
            raise CommitRejected("gap")

    def _write_commit(self, tx: Tx, table_id: str, commit: RatifiedCommit) -> None:
        tx.insert_commit(table_id, commit, replace=True)


@fault(
    "racy-ratify",
    "catalog",
    breaks=("CAT-RATIFY-RACE",),
    description="Check-then-act outside one transaction: concurrent proposers can all win.",
)
class RacyRatify(ReferenceCatalog):
    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        with self._store.read() as tx:
            row = tx.table(table_id)
        assert row is not None
        time.sleep(0.002)  # widen the window between the check and the act
        self._check_version(row.latest_version, proposal.version)  # decided on a stale read
        with self._store.write() as tx:
            tx.insert_commit(table_id, proposal, replace=True)
            tx.raise_latest(table_id, proposal.version)
            if published is not None:
                self._publish(tx, table_id, published)


@fault(
    "conflict-without-latest",
    "catalog",
    breaks=(),  # conformant, as Unity Catalog OSS: its API has no field for the number
    description="Version conflicts state no latest ratified version (conformant: UC's API has no field for it).",
)
class ConflictWithoutLatest(ReferenceCatalog):
    def _check_version(self, latest: int, version: int) -> None:
        try:
            super()._check_version(latest, version)
        except CommitConflict:
            raise CommitConflict("taken", latest_version=None) from None


@fault(
    "conflict-stale-latest",
    "catalog",
    breaks=("CAT-CONFLICT-LATEST",),
    description="Version conflicts state the version before the latest ratified one.",
)
class ConflictStaleLatest(ReferenceCatalog):
    def _check_version(self, latest: int, version: int) -> None:
        try:
            super()._check_version(latest, version)
        except CommitConflict:
            raise CommitConflict("taken", latest_version=latest - 1) from None


@fault(
    "forget-unpublished",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED", "INT-ROUNDTRIP"),
    description="Keeps only the newest two stored commits, published or not.",
)
class ForgetUnpublished(ReferenceCatalog):
    def _write_commit(self, tx: Tx, table_id: str, commit: RatifiedCommit) -> None:
        super()._write_commit(tx, table_id, commit)
        tx.delete_commits(table_id, up_to=commit.version - 2)


@fault(
    "mutate-inline",
    "catalog",
    # Hosting inline commits is a MAY, but an accepted one is ratified: CAT-RETAIN-UNPUBLISHED binds.
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Serves inline commit content altered (trailing newline stripped or added).",
)
class MutateInline(ReferenceCatalog):
    def _served(self, commit: RatifiedCommit) -> RatifiedCommit:
        content = commit.inline_content
        if content is None:
            return commit
        altered = content[:-1] if content.endswith(b"\n") else content + b"\n"
        return RatifiedCommit(commit.version, None, altered, commit.in_commit_timestamp)


@fault(
    "serve-rewritten-staged",
    "catalog",
    breaks=(),  # conformant: the RFC's catalog "stores only the location" of a staged commit
    description="Serves a ratified staged commit by location only (conformant: the RFC's design).",
)
class ServeRewrittenStaged(ReferenceCatalog):
    def _as_ratified(self, location: str, commit: RatifiedCommit, kept: bytes | None) -> RatifiedCommit:
        return commit


@fault(
    "bound-content-altered",
    "catalog",
    breaks=("CAT-RATIFIED-CONTENT-BOUND",),
    description="Binds staged commits to their bytes but serves a changed file's kept bytes with a line added.",
)
class BoundContentAltered(ReferenceCatalog):
    def _as_ratified(self, location: str, commit: RatifiedCommit, kept: bytes | None) -> RatifiedCommit:
        served = super()._as_ratified(location, commit, kept)
        if served.inline_content is None or commit.inline_content is not None:
            return served
        return RatifiedCommit(served.version, None, served.inline_content + b"\n", served.in_commit_timestamp)


@fault(
    "list-descending",
    "catalog",
    breaks=(),  # conformant, as Unity Catalog OSS: no binding section of the RFC orders a listing
    description="Lists ratified commits newest first (conformant: Unity Catalog OSS does).",
)
class ListDescending(ReferenceCatalog):
    def _select_listing(self, commits: list[RatifiedCommit], start: int, end: int) -> list[RatifiedCommit]:
        return super()._select_listing(commits, start, end)[::-1]


@fault(
    "list-gappy",
    "catalog",
    breaks=("CAT-LIST-CONTIGUOUS", "INT-RATIFIED-READABLE"),
    description="Leaves a middle commit out of listings of three or more.",
)
class ListGappy(ReferenceCatalog):
    def _select_listing(self, commits: list[RatifiedCommit], start: int, end: int) -> list[RatifiedCommit]:
        listed = super()._select_listing(commits, start, end)
        if len(listed) >= 3:
            del listed[len(listed) // 2]
        return listed


@fault(
    "list-ignores-range",
    "catalog",
    breaks=("CAT-LIST-RANGE",),
    description="Lists every stored commit whatever range was asked.",
)
class ListIgnoresRange(ReferenceCatalog):
    def _select_listing(self, commits: list[RatifiedCommit], start: int, end: int) -> list[RatifiedCommit]:
        return list(commits)


@fault(
    "stale-latest",
    "catalog",
    breaks=("CAT-LIST-LATEST",),
    description="Listings report the version before the latest ratified one.",
)
class StaleLatest(ReferenceCatalog):
    def _listed_latest(self, row: TableRow) -> int:
        return row.latest_version - 1


@fault(
    "lists-rejected",
    "catalog",
    breaks=("CAT-LIST-RATIFIED-ONLY",),
    description="Remembers refused proposals and lists them as ratified commits.",
)
class ListsRejected(ReferenceCatalog):
    # Kept in the same database so every instance on the file sees them.
    _TABLE = "fault_refused_proposals"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        with self._store.write() as tx:
            tx.conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self._TABLE} (table_id TEXT, version INTEGER,"
                " staged_uri TEXT, inline_content BLOB, in_commit_timestamp INTEGER)"
            )

    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        try:
            super()._ratify(table_id, proposal, published, content)
        except (CommitConflict, CommitRejected):
            with self._store.write() as tx:
                tx.conn.execute(
                    f"INSERT INTO {self._TABLE} VALUES (?, ?, ?, ?, ?)",
                    (
                        table_id,
                        proposal.version,
                        proposal.staged_uri,
                        proposal.inline_content,
                        proposal.in_commit_timestamp,
                    ),
                )
            raise

    def _stored_commits(self, tx: Tx, table_id: str) -> list[RatifiedCommit]:
        refused = tx.conn.execute(
            f"SELECT version, staged_uri, inline_content, in_commit_timestamp FROM {self._TABLE} WHERE table_id = ?",
            (table_id,),
        ).fetchall()
        extra = [RatifiedCommit(v, uri, None if b is None else bytes(b), ict) for v, uri, b, ict in refused]
        return sorted(super()._stored_commits(tx, table_id) + extra, key=lambda c: c.version)


@fault(
    "forget-above-published",
    "catalog",
    breaks=("CAT-FORGET-PUBLISHED-ONLY",),
    description="Publishing up to b also drops the unpublished commit b+1.",
)
class ForgetAbovePublished(ReferenceCatalog):
    def _drop_on_publish(self, tx: Tx, table_id: str, published: int) -> None:
        super()._drop_on_publish(tx, table_id, published + 1)


@fault(
    "resolve-unmanaged",
    "catalog",
    breaks=("CAT-RESOLVE-MANAGED",),
    description="Name resolution says the table is not catalog-managed.",
)
class ResolveUnmanaged(ReferenceCatalog):
    def resolve(self, name: str) -> TableInfo:
        info = super().resolve(name)
        return TableInfo(info.table_id, info.name, info.location, catalog_managed=False)


@fault(
    "resolve-wrong-location",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="Name resolution returns a location other than the table's.",
)
class ResolveWrongLocation(ReferenceCatalog):
    # Only name resolution lies; commits are still validated against the real location.
    def resolve(self, name: str) -> TableInfo:
        info = super().resolve(name)
        return TableInfo(info.table_id, info.name, f"{self.warehouse_uri}/moved/{info.table_id}", True)


@fault(
    "shared-staging-location",
    "catalog",
    breaks=("CAT-STAGING-UNIQUE",),
    description="Every staging table gets the same location.",
)
class SharedStagingLocation(ReferenceCatalog):
    def _staging_location(self, table_id: str) -> str:
        return f"{self.warehouse_uri}/tables/staging"


@fault(
    "listing-needs-staged-files",
    "catalog",
    breaks=("CAT-LIST-LATEST",),
    description="Reads every listed staged file back, so a listing fails once cleanup deleted one.",
)
class ListingNeedsStagedFiles(ReferenceCatalog):
    def _as_ratified(self, location: str, commit: RatifiedCommit, kept: bytes | None) -> RatifiedCommit:
        if commit.staged_uri is not None and kept is not None:
            read_commit_file(self._storage, commit.staged_uri, location, self.read_limits)  # raises when gone
        return super()._as_ratified(location, commit, kept)


@fault(
    "drop-keeps-name",
    "catalog",
    breaks=("CAT-DROP",),
    description="Acknowledges a drop but keeps the table's name: it still resolves.",
)
class DropKeepsName(ReferenceCatalog):
    def drop_table(self, name: str) -> None:
        self.resolve(name)  # an unknown name is still refused; a known one is left as it was


@fault(
    "bad-maintenance-policy",
    "catalog",
    breaks=("CAT-MAINTENANCE-POLICY",),
    description="The maintenance policy names an operation that does not exist.",
)
class BadMaintenancePolicy(ReferenceCatalog):
    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        policy = super().maintenance_policy(table_id)
        return MaintenancePolicy(allowed=policy.allowed | {"optimize-everything"})


@fault(
    "first-commit-over-gap",
    "catalog",
    breaks=("CAT-RATIFY-SEQUENTIAL",),
    description="The first commit after creation skips the gap test: v3 is ratified on a table at v0.",
)
class FirstCommitOverGap(ReferenceCatalog):
    def _check_version(self, latest: int, version: int) -> None:
        if latest > 0:
            super()._check_version(latest, version)


@fault(
    "reratify-forgotten",
    "catalog",
    breaks=("CAT-RATIFY-ONCE",),
    description="A version published and dropped from the catalog can be ratified again (taken = stored).",
)
class ReratifyForgotten(ReferenceCatalog):
    def _ratify(
        self, table_id: str, proposal: RatifiedCommit, published: int | None, content: bytes | None = None
    ) -> None:
        with self._store.write() as tx:
            row = tx.table(table_id)
            assert row is not None
            if proposal.version in {c.version for c in tx.commits(table_id)}:
                raise CommitConflict("taken", latest_version=row.latest_version)
            if proposal.version > row.latest_version + 1:
                raise CommitRejected("gap")
            tx.insert_commit(table_id, proposal, replace=True)
            if proposal.staged_uri is not None and content is not None:
                tx.bind_content(table_id, proposal.version, content)
            tx.raise_latest(table_id, proposal.version)


@fault(
    "staged-any-version",
    "catalog",
    breaks=("CAT-STAGED-VERSION",),
    description="Checks the staging folder of a staged proposal but not the version in its file name.",
)
class StagedAnyVersion(ReferenceCatalog):
    def _check_proposal(self, location: str, proposal: RatifiedCommit) -> None:
        uri = proposal.staged_uri
        if uri is not None and uri.startswith(staged_dir_uri(location)):
            name = uri.rsplit("/", 1)[-1]
            uri = uri[: -len(name)] + f"{proposal.version:020d}" + name[20:]  # as if the name matched
        check_commit(location, RatifiedCommit(proposal.version, uri, proposal.inline_content))


@fault(
    "staged-name-unchecked",
    "catalog",
    breaks=("CAT-STAGED-NAME",),
    description="Checks a staged proposal's folder and version but not the UUID part of its name.",
)
class StagedNameUnchecked(ReferenceCatalog):
    def _check_proposal(self, location: str, proposal: RatifiedCommit) -> None:
        uri = proposal.staged_uri
        folder = staged_dir_uri(location)
        if uri is not None and uri.startswith(folder) and "/" not in uri[len(folder) :] and uri.endswith(".json"):
            version = uri[len(folder) :][:20]  # a well-formed UUID put in place of whatever is there
            uri = f"{folder}{version}.00000000-0000-4000-8000-000000000000.json"
        check_commit(location, RatifiedCommit(proposal.version, uri, proposal.inline_content))


@fault(
    "staged-any-path",
    "catalog",
    breaks=("CAT-STAGED-IN-TABLE",),
    description="Accepts any path under the table's location whose file name carries the version.",
)
class StagedAnyPath(ReferenceCatalog):
    def _check_proposal(self, location: str, proposal: RatifiedCommit) -> None:
        uri = proposal.staged_uri
        if uri is not None and uri.startswith(location + "/") and uri.endswith(".json"):
            uri = staged_dir_uri(location) + uri.rsplit("/", 1)[-1]  # judged by its name alone
        check_commit(location, RatifiedCommit(proposal.version, uri, proposal.inline_content))


@fault(
    "publish-mark-above-latest",
    "catalog",
    breaks=("CAT-PUBLISH-REPORT-POSSIBLE",),
    description="Takes a publication report above the latest version as its mark: later commits are forgotten.",
)
class PublishMarkAboveLatest(ReferenceCatalog):
    def mark_published(self, table_id: str, version: int) -> None:
        with self._store.write() as tx:
            self._registered(tx, table_id)
            self._publish(tx, table_id, version)  # no test against the latest ratified version


@fault(
    "proposal-mark-covers-itself",
    "catalog",
    breaks=("CAT-PUBLISH-REPORT-POSSIBLE",),
    description="Takes the publication mark a proposal carries without comparing it with the proposed version.",
)
class ProposalMarkCoversItself(ReferenceCatalog):
    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
        staged_content: bytes | None = None,
    ) -> None:
        super().commit(
            table_id,
            version,
            staged_uri=staged_uri,
            inline_content=inline_content,
            in_commit_timestamp=in_commit_timestamp,
            staged_content=staged_content,
        )
        if latest_published_version is not None:  # recorded after ratification, whatever it says
            with self._store.write() as tx:
                self._publish(tx, table_id, latest_published_version)


# ---------------------------------------------------------------- issue 28, round 6 (helper A1)


@fault(
    "listing-start-clamped-to-latest",
    "catalog",
    breaks=("CAT-LIST-RANGE",),
    description="A listing whose start lies above the latest version is clamped to it and lists the latest commit.",
)
class ListingStartClampedToLatest(ReferenceCatalog):
    def _select_listing(self, commits: list[RatifiedCommit], start: int, end: int) -> list[RatifiedCommit]:
        if commits and start > commits[-1].version:
            start = commits[-1].version  # a paging cursor "never past the end": the last page again
        return super()._select_listing(commits, start, end)


@fault(
    "resolve-longest-registered-prefix",
    "catalog",
    breaks=("CAT-RESOLVE-LOCATION",),
    description="An unregistered name resolves to the table whose name is its longest registered prefix.",
)
class ResolveLongestRegisteredPrefix(ReferenceCatalog):
    def resolve(self, name: str) -> TableInfo:
        with self._store.read() as tx:
            row = tx.table_by_name(name) if isinstance(name, str) else None
            if row is None and isinstance(name, str):
                names = [n for (n,) in tx.conn.execute("SELECT name FROM tables WHERE name IS NOT NULL").fetchall()]
                owners = sorted((n for n in names if name.startswith(n)), key=len)
                row = tx.table_by_name(owners[-1]) if owners else None
        if row is None:
            return super().resolve(name)  # TableNotFound
        return self._table_info(row)


@fault(
    "managed-flag-while-unpublished",
    "catalog",
    breaks=("CAT-RESOLVE-MANAGED",),
    description="Resolution says catalog-managed only while the table has unpublished commits (or none yet).",
)
class ManagedFlagWhileUnpublished(ReferenceCatalog):
    def _table_info(self, row: TableRow) -> TableInfo:
        info = super()._table_info(row)
        all_published = 0 < row.latest_version <= row.latest_published_version
        return TableInfo(info.table_id, info.name, info.location, catalog_managed=not all_published)


@fault(
    "restart-forgets-inline-ict",
    "catalog",
    breaks=("CAT-RATIFY-DURABLE",),
    description="After a restart, stored inline commits are served without their in-commit timestamp.",
)
class RestartForgetsInlineIct(ReferenceCatalog):
    """The durable record of an inline commit has no timestamp column: the start-up finds every inline
    commit undated (staged ones keep theirs), what a restart of such a catalog serves."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        with self._store.write() as tx:
            tx.conn.execute("UPDATE commits SET in_commit_timestamp = NULL WHERE inline_content IS NOT NULL")


# ---------------------------------------------------------------- issue 28, round 6 (helper A2)


@fault(
    "mark-before-judging",
    "catalog",
    breaks=("CAT-RATIFY-SEQUENTIAL",),
    description="Applies the publication mark a proposal carries before judging it: a refused gap still drops commits.",
)
class MarkBeforeJudging(ReferenceCatalog):
    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        mark = kwargs.get("latest_published_version")
        if _is_int(mark) and _is_int(version) and 0 <= mark < version:
            with contextlib.suppress(InvalidRequest):  # a mark above the latest is refused, not applied
                self.mark_published(table_id, mark)
        super().commit(table_id, version, **kwargs)


@fault(
    "conflict-applies-mark",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Applies the publication mark of a proposal it answers with a conflict: unpublished commits go.",
)
class ConflictAppliesMark(ReferenceCatalog):
    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        try:
            super().commit(table_id, version, **kwargs)
        except CommitConflict:
            mark = kwargs.get("latest_published_version")
            if _is_int(mark):  # "the writer's report is news whatever the answer"
                with contextlib.suppress(InvalidRequest):
                    self.mark_published(table_id, mark)
            raise


@fault(
    "validate-after-reserving",
    "catalog",
    breaks=("CAT-RATIFY-SEQUENTIAL", "CAT-STAGED-VERSION", "CAT-STAGED-IN-TABLE", "CAT-STAGED-NAME"),
    description="Reserves the proposed version before checking the proposal; a refused proposal keeps it reserved.",
)
class ValidateAfterReserving(ReferenceCatalog):
    """The sequence is judged against the highest version reserved (in memory), and the reservation is
    made before the staged file is checked: after a refused proposal for v, v is taken and v+1 is next."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reserved: dict[str, int] = {}
        self._reserving = threading.Lock()

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        with self._store.read() as tx:
            row = self._registered(tx, table_id)
        if _is_int(version):
            with self._reserving:
                top = max(row.latest_version, self._reserved.get(table_id, 0))
                super()._check_version(top, version)
                self._reserved[table_id] = version
        super().commit(table_id, version, **kwargs)

    def _check_version(self, latest: int, version: int) -> None:
        if version <= latest:  # the gap was judged against the reservation
            raise CommitConflict(f"version {version} is already ratified", latest_version=latest)


@fault(
    "mark-heals-over-log-files",
    "catalog",
    breaks=("CAT-RETAIN-UNPUBLISHED",),
    description="Moves a publication mark up over every _delta_log file above it, whatever the file holds.",
)
class MarkHealsOverLogFiles(ReferenceCatalog):
    def mark_published(self, table_id: str, version: int) -> None:
        with self._store.read() as tx:
            row = self._registered(tx, table_id)
        top = version
        if self._storage is not None and _is_int(version):
            while top < row.latest_version and self._storage.exists(delta_file_uri(row.location, top + 1)):
                top += 1
        super().mark_published(table_id, top)

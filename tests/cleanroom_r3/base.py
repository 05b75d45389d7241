"""The correct baselines of round 3, written from the RFC, the contract and docs/certify.md only.

``DurableCatalog``: the clean-room catalog with its state persisted, one JSON file per table, so that
``restart_catalog`` can rebuild it (every ratification is on disk before ``commit`` returns).
``ResilientClient``: the clean-room client that, when the answer to a proposal is lost
(``CatalogTimeout``) or is a conflict (possibly the answer to a second delivery of its own proposal),
asks the catalog what happened before doing anything else, and retries the calls that are safe to
repeat.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from conformance.contract.delta import (
    Catalog,
    CatalogTimeout,
    CommitConflict,
    DeltaClient,
    GetCommitsResponse,
    InvalidRequest,
    MaintenancePolicy,
    RatifiedCommit,
    StagingTable,
    Storage,
    TableInfo,
)
from conformance.contract.target import TargetEnv
from tests.cleanroom.catalog import CleanCatalog, TableState
from tests.cleanroom.client import Action, CleanClient, RetriesExhausted, encode
from tests.cleanroom.target import CleanRoomTarget

T = TypeVar("T")


# ---------------------------------------------------------------- catalog


class DurableCatalog(CleanCatalog):
    """``CleanCatalog`` whose every change of a table is written to ``state_dir/<table_id>.json``."""

    def __init__(self, warehouse_uri: str, storage: Storage, state_dir: Path | None = None) -> None:
        super().__init__(warehouse_uri, storage)
        self.state_dir = state_dir
        if state_dir is not None:
            state_dir.mkdir(parents=True, exist_ok=True)
            self.load()

    # ------------------------------------------------------------ persistence

    def name_key(self, name: str) -> str:
        """The key of a name in the name index."""
        return name

    def encode_table(self, t: TableState) -> dict[str, Any]:
        return {
            "table_id": t.table_id,
            "location": t.location,
            "name": t.name,
            "latest": t.latest,
            "published": t.published,
            "stored": [
                {
                    "version": c.version,
                    "staged_uri": c.staged_uri,
                    "inline": None if c.inline_content is None else base64.b64encode(c.inline_content).decode(),
                    "ict": c.in_commit_timestamp,
                }
                for c in (t.stored[v] for v in sorted(t.stored))
            ],
        }

    def decode_table(self, doc: dict[str, Any]) -> TableState:
        t = TableState(doc["table_id"], doc["location"], doc["name"], int(doc["latest"]), int(doc["published"]))
        for c in doc["stored"]:
            inline = None if c["inline"] is None else base64.b64decode(c["inline"])
            t.stored[int(c["version"])] = RatifiedCommit(int(c["version"]), c["staged_uri"], inline, c["ict"])
        t.latest = self.recovered_latest(t, int(doc["latest"]))
        return t

    def recovered_latest(self, t: TableState, persisted: int) -> int:
        return persisted

    def persist(self, t: TableState) -> None:
        """Write the table's state atomically (caller holds ``t.lock`` or owns ``t`` alone)."""
        if self.state_dir is None:
            return
        path = self.state_dir / f"{t.table_id}.json"
        tmp = path.with_suffix(f".{os.getpid()}.{id(t)}.tmp")
        tmp.write_text(json.dumps(self.encode_table(t)))
        os.replace(tmp, path)

    def load(self) -> None:
        assert self.state_dir is not None
        for path in sorted(self.state_dir.glob("*.json")):
            t = self.decode_table(json.loads(path.read_text()))
            self._by_id[t.table_id] = t
            if t.name is not None:
                self._by_name[self.name_key(t.name)] = t.table_id

    # ------------------------------------------------------------ every change is persisted

    def store(self, t: TableState, commit: RatifiedCommit) -> None:
        super().store(t, commit)
        self.persist_ratified(t, commit)

    def persist_ratified(self, t: TableState, commit: RatifiedCommit) -> None:
        """Durable before ``commit`` answers: a ratification the catalog forgets is ratified twice."""
        self.persist(t)

    def forget_published(self, t: TableState, version: int) -> None:
        super().forget_published(t, version)
        self.persist(t)

    def create_staging_table(self) -> StagingTable:
        staging = super().create_staging_table()
        t = self._by_id[staging.table_id]
        with t.lock:
            self.persist(t)
        return staging

    def register_table(self, name: str, table_id: str) -> TableInfo:
        info = super().register_table(name, table_id)
        t = self._by_id[info.table_id]
        with t.lock:
            self.persist(t)
        return info


# ---------------------------------------------------------------- client


class PatientCatalog:
    """What the client talks to: the catalog, with the calls that are safe to repeat retried after a
    lost answer. ``commit`` is never repeated blindly: the client asks what happened instead."""

    attempts = 8

    def __init__(self, catalog: Catalog) -> None:
        self.inner = catalog

    def _again(self, call: Callable[[], T]) -> T:
        for _ in range(self.attempts - 1):
            try:
                return call()
            except CatalogTimeout:
                continue
        return call()

    def create_staging_table(self) -> StagingTable:
        return self._again(self.inner.create_staging_table)

    def register_table(self, name: str, table_id: str) -> TableInfo:
        try:
            return self.inner.register_table(name, table_id)
        except CatalogTimeout:
            pass
        # The answer was lost: the name may be ours already. Ask before registering again.
        for _ in range(self.attempts):
            try:
                info = self.inner.resolve(name)
            except CatalogTimeout:
                continue
            except Exception:  # noqa: BLE001 - not registered (yet): register again below
                break
            if info.table_id == table_id:
                return info
            raise InvalidRequest(f"table {name!r} exists")
        return self._again(lambda: self.inner.register_table(name, table_id))

    def resolve(self, name: str) -> TableInfo:
        return self._again(lambda: self.inner.resolve(name))

    def commit(self, table_id: str, version: int, **kwargs: Any) -> None:
        self.inner.commit(table_id, version, **kwargs)

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        return self._again(lambda: self.inner.get_commits(table_id, start_version, end_version))

    def mark_published(self, table_id: str, version: int) -> None:
        self._again(lambda: self.inner.mark_published(table_id, version))  # idempotent

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        return self._again(lambda: self.inner.maintenance_policy(table_id))


class ResilientClient(CleanClient):
    """``CleanClient`` that finds out from the catalog what became of a proposal whose answer was lost."""

    def __init__(self, catalog: Catalog, storage: Storage) -> None:
        super().__init__(PatientCatalog(catalog), storage)
        self.raw_catalog = catalog

    # ------------------------------------------------------------ decisions (variants override these)

    def commit_info_for(self, info: TableInfo, version: int, operation: str, ict: int) -> Action:
        return self.commit_info(operation, ict)

    def after_ratified(self, info: TableInfo, version: int) -> None:
        """Hook once a proposal of this client is known to be ratified."""

    def on_lost_answer(self, info: TableInfo, version: int, staged_uri: str, content: bytes) -> bool:
        """The answer to our proposal for ``version`` was lost: was it ratified? Ask the catalog."""
        return self.was_ratified(info, version, staged_uri, content)

    def on_conflict(self, info: TableInfo, version: int, staged_uri: str, content: bytes) -> bool:
        """A conflict may answer a second delivery of our own, already ratified proposal: ask first."""
        return self.was_ratified(info, version, staged_uri, content)

    def was_ratified(self, info: TableInfo, version: int, staged_uri: str, content: bytes) -> bool:
        """Whether the catalog ratified our own proposal (this staged file, or these bytes) as ``version``."""
        resp = self.catalog.get_commits(info.table_id, version, version)
        if resp.latest_version < version:
            return False  # not ratified: nobody holds the version yet
        for c in resp.commits:
            if c.version == version:
                return c.staged_uri == staged_uri or (c.inline_content is not None and c.inline_content == content)
        # The catalog no longer stores it: it was published. The published file says whose it is.
        try:
            return self.storage.get(f"{info.location}/_delta_log/{self.delta_name(version)}") == content
        except FileNotFoundError:
            return False

    # ------------------------------------------------------------ writing

    def transact(self, name: str, operation: str, build: Any) -> int:
        info = self._info(name)
        log = f"{info.location}/_delta_log"
        for _ in range(self.max_attempts):
            view = self.view(info)
            snap = self.snapshot(view, view.latest)
            version = view.latest + 1
            ict = self.next_ict(snap.in_commit_timestamp)
            actions: list[Action] = build(info, snap, ict)
            content = encode(self.order_actions(self.commit_info_for(info, version, operation, ict), actions))
            uri = self.stage(log, version, content, None)
            self.before_propose(log, version, content)
            try:
                self.catalog.commit(info.table_id, version, staged_uri=uri, in_commit_timestamp=ict)
            except CommitConflict:
                if not self.on_conflict(info, version, uri, content):
                    continue
            except CatalogTimeout:
                if not self.on_lost_answer(info, version, uri, content):
                    continue
            self.after_ratified(info, version)
            return version
        raise RetriesExhausted(f"gave up committing to {name} after {self.max_attempts} lost races")


# ---------------------------------------------------------------- target


class DurableTarget(CleanRoomTarget):
    """Both sides, correct: the durable catalog (restartable) and the resilient client."""

    name = "cleanroom-r3"
    catalog_cls: ClassVar[type[CleanCatalog]] = DurableCatalog
    client_cls: ClassVar[type[CleanClient]] = ResilientClient

    def state_dir(self, env: TargetEnv) -> Path:
        return Path(env.workdir) / "cr3-catalog-state"

    def build_catalog(self, env: TargetEnv) -> DurableCatalog:
        cls = self.catalog_cls
        assert issubclass(cls, DurableCatalog)
        return cls(env.warehouse_uri, env.storage, self.state_dir(env))

    def make_catalog(self, env: TargetEnv) -> Catalog:
        return self.build_catalog(env)

    def restart_catalog(self, catalog: Catalog, env: TargetEnv) -> Catalog:
        """Stop the catalog (its memory is gone) and start it again from its state files."""
        return self.build_catalog(env)

    def make_client(self, catalog: Catalog, env: TargetEnv) -> DeltaClient:
        return self.client_cls(catalog, env.storage)

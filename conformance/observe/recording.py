"""Wrappers that record every call into a Transcript.

The target's own parts are wrapped so that an unexpected exception (not one of
the contract's error classes) becomes ``TargetRaised``: the product misbehaved,
which is a FAIL, not a fault of the suite (ERROR).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from conformance.contract.delta import (
    AdapterBroken,
    Catalog,
    CatalogError,
    CredentialRefused,
    DeltaClient,
    FileInfo,
    GetCommitsResponse,
    MaintenancePolicy,
    NotSupported,
    ReadResult,
    StagingTable,
    Storage,
    TableInfo,
)
from conformance.observe.deadline import DeadlineExceeded, deadline
from conformance.observe.transcript import Transcript

T = TypeVar("T")
# Contract errors, judged by the checks; CredentialRefused and AdapterBroken too: the user's set-up
# and the adapter's own breakage (ERRORs), which wrapping in TargetRaised would charge to the product.
PASS_THROUGH = (CatalogError, CredentialRefused, AdapterBroken, NotSupported, FileExistsError, FileNotFoundError)


class TargetRaised(Exception):
    """The system under test raised an exception the contract does not allow here."""


class _Recorder:
    def __init__(
        self, inner: Any, transcript: Transcript, actor: str, under_test: bool, call_s: float | None = None
    ) -> None:
        self.inner = inner
        self.transcript = transcript
        self.actor = actor
        self.under_test = under_test
        self.call_s = call_s  # whole-call deadline of calls into the target (None: only the check's)

    def _call(self, op: str, args: dict[str, Any], fn: Callable[[], T]) -> T:
        try:
            with deadline(self.call_s if self.under_test else None, f"{self.actor}.{op}"):
                result = fn()
        except DeadlineExceeded as e:
            self.transcript.add(self.actor, op, args, False, error=type(e).__name__)
            raise
        except PASS_THROUGH as e:
            self.transcript.add(self.actor, op, args, False, error=type(e).__name__)
            raise
        except Exception as e:
            self.transcript.add(self.actor, op, args, False, error=type(e).__name__)
            if self.under_test:
                raise TargetRaised(f"{self.actor}.{op} raised {type(e).__name__}: {e}") from e
            raise
        self.transcript.add(self.actor, op, args, True, result=result)
        return result

    def __getattr__(self, name: str) -> Any:
        # Admin helpers of the reference catalog (import_table, ...) pass through unrecorded.
        return getattr(self.inner, name)


CommitHook = Callable[[str, int], None]
ListingHook = Callable[[str], None]  # table id: runs before a get_commits reaches the catalog


class RecordingCatalog(_Recorder):
    """A Catalog that records calls; ``before_commit`` and ``before_get_commits`` hooks let
    schedules interleave (another client acting just before the caller's request is served)."""

    inner: Catalog

    def __init__(
        self,
        inner: Catalog,
        transcript: Transcript,
        *,
        actor: str = "catalog",
        under_test: bool = False,
        call_s: float | None = None,
    ) -> None:
        super().__init__(inner, transcript, actor, under_test, call_s)
        self.before_commit: list[CommitHook] = []
        self.before_get_commits: list[ListingHook] = []

    def create_staging_table(self) -> StagingTable:
        return self._call("create_staging_table", {}, self.inner.create_staging_table)

    def register_table(self, name: str, table_id: str) -> TableInfo:
        return self._call(
            "register_table",
            {"name": name, "table_id": table_id},
            lambda: self.inner.register_table(name, table_id),
        )

    def resolve(self, name: str) -> TableInfo:
        return self._call("resolve", {"name": name}, lambda: self.inner.resolve(name))

    def drop_table(self, name: str) -> None:
        """The optional drop (``contract.delta.DroppingCatalog``): a catalog without it does not
        offer dropping, which the check then verifies as ``NotSupported``."""
        drop = getattr(self.inner, "drop_table", None)

        def call() -> None:
            if drop is None:
                raise NotSupported("the catalog offers no drop_table")
            drop(name)

        self._call("drop_table", {"name": name}, call)

    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
        **extra: Any,
    ) -> None:
        """``extra``: keywords beyond the contract that the wrapped catalog takes (the reference's
        ``staged_content``, passed by ``lakecert serve`` when it serves a recorded catalog)."""
        for hook in list(self.before_commit):
            hook(table_id, version)
        args = {
            "table_id": table_id,
            "version": version,
            "staged_uri": staged_uri,
            "inline_content": inline_content,
            "in_commit_timestamp": in_commit_timestamp,
            "latest_published_version": latest_published_version,
        }
        self._call(
            "commit",
            args,
            lambda: self.inner.commit(
                table_id,
                version,
                staged_uri=staged_uri,
                inline_content=inline_content,
                in_commit_timestamp=in_commit_timestamp,
                latest_published_version=latest_published_version,
                **extra,
            ),
        )

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        for hook in list(self.before_get_commits):
            hook(table_id)
        args = {"table_id": table_id, "start_version": start_version, "end_version": end_version}
        return self._call(
            "get_commits",
            args,
            lambda: self.inner.get_commits(table_id, start_version, end_version),
        )

    def mark_published(self, table_id: str, version: int) -> None:
        self._call(
            "mark_published",
            {"table_id": table_id, "version": version},
            lambda: self.inner.mark_published(table_id, version),
        )

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        return self._call(
            "maintenance_policy",
            {"table_id": table_id},
            lambda: self.inner.maintenance_policy(table_id),
        )


class RecordingStorage(_Recorder):
    inner: Storage

    def __init__(self, inner: Storage, transcript: Transcript, *, actor: str = "storage") -> None:
        super().__init__(inner, transcript, actor, under_test=False)

    def put(self, uri: str, data: bytes, *, if_absent: bool = False) -> None:
        self._call(
            "put",
            {"uri": uri, "size": len(data), "if_absent": if_absent},
            lambda: self.inner.put(uri, data, if_absent=if_absent),
        )

    def get(self, uri: str) -> bytes:
        return self._call("get", {"uri": uri}, lambda: self.inner.get(uri))

    def list(self, prefix_uri: str) -> list[FileInfo]:
        return self._call("list", {"prefix": prefix_uri}, lambda: self.inner.list(prefix_uri))

    def delete(self, uri: str) -> None:
        self._call("delete", {"uri": uri}, lambda: self.inner.delete(uri))

    def exists(self, uri: str) -> bool:
        return self._call("exists", {"uri": uri}, lambda: self.inner.exists(uri))

    def _call(self, op: str, args: dict[str, Any], fn: Callable[[], T]) -> T:
        # Reads of large objects are recorded without their bytes.
        try:
            result = fn()
        except Exception as e:
            self.transcript.add(self.actor, op, args, False, error=type(e).__name__)
            raise
        shown: Any = result
        if isinstance(result, bytes):
            shown = {"size": len(result)}
        elif isinstance(result, list):
            shown = [f.uri for f in result]
        self.transcript.add(self.actor, op, args, True, result=shown)
        return result


SHOWN_ROWS = 64  # an append of more rows is recorded by its count and its ends (checks append up to ~65,000)


def _rows_shown(rows: Sequence[dict[str, object]]) -> object:
    """The rows of an append as the transcript keeps them: all of them, or for a large append their
    number and the first and last two (a reproducer of megabytes says no more)."""
    if len(rows) <= SHOWN_ROWS:
        return list(rows)
    return {"count": len(rows), "first": list(rows[:2]), "last": list(rows[-2:])}


class RecordingClient(_Recorder):
    """The client under test, as the checks drive it."""

    inner: DeltaClient

    def __init__(self, inner: DeltaClient, transcript: Transcript, *, call_s: float | None = None) -> None:
        super().__init__(inner, transcript, "client", under_test=True, call_s=call_s)

    def create_table(self, name: str) -> None:
        self._call("create_table", {"name": name}, lambda: self.inner.create_table(name))

    def append(self, name: str, rows: Sequence[dict[str, object]]) -> int:
        return self._call(
            "append",
            {"name": name, "rows": _rows_shown(rows)},
            lambda: self.inner.append(name, rows),
        )

    def delete(self, name: str, ids: Sequence[int]) -> int:
        return self._call(
            "delete",
            {"name": name, "ids": list(ids)},
            lambda: self.inner.delete(name, ids),
        )

    def publish(self, name: str) -> None:
        self._call("publish", {"name": name}, lambda: self.inner.publish(name))

    def checkpoint(self, name: str) -> int | None:
        return self._call("checkpoint", {"name": name}, lambda: self.inner.checkpoint(name))

    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        return self._call(
            "compact_log",
            {"name": name, "start": start_version, "end": end_version},
            lambda: self.inner.compact_log(name, start_version, end_version),
        )

    def cleanup(self, name: str, cutoff_version: int) -> None:
        self._call(
            "cleanup",
            {"name": name, "cutoff_version": cutoff_version},
            lambda: self.inner.cleanup(name, cutoff_version),
        )

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        return self._call(
            "read",
            {"name": name, "version": version, "timestamp_ms": timestamp_ms},
            lambda: self.inner.read(name, version=version, timestamp_ms=timestamp_ms),
        )

"""A reader's answer where a refusal is one of the answers a check accepts (a version whose commits
are gone), told apart from a harness failure, and said in a check's message."""

from __future__ import annotations

from conformance.contract.delta import CatalogError, ReadResult
from conformance.observe.recording import RecordingClient, TargetRaised


def read_or_refused(
    client: RecordingClient, name: str, version: int | None = None, timestamp_ms: int | None = None
) -> ReadResult | None:
    """The client's answer, or None when it refused (a contract error or the target's own exception);
    anything else (a broken adapter, a deadline) is not an answer and propagates."""
    try:
        return client.read(name, version=version, timestamp_ms=timestamp_ms)
    except (CatalogError, TargetRaised):
        return None


def said(got: ReadResult | None) -> str:
    return "was refused" if got is None else f"gave v{got.version} with rows {got.rows}"

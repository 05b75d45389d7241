"""Table features a catalog-managed table must carry (RFC "Catalog-managed Table Enablement")."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.checks.delta.writer.conftest import WrittenTable
from conformance.oracle.commits import Action


def _single(actions: list[Action], kind: str) -> dict[str, Any]:
    found = [a[kind] for a in actions if kind in a]
    assert len(found) == 1, f"version 0 has {len(found)} {kind} actions"
    value: dict[str, Any] = found[0]
    return value


@pytest.mark.req("WRT-PROTOCOL-VERSIONS")
def test_protocol_enables_catalog_managed(written: WrittenTable) -> None:
    protocol = _single(written.commits[0], "protocol")
    assert protocol.get("minReaderVersion") == 3, f"minReaderVersion={protocol.get('minReaderVersion')}"
    assert protocol.get("minWriterVersion") == 7, f"minWriterVersion={protocol.get('minWriterVersion')}"
    assert "catalogManaged" in (protocol.get("readerFeatures") or []), "catalogManaged missing in readerFeatures"
    assert "catalogManaged" in (protocol.get("writerFeatures") or []), "catalogManaged missing in writerFeatures"


@pytest.mark.req("WRT-ICT-ENABLED")
def test_in_commit_timestamps_are_enabled(written: WrittenTable) -> None:
    protocol = _single(written.commits[0], "protocol")
    metadata = _single(written.commits[0], "metaData")
    assert "inCommitTimestamp" in (protocol.get("writerFeatures") or []), "inCommitTimestamp feature not listed"
    config = metadata.get("configuration") or {}
    assert isinstance(config, dict), f"metaData.configuration is a {type(config).__name__}, not a map of settings"
    assert config.get("delta.enableInCommitTimestamps") == "true", (
        f"delta.enableInCommitTimestamps={config.get('delta.enableInCommitTimestamps')!r}"
    )

"""A schedule shared by the conflict checks: the client loses a version to a rival's commit."""

from __future__ import annotations

from conformance.checks.delta.evidence import Attempt, attempt
from conformance.observe.recording import RecordingCatalog, RecordingClient
from conformance.observe.transcript import Transcript
from reference_impl.delta.client import ReferenceClient

RIVAL_ROW: dict[str, object] = {"id": 99, "value": "rival"}
CLIENT_ROW: dict[str, object] = {"id": 2, "value": "b"}


def lose_v2(
    client: RecordingClient,
    ref_catalog: RecordingCatalog,
    rival_client: ReferenceClient,
    transcript: Transcript,
    table_name: str,
) -> Attempt[int]:
    """create, append (v1); then the client's append, whose first proposal loses v2 to the suite's
    append (by ``rival_client``), ratified and left unpublished. Returns the client's outcome."""
    client.create_table(table_name)
    client.append(table_name, [{"id": 1, "value": "a"}])
    rival_done: list[int] = []

    def rival(table_id: str, version: int) -> None:
        # Schedule: the first proposal after this point loses to a rival commit of the same version.
        if not rival_done:
            rival_done.append(rival_client.append(table_name, [RIVAL_ROW]))

    transcript.notes["schedule"] = [
        "client: create, append(v1)",
        "suite: append(v2) before client proposes; v2 stays unpublished",
        "client: append, proposal for v2 conflicts",
    ]
    ref_catalog.before_commit.append(rival)
    return attempt(lambda: client.append(table_name, [CLIENT_ROW]))

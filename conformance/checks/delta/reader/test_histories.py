"""The reader under test through a long directed history: reads after every step, by version and by
in-commit timestamp, of the boundaries a fault needs (``checks/delta/client_histories``).

Every history, whatever the seed, has on one table: several staged files for one version (an
abandoned and a rejected one sorting before the ratified one, and a stray object whose key starts
with the version, the one a reader that lists "<v>." finds on folder-listing storage) read while
that version is unpublished, every 25 versions; a checkpoint and a metadata cleanup every 50
versions (two checkpoints, the cut-off between them), each followed by reads of the oldest readable
version by version, then by its timestamp;
versions past 99; publication lag; two clients appending at once. At the end every readable version
of both tables is read both ways. A fourth client, bound through lakecert's ``ShapedCatalog``
(``conformance/nemesis/shapes.py``), takes a fair share of every step and meets the catalog's answers
in every shape the RFC allows (listings ascending, newest first or shuffled, with published commits
still served or not, conflicts without the latest version); every 10 versions of the first table it
loses a race to a rival's staged or inline commit and reads the latest and an unpublished version.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from conformance.checks.delta.client_histories import ClientHistory, bind_shaped, history_rounds
from conformance.contract.delta import Storage
from conformance.observe.recording import RecordingCatalog, RecordingClient
from conformance.observe.transcript import Transcript
from conformance.run_context import RunContext
from conformance.schedules.generated import CLIENT_HISTORY_VERSIONS
from reference_impl.catalog.catalog import ReferenceCatalog

RULES = frozenset({"RDR-UNPUBLISHED", "RDR-LIST-FALLBACK", "RDR-IGNORE-UNRATIFIED", "RDR-TIME-TRAVEL-ICT"})
UNRATIFIED_EVERY = 25
CLEANUP_EVERY = 50
SHAPED_EVERY = 10  # every 10 versions of the first table the shaped client loses a race, then reads
TIMESTAMP_STRIDE = 5  # default budget: the final sweep reads every 5th version by timestamp (deep: all)


def run_history(
    h: ClientHistory, name: str, rng: random.Random, versions: int, seed: int, stride: int, version_stride: int
) -> None:
    main, other = h.create(f"{name}_0"), h.create(f"{name}_1")
    next_unratified, next_cleanup, next_shaped = UNRATIFIED_EVERY, CLEANUP_EVERY, SHAPED_EVERY
    step = 0
    while main.model.latest < versions:
        step += 1
        if main.model.latest >= next_shaped:
            next_shaped += SHAPED_EVERY
            c = h.shaped_append(main)
            if c is not None:
                # The latest and a version among the unpublished ones, read by the shaped client itself
                # (at least the rival's commit and its own wait): listings in every order, with
                # published commits kept or not, and an inline commit of a rival every other time.
                h.read(main, who=c)
                v = rng.randint(max(main.model.published, main.model.oldest_readable), main.model.latest)
                h.read(main, version=v, who=c)
                # And by its timestamp: listings with and without in-commit timestamps in turn, so a
                # reader that dates unpublished commits only by the catalog's timestamp is seen.
                h.read(main, at=v, who=c)
                h.rival_between_reads(main, c)
                if rng.random() < 0.5:
                    h.publish(main, who=c)
                    h.read(main, who=c)
            continue
        if main.model.latest >= next_unratified:
            h.append(main)  # a fresh, unpublished version with staged files beside its ratified one
            h.leave_unratified(main)
            # Read at once, while the version is unpublished: its commit exists only as the file the
            # catalog named, beside the unratified ones (published, the log's copy would hide them).
            h.read(main)
            h.read(main, version=main.model.latest)
            next_unratified += UNRATIFIED_EVERY
            continue
        if main.model.latest >= next_cleanup:
            # Two checkpoints two versions apart, the cut-off between them: the cleanup keeps the older
            # one, so the versions up to the newer one are readable only from the older checkpoint (a
            # reader that starts from _last_checkpoint alone cannot read them).
            h.publish(main)
            h.checkpoint(main)
            h.append(main)
            h.append(main)
            h.publish(main)
            h.checkpoint(main)
            h.cleanup(main, main.model.latest - 1 - rng.randint(0, 1))
            # By version first: a reader that cannot read the oldest version left from the log breaks
            # RDR-LIST-FALLBACK, and its read by timestamp would fail for that reason, not for the time.
            h.read(main, version=main.model.oldest_readable)
            h.read(main, at=main.model.oldest_readable)
            next_cleanup += CLEANUP_EVERY
            continue
        t = main if rng.random() < 0.7 else other
        action = rng.choices(["append", "together", "publish", "checkpoint"], weights=[8, 1, 2, 1], k=1)[0]
        if action == "publish" and t.model.latest - t.model.published > rng.randint(0, 12):
            h.publish(t)
        elif action == "checkpoint":
            h.checkpoint(t)
        elif action == "together":
            h.concurrent_appends([t, t] if rng.random() < 0.5 else [main, other], seed + step)
        else:
            h.append(t)
            h.delete_old(t)
        h.read_boundaries(t)
    h.read_all(main, stride, version_stride)
    h.read_all(other, stride, version_stride)


@pytest.mark.req(  # the same as RULES, spelled out: marks are read without importing the module
    "RDR-IGNORE-UNRATIFIED", "RDR-LIST-FALLBACK", "RDR-TIME-TRAVEL-ICT", "RDR-UNPUBLISHED"
)
def test_long_histories_read_every_version_and_timestamp(
    lakecert: RunContext,
    client: RecordingClient,
    client_factory: Callable[[], RecordingClient],
    ref_admin: ReferenceCatalog,
    ref_catalog: RecordingCatalog,
    storage: Storage,
    suite_storage: Storage,
    transcript: Transcript,
    table_name: str,
    seed: int,
    request: pytest.FixtureRequest,
) -> None:
    budget = lakecert.config.settings.delta.budget
    clients = [client, client_factory(), client_factory()]
    # A fourth client under test meets the answer shapes the RFC allows (conformance/nemesis/shapes.py).
    shaped = bind_shaped(lakecert, ref_catalog, storage, transcript, request.node.nodeid)
    for round_no, h in history_rounds(lakecert, clients, ref_admin, suite_storage, transcript, seed, RULES, shaped):
        stride = {"deep": 1, "default": TIMESTAMP_STRIDE}.get(budget, 2 * TIMESTAMP_STRIDE)
        version_stride = 3 if budget == "quick" else 1  # quick: every 3rd version by version, besides the marks
        versions = CLIENT_HISTORY_VERSIONS[budget]
        run_history(h, f"{table_name[:40]}_{round_no}", h.rng, versions, seed + round_no, stride, version_stride)

"""Restarting the catalog under test through the target's optional ``restart_catalog`` hook."""

from __future__ import annotations

from conformance.checks.delta.builders import premise
from conformance.contract.delta import Catalog
from conformance.contract.target import offers, restart_hook
from conformance.report.outcomes import Violation, not_applicable
from conformance.run_context import RunContext


def restart_target_catalog(lakecert: RunContext) -> Catalog:
    """Stop the run's catalog under test and start it again; return the catalog to use from then on.

    Without a hook the check is NOT_APPLICABLE, once verified that the target really has no
    ``restart_catalog`` member (a hook present but not callable is the adapter's error, not an
    absence). A hook that raises is a set-up step that did not hold ("premise broken", an ERROR),
    never NOT_APPLICABLE and never a FAIL: what the catalog kept is judged after it came back."""
    hook = restart_hook(lakecert.target)
    if hook is None:
        if hasattr(lakecert.target, "restart_catalog") and lakecert.target.restart_catalog is not None:
            raise TypeError(f"target {lakecert.target.name}'s restart_catalog is not callable")
        assert not offers(lakecert.target, "restart_catalog")
        not_applicable(
            f"target {lakecert.target.name} offers no restart_catalog hook (Python) or restart_command (uc),"
            " so lakecert cannot restart its catalog (verified: the target has no such member)"
        )
    with premise("restarting the catalog through the target's restart hook"):
        return lakecert.restart_target_catalog(hook)


# New staging tables after a restart: a name counter kept in memory starts again at its first value,
# which may have gone to a table of the run the suite does not track (a check that only stages), so
# several are asked for; one in-process call each.
NEW_AFTER_RESTART = 8


def judge_fresh_locations(restarted: Catalog, handed_out: dict[str, str]) -> None:
    """CAT-STAGING-UNIQUE (a SHOULD): staging tables created after a restart get locations the catalog
    never handed out before it (``handed_out``: location -> table id, this run's tables)."""
    before = dict(handed_out)
    with premise("creating staging tables after the restart"):
        fresh = [restarted.create_staging_table() for _ in range(NEW_AFTER_RESTART)]
    for st in fresh:
        if st.location.rstrip("/") in before:
            raise Violation(
                "CAT-STAGING-UNIQUE",
                f"after the restart the catalog gave a new staging table ({st.table_id}) the location"
                f" {st.location}, which it had handed to table {before[st.location.rstrip('/')]} before:"
                " each table creation should get a location of its own, across restarts too",
            )

"""Restarting the catalog under test through the target's optional ``restart_catalog`` hook."""

from __future__ import annotations

from conformance.checks.delta.builders import premise
from conformance.contract.delta import Catalog
from conformance.contract.target import offers, restart_hook
from conformance.report.outcomes import not_applicable
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

"""Schedule steps in words, from a world before and after an action."""

from __future__ import annotations

from conformance.history.events import ScheduleStep
from conformance.model.iceberg.choices import Action
from conformance.model.iceberg.world import World
from conformance.model.iceberg.writer import Step


def describe(before: World, action: Action, after: World) -> ScheduleStep:
    w_before = before.writers[action.writer]
    w = after.writers[action.writer]
    who = f"W{action.writer}"
    if action.op is not None:
        return ScheduleStep(f"{who} starts {w.name}: {action.op.describe()} (snapshot v{w.start_version})", w.name)
    name = w_before.name
    if w_before.step is Step.READ_DATA_FILES:
        return ScheduleStep(f"{who} {name} reads data files ({len(w.hits)} matching rows)", name)
    if w_before.step is Step.WRITE_DATA_FILES:
        assert w.written is not None
        files = sorted(w.written.added_data | w.written.added_deletes)
        return ScheduleStep(f"{who} {name} writes {', '.join(files) or 'no files'}", name)
    if w_before.step is Step.WRITE_METADATA_FILES:
        version = before.metadata.version
        if w.step is Step.ABORTED:
            return ScheduleStep(f"{who} {name} refreshes to v{version}, validation fails ({w.reason}): ABORTED", name)
        return ScheduleStep(f"{who} {name} refreshes to v{version}, validates, writes metadata", name)
    if w.step is Step.WRITE_METADATA_FILES:
        return ScheduleStep(f"{who} {name} commit refused (the table moved on): retries", name)
    if w.step is Step.ABORTED:
        return ScheduleStep(
            f"{who} {name} swaps to v{after.metadata.version}, then validation fails ({w.reason})", name
        )
    return ScheduleStep(f"{who} {name} commits v{after.metadata.version}: COMMITTED", name)

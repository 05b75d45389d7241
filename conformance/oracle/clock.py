"""In-commit timestamps judged as times: against the wall clock around the call that wrote them.

PROTOCOL "In-Commit Timestamps", writer requirement 3: ``inCommitTimestamp`` is "the time, in
milliseconds since the Unix epoch" when the commit succeeded: the larger of the time the writer
attempted the commit and one millisecond after the previous commit's. Order alone does not catch a
writer that stamps seconds, or local time taken for UTC: both still increase. So a timestamp must
also fall within the wall clock of the call that wrote it, give or take ``TOLERANCE_MS`` (clocks of
two machines differ; NTP keeps them within far less). Above that window it is still right when
the monotonicity forces it: the previous commit (a skewed peer's) was stamped later than the clock.
"""

from __future__ import annotations

from dataclasses import dataclass

TOLERANCE_MS = 5 * 60 * 1000  # five minutes either side of the call


@dataclass(frozen=True)
class CallWindow:
    """Wall-clock bounds, in epoch milliseconds, of the call that wrote a commit: no earlier than
    ``start_ms`` (the caller's previous call had ended), no later than ``end_ms`` (the catalog had
    ratified it, or the file was written)."""

    start_ms: int
    end_ms: int


def span(ms: int) -> str:
    """A duration for a message: '5 h 30 min', '12 s', '20000 days'."""
    ms = abs(ms)
    if ms >= 86_400_000:
        return f"{ms // 86_400_000} days"
    if ms >= 3_600_000:
        return f"{ms // 3_600_000} h {ms % 3_600_000 // 60_000} min"
    if ms >= 60_000:
        return f"{ms // 60_000} min" + (f" {ms % 60_000 // 1000} s" if ms % 60_000 >= 1000 else "")
    return f"{ms / 1000:.3f} s"


def off_the_clock(ict: int, window: CallWindow, previous_ict: int | None) -> str | None:
    """Why ``ict`` is not a time the writer could have stamped in ``window``, or ``None`` if it is.

    Below the window: the writer's clock was not read (seconds, a constant, local time west of
    UTC). Above it by more than the tolerance, and above what monotonicity forces (the previous
    commit's timestamp + 1 ms): local time east of UTC, or a clock running ahead."""
    low = window.start_ms - TOLERANCE_MS
    if ict < low:
        return f"{span(window.start_ms - ict)} before the call that wrote it began"
    forced = window.end_ms if previous_ict is None else max(window.end_ms, previous_ict + 1)
    if ict > forced + TOLERANCE_MS:
        after = "after the call that wrote it ended"
        if forced != window.end_ms:
            after = "after the previous commit's timestamp, which was ahead of the clock"
        return f"{span(ict - forced)} {after}"
    return None

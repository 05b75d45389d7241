"""A client step in another time zone: the process's ``TZ`` for the step, restored after."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

# POSIX zone strings need no tz database on the machine: "<name><hours west of UTC>". A zone far west
# of UTC makes a local wall-clock reading taken for UTC fall hours behind every real timestamp.
FAR_WEST = "LKW10"  # UTC-10
FAR_EAST = "LKE-9"  # UTC+9


@contextmanager
def in_time_zone(zone: str) -> Iterator[None]:
    """Run the body with ``TZ=zone`` (``time.tzset``), then restore the zone the process had."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()

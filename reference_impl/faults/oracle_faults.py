"""Faulty variants found only by the independent oracle: in-commit timestamps judged against the wall
clock, txnIds unique across the run (issue 28 item 5)."""

from __future__ import annotations

"""Faulty variants found only at the edges of a limit: names, inline size, unpublished cap, pages,
actions per commit (issue 28 item 4)."""

from __future__ import annotations

"""Faults for the round-9 blind misses (issue 28, session 18): writer."""

from __future__ import annotations

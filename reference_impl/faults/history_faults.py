"""Faulty variants found only by generated histories: several tables and clients, long histories,
maintenance under every policy, reads of every version and by timestamp (issue 28 items 1-2)."""

from __future__ import annotations

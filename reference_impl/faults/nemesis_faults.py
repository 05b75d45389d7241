"""Faulty variants found only under the nemesis: restarts, lost answers, duplicate deliveries, crashed
clients, skewed clocks (issue 28 item 3)."""

from __future__ import annotations

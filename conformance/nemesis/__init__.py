"""The nemesis: what goes wrong between a client and its catalog (issue 28, docs/certify.md "The
nemesis: restarts, lost answers, crashes, clocks").

``wrapper.NemesisCatalog`` stands between a client under test and the catalog it is bound to and, when
armed, loses an answer, delivers a proposal twice, crashes the client or restarts the catalog.
``restart`` restarts a catalog target through its optional hook, and ``clock`` runs a step in another
time zone. ``storage.CrashingStorage`` crashes a client part-way through its writes (a publication's
copies). ``shapes.ShapedCatalog`` answers a client in every shape the RFC allows, not only the
reference catalog's (a conflict without the latest version, listings in any order or still holding
published commits)."""

from __future__ import annotations

from conformance.nemesis.clock import in_time_zone
from conformance.nemesis.restart import restart_target_catalog
from conformance.nemesis.shapes import ShapedCatalog
from conformance.nemesis.storage import CrashingStorage
from conformance.nemesis.wrapper import Action, ClientCrashed, NemesisCatalog

__all__ = [
    "Action",
    "ClientCrashed",
    "CrashingStorage",
    "NemesisCatalog",
    "ShapedCatalog",
    "in_time_zone",
    "restart_target_catalog",
]

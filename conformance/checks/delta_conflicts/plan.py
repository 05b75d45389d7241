"""The Delta side of the explorer's plan (``conformance/checks/explorer/plan.py``): the presets a
Delta engine target may name (``model_preset``) and the model engine that predicts with them."""

from __future__ import annotations

from conformance.checks.explorer.plan import ModelPlan
from conformance.model.delta import CORRECTED, DELTA_KERNEL_BEFORE_7163, DELTA_RS_1_6, DELTA_SPARK, Preset
from reference_impl.delta_conflicts.engine import DeltaModelEngine

PRESETS = {p.name: p for p in (DELTA_SPARK, DELTA_RS_1_6, DELTA_KERNEL_BEFORE_7163, CORRECTED)}


def delta_plan(preset: Preset) -> ModelPlan:
    """The plan of an engine whose conflict checks ``preset`` describes."""
    return ModelPlan(lambda: DeltaModelEngine(preset), preset.name)

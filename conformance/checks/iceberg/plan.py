"""The Iceberg side of the explorer's plan (``conformance/checks/explorer/plan.py``): the presets a
target may name (``model_preset``) and the model engine that predicts with them."""

from __future__ import annotations

from conformance.checks.explorer.plan import ModelPlan, Planned, classes
from conformance.model.iceberg import CORRECTED, SPARK, Preset
from reference_impl.iceberg.engine import ModelEngine

__all__ = ["PRESETS", "ModelPlan", "Planned", "classes", "iceberg_plan"]

PRESETS = {p.name: p for p in (SPARK, CORRECTED)}


def iceberg_plan(preset: Preset) -> ModelPlan:
    """The plan of an engine whose validations ``preset`` describes."""
    return ModelPlan(lambda: ModelEngine(preset), preset.name)

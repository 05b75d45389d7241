"""lakecert's reference Delta engine: the executable Delta conflict model behind the engine contract."""

from reference_impl.delta_conflicts.engine import DeltaModelEngine

__all__ = ["DeltaModelEngine"]

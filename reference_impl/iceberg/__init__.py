"""lakecert's reference Iceberg engine: the executable model behind the engine contract."""

from reference_impl.iceberg.engine import ModelEngine

__all__ = ["ModelEngine"]

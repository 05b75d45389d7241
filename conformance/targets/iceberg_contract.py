"""Deprecated import path, kept for one release: use ``conformance.contract.iceberg`` (docs/certify.md)."""

import warnings

from conformance.contract.iceberg import *  # noqa: F403

warnings.warn(
    "conformance.targets.iceberg_contract moved to conformance.contract.iceberg (removed in lakecert 0.3)",
    DeprecationWarning,
    stacklevel=2,
)

"""Deprecated import path, kept for one release: use ``conformance.contract.delta`` (docs/certify.md)."""

import warnings

from conformance.contract.delta import *  # noqa: F403

warnings.warn(
    "conformance.targets.contract moved to conformance.contract.delta (removed in lakecert 0.3)",
    DeprecationWarning,
    stacklevel=2,
)

"""Deprecated import path, kept for one release: use ``conformance.contract.target`` (docs/certify.md)."""

import warnings

from conformance.contract.target import *  # noqa: F403

warnings.warn(
    "conformance.targets.target moved to conformance.contract.target (removed in lakecert 0.3)",
    DeprecationWarning,
    stacklevel=2,
)

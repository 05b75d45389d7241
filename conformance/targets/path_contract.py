"""Deprecated import path, kept for one release: use ``conformance.contract.path_access`` (docs/certify.md)."""

import warnings

from conformance.contract.path_access import *  # noqa: F403

warnings.warn(
    "conformance.targets.path_contract moved to conformance.contract.path_access (removed in lakecert 0.3)",
    DeprecationWarning,
    stacklevel=2,
)

"""Where the golden fixtures are: ``LAKECERT_FIXTURES`` or the repository's ``fixtures/``."""

from __future__ import annotations

import os
from pathlib import Path


def fixtures_dir() -> Path:
    found = Path(os.environ.get("LAKECERT_FIXTURES") or Path(__file__).resolve().parents[1] / "fixtures")
    if not found.is_dir():
        raise FileNotFoundError(f"golden fixtures not found at {found}; set LAKECERT_FIXTURES")
    return found

"""Fixtures shared by lakecert's own tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """Where a test's lakecert run writes."""
    return tmp_path / "run"

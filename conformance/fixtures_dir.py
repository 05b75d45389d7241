"""Where the golden fixtures are: the configuration's ``paths.fixtures`` (``LAKECERT_FIXTURES``), or the
copy shipped as package data, ``conformance/fixtures``.

In a checkout ``conformance/fixtures`` is a symbolic link to the repository's ``fixtures/`` (where the
generators write and the docs point); a built wheel or sdist holds the files themselves there, so an
installed lakecert finds them without a checkout."""

from __future__ import annotations

from pathlib import Path

from conformance.report.outcomes import SuiteError

SHIPPED = Path(__file__).resolve().parent / "fixtures"
_configured: Path | None = None


class FixturesMissing(SuiteError, FileNotFoundError):
    """The golden fixtures are not where the configuration says: the run cannot judge readers."""


def configure(path: Path | None) -> None:
    """Set by the run from its configuration, before any check is collected."""
    global _configured
    _configured = path


def fixtures_dir() -> Path:
    found = _configured or SHIPPED
    if not found.is_dir():
        raise FixturesMissing(f"golden fixtures not found at {found}; set paths.fixtures (LAKECERT_FIXTURES)")
    return found


def fixture_case(name: str) -> Path:
    """One fixture folder; ``FixturesMissing`` (an ERROR, not a verdict) when it is absent."""
    case = fixtures_dir() / name
    if not case.is_dir():
        raise FixturesMissing(f"fixture {name!r} not found in {case.parent}")
    return case

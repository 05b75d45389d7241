"""Print what a core install of lakecert needs: its dependencies and its build requirements, one a line.

`make setup` downloads wheels of these into .cache/wheels, so the packaging test builds and installs
lakecert in a fresh venv from that folder alone (``--no-index``), without PyPI at test time.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
print("\n".join([*project["build-system"]["requires"], *project["project"]["dependencies"]]))

"""A Python package at a given version, installed with pip into a folder of its own.

The folder is put first on ``sys.path`` of the process that runs the engine (a worker of lakecert's,
never lakecert's own process), so a client project can gate on a release other than the one in
lakecert's environment without touching that environment.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conformance.artifacts.cache import ReleaseUnavailable, filled


def installed(dist: str, version: str) -> Path:
    """The folder holding ``dist==version`` and what it needs, installed on first use."""

    def fill(folder: Path) -> None:
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        # Wheels where the release has them; PySpark is published as a source archive only.
        command += ["--target", str(folder), "--prefer-binary", f"{dist}=={version}"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
        except subprocess.TimeoutExpired as e:
            raise ReleaseUnavailable(f"pip did not install {dist} {version} within 30 minutes") from e
        if done.returncode != 0:
            said = [ln.strip() for ln in done.stderr.splitlines() if ln.strip().startswith("ERROR")]
            # pip's last ERROR line is the cause ("No matching distribution ..."); earlier ones are
            # notes such as yanked releases it ignored.
            raise ReleaseUnavailable(f"pip could not install {dist} {version}: {(said or ['no message'])[-1][:300]}")

    return filled(f"pypi/{dist}/{version}", f"{dist} {version} (PyPI)", fill)

"""Finding a Java runtime new enough for Nessie 0.99 (Java 21 or later).

In order: the ``java`` option (a ``java`` binary or a JDK's home), ``JAVA_HOME``, the JDKs installed
under ``/usr/lib/jvm`` and ``/opt`` (newest first), ``java`` on ``PATH``. The first one at least
``MIN_JAVA`` wins; the ones tried are named when none does.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

MIN_JAVA = 21
_VERSION = re.compile(r'version "(\d+)(?:[.\-+"])')
_ROOTS = (Path("/usr/lib/jvm"), Path("/opt"))


class JavaNotFound(Exception):
    """No Java runtime of the version needed: the message lists what was tried."""


def java_binary(candidate: str | Path) -> Path:
    """``candidate`` itself if it is a file, else ``<candidate>/bin/java``."""
    path = Path(candidate)
    return path if path.is_file() else path / "bin" / "java"


def major_version(java: Path) -> int | None:
    """The feature version ``java -version`` reports (21, 25, ...), None if it does not run."""
    try:
        proc = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = _VERSION.search(proc.stderr + proc.stdout)
    return int(match.group(1)) if match else None


def _installed() -> list[Path]:
    homes = [p for root in _ROOTS if root.is_dir() for p in root.iterdir() if (p / "bin" / "java").is_file()]
    return sorted(homes, key=lambda p: p.name, reverse=True)


def find_java(option: str | None = None, minimum: int = MIN_JAVA) -> Path:
    """The ``java`` to run Nessie with; an explicit ``option`` that is too old or missing is an error."""
    if option:
        java = java_binary(option)
        found = major_version(java) if java.is_file() else None
        if found is None or found < minimum:
            what = f"Java {found}" if found else "not a java"
            raise JavaNotFound(f"java option {option}: {java} is {what}; Nessie needs Java {minimum}+")
        return java
    candidates: list[Path] = []
    if home := os.environ.get("JAVA_HOME"):
        candidates.append(java_binary(home))
    candidates += [java_binary(h) for h in _installed()]
    if on_path := shutil.which("java"):
        candidates.append(Path(on_path))
    tried: list[str] = []
    for java in candidates:
        found = major_version(java) if java.is_file() else None
        if found is not None and found >= minimum:
            return java
        tried.append(f"{java} ({'Java ' + str(found) if found else 'absent'})")
    listed = ", ".join(tried) or "nothing"
    raise JavaNotFound(f"Nessie needs Java {minimum}+; tried {listed} (set the java option or JAVA_HOME)")


def has_java(minimum: int = MIN_JAVA) -> bool:
    try:
        find_java(None, minimum)
    except JavaNotFound:
        return False
    return True

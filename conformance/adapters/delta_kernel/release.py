"""One Delta Kernel release: its jars (Kernel's API, defaults and Unity Catalog modules, delta-storage
and UC's Java client, resolved by Maven from ``java/pom.xml``) and lakecert's driver compiled
against them with ``javac``.

The release ``make setup`` fetches is used from the set-up's folders; any other is fetched on first
use into lakecert's version cache, the driver compiled there (per version and per revision of the
driver's sources). A release published only in part (4.4.1: only ``delta-kernel-api`` is on Maven
Central) runs its API jar with the newest earlier patch release of the modules the registry lacks,
and says so in one line each run; the versions that really ran are what the driver reports from the
jars it loaded (``KernelProcess.components``), not what was asked for.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from conformance.adapters.delta_kernel.jvm import DEFAULT_CLASSES, DEFAULT_JARS, MAIN_CLASS
from conformance.artifacts import maven
from conformance.artifacts.cache import ReleaseUnavailable, complete, filled, say, source_digest

DEFAULT_VERSION = "4.4.0"  # what `make setup` fetches (java/pom.xml's delta.version)
GROUP = "io.delta"
API = "delta-kernel-api"
MODULES = ("delta-kernel-defaults", "delta-kernel-unitycatalog", "delta-storage")
JAVA = Path(__file__).resolve().parent / "java"
STAND_IN = "modules-release.txt"  # in a fetched jar folder: the release of MODULES it holds


@dataclass(frozen=True)
class KernelBuild:
    jars: Path
    classes: Path
    stand_in: str | None = None  # the release of MODULES when the registry lacks them at the version


def kernel_build(version: str) -> KernelBuild:
    """The jars and compiled driver of Kernel ``version``, fetched and built on first use."""
    in_setup = DEFAULT_JARS / f"{API}-{version}.jar"
    if version == DEFAULT_VERSION and in_setup.is_file() and (DEFAULT_CLASSES / driver_class()).is_file():
        return KernelBuild(DEFAULT_JARS, DEFAULT_CLASSES)
    key = f"kernel/{version}/jars"
    fetched = complete(key)
    if fetched is not None:  # resolved before: no registry is asked (a fetched release runs offline)
        modules = (fetched / STAND_IN).read_text().strip()
    else:
        maven.require(GROUP, API, version)
        modules = _modules_release(version)
    if modules != version:
        say(f"Delta Kernel {version}: {', '.join(MODULES)} are not released at {version}; using {modules}'s")
    properties = {"delta.api.version": version, "delta.version": modules}

    def fetch(folder: Path) -> None:
        maven.copy_dependencies(JAVA / "pom.xml", properties, folder)
        if not (folder / f"{API}-{version}.jar").is_file():
            raise ReleaseUnavailable(f"Maven resolved no {API}-{version}.jar from {JAVA / 'pom.xml'}")
        (folder / STAND_IN).write_text(modules + "\n")

    jars = filled(key, f"Delta Kernel {version}", fetch)
    sources = JAVA / "src"
    classes = filled(
        f"kernel/{version}/driver-{source_digest(sources)}",
        f"lakecert's Kernel driver built against Kernel {version}",
        lambda folder: _compile(sources, jars, folder, version),
        verb="building",
    )
    return KernelBuild(jars, classes, None if modules == version else modules)


def driver_class() -> str:
    return MAIN_CLASS.replace(".", "/") + ".class"


def _modules_release(version: str) -> str:
    """``version`` when every module is released at it, else the newest earlier patch they share."""
    missing = [m for m in MODULES if version not in maven.released(GROUP, m)]
    if not missing:
        return version
    stand_ins = {maven.newest_patch(GROUP, m, version) for m in MODULES}
    if None in stand_ins or len(stand_ins) != 1:
        raise ReleaseUnavailable(
            f"Delta Kernel {version}: {', '.join(missing)} not released at {version}, and no earlier "
            f"patch release has all of {', '.join(MODULES)}"
        )
    return str(stand_ins.pop())


def _compile(sources: Path, jars: Path, folder: Path, version: str) -> None:
    classpath = ":".join(str(j) for j in sorted(jars.glob("*.jar")))
    files = sorted(str(p) for p in sources.rglob("*.java"))
    command = ["javac", "-nowarn", "-d", str(folder), "-cp", classpath, *files]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except FileNotFoundError as e:
        raise ReleaseUnavailable("`javac` (a JDK) is not on PATH; it builds lakecert's Kernel driver") from e
    if done.returncode != 0:
        first = next((ln for ln in done.stderr.splitlines() if "error:" in ln), "no message")
        raise ReleaseUnavailable(f"lakecert's Kernel driver does not compile against Kernel {version}: {first[:300]}")

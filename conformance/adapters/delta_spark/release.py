"""One delta-spark release for Spark 4.1: delta-spark and delta-storage, and lakecert's held LogStore
(``java/``) compiled against them and PySpark's jars.

The version ``make setup`` fetches is found in the set-up's jar folder; any other release is
fetched from Maven on first use into lakecert's version cache, and the LogStore compiled there with
``javac`` (a JDK is needed; Java 17 is what Spark 4.1 runs on).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conformance.artifacts import maven
from conformance.artifacts.cache import ReleaseUnavailable, complete, filled, source_digest

GROUP = "io.delta"
SPARK = "delta-spark_4.1_2.13"
STORAGE = "delta-storage"
LOGSTORE = "lakecert-delta-logstore.jar"
SOURCES = Path(__file__).resolve().parent / "java" / "src" / "lakecert" / "delta"


def jar_names(version: str) -> list[str]:
    return [f"{SPARK}-{version}.jar", f"{STORAGE}-{version}.jar"]


def delta_jars(version: str, setup_dir: Path) -> list[Path]:
    """delta-spark, delta-storage and the held LogStore of ``version``."""
    in_setup = [setup_dir / n for n in [*jar_names(version), LOGSTORE]]
    if all(j.is_file() for j in in_setup):
        return in_setup

    key = f"delta-spark/{version}/jars"
    if complete(key) is None:  # before any progress line: a release that does not exist is not fetched
        maven.require(GROUP, SPARK, version)

    def fetch(folder: Path) -> None:
        for artifact in (SPARK, STORAGE):
            maven.download(GROUP, artifact, version, folder)

    jars = filled(key, f"delta-spark {version} for Spark 4.1", fetch)
    # Built per release and per revision of the LogStore's sources: a change to them rebuilds it.
    logstore = filled(
        f"delta-spark/{version}/logstore-{source_digest(SOURCES)}",
        f"lakecert's held LogStore against delta-spark {version}",
        lambda folder: compile_logstore(jars / jar_names(version)[1], folder),
        verb="building",
    )
    return [*(jars / n for n in jar_names(version)), logstore / LOGSTORE]


def compile_logstore(storage_jar: Path, folder: Path) -> None:
    """``javac`` the held LogStore against this release (its LogStore API) and PySpark's jars."""
    import pyspark

    spark_jars = Path(os.path.dirname(pyspark.__file__)) / "jars" / "*"
    classes = folder / "logstore-classes"
    classes.mkdir()
    sources = sorted(str(p) for p in SOURCES.glob("*.java"))
    command = ["javac", "-nowarn", "--release", "17", "-d", str(classes), "-cp", f"{spark_jars}:{storage_jar}"]
    build = [command + sources, ["jar", "cf", str(folder / LOGSTORE), "-C", str(classes), "."]]
    for step in build:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=600)
        except FileNotFoundError as e:
            raise ReleaseUnavailable(f"`{step[0]}` (a JDK) is not on PATH; it builds lakecert's LogStore") from e
        if done.returncode != 0:
            first = (done.stderr or done.stdout).strip().splitlines()[:1] or ["no message"]
            raise ReleaseUnavailable(f"lakecert's LogStore does not compile against delta-storage: {first[0][:300]}")

"""One Iceberg release for Spark 4.1: its Spark runtime jar and its AWS bundle (S3FileIO).

The version ``make setup`` fetches is found in the set-up's jar folder (``LAKECERT_JARS`` or the
checkout's ``.cache/jars``); any other release is fetched from Maven on first use into lakecert's
version cache (``conformance/artifacts``). What ran is read back from the runtime jar's
``iceberg-build.properties``, the file Iceberg's own ``IcebergBuild.version()`` reports.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from conformance.artifacts import maven
from conformance.artifacts.cache import complete, filled

GROUP = "org.apache.iceberg"
RUNTIME = "iceberg-spark-runtime-4.1_2.13"  # Spark 4.1, Scala 2.13: what pyspark 4.1 runs
AWS = "iceberg-aws-bundle"


def jar_names(version: str) -> list[str]:
    return [f"{RUNTIME}-{version}.jar", f"{AWS}-{version}.jar"]


def iceberg_jars(version: str, setup_dir: Path) -> list[Path]:
    """The runtime and AWS jars of ``version``: the set-up's when it holds them, else fetched."""
    in_setup = [setup_dir / n for n in jar_names(version)]
    if all(j.is_file() for j in in_setup):
        return in_setup

    if complete(f"iceberg/{version}") is None:  # before any progress line: a release that does not exist is not fetched
        maven.require(GROUP, RUNTIME, version)

    def fill(folder: Path) -> None:
        for artifact in (RUNTIME, AWS):
            maven.download(GROUP, artifact, version, folder)

    folder = filled(f"iceberg/{version}", f"Iceberg {version} for Spark 4.1", fill)
    return [folder / n for n in jar_names(version)]


def built_version(runtime_jar: Path) -> str | None:
    """The version the runtime jar was built as (``git.build.version``), or None."""
    try:
        with zipfile.ZipFile(runtime_jar) as z:
            text = z.read("iceberg-build.properties").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "git.build.version":
            return value.strip()
    return None

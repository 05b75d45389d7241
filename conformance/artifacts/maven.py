"""Jars from a Maven repository (Maven Central unless ``LAKECERT_MAVEN_REPO`` names a mirror).

Single jars are downloaded over HTTPS and checked against the repository's SHA-1; a release whose
jars depend on others (Delta Kernel with Unity Catalog's client) is resolved by Maven itself from a
pom of lakecert's (``copy_dependencies``), which honours the user's ``~/.m2/settings.xml``.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import httpx

from conformance.artifacts.cache import ReleaseUnavailable

REPO_ENV = "LAKECERT_MAVEN_REPO"
CENTRAL = "https://repo.maven.apache.org/maven2"
TIMEOUT = httpx.Timeout(60.0, connect=15.0)  # hang guards: a jar is up to 250 MB


def repo() -> str:
    return (os.environ.get(REPO_ENV) or CENTRAL).rstrip("/")


def _base(group: str, artifact: str) -> str:
    return f"{repo()}/{group.replace('.', '/')}/{artifact}"


def released(group: str, artifact: str) -> list[str]:
    """Every version the repository lists for ``group:artifact``, oldest first (empty: none)."""
    try:
        answer = httpx.get(f"{_base(group, artifact)}/maven-metadata.xml", timeout=TIMEOUT, follow_redirects=True)
    except httpx.HTTPError as e:
        raise ReleaseUnavailable(f"{repo()} did not answer for {group}:{artifact}: {type(e).__name__}") from e
    if answer.status_code == 404:
        return []
    if answer.status_code != 200:
        raise ReleaseUnavailable(f"{repo()} answered {answer.status_code} for {group}:{artifact}")
    try:
        root = ElementTree.fromstring(answer.content)
    except ElementTree.ParseError as e:
        raise ReleaseUnavailable(f"{repo()} sent unreadable metadata for {group}:{artifact}") from e
    return [v.text for v in root.iterfind("./versioning/versions/version") if v.text]


def require(group: str, artifact: str, version: str) -> None:
    """Nothing when ``version`` is released; else one line saying so, with the nearest releases."""
    versions = released(group, artifact)
    if version not in versions:
        newest = ", ".join(versions[-5:]) or "none"
        raise ReleaseUnavailable(f"{group}:{artifact} {version} is not in {repo()} (its newest: {newest})")


def newest_patch(group: str, artifact: str, version: str) -> str | None:
    """For a release published only in part: the newest released ``X.Y.z`` at or below ``version``
    in the same ``X.Y`` line, or None."""
    line = version.rsplit(".", 1)[0] + "."
    wanted = _numbers(version)
    candidates = [v for v in released(group, artifact) if v.startswith(line) and _numbers(v) <= wanted]
    return max(candidates, key=_numbers) if candidates else None


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def download(group: str, artifact: str, version: str, folder: Path, classifier: str | None = None) -> Path:
    """The jar, downloaded into ``folder`` and checked against the repository's SHA-1."""
    name = f"{artifact}-{version}{'-' + classifier if classifier else ''}.jar"
    url = f"{_base(group, artifact)}/{version}/{name}"
    target = folder / name
    partial = folder / (name + ".part")
    digest = hashlib.sha1(usedforsecurity=False)
    try:
        with httpx.stream("GET", url, timeout=TIMEOUT, follow_redirects=True) as answer:
            if answer.status_code == 404:
                raise ReleaseUnavailable(f"{group}:{artifact}:{version} ({name}) is not in {repo()}")
            if answer.status_code != 200:
                raise ReleaseUnavailable(f"{repo()} answered {answer.status_code} for {name}")
            with open(partial, "wb") as out:
                for chunk in answer.iter_bytes(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
        expected = httpx.get(url + ".sha1", timeout=TIMEOUT, follow_redirects=True)
    except httpx.HTTPError as e:
        partial.unlink(missing_ok=True)
        raise ReleaseUnavailable(f"fetching {name} from {repo()} failed: {type(e).__name__}: {e}") from e
    if expected.status_code == 200 and expected.text.split()[0].lower() != digest.hexdigest():
        partial.unlink(missing_ok=True)
        raise ReleaseUnavailable(f"{name} from {repo()} does not match its published SHA-1")
    partial.rename(target)
    return target


def copy_dependencies(pom: Path, properties: dict[str, str], folder: Path) -> None:
    """Maven copies the run-time closure of ``pom`` (with ``-Dkey=value`` properties) into ``folder``."""
    command = [
        "mvn",
        "-q",
        "-B",
        "-f",
        str(pom),
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={folder}",
        *(f"-D{k}={v}" for k, v in properties.items()),
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    except FileNotFoundError as e:
        raise ReleaseUnavailable("`mvn` (Apache Maven) is not on PATH; it resolves this release's jars") from e
    except subprocess.TimeoutExpired as e:
        raise ReleaseUnavailable(f"Maven did not finish resolving {pom.name} within 30 minutes") from e
    if done.returncode != 0:
        said = [ln.strip() for ln in (done.stdout + done.stderr).splitlines() if "[ERROR]" in ln]
        first = next((s for s in said if "Could not" in s), said[0] if said else "no message")
        raise ReleaseUnavailable(f"Maven could not resolve the release: {first.removeprefix('[ERROR] ')[:300]}")


def manifest_version(jar: Path) -> str | None:
    """The jar's ``Implementation-Version`` (what the build that made it says it is), or None."""
    try:
        with zipfile.ZipFile(jar) as z:
            text = z.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    found = re.search(r"^Implementation-Version:\s*(\S+)", text, re.MULTILINE)
    return found.group(1) if found else None

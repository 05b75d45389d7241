"""A catalog that binds a ratified staged commit to its bytes serves those bytes (a MAY: the RFC's
catalog "stores only the location, not the content", "Terminology: Commits"; the YAML argues the
level). A catalog that serves the file as it now is follows the RFC's design: NOT_APPLICABLE.

The staged files are changed after ratification in every shape a cheaper comparison than the bytes
misses (session 19): rewritten whole, one digit of the commitInfo's timestamp and one letter of an
added path changed in place (the same length, so the same size), the lines in another order (the
same bytes), cut, lengthened, and two ratified files exchanged. A catalog that binds must serve the
ratified bytes after each; serving some shapes as ratified and others as changed is a binding that
looked at less than the bytes."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from conformance.checks.delta.builders import CatalogDriver, ict_of, premise, version0
from conformance.contract.delta import CatalogError
from conformance.observe.recording import RecordingCatalog
from conformance.report.outcomes import not_applicable


def _digit(content: bytes) -> bytes:
    """One digit of the commitInfo's in-commit timestamp changed in place."""
    m = re.search(rb'"inCommitTimestamp":(\d+)', content)
    assert m is not None, "the staged commit has no inCommitTimestamp"
    at = m.end(1) - 1
    return content[:at] + (b"1" if content[at : at + 1] != b"1" else b"2") + content[at + 1 :]


def _path_letter(content: bytes) -> bytes:
    """One character of the added file's path changed in place."""
    m = re.search(rb'"path":"([^"]+)"', content)
    assert m is not None, "the staged commit adds no file"
    at = m.end(1) - 1
    return content[:at] + (b"X" if content[at : at + 1] != b"X" else b"Y") + content[at + 1 :]


def _reordered(content: bytes) -> bytes:
    lines = content.splitlines(keepends=True)
    return b"".join(reversed(lines)) if len(lines) > 1 else content + b"\n"


def _cut(content: bytes) -> bytes:
    return b"".join(content.splitlines(keepends=True)[:-1]) or content[:-1]


def _lengthened(content: bytes) -> bytes:
    return content + content.splitlines(keepends=True)[-1]


# shape -> how a staged file is changed after ratification (the whole rewrite and the exchange are below)
SHAPES: dict[str, Callable[[bytes], bytes]] = {
    "one digit of the commitInfo's timestamp (same length)": _digit,
    "one letter of the added path (same length)": _path_letter,
    "its lines in another order (the same bytes)": _reordered,
    "cut (its last line gone)": _cut,
    "lengthened (a line appended)": _lengthened,
}


@pytest.mark.req("CAT-RATIFIED-CONTENT-BOUND")
def test_rewritten_staged_commit_is_not_served(
    catalog: RecordingCatalog, driver: CatalogDriver, table_name: str
) -> None:
    table = driver.new_table(table_name)
    driver.commit_range(table, 1, 1)
    shapes = ["rewritten whole (another protocol and metadata)", *SHAPES, "exchanged with v+1", "exchanged with v-1"]
    staged: dict[int, str] = {}
    ratified: dict[int, bytes] = {}
    for version in range(2, 2 + len(shapes)):
        staged[version] = driver.stage(table, version)
        ratified[version] = driver.storage.get(staged[version])
        with premise(f"ratifying staged v{version}"):
            catalog.commit(table.table_id, version, staged_uri=staged[version], in_commit_timestamp=ict_of(version))
    # The writer changes its staged files after ratification, each in one shape.
    changed: dict[int, bytes] = {}
    for version, shape in zip(staged, shapes, strict=True):
        if shape.startswith("rewritten"):
            changed[version] = version0(table.table_id)
        elif shape in SHAPES:
            changed[version] = SHAPES[shape](ratified[version])
        elif shape == "exchanged with v+1":
            changed[version] = ratified[version + 1]
        else:
            changed[version] = ratified[version - 1]
        assert changed[version] != ratified[version], f"the shape {shape!r} left v{version} unchanged"
    for version, content in changed.items():
        driver.storage.put(staged[version], content)
    last = 2 + len(shapes)
    driver.commit_range(table, last, last)  # so that none judged below is the latest
    try:
        listed = {c.version: c for c in catalog.get_commits(table.table_id).commits}
    except CatalogError:
        return  # refusing to list a commit whose file changed serves nothing changed
    with premise("the ratified, unpublished commits are listed (CAT-RETAIN-UNPUBLISHED judges them)"):
        missing = sorted(set(staged) - set(listed))
        assert not missing, f"ratified, unpublished versions are not listed: {missing}"
    as_ratified: list[str] = []
    as_changed: list[str] = []
    for version, shape in zip(staged, shapes, strict=True):
        commit = listed[version]
        # A binding catalog serves the kept bytes inline once the file changed (docs/certify.md).
        served = (
            commit.inline_content if commit.inline_content is not None else driver.storage.get(commit.staged_uri or "")
        )
        if served == ratified[version]:
            as_ratified.append(f"v{version} ({shape})")
        elif served == changed[version]:
            as_changed.append(f"v{version} ({shape})")
        else:
            pytest.fail(
                f"v{version}, its staged file {shape}, is served with content that is neither the ratified"
                " nor the changed bytes"
            )
    if not as_ratified:
        not_applicable(
            "the catalog keeps the staged file's location only, as the RFC describes "
            "(verified: it serves every changed file as it is now)"
        )
    assert not as_changed, (
        f"the catalog binds ratified commits to their bytes (it serves the ratified bytes of {', '.join(as_ratified)}),"
        f" yet serves the changed file of {', '.join(as_changed)}: a binding catalog serves the ratified bytes,"
        " never a file changed after ratification, whatever the change"
    )

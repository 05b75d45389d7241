"""The swimlane picture of a concurrency schedule: drawn from a real failing Iceberg check's
reproducer, saved beside it, attached in Allure and named on the console."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from conformance.report.swimlane import swimlane_svg
from tests.helpers import lakecert, results

CHECK = "checks/iceberg/test_abort.py::test_aborted_writes_leave_no_trace[upd-cow-del-cow-snapshot-v2]"
SVG = "{http://www.w3.org/2000/svg}"


def _texts(svg: str) -> list[tuple[str, str]]:
    root = ET.fromstring(svg)
    return [(t.text or "", t.get("fill", "")) for t in root.iter(f"{SVG}text")]


def test_schedule_of_a_failing_check_is_drawn(out: Path) -> None:
    proc = lakecert(
        "run",
        "--target",
        "faulty:abort-after-swap",
        "--profile",
        "iceberg-row-delta",
        "--select",
        CHECK,
        "--out",
        str(out),
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = results(out)["results"][0]
    assert row["status"] == "FAIL"
    picture = (out / row["reproducer"]).with_suffix(".svg")
    assert f"swimlanes:  {picture}" in proc.stdout
    svg = picture.read_text()
    note = json.loads((out / row["reproducer"]).read_text())["schedule"]["schedule"]
    assert svg == swimlane_svg(note)
    texts = _texts(svg)
    lanes = {str(op["tx"]) for op in note["operations"]}
    assert lanes <= {t for t, _ in texts}  # a lane per transaction
    for op in note["operations"]:  # each one's outcome, in the colour of its outcome
        if op["commit"] is None:
            assert ("ABORTED", "#c62828") in texts
        else:
            assert (f"COMMITTED v{op['commit']}", "#2e7d32") in texts
    made = {op["commit"] for op in note["operations"]}
    unexplained = [int(v) for v in note["versions"] if int(v) not in made and int(v) != min(map(int, note["versions"]))]
    assert unexplained  # the orphan version this fault leaves
    for v in unexplained:
        assert (f"v{v}", "#fff") in texts and ("no committed operation made it", "#c62828") in texts
    # The orphan version is the one marked: ringed in red, and named in the red headline.
    assert f"anomaly: orphan-version in the read of v{unexplained[0]}" in {t for t, _ in texts}
    attachments = [json.loads(p.read_text()) for p in (out / "allure-results").glob("*-result.json")]
    assert any(
        a["name"] == "schedule (swimlanes)" and a["type"] == "image/svg+xml"
        for r in attachments
        for a in r.get("attachments", [])
    )
    # ... and the picture is shown open in the result's description, not only as a collapsed attachment.
    shown = [r for r in attachments if "lakecert-swimlanes" in (r.get("descriptionHtml") or "")]
    assert shown and 'src="data:image/svg+xml;base64,' in shown[0]["descriptionHtml"]
    # Parameters read in words (the setup's description), not as dataclass reprs.
    params = {p["name"]: p["value"] for r in attachments for p in r.get("parameters", [])}
    assert "snapshot isolation" in params["setup"] and "TableSetup(" not in params["setup"]


def test_no_picture_without_operations() -> None:
    assert swimlane_svg({"steps": ["a"], "operations": []}) is None


# Two notes as the self-test's variants leave them (faulty:compaction-skips-validation and
# faulty:delta-optimize-unchecked): a delete undone by a compaction, and two compactions that
# double every row (the checker named that one "wrong-value" until 2026-11-28, "duplicate-row" since).
RESURRECTED: dict[str, Any] = {
    "table": "update copy-on-write, delete copy-on-write, serializable isolation, format v2",
    "steps": [
        "set-up: v1 holds jack, jill, kim",
        "W0 begins T0: DELETE WHERE id=jack and is held before its commit (starting snapshot v1)",
        "W1 begins T1: COMPACT all data files and is held before its commit (starting snapshot v1)",
        "release T0's commit: COMMITTED v2",
        "release T1's commit: COMMITTED v3",
        "read v1..v3",
    ],
    "anomaly": "resurrected-row",
    "operations": [
        {"tx": "T0", "op": "DELETE", "id": "jack", "values": [None, None, None], "start": 1, "commit": 2},
        {"tx": "T1", "op": "COMPACT", "id": None, "values": [None, None, None], "start": 1, "commit": 3},
    ],
    "versions": {
        "1": [["jack", "red", "A"], ["jill", "red", "A"], ["kim", "red", "A"]],
        "2": [["kim", "red", "A"], ["jill", "red", "A"]],
        "3": [["jill", "red", "A"], ["jack", "red", "A"], ["kim", "red", "A"]],
    },
}
ROWS = [["jack", "red", "A"], ["jill", "red", "A"], ["kim", "red", "A"]]
DOUBLED: dict[str, Any] = {
    "table": "WriteSerializable isolation, deletion vectors off, catalog-managed",
    "steps": ["set-up", "release T0's commit: COMMITTED v2", "release T1's commit: COMMITTED v3", "read v1..v3"],
    "anomaly": "wrong-value",
    "operations": [
        {"tx": "T0", "op": "COMPACT", "id": None, "values": [None, None, None], "start": 1, "commit": 2},
        {"tx": "T1", "op": "COMPACT", "id": None, "values": [None, None, None], "start": 1, "commit": 3},
    ],
    "versions": {"1": ROWS, "2": ROWS, "3": ROWS + ROWS},
}


def _version_fill(svg: str, version: int) -> str:
    """The fill of the box drawn under the label ``v<version>`` of the table lane."""
    root = ET.fromstring(svg)
    nodes = list(root)
    i = next(i for i, n in enumerate(nodes) if n.tag == f"{SVG}text" and n.text == f"v{version}")
    return nodes[i - 1].get("fill", "")


def test_the_anomalous_read_is_marked_and_the_others_are_not() -> None:
    svg = swimlane_svg(RESURRECTED)
    assert svg is not None
    texts = [t for t, _ in _texts(svg)]
    assert "anomaly: resurrected-row in the read of v3, row jack" in texts
    assert _version_fill(svg, 3) == "#c62828" and _version_fill(svg, 2) == "#2e7d32"
    assert "v3 returns jack (color red, label A)" in texts
    # An operation without a row id is labelled by what it is, never "COMPACT None".
    assert "COMPACT from v1" in texts and "DELETE jack from v1" in texts
    assert not [t for t in texts if "None" in t]


def test_a_doubled_row_is_named_a_duplicate_as_its_explanation_says() -> None:
    svg = swimlane_svg(DOUBLED)
    assert svg is not None
    texts = [t for t, _ in _texts(svg)]
    assert "anomaly: duplicate-row in the read of v3, row jack" in texts
    assert not [t for t in texts if "wrong-value" in t]
    assert _version_fill(svg, 3) == "#c62828"
    assert texts.count("v3 returns jack (color red, label A)") == 2


def test_a_note_that_cannot_be_judged_again_marks_nothing() -> None:
    note = {**RESURRECTED, "operations": [{**RESURRECTED["operations"][0], "op": "TRUNCATE"}]}
    svg = swimlane_svg(note)
    assert svg is not None and "anomaly: resurrected-row" in svg  # the note's kind, unlocated
    assert "its read breaks the rule" not in svg

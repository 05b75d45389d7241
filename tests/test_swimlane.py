"""The swimlane picture of a concurrency schedule: drawn from a real failing Iceberg check's
reproducer, saved beside it, attached in Allure and named on the console."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

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
    attachments = [json.loads(p.read_text()) for p in (out / "allure-results").glob("*-result.json")]
    assert any(
        a["name"] == "schedule (swimlanes)" and a["type"] == "image/svg+xml"
        for r in attachments
        for a in r.get("attachments", [])
    )
    # Parameters read in words (the setup's description), not as dataclass reprs.
    params = {p["name"]: p["value"] for r in attachments for p in r.get("parameters", [])}
    assert "snapshot isolation" in params["setup"] and "TableSetup(" not in params["setup"]


def test_no_picture_without_operations() -> None:
    assert swimlane_svg({"steps": ["a"], "operations": []}) is None

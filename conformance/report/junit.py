"""JUnit XML from results.json, for CI systems that read it.

FAIL -> <failure>, ERROR -> <error>, NOT_APPLICABLE -> <skipped>. A WARN is not a failure
(it does not block certification): it is a passing testcase carrying a property and a note.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any


def to_junit(results: dict[str, Any]) -> ET.ElementTree:
    info = results["run_info"]
    suite = ET.Element("testsuite", name=f"lakecert {info['target']}", tests=str(len(results["results"])))
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    for r in results["results"]:
        path, _, name = r["test"].partition("::")
        case = ET.SubElement(
            suite,
            "testcase",
            classname=path.removesuffix(".py").replace("/", "."),
            name=name,
            time=f"{r['duration_s']:.3f}",
        )
        props = ET.SubElement(case, "properties")
        ET.SubElement(props, "property", name="lakecert_status", value=r["status"])
        for rid in r["requirements"]:
            ET.SubElement(props, "property", name="requirement", value=rid)
        tag = {"FAIL": "failure", "ERROR": "error", "NOT_APPLICABLE": "skipped"}.get(r["status"])
        if tag:
            ET.SubElement(case, tag, message=r["message"][:500]).text = r["message"]
            counts["skipped" if tag == "skipped" else tag + "s"] += 1
        elif r["status"] == "WARN":
            ET.SubElement(case, "system-out").text = f"WARN: {r['message']}"
    for k, v in counts.items():
        suite.set(k, str(v))
    return ET.ElementTree(suite)


def write_junit(results: dict[str, Any], path: Path) -> None:
    to_junit(results).write(path, encoding="utf-8", xml_declaration=True)

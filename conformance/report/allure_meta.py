"""What makes an Allure report of a lakecert run readable on its own: the run's metadata
(Environment and Executor panels), categories that sort results by who is wrong, and messages in
lakecert's words instead of exception reprs.

Allure reads ``environment.properties``, ``executor.json`` and ``categories.json`` from the
results folder; categories match on status and message, so each non-passing result's message is
rewritten to start with its rules and profiles (``CAT-X (delta-cm-catalog): why``).
"""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path
from typing import Any

from conformance.report.outcomes import Outcome
from conformance.report.results import CheckResult
from conformance.requirements import load_all, profiles

NODEID_LABEL = "lakecert_nodeid"


def _properties(values: dict[str, Any]) -> str:
    """Java properties (what Allure parses): one ``key=value`` per line, separators escaped."""

    def esc(text: str) -> str:
        return text.replace("\\", "\\\\").replace("\n", " ").replace("=", "\\=").replace(":", "\\:")

    def esc_key(text: str) -> str:
        return esc(text).replace(" ", "\\ ")  # an unescaped space would end the key

    return "".join(f"{esc_key(k)}={esc(str(v))}\n" for k, v in values.items())


def categories() -> list[dict[str, Any]]:
    """Product defects per profile (FAIL and WARN), suite errors, and checks that do not apply."""
    cats: list[dict[str, Any]] = [
        {
            "name": f"Product defect: {p}",
            "matchedStatuses": ["failed", "unknown"],
            # Anchored, no inline flags: Allure 2 (Java) matches the whole message, Allure 3
            # (JavaScript) searches it and rejects "(?s)"; [\s\S] spans lines in both.
            "messageRegex": rf"^[^(]*\([^)]*\b{p}\b[^)]*\):[\s\S]*$",
        }
        for p in profiles()
    ]
    cats.append(
        {
            "name": "Premise broken (a set-up step did not hold; its rules were not judged)",
            "matchedStatuses": ["broken"],
            "messageRegex": r"^[\s\S]*premise broken: [\s\S]*$",
        }
    )
    cats.append({"name": "Suite or adapter error (nothing known about the product)", "matchedStatuses": ["broken"]})
    cats.append(
        {"name": "Not applicable (optional capability absent, verified harmless)", "matchedStatuses": ["skipped"]}
    )
    return cats


def write_run_metadata(allure_dir: Path, results: dict[str, Any], report_url: str | None = None) -> None:
    """environment.properties, executor.json and categories.json for the run's results.json data."""
    info = results["run_info"]
    verdict = "partial run, not a certification" if info.get("partial") else results["verdict"]
    env = {
        "Target": info["target"],
        "Label": info.get("label"),
        "Target version": info.get("target_version"),
        **{f"Ran {part}": seen for part, seen in (info.get("target_versions") or {}).items()},
        "Verdict": verdict,
        **{f"Profile {p}": v["verdict"] for p, v in results["profiles"].items()},
        "Seed": info["seed"],
        "lakecert": info["suite_version"],
        "Spec revisions": "; ".join(info.get("spec_revisions", [])),
        "Config": info.get("config_source"),
        "Python": info.get("python"),
    }
    allure_dir.mkdir(parents=True, exist_ok=True)
    (allure_dir / "environment.properties").write_text(_properties(env))
    executor = {
        "name": "lakecert",
        "type": "lakecert",
        "buildName": f"lakecert {info['suite_version']}: {info.get('label') or info['target']} - {verdict}",
        "reportName": f"lakecert: {info.get('label') or info['target']} - {verdict}",
    }
    if report_url:
        executor["reportUrl"] = report_url
    (allure_dir / "executor.json").write_text(json.dumps(executor, indent=2))
    (allure_dir / "categories.json").write_text(json.dumps(categories(), indent=2))


def lakecert_message(row: CheckResult) -> str:
    """``RULES (profiles): message`` - what the categories match on and what a reader sees first."""
    catalog = load_all()
    rules = row.judged
    profiles = sorted({catalog[r].profile for r in rules if r in catalog})
    return f"{', '.join(rules)} ({', '.join(profiles)}): {row.message or row.status.value}"


SWIMLANES = "schedule (swimlanes)"


def _show_swimlanes(allure_dir: Path, data: dict[str, Any]) -> None:
    """Put the schedule's picture in the result's description, which Allure shows open at the top
    of the result: as an attachment it was a collapsed line among the others (issue 30). An
    ``<img>`` of a data URI keeps the picture's own markup and styles apart from the page's."""
    source = next((a["source"] for a in data.get("attachments", []) if a.get("name") == SWIMLANES), None)
    if source is None or "lakecert-swimlanes" in (data.get("descriptionHtml") or ""):
        return
    try:
        svg = (allure_dir / source).read_bytes()
    except OSError:
        return
    picture = (
        '<div class="lakecert-swimlanes"><p><b>The schedule; the anomaly is marked in red</b></p>'
        f'<img alt="{SWIMLANES}" style="max-width:100%" src="data:image/svg+xml;base64,'
        f'{base64.b64encode(svg).decode()}"/></div>'
    )
    # Allure shows descriptionHtml instead of description: the check's description goes along,
    # its Markdown bold (the rule's ID) kept as bold.
    text = data.get("descriptionHtml") or ""
    if not text and data.get("description"):
        text = "<p>" + re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(data["description"])) + "</p>"
    data["descriptionHtml"] = picture + text


def polish_results(allure_dir: Path, rows: list[CheckResult]) -> int:
    """Put lakecert's message on every non-passing result (the exception's trace stays below it)."""
    by_node = {r.test: r for r in rows if r.status is not Outcome.PASS}
    changed = 0
    for path in allure_dir.glob("*-result.json"):
        data = json.loads(path.read_text())
        node = next((lab["value"] for lab in data.get("labels", []) if lab["name"] == NODEID_LABEL), None)
        row = by_node.get(node or "")
        if row is None:
            continue
        details = data.setdefault("statusDetails", {})
        details["message"] = lakecert_message(row)
        _show_swimlanes(allure_dir, data)
        path.write_text(json.dumps(data))
        changed += 1
    return changed

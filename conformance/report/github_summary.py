"""A GitHub Actions job summary (Markdown) of one run: verdicts per profile, counts, and each check
that did not pass with its rule, why and the rerun command (``lakecert report --github-summary``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.report.summary import PARTIAL

MARK = {"CERTIFIED": "✅", "NOT_CERTIFIED": "❌", "NOT_APPLICABLE": "➖", "FAIL": "❌", "WARN": "⚠️", "ERROR": "💥"}
MAX_ROWS = 50  # GitHub caps a step summary at 1 MiB; the rest is in results.json


def _cell(text: str) -> str:
    """One line, safe inside a Markdown table cell."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line.replace("|", "\\|").replace("<", "&lt;")[:300]


def _rerun(run_dir: Path, rel: str | None) -> str:
    if not rel:
        return ""
    try:
        return str(json.loads((run_dir / rel).read_text()).get("rerun", ""))
    except (OSError, ValueError):
        return ""


def render_markdown(results: dict[str, Any], run_dir: Path) -> str:
    info = results["run_info"]
    partial = bool(info.get("partial"))
    verdict = PARTIAL if partial else results["verdict"]
    lines = [
        f"## lakecert: {MARK.get(verdict, '')} {verdict}".replace("  ", " "),
        "",
        f"Target `{info['target']}` ({info.get('target_version', '?')}), seed {info['seed']}, "
        f"lakecert {info['suite_version']}; spec: {', '.join(info.get('spec_revisions', []))}.",
        "",
        "| Profile | Verdict |",
        "|---|---|",
    ]
    for name, p in results["profiles"].items():
        shown = PARTIAL if partial else p["verdict"]
        lines.append(f"| `{name}` | {MARK.get(shown, '')} {shown} |")
    counts = ", ".join(f"{v} {k}" for k, v in results["counts"].items() if v)
    lines += ["", f"Checks: {counts}.", ""]
    bad = [r for r in results["results"] if r["status"] in ("FAIL", "WARN", "ERROR")]
    if bad:
        lines += ["| Status | Check | Rule | Why |", "|---|---|---|---|"]
        for r in bad[:MAX_ROWS]:
            rules = ", ".join(r.get("violated") or r["requirements"])
            lines.append(
                f"| {MARK.get(r['status'], '')} {r['status']} | `{r['test']}` | {rules} | {_cell(r['message'])} |"
            )
        if len(bad) > MAX_ROWS:
            lines.append(f"\n{len(bad) - MAX_ROWS} more in results.json.")
        reruns = [(r["test"], _rerun(run_dir, r.get("reproducer"))) for r in bad[:MAX_ROWS]]
        reruns = [(t, c) for t, c in reruns if c]
        if reruns:
            lines += ["", "<details><summary>Rerun commands</summary>", ""]
            for test, cmd in reruns:
                lines += [f"`{test}`", "", "```sh", cmd, "```", ""]
            lines.append("</details>")
    return "\n".join(lines) + "\n"

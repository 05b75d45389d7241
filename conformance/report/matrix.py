"""The compatibility matrix: a target x profile verdict grid, then targets x requirements per
profile, as one static HTML page.

Built from one or more results.json files; opens from disk (no scripts, no network: the
failures-only filter is a CSS checkbox). Cells link into each run's Allure report when `lakecert
report` generated one beside the results, found by the node id label lakecert puts on every result
(so parametrized checks link too), else to the reproducer.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.report.allure_meta import NODEID_LABEL
from conformance.report.outcomes import Outcome
from conformance.requirements import load_all

STATUSES = tuple(o.value for o in Outcome)
COLORS = {
    "PASS": "#2e7d32",
    "FAIL": "#c62828",
    "WARN": "#ef6c00",
    "NOT_APPLICABLE": "#757575",
    "ERROR": "#6a1b9a",
    "NOT_RUN": "#bdbdbd",
    "UNTESTABLE": "#90a4ae",
}
# A single-file Allure report embeds each data file as d(<path>, <base64 JSON>); Allure 2 quoted
# with single quotes, Allure 3 with double.
ALLURE_CASE = re.compile(r"""d\((['"])data/test-cases/([0-9a-f]+)\.json\1,\s*(['"])([^'"]+)\3\)""")


@dataclass
class Run:
    results: dict[str, Any]
    directory: Path
    allure_ids: dict[str, str]  # check node id -> Allure test-result uid

    @property
    def name(self) -> str:
        """The run's label (what it tested: the target and its URL, or ``--label``)."""
        info = self.results["run_info"]
        return str(info.get("label") or info["target"])

    def first_check(self, rid: str) -> dict[str, Any] | None:
        checks: list[dict[str, Any]] = [r for r in self.results["results"] if rid in r["requirements"]]
        bad = [r for r in checks if r["status"] != "PASS"]
        return (bad or checks)[0] if checks else None


def _allure_ids(report: Path) -> dict[str, str]:
    """Map check node ids to the uids of a single-file Allure report, for deep links."""
    if not report.exists():
        return {}
    ids = {}
    for _, uid, _, payload in ALLURE_CASE.findall(report.read_text(errors="replace")):
        case = json.loads(base64.b64decode(payload))
        labels = {lab.get("name"): lab.get("value") for lab in case.get("labels", [])}
        node = labels.get(NODEID_LABEL)
        if not node:  # results written before the label existed: by fullName, unparametrized only
            module, _, name = case.get("fullName", "").partition("#")
            node = f"{module.replace('.', '/')}.py::{name}"
        ids[node] = uid
    return ids


def load_runs(paths: list[Path]) -> list[Run]:
    runs = []
    for p in paths:
        f = p / "results.json" if p.is_dir() else p
        runs.append(Run(json.loads(f.read_text()), f.parent, _allure_ids(f.parent / "allure-report" / "index.html")))
    return runs


def _cell(run: Run, rid: str, out_dir: Path) -> str:
    req = run.results["requirements"].get(rid)
    if req is None:
        return '<td class="none">-</td>'
    status = req["status"]
    label = html.escape(status.replace("_", " "))
    check = run.first_check(rid)
    href = None
    if check is not None and check["test"] in run.allure_ids:
        report = run.directory / "allure-report" / "index.html"
        href = f"{os.path.relpath(report, out_dir)}#testresult/{run.allure_ids[check['test']]}"
    elif check is not None and check.get("reproducer"):
        href = os.path.relpath(run.directory / check["reproducer"], out_dir)
    message = check["message"] if check and check["message"] and status != "PASS" else ""
    title = html.escape(message[:300]) if message else label
    inner = f'<a href="{html.escape(href)}">{label}</a>' if href else label
    why = f"<small>{html.escape(message.splitlines()[0][:140])}</small>" if message else ""
    return f'<td class="s-{status}" title="{title}">{inner}{why}</td>'


def _chart(profile: str, runs: list[Run]) -> str:
    """One stacked bar per target: the share of the profile's requirements in each status."""
    rows, y = [], 0
    for run in runs:
        reqs = [r for r in run.results["requirements"].values() if r["profile"] == profile]
        if not reqs:
            continue
        x = 260.0
        rows.append(
            f'<text x="0" y="{y + 14}" class="t">{html.escape(run.name)}<title>{html.escape(run.name)}</title></text>'
        )
        for status in STATUSES:
            n = sum(r["status"] == status for r in reqs)
            if n:
                w = 400.0 * n / len(reqs)
                rows.append(
                    f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="18" fill="{COLORS[status]}">'
                    f"<title>{status}: {n}</title></rect>"
                )
                x += w
        y += 24
    return (
        f'<svg class="chart" width="680" height="{max(y, 24)}" role="img" aria-label="{profile}">{"".join(rows)}</svg>'
    )


LEGEND = {
    "PASS": "the rule held",
    "FAIL": "a MUST is broken: the product is wrong",
    "WARN": "a SHOULD or MAY is broken",
    "NOT_APPLICABLE": "optional capability absent; its refusal verified harmless",
    "ERROR": "the suite or adapter broke: nothing known about the product",
    "NOT_RUN": "no check of the rule ran (partial run, or profile not run)",
    "UNTESTABLE": "cannot be observed from outside (the catalog says why)",
}
HEALTHY = {"PASS", "NOT_APPLICABLE", "UNTESTABLE"}


def _verdict_grid(runs: list[Run], profiles: list[str]) -> str:
    """Targets down, profiles across, each cell the profile's verdict (like wpt.fyi's summary)."""
    head = "".join(f'<th><a href="#{p}">{html.escape(p)}</a></th>' for p in profiles)
    rows = []
    for run in runs:
        info = run.results["run_info"]
        cells = []
        for p in profiles:
            v = run.results["profiles"].get(p, {}).get("verdict")
            shown = "partial" if v and info.get("partial") else (v or "not run")
            cells.append(f'<td class="v v-{html.escape(shown)}">{html.escape(shown.replace("_", " "))}</td>')
        rows.append(
            f"<tr><th>{html.escape(run.name)}<br><small>{html.escape(str(info.get('target_version', '')))}"
            f" - {html.escape(info['target_kind'])}</small></th>{''.join(cells)}</tr>"
        )
    return f"<table class=grid><tr><th>target</th>{head}</tr>{''.join(rows)}</table>"


def _legend() -> str:
    items = "".join(
        f'<li><span class="s-{s} sw">{s.replace("_", " ")}</span> {html.escape(text)}</li>'
        for s, text in LEGEND.items()
    )
    return f"<ul class=legend>{items}</ul>"


def render(runs: list[Run], out_dir: Path) -> str:
    reqs = load_all()
    profiles: dict[str, list[str]] = {}
    for rid, r in reqs.items():
        if any(rid in run.results["requirements"] for run in runs):
            profiles.setdefault(r.profile, []).append(rid)
    head = "".join(
        f"<th>{html.escape(r.name)}<br><small>{html.escape(r.results['run_info']['target_kind'])}"
        f" - {html.escape(r.results['verdict'])}</small></th>"
        for r in runs
    )
    parts = [
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>lakecert compatibility matrix</title>"
        f"<style>{CSS}</style></head><body><h1>lakecert compatibility matrix</h1>",
        f"<p>{len(runs)} run(s). Cells link to the check in the run's Allure report (or to its reproducer);"
        " the first line of the message is under the status, the rest on hover.</p>",
        _verdict_grid(runs, list(profiles)),
        _legend(),
        "<input type=checkbox id=failures-only><label for=failures-only> show only requirements that did not"
        " hold on some target</label>",
    ]
    for profile, rids in profiles.items():
        parts.append(f'<section id="{profile}"><h2>{html.escape(profile)}</h2>{_chart(profile, runs)}')
        parts.append(
            "<table class=counts><tr><th>target</th><th>verdict</th>"
            + "".join(f"<th>{s.replace('_', ' ')}</th>" for s in STATUSES)
            + "</tr>"
        )
        for run in runs:
            statuses = [r["status"] for r in run.results["requirements"].values() if r["profile"] == profile]
            verdict = run.results["profiles"].get(profile, {}).get("verdict", "not run")
            parts.append(
                f"<tr><td>{html.escape(run.name)}</td><td class=v-{verdict}>{verdict}</td>"
                + "".join(f"<td>{statuses.count(s)}</td>" for s in STATUSES)
                + "</tr>"
            )
        parts.append(f"</table><table class=matrix><tr><th>requirement</th><th>level</th><th>statement</th>{head}</tr>")
        for rid in rids:
            r = reqs[rid]
            seen = {run.results["requirements"][rid]["status"] for run in runs if rid in run.results["requirements"]}
            row_class = "ok" if seen <= HEALTHY else "bad"
            parts.append(
                f'<tr class={row_class}><td><a href="{html.escape(r.link)}">{rid}</a></td>'
                f"<td>{r.level}</td><td class=stmt>{html.escape(r.statement)}</td>"
                + "".join(_cell(run, rid, out_dir) for run in runs)
                + "</tr>"
            )
        parts.append("</table></section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_matrix(paths: list[Path], out_html: Path) -> Path:
    out_html.parent.mkdir(parents=True, exist_ok=True)
    out_html.write_text(render(load_runs(paths), out_html.parent))
    return out_html


CSS = (
    """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;margin:.6rem 0 1.2rem}
td,th{border:1px solid #ddd;padding:.25rem .5rem;font-size:.9rem;text-align:left}
td[class^=s-]{color:#fff;font-weight:600}td[class^=s-] a{color:#fff}
"""
    + "".join(f".s-{s}{{background:{c}}}" for s, c in COLORS.items())
    + """
.v-CERTIFIED{color:#2e7d32;font-weight:700}.v-NOT_CERTIFIED{color:#c62828;font-weight:700}
.chart .t{font-size:12px}
td small{display:block;font-weight:400;max-width:28rem}td.stmt{font-size:.8rem;max-width:30rem}
.grid td.v{font-weight:700}.v-CERTIFIED{background:#e8f5e9}.v-NOT_CERTIFIED{background:#ffebee}
.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.4rem 1.2rem;font-size:.85rem}
.sw{color:#fff;padding:0 .4rem;border-radius:3px;font-weight:600}
#failures-only:checked ~ section tr.ok{display:none}
"""
)

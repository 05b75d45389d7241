"""The pinned Allure command line, installed by the project's set-up (`make setup`).

Allure 3 (npm ``allure``) runs on Node, so a report costs no JVM start. It lives in
``.cache/allure3`` of the repository, or wherever ``LAKECERT_ALLURE`` points, or is an Allure 3
``allure`` on PATH (``npm install -g allure@VERSION``). Its ``allure2`` plugin draws the classic
report: it reads the categories, environment and executor files lakecert writes into the results,
and draws the trend charts from a history file (JSON lines, one point per report) that
:mod:`conformance.report.allure_history` keeps per target in the ``--out`` root.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ALLURE_VERSION = "3.18.0"  # keep in step with the Makefile
DEFAULT = Path(__file__).resolve().parents[2] / ".cache" / "allure3" / "node_modules" / "allure" / "cli.js"
# How many earlier reports the trend keeps: enough for a release cycle, and the file stays small.
HISTORY_LIMIT = 50


class AllureMissing(RuntimeError):
    """No Allure 3 command line where the set-up installs it."""


def _on_path() -> Path | None:
    """An ``allure`` on PATH, if it is Allure 3 (Allure 2's takes other options)."""
    found = shutil.which("allure")
    if found is None:
        return None
    try:
        version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(found) if version.startswith("3.") else None


def allure_bin() -> Path:
    configured = os.environ.get("LAKECERT_ALLURE")
    path = Path(configured) if configured else DEFAULT if DEFAULT.exists() else _on_path() or DEFAULT
    if not path.exists():
        raise AllureMissing(
            f"Allure {ALLURE_VERSION} not found at {path}: in a checkout run make setup; otherwise install it"
            f" (npm install -g allure@{ALLURE_VERSION}, runs on Node) or set LAKECERT_ALLURE to its cli.js;"
            " --no-allure skips the HTML report"
        )
    return path


def _command(path: Path) -> list[str]:
    # cli.js is an ES module with a `#!/usr/bin/env node` line; calling node directly also works
    # where the file lost its executable bit (a copied cache).
    if path.suffix == ".js":
        node = shutil.which("node")
        if node is None:
            raise AllureMissing("Allure 3 needs Node.js (node) on PATH; --no-allure skips the HTML report")
        return [node, str(path)]
    return [str(path)]


def generate(
    results_dir: Path, report_dir: Path, *, name: str, history: Path | None, banner: tuple[str, bool] | None = None
) -> Path:
    """A single-file HTML report (opens from disk) of ``results_dir``; returns its index.html.

    With ``history``, the report's trend charts show the earlier reports recorded there, and this
    report is appended to it. With ``banner`` (its text, and whether the verdict is good), the page
    opens with the verdict above Allure's own pages (``add_banner``).
    """
    command = _command(allure_bin())  # before anything changes: a missing Allure leaves the old report
    if report_dir.is_dir():
        shutil.rmtree(report_dir)  # no page of an earlier report survives beside the new one
    config: dict[str, object] = {
        "name": name,
        "output": str(report_dir.resolve()),
        "plugins": {"allure2": {"options": {"singleFile": True, "reportName": name}}},
    }
    if history is not None:
        history.parent.mkdir(parents=True, exist_ok=True)
        config |= {"historyPath": str(history.resolve()), "historyLimit": HISTORY_LIMIT}
    with tempfile.TemporaryDirectory(prefix="lakecert-allure-") as tmp:
        rc = Path(tmp) / "allurerc.json"
        rc.write_text(json.dumps(config))
        # ALLURE_NO_ANALYTICS=true keeps the page from loading an analytics script: reports open offline.
        subprocess.run(
            [*command, "generate", "--config", str(rc), "--cwd", tmp, str(results_dir.resolve())],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "ALLURE_NO_ANALYTICS": "true", "NO_COLOR": "1"},
        )
    index = report_dir / "index.html"
    if not index.exists():  # Allure exits 0 on some problems; a report that is not there is an error
        raise AllureMissing(f"Allure wrote no report to {report_dir}")
    if banner is not None:
        add_banner(index, *banner)
    return index


def add_banner(index: Path, text: str, good: bool) -> None:
    """The verdict in a bar across the top of every page of the report. Allure's overview draws a
    donut of the share of checks that passed: on a run that fails one rule of seventy it reads "99 %"
    in green, which looks like success. Its classic plugin has no option for a verdict, so the bar is
    written into the page after Allure built it, before the app's own elements."""
    colour = "#97cc64" if good else "#fd5a3e"
    bar = (
        f'<div id="lakecert-verdict" role="status" style="position:sticky;top:0;z-index:10000;padding:8px 16px;'
        f'font:600 15px/1.4 sans-serif;color:#fff;background:{colour}">{html.escape(text)}</div>'
    )
    page = index.read_text(encoding="utf-8")
    index.write_text(page.replace("<body>", "<body>\n" + bar, 1), encoding="utf-8")

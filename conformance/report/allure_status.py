"""Give every check the Allure status of its lakecert outcome.

allure-pytest knows only pytest's outcomes: a broken SHOULD would show as "failed", a skip that
lakecert counts as ERROR as "skipped", a product exception as "broken". The plugin labels each
result with its lakecert status; here the written result files are set to the matching status.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.report.outcomes import ALLURE_STATUS, Outcome

STATUS_LABEL = "lakecert_status"


def apply_lakecert_status(allure_dir: Path) -> int:
    changed = 0
    for path in allure_dir.glob("*-result.json"):
        data = json.loads(path.read_text())
        labels = {lab["name"]: lab["value"] for lab in data.get("labels", [])}
        wanted = ALLURE_STATUS.get(Outcome(labels[STATUS_LABEL])) if STATUS_LABEL in labels else None
        if wanted is not None and data.get("status") != wanted:
            data["status"] = wanted
            path.write_text(json.dumps(data))
            changed += 1
    return changed

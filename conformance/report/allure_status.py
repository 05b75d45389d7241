"""Give WARN checks their own Allure status.

allure-pytest knows only pytest's outcomes, so a broken SHOULD would show as
"failed". The plugin labels each result with its lakecert status; here the
written result files of WARN checks are set to Allure's "unknown" status.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.report.outcomes import ALLURE_STATUS, Outcome

STATUS_LABEL = "lakecert_status"


def apply_warn_status(allure_dir: Path) -> int:
    changed = 0
    for path in allure_dir.glob("*-result.json"):
        data = json.loads(path.read_text())
        labels = {lab["name"]: lab["value"] for lab in data.get("labels", [])}
        if labels.get(STATUS_LABEL) == Outcome.WARN.value:
            data["status"] = ALLURE_STATUS[Outcome.WARN]
            path.write_text(json.dumps(data))
            changed += 1
    return changed

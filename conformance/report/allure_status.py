"""Give every check the Allure status of its lakecert outcome.

allure-pytest knows only pytest's outcomes: a broken SHOULD would show as pytest saw it, a skip that
lakecert counts as ERROR as "skipped", a product exception as "broken". The plugin labels each
result with its lakecert status; here the written result files are set to the matching status.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.report.outcomes import ALLURE_STATUS, Outcome

STATUS_LABEL = "lakecert_status"
# A WARN is a broken SHOULD or MAY: a defect of the product, shown as "failed" (Allure's "unknown"
# read as "lakecert does not know", issue 30). Its severity label (normal, minor) and the tag
# below keep it apart from a broken MUST.
STATUS = {**ALLURE_STATUS, Outcome.WARN: "failed"}
WARN_TAG = "WARN: a SHOULD or MAY is broken (certification is not blocked by it)"


def apply_lakecert_status(allure_dir: Path) -> int:
    changed = 0
    for path in allure_dir.glob("*-result.json"):
        data = json.loads(path.read_text())
        labels = {lab["name"]: lab["value"] for lab in data.get("labels", [])}
        outcome = Outcome(labels[STATUS_LABEL]) if STATUS_LABEL in labels else None
        wanted = STATUS.get(outcome) if outcome is not None else None
        tag = {"name": "tag", "value": WARN_TAG}
        needs_tag = outcome is Outcome.WARN and tag not in data.get("labels", [])
        if wanted is not None and (data.get("status") != wanted or needs_tag):
            data["status"] = wanted
            if needs_tag:
                data.setdefault("labels", []).append(tag)
            path.write_text(json.dumps(data))
            changed += 1
    return changed

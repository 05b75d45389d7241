"""Read what a single-file Allure report shows: the data files it embeds, decoded."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

# Each embedded file is d("<path>","<base64 JSON>") in the page (single or double quotes).
_EMBEDDED = re.compile(r"""d\((['"])([^'"]+)\1,\s*(['"])([A-Za-z0-9+/=]+)\3\)""")


def embedded(index: Path) -> dict[str, Any]:
    """Every JSON data file of the report by its path (``widgets/history-trend.json`` ...)."""
    found: dict[str, Any] = {}
    for _, path, _, payload in _EMBEDDED.findall(index.read_text(errors="replace")):
        if path.endswith(".json"):
            found[path] = json.loads(base64.b64decode(payload))
    return found


def result_cases(index: Path) -> list[dict[str, Any]]:
    return [v for k, v in embedded(index).items() if k.startswith("data/test-cases/")]

"""How the Allure result files are written: the same files as allure-pytest's writer, encoded faster.

allure-commons writes each result with ``json.dump`` to the file, which always takes the pure-Python
encoder; ``json.dumps`` takes the C one. A check's result carries every recorded step (a schedule
check records hundreds), so the writing was about a tenth of a default run's CPU
(docs/benchmarks.md). The bytes differ only where allure's output is indented
(``ALLURE_INDENT_OUTPUT``), which keeps the original path.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import allure_commons
import pytest
from allure_commons.logger import AllureFileLogger
from attr import asdict


class FastAllureFileLogger(AllureFileLogger):
    def _report_item(self, item: Any) -> None:
        if os.environ.get("ALLURE_INDENT_OUTPUT"):
            super()._report_item(item)
            return
        filename = item.file_pattern.format(prefix=uuid.uuid4())
        data = asdict(item, filter=lambda _, v: v or v is False)  # the fields allure-commons keeps
        tmp = self._report_dir / f"{filename}.tmp"
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf8")
        os.replace(tmp, self._report_dir / filename)  # readers never see a half-written file


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    # After allure-pytest registered its writer: the instance keeps its registration and cleanup,
    # only its class changes.
    for logger in allure_commons.plugin_manager.get_plugins():
        if type(logger) is AllureFileLogger:
            logger.__class__ = FastAllureFileLogger

"""How the Allure result files are written: the same files as allure-pytest's writer, encoded faster,
without the containers that say nothing.

allure-commons writes each result with ``json.dump`` to the file, which always takes the pure-Python
encoder; ``json.dumps`` takes the C one. A check's result carries every recorded step, so the writing
was about a tenth of a default run's CPU (docs/benchmarks.md). The bytes differ only where allure's
output is indented (``ALLURE_INDENT_OUTPUT``), which keeps the original path.

allure-pytest also writes one container file per fixture a check uses (seven per check on average:
``transcript``, ``table_name``, ...), most of them only a fixture's name and its finalizer's. They
are left out when every fixture in them passed (or has no status: a finalizer) and recorded no step,
attachment or parameter: the report loses only their names and start times. A fixture that broke,
or that recorded steps, keeps its container and shows in the check's set-up or tear-down as before.
Creating those files cost about a millisecond each on this project's VM disk (docs/benchmarks.md).
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import allure_commons
import pytest
from allure_commons.logger import AllureFileLogger
from allure_commons.model2 import TestResultContainer
from attr import asdict


def says_nothing(container: TestResultContainer) -> bool:
    """Only fixtures that passed (or finalizers, which carry no status), with nothing recorded."""
    return all(
        fixture.status in (None, "passed")
        and not (fixture.steps or fixture.attachments or fixture.parameters or fixture.statusDetails)
        for fixture in (*container.befores, *container.afters)
    ) and not (container.links or container.description or container.descriptionHtml)


class FastAllureFileLogger(AllureFileLogger):
    def _report_item(self, item: Any) -> None:
        # allure-commons calls this for results and containers alike (its hooks were registered with
        # the original class's methods, so this is the one place to leave a container out).
        if isinstance(item, TestResultContainer) and says_nothing(item):
            return
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

"""The lakecert pytest plugin, one concern per module (as pytest's own plugins are split):

- ``selection``: which checks a run collects (by the profiles of their ``req`` marks);
- ``fixtures``: what checks receive (the run, the target's parts wrapped by recorders, seeds, names);
- ``outcomes``: who is wrong - each check's outcome, decided once, kept in the item's stash;
- ``watchdog``: hang guards around every phase of a check;
- ``reporting``: Allure labels, reproducers, and results.json/junit/certificate at the end;
- ``progress``: names a check that runs long, so a slow run is told from a stuck one;
- ``failfast``: stops the run at the first FAIL when asked (a partial run);
- ``allure_files``: writes allure-pytest's result files with the C JSON encoder;
- ``hypothesis_home``: hypothesis's cache goes to lakecert's cache folder, not the current folder.

``lakecert run`` builds the run's ``RunContext`` once and hands it, with these modules, to
``pytest.main`` as plugin objects (``plugins(ctx)``); nothing travels as command-line strings.
"""

from __future__ import annotations

from conformance.plugin import (
    allure_files,
    failfast,
    fixtures,
    hypothesis_home,
    outcomes,
    progress,
    reporting,
    selection,
    watchdog,
)
from conformance.run_context import RunContext

MODULES = (selection, fixtures, outcomes, watchdog, reporting, progress, failfast, allure_files, hypothesis_home)


def plugins(ctx: RunContext) -> list[object]:
    return [ctx.plugin(), *MODULES]

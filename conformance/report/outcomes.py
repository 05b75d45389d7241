"""Outcomes of a check and of a requirement, and how they map to Allure."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import StrEnum
from typing import NoReturn

import pytest

from conformance.contract.delta import CatalogError, NotSupported
from conformance.observe.recording import TargetRaised


class Outcome(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"  # a MUST is broken: the product is wrong
    WARN = "WARN"  # a SHOULD or MAY is broken
    NOT_APPLICABLE = "NOT_APPLICABLE"  # an optional capability is absent, and that was verified
    ERROR = "ERROR"  # the suite or the adapter broke; says nothing about the product
    NOT_RUN = "NOT_RUN"  # requirement-level only: no check of it ran
    UNTESTABLE = "UNTESTABLE"  # requirement-level only: cannot be observed from outside


# Worst first: a requirement takes the worst outcome among its checks.
SEVERITY = [Outcome.ERROR, Outcome.FAIL, Outcome.WARN, Outcome.PASS, Outcome.NOT_APPLICABLE]

ALLURE_STATUS = {
    Outcome.PASS: "passed",
    Outcome.FAIL: "failed",
    Outcome.WARN: "unknown",  # neither passed nor failed: shown apart, does not block certification
    Outcome.NOT_APPLICABLE: "skipped",
    Outcome.ERROR: "broken",
}

ALLURE_SEVERITY = {"MUST": "critical", "SHOULD": "normal", "MAY": "minor"}

NA_PREFIX = "NOT_APPLICABLE: "

# Exceptions raised while a check runs that mean the product is wrong (not the suite);
# pytest.fail.Exception is what `pytest.raises` throws when the target did not raise.
PRODUCT_FAULTS = (AssertionError, pytest.fail.Exception, CatalogError, TargetRaised, NotSupported)


class SuiteError(Exception):
    """lakecert itself or its environment cannot go on (missing fixtures, a broken set-up): ERROR."""


class Violation(AssertionError):
    """A failed assertion of a check that covers several requirements, naming the one broken.

    ``at_end``: raised once the check had judged everything else, so the other requirements it covers
    held. A SHOULD broken midway is held to the end this way: the check WARNs for the SHOULD and still
    shows its MUSTs hold (results.json ``held``), where stopping at once would leave them unjudged."""

    def __init__(self, requirement: str, message: str, *, at_end: bool = False) -> None:
        super().__init__(f"[{requirement}] {message}")
        self.requirement = requirement
        self.at_end = at_end


class PremiseBroken(Exception):
    """A set-up step a check relies on but does not judge went wrong (``builders.premise``).

    Its ``__cause__`` says who is wrong: about the product, the check FAILs with "premise broken:"
    charged to none of its requirements (it still blocks certification); about the suite, ERROR.
    Inside ``premises_seen()`` every one raised is also recorded: a generated schedule whose
    premise broke in one attempt and held in the replay must still be charged to the premise.
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        seen = _PREMISES_SEEN.get()
        if seen is not None:
            seen.append(self)


_PREMISES_SEEN: ContextVar[list[PremiseBroken] | None] = ContextVar("premises_seen", default=None)


@contextmanager
def premises_seen() -> Iterator[list[PremiseBroken]]:
    """Collect every ``PremiseBroken`` raised in this context (the current thread's)."""
    seen: list[PremiseBroken] = []
    token = _PREMISES_SEEN.set(seen)
    try:
        yield seen
    finally:
        _PREMISES_SEEN.reset(token)


class NotApplicable(pytest.skip.Exception):  # type: ignore[misc,name-defined]
    """The only skip that means NOT_APPLICABLE; any other skip of a check is an ERROR."""


def not_applicable(reason: str) -> NoReturn:
    """End a check as NOT_APPLICABLE; call it only after verifying the target's answer."""
    raise NotApplicable(NA_PREFIX + reason)


def worst(outcomes: list[Outcome]) -> Outcome:
    return min(outcomes, key=SEVERITY.index)


def req_ids(item: pytest.Item) -> list[str]:
    """The requirement IDs a check names with its ``req`` marks."""
    return [rid for m in item.iter_markers("req") for rid in m.args]

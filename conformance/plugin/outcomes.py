"""Who is wrong: each check's outcome, decided once from what its phases raised, kept in the item's stash.

- PASS: every phase passed.
- NOT_APPLICABLE: only through ``report.outcomes.not_applicable`` (a ``NotApplicable`` skip), which a
  check calls after verifying the target's answer. Any other skip (a plain ``pytest.skip``, an empty
  parametrization, a missing fixture file) is an ERROR: nothing was verified.
- FAIL (WARN when every rule it judges is a SHOULD or MAY): the product is wrong. That is a failed
  assertion, a contract error, an exception from the target's own code, an exception lakecert raised
  while interpreting what the target answered or left in storage (a malformed answer, a missing
  file), and flaky product behaviour (hypothesis saw the same steps give different answers).
- ERROR with a broken premise: a set-up step the check relies on but does not judge did not hold
  (``builders.premise``, ``PremiseBroken``): the message says "premise broken: ..." and what the
  target answered, ``violated`` is empty and ``premise_broken`` is set. lakecert could not set the
  scene, so the check's rules were not put to the test: never a FAIL (which names a product
  defect), never NOT_APPLICABLE; the profile is not certified (docs/results.md "Who is wrong").
- ERROR: lakecert itself or the environment broke (a bug in the suite's machinery, a deadline, a
  target that could not be built or reached, a credential the catalog refused for a call lakecert
  needs: ``CredentialRefused``), so nothing is known about the product.
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import pytest

from conformance.contract.delta import AdapterBroken, CatalogError, CredentialRefused
from conformance.contract.target import TargetUnavailable
from conformance.observe.deadline import DeadlineExceeded
from conformance.report.outcomes import (
    PRODUCT_FAULTS,
    NotApplicable,
    Outcome,
    PremiseBroken,
    SuiteError,
    Violation,
    req_ids,
)
from conformance.requirements import load_all
from conformance.run_context import TargetBuildError

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
# Where lakecert interprets what the target did: an exception raised there is about the product.
INTERPRETING = ("conformance/checks/", "conformance/observe/", "reference_impl/")
# Exceptions that are always lakecert's own bug, wherever they come from.
SUITE_BUGS = (NameError, ImportError, SyntaxError, UnboundLocalError, RecursionError, SuiteError)


@dataclass
class CheckState:
    """What the phases of one check found; becomes exactly one row of results.json."""

    started: float = field(default_factory=time.time)
    status: Outcome | None = None
    message: str = ""
    violated: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)  # rules shown to hold by a check that broke another at its end
    steps: list[str] = field(default_factory=list)
    reproducer: str | None = None
    premise_broken: bool = False
    observations: list[str] = field(default_factory=list)  # noted on the check's HTTP exchanges
    recorded: bool = False  # its row is made and its Allure result closed (``reporting.record``)


CHECK_KEY = pytest.StashKey[CheckState]()


def state_of(item: pytest.Item) -> CheckState:
    if CHECK_KEY not in item.stash:
        item.stash[CHECK_KEY] = CheckState()
    return item.stash[CHECK_KEY]


def _is_flaky(exc: BaseException) -> bool:
    try:
        from hypothesis.errors import Flaky
    except ImportError:  # pragma: no cover - hypothesis is a dependency
        return False
    return isinstance(exc, Flaky)


def _project_frames(tb: TracebackType | None) -> list[str]:
    """Paths (relative to the checkout or site-packages root) of frames in lakecert or in target code."""
    out = []
    stdlib = Path(sys.base_prefix).resolve()
    while tb is not None:
        path = Path(tb.tb_frame.f_code.co_filename)
        try:
            out.append(path.resolve().relative_to(PACKAGE_ROOT).as_posix())
        except ValueError:
            outside = "site-packages" not in path.parts and not path.resolve().is_relative_to(stdlib)
            if outside and not path.name.startswith("<"):
                out.append("target:" + path.as_posix())  # a vendor adapter's own code
        tb = tb.tb_next
    return out


def blames_product(exc: BaseException) -> bool:
    """Whether an exception that is not a contract error was raised about the product."""
    if isinstance(exc, PRODUCT_FAULTS) or _is_flaky(exc):
        return True
    if isinstance(
        exc, (*SUITE_BUGS, DeadlineExceeded, TargetBuildError, TargetUnavailable, CredentialRefused, AdapterBroken)
    ):
        return False
    frames = [f for f in _project_frames(exc.__traceback__) if not f.startswith("conformance/plugin/")]
    if any(f.startswith("target:") for f in frames):
        return True
    return bool(frames) and frames[-1].startswith(INTERPRETING)


def _levels(ids: list[str]) -> set[str]:
    known = load_all()
    return {known[i].level for i in ids if i in known}


# pytest's assertion rewriting explains an assert with lines like "+  where None = f(<obj at 0x..>)",
# then a diff and hints at its own options: reprs of the suite's internals, not why the rule broke.
# The traceback (Allure's trace, the reproducer) keeps them for whoever debugs the suite.
_WHERE = re.compile(r"^\s*\+\s+(where|and)\b")
_TAIL = re.compile(
    r"^\s*(Full diff:|Use -v to get more diff|\.\.\.Full output truncated|Differing items:|Omitting \d+ identical"
    r"|Left contains|Right contains|At index \d+ diff:)"
)


def _without_introspection(text: str) -> str:
    kept: list[str] = []
    for i, line in enumerate(text.splitlines()):
        if _TAIL.match(line):
            break
        # After the check's own words, pytest repeats the assert statement ("assert None is not
        # None"): the expression, not what the product did.
        if not _WHERE.match(line) and not (i and kept and line.startswith("assert ")):
            kept.append(line)
    return "\n".join(kept).strip() or text


def message_of(exc: BaseException, ids: list[str]) -> str:
    text = str(exc).strip()
    if isinstance(exc, DeadlineExceeded):
        stuck = [line for line in exc.stack.strip().splitlines() if line.strip()][-6:]
        return f"{text}; stuck at:\n" + "\n".join(stuck)
    if _is_flaky(exc):
        return f"flaky product behaviour: the same steps gave different answers when replayed ({type(exc).__name__})"
    if isinstance(exc, AssertionError | pytest.fail.Exception):
        return text.splitlines()[0][:2000] if isinstance(exc, Violation) else _without_introspection(text)[:2000]
    prefix = ""
    if not isinstance(exc, PRODUCT_FAULTS) and blames_product(exc):
        prefix = "could not interpret what the target did: "
        if len(ids) > 1:
            prefix = f"could not finish judging {', '.join(ids)}: " + prefix
    elif isinstance(exc, CatalogError) and len(ids) > 1:
        # The product refused a call a check of several rules needed: none of them was shown broken.
        prefix = f"could not finish judging {', '.join(ids)}: the target refused a call: "
    return f"{prefix}{type(exc).__name__}: {text}"[:2000]


def decide(item: pytest.Item, report: pytest.TestReport, call: pytest.CallInfo[None]) -> tuple[Outcome, str, list[str]]:
    """The outcome of one phase that did not pass, its message, and the rules it saw broken."""
    ids = req_ids(item)
    exc = call.excinfo.value if call.excinfo is not None else None
    if report.skipped:
        if isinstance(exc, NotApplicable) and report.when == "call":
            return Outcome.NOT_APPLICABLE, str(exc.msg).split(": ", 1)[-1], []
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        return Outcome.ERROR, f"skipped without a verified not-applicable answer: {reason}", []
    if exc is None:
        return Outcome.ERROR, str(report.longrepr)[:2000], []
    if isinstance(exc, PremiseBroken) and report.when in ("setup", "call"):
        cause = exc.__cause__
        if cause is None or blames_product(cause):
            return Outcome.ERROR, f"premise broken: {exc}"[:2000], []
        exc = cause  # the suite broke while setting up: judged like any other exception
    message = message_of(exc, ids)
    if report.when == "teardown" or not blames_product(exc):
        return Outcome.ERROR, message, []
    rid = exc.requirement if isinstance(exc, Violation) else None
    # A check of one rule that fails has broken that rule; one of several names it with Violation.
    violated = [rid] if rid in ids else (ids if len(ids) == 1 else [])
    status = Outcome.FAIL if "MUST" in _levels(violated or ids) else Outcome.WARN
    return status, message, violated


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    state = state_of(item)
    if not report.passed and state.status in (None, Outcome.PASS):
        # The first phase that did not pass decides; a teardown failure turns a pass into ERROR.
        state.status, state.message, state.violated = decide(item, report, call)
        exc = call.excinfo.value if call.excinfo is not None else None
        state.premise_broken = state.status is Outcome.ERROR and state.message.startswith("premise broken: ")
        if isinstance(exc, Violation) and exc.at_end and state.violated and report.when == "call":
            state.held = [r for r in req_ids(item) if r not in state.violated]
        # Hypothesis puts the shrunk schedule ("Falsifying example: ...") in the exception's notes.
        state.steps = list(getattr(exc, "__notes__", []))
    elif report.when == "call" and report.passed:
        state.status = Outcome.PASS


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    state_of(item)

"""What a run leaves behind: Allure labels per check, a reproducer per failure, and at the end
results.json, junit.xml and (for a finished run only) certificate.json."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import allure
import pytest

from conformance.observe.transcript import Transcript
from conformance.plugin.outcomes import CheckState, state_of
from conformance.report.allure_meta import NODEID_LABEL, polish_results, write_run_metadata
from conformance.report.allure_status import STATUS_LABEL, apply_lakecert_status
from conformance.report.certificate import write_certificate
from conformance.report.http_replay import write_replay
from conformance.report.junit import write_junit
from conformance.report.outcomes import ALLURE_SEVERITY, Outcome, req_ids
from conformance.report.rerun import rerun_command, secret_variable, secrets_to_set
from conformance.report.results import CheckResult, RunSummary
from conformance.report.swimlane import swimlane_svg
from conformance.requirements import Requirement, load_all, profiles
from conformance.run_context import RunContext
from conformance.schedules.held_run import SCHEDULES

RESULTS_KEY = pytest.StashKey[list[CheckResult]]()


@pytest.fixture(autouse=True)
def lakecert_labels(request: pytest.FixtureRequest, lakecert: RunContext) -> Iterator[None]:
    """Allure labels and links from the requirement marks, and the lakecert status at the end."""
    _label([load_all()[i] for i in req_ids(request.node)], lakecert)
    yield
    if state_of(request.node).recorded:
        # An interrupted session tears the check's fixtures down at its end, after the check's row
        # and Allure result were closed: there is no result left to name (allure-pytest fails then).
        return
    # After the check: allure-pytest names the result when setup ends, which would undo a title set
    # before the yield.
    _title(request.node, [load_all()[i] for i in req_ids(request.node)])
    status = state_of(request.node).status
    if status is not None:
        allure.dynamic.label(STATUS_LABEL, status.value)


def _title(item: pytest.Item, reqs: list[Requirement]) -> None:
    """The rule first, in words: ``CAT-X: statement - check name [param]``."""
    callspec = getattr(item, "callspec", None)
    param = f" [{callspec.id}]" if callspec is not None else ""
    check = getattr(item, "originalname", item.name).removeprefix("test_").replace("_", " ")
    allure.dynamic.title(f"{', '.join(r.id for r in reqs)}: {reqs[0].statement} - {check}{param}")
    allure.dynamic.description("\n\n".join(f"**{r.id}** ({r.level}, {r.section}): {r.statement}" for r in reqs))
    allure.dynamic.label(NODEID_LABEL, item.nodeid)
    _readable_parameters(callspec.params if callspec is not None else {})


def _readable_parameters(params: dict[str, object]) -> None:
    """A parameter that can describe itself is shown in words, not as its dataclass repr."""
    for name, value in params.items():
        describe = getattr(value, "describe", None)
        text = describe() if callable(describe) else None
        if isinstance(text, str):
            allure.dynamic.parameter(name, text)


def _label(reqs: list[Requirement], ctx: RunContext) -> None:
    strongest = min((r.level for r in reqs), key=["MUST", "SHOULD", "MAY"].index)
    allure.dynamic.severity(getattr(allure.severity_level, ALLURE_SEVERITY[strongest].upper()))
    allure.dynamic.label("target", ctx.target.name)
    for r in reqs:
        allure.dynamic.epic(r.spec.name)
        allure.dynamic.feature(r.profile)
        allure.dynamic.story(r.id)
        allure.dynamic.tag(r.level)
        allure.dynamic.label("requirement", r.id)
        allure.dynamic.link(r.link, name=f"{r.id} ({r.section})")
    allure.dynamic.parameter("target", ctx.target.name)


def _reproducer(item: pytest.Item, ctx: RunContext, state: CheckState, transcript: Transcript | None) -> dict[str, Any]:
    return {
        "test": item.nodeid,
        "requirements": req_ids(item),
        "target": ctx.target.name,
        "target_version": ctx.target_version,
        "config": ctx.config.redacted(),
        "seed": ctx.config.seed,
        "status": state.status.value if state.status else None,
        "message": state.message,
        "schedule": transcript.notes if transcript else {},
        "steps": state.steps,
        "transcript": transcript.to_json() if transcript else [],
        "rerun": rerun_command(ctx.config, ctx.profiles, [item.nodeid]),
        "rerun_secrets": secrets_to_set(ctx.config),  # shell variables to set before pasting ``rerun``
    }


def _write_reproducer(item: pytest.Item, ctx: RunContext, state: CheckState) -> str:
    """Save the reproducer of a check that did not pass; attach it to the check's Allure result."""
    transcript = getattr(item, "funcargs", {}).get("transcript")
    data = _reproducer(item, ctx, state, transcript)
    path = ctx.out / "reproducers" / (re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid) + ".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(transcript, Transcript) and len(transcript.http):
        # A network target: what went over the wire, in order, and a curl script that replays it.
        token = secret_variable(f"LAKECERT__targets__{ctx.target.name}__options__token")
        folder = path.with_name(path.stem + ".http")
        data["http"] = write_replay(folder, transcript.http.exchanges(), token, transcript.http.dropped)
    repro = json.dumps(data, indent=2, default=str)
    path.write_text(repro)
    allure.attach(repro, name="reproducer", attachment_type=allure.attachment_type.JSON)
    note = data["schedule"].get("schedule") if isinstance(data["schedule"], dict) else None
    svg = swimlane_svg(note) if isinstance(note, dict) else None
    if svg is not None:  # a concurrency schedule: its picture beside the reproducer and in Allure
        path.with_suffix(".svg").write_text(svg)
        allure.attach(svg, name="schedule (swimlanes)", attachment_type=allure.attachment_type.SVG)
    return str(path.relative_to(ctx.out))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """Once a phase has decided that the check did not pass, save its reproducer (while Allure's
    test case is still open, so that it is attached there too)."""
    yield
    state = state_of(item)
    transcript = (getattr(item, "funcargs", None) or {}).get("transcript")
    if isinstance(transcript, Transcript):  # answers of an unexpected shape, noted on the exchanges
        state.observations = transcript.http.notes()
    if state.status in (Outcome.FAIL, Outcome.WARN, Outcome.ERROR) and state.reproducer is None:
        state.reproducer = _write_reproducer(item, RunContext.of(item.config), state)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):  # type: ignore[no-untyped-def]
    """A check's held schedules, passing ones too, in one attachment (what each writer did, why one
    aborted); a failing schedule is also in the check's steps (``explorer.harness.record``)."""
    SCHEDULES.open()
    try:
        yield
    finally:
        runs = SCHEDULES.close()
        if runs:
            allure.attach(
                "\n\n".join(runs), name=f"schedules run ({len(runs)})", attachment_type=allure.attachment_type.TEXT
            )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    """Exactly one row per check, whichever phase ended it."""
    yield
    record(item, state_of(item))


def record(item: pytest.Item, state: CheckState) -> None:
    """The check's one row of results.json."""
    if state.status is None:
        state.status, state.message = Outcome.ERROR, "the check did not run to an outcome"
    state.recorded = True
    results = item.config.stash.setdefault(RESULTS_KEY, [])
    results.append(
        CheckResult(
            item.nodeid,
            req_ids(item),
            state.status,
            state.message,
            _elapsed(state),
            state.reproducer,
            state.violated,
            state.premise_broken,
            state.observations,
            state.held,
        )
    )


def _elapsed(state: CheckState) -> float:
    return time.time() - state.started


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    ctx = RunContext.of(config)
    if getattr(config, "workerinput", None) is not None:
        return
    results = config.stash.get(RESULTS_KEY, [])
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED or ctx.interrupted
    reqs = {r.id: r for p in ctx.profiles for r in profiles().get(p, [])}
    summary = RunSummary(
        ctx.run_info(),
        results,
        reqs,
        ctx.profiles,
        partial=ctx.partial,
        interrupted=interrupted,
        collected=ctx.collected,
        left_out=dict(ctx.budget_left_out),
    )
    ctx.out.mkdir(parents=True, exist_ok=True)
    results_path = ctx.out / "results.json"
    write_junit(summary.write(results_path), ctx.out / "junit.xml")
    certificate = ctx.out / "certificate.json"
    if summary.finished:
        write_certificate(results_path, certificate)
    else:
        certificate.unlink(missing_ok=True)  # an unfinished run is never certified, not even by an old file
    allure_dir = config.getoption("--alluredir", None)
    if allure_dir:
        apply_lakecert_status(Path(allure_dir))
        polish_results(Path(allure_dir), results)
        write_run_metadata(Path(allure_dir), summary.to_json())
    ctx.summary = summary

"""The lakecert pytest plugin: builds the target, selects checks by profile, judges outcomes.

Loaded by the CLI with ``-p conformance.plugin``. Checks are marked
``@pytest.mark.req("ID", ...)``; the marks drive selection, Allure labels and
results.json.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import allure
import pytest

from conformance.observe.recording import RecordingCatalog, RecordingClient, RecordingStorage
from conformance.observe.transcript import Transcript
from conformance.report.allure_status import STATUS_LABEL, apply_warn_status
from conformance.report.certificate import write_certificate
from conformance.report.junit import write_junit
from conformance.report.outcomes import (
    ALLURE_SEVERITY,
    NA_PREFIX,
    PRODUCT_FAULTS,
    Outcome,
    Violation,
)
from conformance.report.results import CheckResult, RunSummary
from conformance.requirements import Requirement, load_all, profiles
from conformance.run_context import RunContext
from conformance.targets.config import load_config

CTX_KEY = pytest.StashKey[RunContext]()
RESULTS_KEY = pytest.StashKey[list[CheckResult]]()
PKG_DIR = Path(__file__).parent


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("lakecert")
    g.addoption("--lakecert-config", default=None, help="YAML configuration file")
    g.addoption("--lakecert-target", default=None, help="target name (overrides the config)")
    g.addoption("--lakecert-profile", action="append", default=None, help="profile to run (repeatable)")
    g.addoption("--lakecert-seed", type=int, default=None, help="seed for races and generated schedules")
    g.addoption("--lakecert-out", default=None, help="output directory for results.json and reproducers")
    g.addoption("--lakecert-partial", action="store_true", help="only some checks are selected")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "req(*ids): requirement IDs a check covers")
    path = config.getoption("--lakecert-config")
    cfg = load_config(Path(path) if path else None)
    if config.getoption("--lakecert-target"):
        cfg.data["target"] = config.getoption("--lakecert-target")
    if config.getoption("--lakecert-seed") is not None:
        cfg.data["seed"] = config.getoption("--lakecert-seed")
    if config.getoption("--lakecert-profile"):
        cfg.data["profiles"] = config.getoption("--lakecert-profile")
    out = Path(config.getoption("--lakecert-out") or "reports/pytest-run").resolve()
    config.stash[CTX_KEY] = RunContext.open(cfg, out)
    config.stash[RESULTS_KEY] = []


def pytest_unconfigure(config: pytest.Config) -> None:
    ctx = config.stash.get(CTX_KEY, None)
    if ctx is not None:
        ctx.close()


def _req_ids(item: pytest.Item) -> list[str]:
    return [rid for m in item.iter_markers("req") for rid in m.args]


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    ctx = config.stash[CTX_KEY]
    known = load_all()
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        ids = _req_ids(item)
        unknown = [i for i in ids if i not in known]
        if not ids or unknown:
            raise pytest.UsageError(f"{item.nodeid}: every check needs known @req marks (unknown: {unknown})")
        (keep if any(known[i].profile in ctx.profiles for i in ids) else drop).append(item)
        # Shown by Allure as the check's description.
        text = "\n\n".join(f"{rid} ({known[rid].level}, {known[rid].section}): {known[rid].statement}" for rid in ids)
        item.add_marker(pytest.mark.allure_description(text))
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="session")
def lakecert(request: pytest.FixtureRequest) -> RunContext:
    """The run: configuration, target, profiles and shared environment."""
    return request.config.stash[CTX_KEY]


@pytest.fixture
def transcript() -> Transcript:
    return Transcript()


@pytest.fixture
def seed(lakecert: RunContext, request: pytest.FixtureRequest, transcript: Transcript) -> int:
    """A per-check seed derived from the run's seed, recorded for the reproducer."""
    digest = hashlib.sha256(f"{lakecert.config.seed}:{request.node.nodeid}".encode()).hexdigest()
    value = int(digest[:8], 16)
    transcript.notes["seed"] = value
    return value


@pytest.fixture
def storage(lakecert: RunContext, transcript: Transcript) -> RecordingStorage:
    """The run's object store, recording what the client under test does to it."""
    return RecordingStorage(lakecert.env.storage, transcript)


@pytest.fixture
def catalog(lakecert: RunContext, transcript: Transcript) -> RecordingCatalog:
    """The catalog under test (catalog profile)."""
    return RecordingCatalog(lakecert.target_catalog(), transcript, under_test=True)


@pytest.fixture
def ref_catalog(lakecert: RunContext, transcript: Transcript) -> RecordingCatalog:
    """The reference catalog that clients under test are bound to; it records their calls."""
    return RecordingCatalog(lakecert.reference_catalog(), transcript)


@pytest.fixture
def client_factory(
    lakecert: RunContext, ref_catalog: RecordingCatalog, storage: RecordingStorage, transcript: Transcript
) -> Callable[[], RecordingClient]:
    """Builds clients under test, bound to the recording reference catalog and storage."""
    env = replace(lakecert.env, storage=storage)
    return lambda: RecordingClient(lakecert.target.make_client(ref_catalog, env), transcript)


@pytest.fixture
def client(client_factory: Callable[[], RecordingClient]) -> RecordingClient:
    """A fresh client under test."""
    return client_factory()


@pytest.fixture
def table_name(request: pytest.FixtureRequest) -> str:
    """A table name unique to this check within the run."""
    base = re.sub(r"[^A-Za-z0-9]+", "_", request.node.name)[:40].strip("_")
    return f"{base}_{hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:8]}"


@pytest.fixture(autouse=True)
def _lakecert_labels(request: pytest.FixtureRequest, lakecert: RunContext, transcript: Transcript) -> Iterator[None]:
    """Allure labels and links from the requirement marks, and the lakecert status at the end."""
    reqs = [load_all()[i] for i in _req_ids(request.node)]
    _label(reqs, lakecert)
    yield
    status = getattr(request.node, "_lakecert_outcome", (None,))[0]
    if status is not None:
        allure.dynamic.label(STATUS_LABEL, status.value)


def _write_reproducer(item: pytest.Item) -> None:
    """Save the reproducer of a failed check and attach it to the check's Allure result."""
    transcript = getattr(item, "funcargs", {}).get("transcript")
    if transcript is None:
        return
    ctx = item.config.stash[CTX_KEY]
    repro = json.dumps(_reproducer(item, ctx, transcript), indent=2, default=str)
    path = ctx.out / "reproducers" / (re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid) + ".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(repro)
    item._lakecert_reproducer = str(path.relative_to(ctx.out))  # type: ignore[attr-defined]
    allure.attach(repro, name="reproducer", attachment_type=allure.attachment_type.JSON)


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


def _reproducer(item: pytest.Item, ctx: RunContext, transcript: Transcript) -> dict[str, Any]:
    rerun = ["lakecert", "run", "--target", ctx.config.target, "--seed", str(ctx.config.seed), "--select", item.nodeid]
    if ctx.config.source != "defaults":
        rerun += ["--config", ctx.config.source]
    return {
        "test": item.nodeid,
        "requirements": _req_ids(item),
        "target": ctx.target.name,
        "target_version": ctx.target.version(),
        "config": ctx.config.redacted(),
        "seed": ctx.config.seed,
        "schedule": transcript.notes,
        "steps": getattr(item, "_lakecert_steps", []),
        "transcript": transcript.to_json(),
        "rerun": shlex.join(rerun),
    }


# ------------------------------------------------------------------ outcomes


def _outcome(item: pytest.Item, report: pytest.TestReport, call: pytest.CallInfo[None], violated: list[str]) -> Outcome:
    if report.passed:
        return Outcome.PASS
    if report.skipped:
        return Outcome.NOT_APPLICABLE
    # A target that cannot do what a check needs in its setup fails the check too.
    if report.when == "teardown" or call.excinfo is None:
        return Outcome.ERROR
    if not isinstance(call.excinfo.value, PRODUCT_FAULTS):
        return Outcome.ERROR
    levels = {load_all()[i].level for i in violated or _req_ids(item)}
    return Outcome.FAIL if "MUST" in levels else Outcome.WARN


def _violated(item: pytest.Item, call: pytest.CallInfo[None]) -> list[str]:
    exc = call.excinfo.value if call.excinfo is not None else None
    rid = exc.requirement if isinstance(exc, Violation) else None
    return [rid] if rid in _req_ids(item) else []


def _message(report: pytest.TestReport, call: pytest.CallInfo[None]) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ").removeprefix(NA_PREFIX)
    if call.excinfo is not None:
        text = str(call.excinfo.value).strip()
        return f"{call.excinfo.typename}: {text}"[:2000]
    return ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    final = report.when == "teardown" or (report.when == "setup" and not report.passed)
    if report.when == "call" or (report.when == "setup" and not report.passed):
        violated = _violated(item, call)
        item._lakecert_outcome = (_outcome(item, report, call, violated), _message(report, call))  # type: ignore[attr-defined]
        item._lakecert_violated = violated  # type: ignore[attr-defined]
        # Hypothesis puts the shrunk schedule ("Falsifying example: ...") in the exception's notes.
        exc = call.excinfo.value if call.excinfo is not None else None
        item._lakecert_steps = list(getattr(exc, "__notes__", []))  # type: ignore[attr-defined]
        if item._lakecert_outcome[0] in (Outcome.FAIL, Outcome.WARN, Outcome.ERROR):  # type: ignore[attr-defined]
            _write_reproducer(item)
    if report.when == "teardown" and report.failed:
        # A check that broke while cleaning up says nothing reliable about the product.
        item._lakecert_outcome = (Outcome.ERROR, _message(report, call))  # type: ignore[attr-defined]
    if final and hasattr(item, "_lakecert_outcome"):
        status, message = item._lakecert_outcome
        started = getattr(item, "_lakecert_started", time.time())
        item.config.stash[RESULTS_KEY].append(
            CheckResult(
                item.nodeid,
                _req_ids(item),
                status,
                message,
                time.time() - started,
                getattr(item, "_lakecert_reproducer", None),
                getattr(item, "_lakecert_violated", []),
            )
        )
        report.user_properties.append(("lakecert_status", status.value))


def pytest_runtest_setup(item: pytest.Item) -> None:
    item._lakecert_started = time.time()  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    ctx = config.stash.get(CTX_KEY, None)
    if ctx is None or getattr(config, "workerinput", None) is not None:
        return
    reqs = {r.id: r for p in ctx.profiles for r in profiles().get(p, [])}
    summary = RunSummary(
        ctx.run_info(),
        config.stash[RESULTS_KEY],
        reqs,
        ctx.profiles,
        partial=bool(config.getoption("--lakecert-partial")),
    )
    ctx.out.mkdir(parents=True, exist_ok=True)
    write_junit(summary.write(ctx.out / "results.json"), ctx.out / "junit.xml")
    write_certificate(ctx.out / "results.json", ctx.out / "certificate.json")
    allure_dir = config.getoption("--alluredir", None)
    if allure_dir:
        apply_warn_status(Path(allure_dir))
    ctx.summary = summary

"""One run, from what was asked (``RunRequest``) to its exit code.

The flow, in one pass (docs/design.md, "The flow of a run"): ``execute`` resolves the configuration
(``config.load_config`` with the request's overrides), ``RunContext.open`` builds the target once
(``registry.build_target``: the name normalised, its options checked against the adapter class's
own signature) and the context around it, the target's preflight answers or the run stops with one
line, then ``pytest.main`` runs the checks with the plugin (``conformance.plugin``) reading the
context from its stash, and the summary is printed from the results.json the plugin wrote. The
command line (``cli.cmd_run``) and the self-test (``selftest``) ask for runs here; neither calls
the other.
"""

from __future__ import annotations

import functools
import json
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.config import ConfigError, load_config
from conformance.extras import require_extras
from conformance.report import allure_history
from conformance.report.summary import print_summary

if TYPE_CHECKING:
    from conformance.plugin.split import Split

PKG_DIR = Path(__file__).parent
USAGE_ERROR = 2


@dataclass(frozen=True)
class RunRequest:
    """What a run is asked for; None or empty: the configuration's value (or its default)."""

    config_file: Path | None = None
    target: str | None = None
    seed: int | None = None
    profiles: list[str] | None = None
    requirements: frozenset[str] | None = None  # ``--requirement``: only the checks naming these
    catalog_target: str | None = None
    fail_fast: bool = False
    label: str | None = None
    select: tuple[str, ...] = ()  # checks named one by one (``--select``)
    out: Path | None = None
    verbose: bool = False
    shard: tuple[int, int] | None = None  # ``--shard K/N``
    shard_costs: Path | None = None


def profiles_of(requirements: frozenset[str] | None) -> list[str] | None:
    """The profiles holding the given requirements, in the catalog's order (None: no narrowing)."""
    if not requirements:
        return None
    from conformance.requirements import load_all, profiles

    wanted = {load_all()[r].profile for r in requirements}
    return [p for p in profiles() if p in wanted]


def _check_files() -> dict[str, frozenset[str]]:
    """Requirement ID -> the check modules whose ``req`` marks name it (read once per process)."""
    from conformance.requirements.coverage import checks_by_requirement

    return {rid: frozenset(c.split("::")[0] for c in ids) for rid, ids in checks_by_requirement().items()}


def warm_run_imports() -> None:
    """Import what ``execute`` imports, and read the checks' marks: for a process that forks runs."""
    import _hypothesis_pytestplugin  # noqa: F401
    import allure_pytest.plugin  # noqa: F401
    import pytest  # noqa: F401

    import conformance.plugin  # noqa: F401

    _check_files()


@functools.cache
def _module_profiles() -> dict[str, frozenset[str]]:
    """Check module -> the profiles of the requirements its ``req`` marks name (read statically)."""
    from conformance.requirements import load_all

    known = load_all()
    out: dict[str, set[str]] = {}
    for rid, files in _check_files().items():
        for f in files:
            # An unknown ID maps to no profile: the module is then kept, and collection rejects the mark.
            out.setdefault(f, set()).add(known[rid].profile if rid in known else "")
    return {f: frozenset(p) for f, p in out.items()}


def check_paths(requirements: frozenset[str] | None, profiles: list[str] | None = None) -> list[str]:
    """What pytest collects: with ``--requirement`` only the modules that name one of them, else the
    modules of the selected profiles (importing the other modules, the Iceberg ones and their
    libraries for a Delta-only run, cost more than a focused run's checks; docs/benchmarks.md). A
    module the static reader finds no mark in is kept, so collection still judges it. The selection
    by marks still decides which checks of those modules run."""
    files = sorted({f for r in requirements or () for f in _check_files().get(r, ())})
    if not files and profiles is not None:
        wanted = set(profiles)
        found = _module_profiles()
        every = sorted(p.relative_to(PKG_DIR).as_posix() for p in (PKG_DIR / "checks").rglob("test_*.py"))
        files = [f for f in every if f not in found or "" in found[f] or not found[f].isdisjoint(wanted)]
    return [str(PKG_DIR / f) for f in files] or [str(PKG_DIR / "checks")]


def writable_dir(path: Path, what: str) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".lakecert-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise ConfigError(f"{what} {path} is not writable: {e.strerror or e}") from None
    return path


# What an earlier run into the same --out left that this run would not overwrite: the HTML would
# otherwise show the old run beside the new results.
STALE = (
    "allure-results",
    "allure-report",
    "matrix.html",
    "reproducers",
    "junit.xml",
    "certificate.json",
    "results.json",
    allure_history.MARKER,  # a new run adds its own point to the trend
)


def clear_stale(out: Path) -> None:
    for name in STALE:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def _split_of(request: RunRequest) -> Split | None:
    """``--shard K/N`` (with ``--shard-costs``): this run's part of a split run, a plugin; None without."""
    from conformance.plugin.split import Split, load_costs

    if request.shard is None:
        if request.shard_costs:
            raise ConfigError("--shard-costs sets the costs of a split run: give --shard K/N too")
        return None
    if request.select:  # checks named one by one are a rerun, which nothing needs to share out
        raise ConfigError("--shard splits a run's whole plan; --select reruns named checks: give one of them")
    recorded = load_costs(request.shard_costs) if request.shard_costs else None
    index, count = request.shard
    costs_from = str(request.shard_costs) if request.shard_costs else None
    return Split(index, count, recorded=recorded, costs_from=costs_from, selection=bool(request.requirements))


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # pytest stops the session and reports it as interrupted


def pytest_args(paths: list[str], out: Path, verbose: bool) -> list[str]:
    return [
        *paths,
        "-c",
        str(PKG_DIR / "pytest.ini"),
        "--rootdir",
        str(PKG_DIR),
        # Only the pytest plugins a run needs: autoloading every installed one (schemathesis, xdist,
        # anyio in a developer's venv) cost more than the Delta profiles' checks, and pytest rewrote
        # the assertions of every module of hypothesis because it ships a plugin (docs/benchmarks.md).
        "--disable-plugin-autoload",
        "-p",
        "allure_pytest.plugin",
        "-p",
        "_hypothesis_pytestplugin",
        # pytest's unraisable-exception plugin only turns exceptions in __del__ into warnings, which a
        # run does not show (--disable-warnings), and forces garbage collections at the session's end.
        "-p",
        "no:unraisableexception",
        "--alluredir",
        str(out / "allure-results"),  # emptied by ``clear_stale`` before the run writes there
        # -qq: pytest's own "2 failed, 8 passed" line would sit beside lakecert's verdict; the
        # progress dots stay.
        "-qq" if not verbose else "-v",
        "--no-header",
        "--disable-warnings",  # warnings of the installed pytest plugins are no concern of the vendor
        "-rN",
        "--tb=short" if verbose else "--tb=no",
    ]


def execute(request: RunRequest) -> int:
    """Run what ``request`` asks for; the exit code (0 certified, 1 not certified, 2 error)."""
    # The run's machinery (pytest, the targets, pyiceberg) is imported here, not at the top: the
    # other commands (report, --version, gate ...) start in a fraction of the time without it.
    import pytest

    from conformance.contract.target import TargetUnavailable, run_preflight
    from conformance.observe.deadline import DeadlineExceeded, deadline
    from conformance.plugin import plugins
    from conformance.run_context import RunContext

    only = request.requirements
    split = _split_of(request)  # before anything is written: bad usage changes nothing
    cfg = load_config(request.config_file).with_overrides(
        target=request.target,
        seed=request.seed,
        profiles=request.profiles or profiles_of(only),
        catalog_target=request.catalog_target,
        fail_fast=request.fail_fast or None,
        label=request.label,
    )
    require_extras(cfg)
    out = (request.out or Path(f"reports/{time.strftime('%Y%m%d-%H%M%S')}")).resolve()
    created = next((p for p in [*reversed(out.parents), out] if not p.exists()), None)  # topmost new folder
    writable_dir(out, "--out")
    try:
        partial = bool(request.select or only or split)
        ctx = RunContext.open(cfg, out, partial=partial, requirements=only)
    except ConfigError:
        if created is not None:  # a typo'd target or profile leaves no empty folder behind
            shutil.rmtree(created, ignore_errors=True)
        raise
    clear_stale(out)  # only once the run is sure to start: bad usage changes nothing
    for profile, why in ctx.profiles_not_installed.items():  # a default run certifies what the install can
        print(f"lakecert: profile {profile} not run: {why}", file=sys.stderr)
    try:
        with deadline(cfg.settings.deadlines.call_s, f"the preflight of {cfg.target}"):
            run_preflight(ctx.target)
            if ctx.catalog_side is not None:  # interop: the catalog the client is bound to must answer too
                run_preflight(ctx.catalog_side)
    except (TargetUnavailable, DeadlineExceeded) as e:
        # An unreachable target says nothing about conformance: one line, exit 2, no check run and
        # no results or certificate written (an old run's were removed above, so none is mistaken
        # for this run's).
        print(f"lakecert: target {cfg.target} is unavailable, nothing was run: {e}", file=sys.stderr)
        ctx.close()
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        return USAGE_ERROR
    paths = [str(PKG_DIR / s) for s in request.select] if request.select else check_paths(only, ctx.profiles)
    what = "the selected checks" if request.select else f"profile(s) {', '.join(ctx.profiles)}"
    what += f", part {split.index} of {split.count} of the plan" if split else ""
    print(f"lakecert: certifying target {cfg.target} on {what}; results in {out}", flush=True)
    args = pytest_args(paths, out, request.verbose)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        code = pytest.main(args, plugins=[*plugins(ctx), *([split] if split else [])])
    finally:
        signal.signal(signal.SIGTERM, previous)
        ctx.close()
    results = out / "results.json"
    if code == pytest.ExitCode.INTERRUPTED:
        print("lakecert: run interrupted: results.json is marked interrupted; no certificate", file=sys.stderr)
        return USAGE_ERROR
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or not results.exists():
        print(f"lakecert: the run broke (pytest exit {int(code)}); see the output above", file=sys.stderr)
        return USAGE_ERROR
    code = print_summary(json.loads(results.read_text()), out)
    if split:
        n = split.count
        print(f"lakecert: part {split.index}/{n} of a split run: `lakecert merge` its {n} folders")
    return code

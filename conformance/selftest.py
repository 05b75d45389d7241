"""Self-test: the reference must be certified and every faulty variant caught by what it breaks.

The reference runs every check of every profile. A faulty variant runs, by default, only the
checks of the requirements it is registered to break (``lakecert run --requirement``): that is
all its verdict asks, and each check builds its own tables, so a check run alone reports what it
reports in a full run (the ``--select`` reproducers rely on the same). ``complete=True`` runs each
variant on every profile of its side instead, which also shows the rules a variant breaks beside
its own (``caught_by``), at several times the cost.

The proof that every check can fail (``never_flagged``) is the same in both modes, and stricter in
the default one: there, a check only counts as flagged by a variant registered to break a
requirement the check names, not by one that breaks it on the side.
"""

from __future__ import annotations

import importlib.util
import json
import multiprocessing
import os
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.config import ConfigError
from conformance.requirements import load_all
from conformance.run import RunRequest, execute, warm_run_imports
from reference_impl.faults.registry import all_faults

FORK = multiprocessing.get_context("fork")


@dataclass(frozen=True)
class VariantOutcome:
    target: str
    expected: tuple[str, ...]  # requirement IDs that must catch it (empty for the reference)
    caught_by: tuple[str, ...]  # requirement IDs with FAIL or WARN
    verdict: str
    exit_code: int
    checks: tuple[str, ...]  # every check that ran
    flagged_checks: tuple[str, ...]  # checks that ended FAIL or WARN

    @property
    def ok(self) -> bool:
        if not self.expected:
            return self.verdict == "CERTIFIED" and self.exit_code == 0
        # A broken SHOULD only warns, so a variant is caught when its requirements are flagged.
        return set(self.expected) <= set(self.caught_by)


def _child(request: RunRequest) -> None:
    """One run in a forked worker: the parent's imports are shared, the run is isolated."""
    os.environ["LAKECERT__MODEL__SHRINK"] = "false"
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        code = execute(request)
    except ConfigError:
        code = 2
    os._exit(code)  # no atexit handlers of the parent's copy


def run_target(target: str, out: Path, profiles: list[str] | None = None, **asked: Any) -> tuple[int, dict[str, Any]]:
    """Run ``target`` in a process of its own (each run builds its own target); ``asked``: more of
    ``RunRequest`` (``requirements``).

    The process is forked from this one, which has imported lakecert already: a run costs its
    checks, not an interpreter start and the imports. Generated schedules are not shrunk: the
    self-test asks which rule broke, not for the shortest reproducer."""
    request = RunRequest(target=target, out=out, profiles=profiles, **asked)
    worker = FORK.Process(target=_child, args=(request,))
    worker.start()
    worker.join()
    results = out / "results.json"
    if not results.exists():
        raise RuntimeError(f"{target}: no results (exit {worker.exitcode}) for {request}")
    return worker.exitcode or 0, json.loads(results.read_text())


def _engine_profiles(target: str) -> list[str] | None:
    """An engine variant is one format's engine (Iceberg or Delta) made faulty; the other format's
    engine stays the reference's, so its profile would only repeat the reference run. Such a
    variant runs the profiles of the rules it names only (in the complete mode; the focused mode
    narrows further, to the rules' checks). None: every profile of the target's side."""
    fault = all_faults().get(target.removeprefix("faulty:"))
    if fault is None or fault.side != "engine":
        return None
    reqs = load_all()
    return sorted({reqs[r].profile for r in fault.breaks})


def outcome(
    target: str, expected: tuple[str, ...], out: Path, complete: bool, seed: int | None = None
) -> VariantOutcome:
    """One run of the self-test (``seed``: another than the configuration's, as ``bench/seeds.py`` asks)."""
    focused = bool(expected) and not complete
    code, res = run_target(
        target,
        out / target.replace(":", "_"),
        None if focused else _engine_profiles(target),
        requirements=frozenset(expected) if focused else None,
        seed=seed,
    )
    caught = tuple(sorted(rid for rid, r in res["requirements"].items() if r["status"] in ("FAIL", "WARN")))
    checks = tuple(r["test"] for r in res["results"])
    flagged = tuple(
        r["test"] for r in res["results"] if r["status"] in ("FAIL", "WARN") and not r.get("premise_broken")
    )
    return VariantOutcome(target, expected, caught, res["verdict"], code, checks, flagged)


def _warm() -> None:
    """Import once, here, what every run imports, so that each forked run starts with it: a focused
    variant run is a few checks, and importing pytest, its plugins and hypothesis cost three times
    as much CPU as the checks (docs/benchmarks.md)."""
    warm_run_imports()


def run_selftest(out: Path, jobs: int = 0, as_json: bool = False, complete: bool = False) -> int:
    _warm()
    if not as_json and importlib.util.find_spec("pyiceberg") is None:  # its variants are not even registered
        print(
            "lakecert: the Iceberg REST catalog's variants and profile iceberg-catalog-commit are not run: "
            "this install lacks pyiceberg: pip install 'lakecert[iceberg]'",
            file=sys.stderr,
        )

    runs = [("reference", ())] + [(f"faulty:{f.name}", f.breaks) for f in all_faults().values()]
    outcomes: list[VariantOutcome] = []
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        # The reference first: it is the longest run, so the variants fill the other workers around it.
        futures = [pool.submit(outcome, name, breaks, out, complete) for name, breaks in runs]
        for done in as_completed(futures):
            outcomes.append(done.result())
            if not as_json:  # progress: one line per finished run
                o = outcomes[-1]
                print(f"[{len(outcomes)}/{len(runs)}] {'ok  ' if o.ok else 'MISS'} {o.target}", file=sys.stderr)
    outcomes.sort(key=lambda o: (bool(o.expected), o.target))
    never = never_flagged(outcomes)
    code = 0 if all(o.ok for o in outcomes) and not never else 1
    if as_json:
        print(json.dumps([{**o.__dict__, "ok": o.ok} for o in outcomes], indent=2))
        return code
    for o in outcomes:
        mark = "ok  " if o.ok else "MISS"
        what = o.verdict if not o.expected else "caught by " + (", ".join(o.caught_by) or "nothing")
        print(f"{mark} {o.target:<42} {what}")
    missed = [o.target for o in outcomes if not o.ok]
    print(f"\n{len(outcomes) - len(missed)}/{len(outcomes)} as expected" + (f"; wrong: {missed}" if missed else ""))
    if never:
        print(f"checks no variant makes fail: {never}")
    return code


def never_flagged(outcomes: list[VariantOutcome]) -> list[str]:
    """Checks of the reference run that no faulty variant makes fail: checks that cannot fail."""
    ran = {c for o in outcomes if not o.expected for c in o.checks}
    flagged = {c for o in outcomes if o.expected for c in o.flagged_checks}
    return sorted(ran - flagged)

"""results.json: per-check results, per-requirement status and the verdict (docs/results.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.report.outcomes import Outcome, worst
from conformance.requirements import Requirement

SCHEMA_VERSION = 1


@dataclass
class CheckResult:
    test: str
    requirements: list[str]
    status: Outcome
    message: str = ""
    duration_s: float = 0.0
    reproducer: str | None = None
    violated: list[str] = field(default_factory=list)  # for FAIL/WARN: the requirements actually broken
    premise_broken: bool = False  # ERROR because a set-up step the check does not judge did not hold
    observations: list[str] = field(default_factory=list)  # answers of unexpected shape lakecert accepted
    held: list[str] = field(default_factory=list)  # for FAIL/WARN at the check's end: the others, shown to hold

    @property
    def judged(self) -> list[str]:
        """The requirements this result speaks for (none when its premise was broken)."""
        if self.premise_broken:
            return []
        return self.violated if self.status in (Outcome.FAIL, Outcome.WARN) and self.violated else self.requirements

    def to_json(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "requirements": self.requirements,
            "status": self.status.value,
            "message": self.message,
            "duration_s": round(self.duration_s, 4),
            "reproducer": self.reproducer,
            "violated": self.violated,
            "premise_broken": self.premise_broken,
            "observations": self.observations,
            "held": self.held,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckResult:
        """A row as ``to_json`` wrote it (``lakecert merge`` judges the rows of several runs)."""
        return cls(
            data["test"],
            list(data["requirements"]),
            Outcome(data["status"]),
            data.get("message") or "",
            float(data.get("duration_s") or 0.0),
            data.get("reproducer"),
            list(data.get("violated") or []),
            bool(data.get("premise_broken")),
            list(data.get("observations") or []),
            list(data.get("held") or []),
        )


def requirement_outcome(req: Requirement, check_outcomes: list[Outcome]) -> Outcome:
    """A requirement's status from its checks; a broken SHOULD/MAY is a WARN, not a FAIL."""
    if not check_outcomes:
        return Outcome.UNTESTABLE if req.untestable else Outcome.NOT_RUN
    o = worst(check_outcomes)
    if o in (Outcome.FAIL, Outcome.WARN):
        return Outcome.FAIL if req.level == "MUST" else Outcome.WARN
    return o


@dataclass
class RunSummary:
    run_info: dict[str, Any]
    results: list[CheckResult]
    requirements: dict[str, Requirement]  # those of the selected profiles
    profiles: list[str]
    partial: bool = False  # only some checks were selected: never certifies
    interrupted: bool = False  # stopped by SIGINT/SIGTERM before the end: never certifies
    collected: int | None = None  # checks the run selected; fewer rows means it did not finish
    # Rules the budget ran no check of, with how to run them: not judged, and said so; the profile
    # is certified without them (its certificate lists them), never on them.
    left_out: dict[str, str] = field(default_factory=dict)
    statuses: dict[str, Outcome] = field(init=False)

    @property
    def complete(self) -> bool:
        """Every selected check has its row."""
        return self.collected is None or len(self.results) >= self.collected

    @property
    def finished(self) -> bool:
        """A run that may be certified: not interrupted, every check run, not a selection."""
        return not self.interrupted and self.complete and not self.partial

    def __post_init__(self) -> None:
        by_req: dict[str, list[Outcome]] = {rid: [] for rid in self.requirements}
        for r in self.results:
            for rid in r.judged:
                if rid in by_req:
                    by_req[rid].append(r.status)
            for rid in r.held if not r.premise_broken else []:
                if rid in by_req:
                    by_req[rid].append(Outcome.PASS)
        self.statuses = {rid: requirement_outcome(self.requirements[rid], outs) for rid, outs in by_req.items()}
        self.left_out = {r: how for r, how in self.left_out.items() if self.statuses.get(r) is Outcome.NOT_RUN}

    def left_out_of(self, profile: str) -> dict[str, str]:
        return {r: how for r, how in self.left_out.items() if self.requirements[r].profile == profile}

    def profile_verdict(self, profile: str) -> str:
        """CERTIFIED, NOT_CERTIFIED, or NOT_APPLICABLE when every check was verified not to apply."""
        reqs = [r for r in self.requirements.values() if r.profile == profile]
        statuses = {self.statuses[r.id] for r in reqs}
        if (
            self.finished
            and Outcome.NOT_APPLICABLE in statuses
            and statuses
            <= {
                Outcome.NOT_APPLICABLE,
                Outcome.UNTESTABLE,
            }
        ):
            return "NOT_APPLICABLE"
        return "CERTIFIED" if self._certifies(reqs) else "NOT_CERTIFIED"

    def _certifies(self, reqs: list[Requirement]) -> bool:
        if not self.finished or not reqs:
            return False
        statuses = [self.statuses[r.id] for r in reqs]
        if any(s in (Outcome.FAIL, Outcome.ERROR) for s in statuses):
            return False
        # A broken premise blames no rule, but the profile's rules were not all put to the test.
        ids = {r.id for r in reqs}
        if any(r.premise_broken and ids & set(r.requirements) for r in self.results):
            return False
        # Every MUST must be shown to hold (or verified not to apply); nothing passes vacuously.
        musts = [
            self.statuses[r.id] for r in reqs if r.level == "MUST" and not r.untestable and r.id not in self.left_out
        ]
        return all(s in (Outcome.PASS, Outcome.NOT_APPLICABLE) for s in musts) and Outcome.PASS in statuses

    @property
    def verdict(self) -> str:
        """CERTIFIED when every profile is, leaving out profiles that do not apply at all."""
        verdicts = [self.profile_verdict(p) for p in self.profiles]
        ok = "CERTIFIED" in verdicts and all(v in ("CERTIFIED", "NOT_APPLICABLE") for v in verdicts)
        return "CERTIFIED" if ok else "NOT_CERTIFIED"

    def counts(self) -> dict[str, int]:
        out = {o.value: 0 for o in (Outcome.PASS, Outcome.FAIL, Outcome.WARN, Outcome.NOT_APPLICABLE, Outcome.ERROR)}
        for r in self.results:
            out[r.status.value] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "run_info": {
                **self.run_info,
                "partial": self.partial,
                "interrupted": self.interrupted,
                "complete": self.complete,
                "checks_selected": self.collected,
            },
            "results": [r.to_json() for r in self.results],
            "requirements": {
                rid: {
                    "level": req.level,
                    "status": self.statuses[rid].value,
                    "profile": req.profile,
                    "binds": req.binds,
                    "section": req.section,
                    "link": req.link,
                }
                for rid, req in self.requirements.items()
            },
            "profiles": {
                p: {"verdict": self.profile_verdict(p), **({"left_out": lo} if (lo := self.left_out_of(p)) else {})}
                for p in self.profiles
            },
            "counts": self.counts(),
            "verdict": self.verdict,
        }

    def write(self, path: Path) -> dict[str, Any]:
        """Write results.json; returns what it wrote."""
        data = self.to_json()
        path.write_text(json.dumps(data, indent=2) + "\n")
        return data


def exit_code(results: dict[str, Any]) -> int:
    """0 certified (for a partial run: nothing failed), 1 any FAIL or not certified, 2 any ERROR (a
    broken premise only when nothing FAILed) or a run that did not finish (interrupted, checks missing)."""
    statuses = {r["status"] for r in results["results"]}
    info = results["run_info"]
    # A fail-fast run that stopped at a FAIL is unfinished on purpose: it says "not certified" (1).
    stopped = info.get("stopped_at_first_fail") is not None
    unfinished = info.get("interrupted") or (info.get("complete") is False and not stopped)
    errors = [r for r in results["results"] if r["status"] == Outcome.ERROR.value]
    # A broken premise says only that some rules went unjudged: beside a FAIL, which proves a
    # defect, the run says "not certified" (1); alone, "could not judge" (2). Any other ERROR is 2.
    if any(not r.get("premise_broken") for r in errors) or not results["results"] or unfinished:
        return 2
    if Outcome.FAIL.value in statuses:
        return 1
    if errors:
        return 2
    return 0 if results["verdict"] == "CERTIFIED" or results["run_info"].get("partial") else 1

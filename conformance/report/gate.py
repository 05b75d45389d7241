"""The regression gate: compare a run with a baseline of expected results (docs/gate.md).

A baseline lists the known non-passing checks of one target, each with a reason and a link
(a bug, an issue). The gate blocks on any FAIL or ERROR that is not known, reports known failures
that are fixed, and can rewrite the baseline from a run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

BLOCKING = ("FAIL", "ERROR")
NOT_PASSING = ("FAIL", "ERROR", "WARN")


class BaselineError(ValueError):
    """The baseline file is malformed."""


@dataclass
class GateReport:
    new: list[dict[str, Any]] = field(default_factory=list)  # blocking and not known
    new_warnings: list[dict[str, Any]] = field(default_factory=list)
    known: list[dict[str, Any]] = field(default_factory=list)  # still failing as recorded
    fixed: list[dict[str, Any]] = field(default_factory=list)  # known, now passing
    missing: list[str] = field(default_factory=list)  # known, but the check did not run

    @property
    def blocked(self) -> bool:
        return bool(self.new)


def load_baseline(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise BaselineError(f"cannot read baseline {path}: {e}") from e
    known = data.get("known", []) if isinstance(data, dict) else None
    if not isinstance(known, list) or not all(isinstance(k, dict) and "test" in k and "status" in k for k in known):
        raise BaselineError(f"{path}: `known` must be a list of {{test, status, reason, link}} entries")
    bad = [k["test"] for k in known if k["status"] not in NOT_PASSING]
    if bad:
        raise BaselineError(f"{path}: status must be one of {NOT_PASSING}: {bad}")
    return data


def unfit_for_gate(results: dict[str, Any], baseline: dict[str, Any] | None, *, allow_partial: bool) -> str | None:
    """Why this run cannot be judged against (or recorded as) a baseline, or None.

    A run that did not run every check of its profiles says nothing about the checks it left out:
    opening the gate on it would let any regression through."""
    if allow_partial:
        return None
    info = results["run_info"]
    if info.get("interrupted"):
        return "the run was interrupted (rerun it to the end, or pass --allow-partial)"
    if info.get("partial"):
        return "the run selected only some checks (--select); pass --allow-partial to judge it anyway"
    if info.get("complete") is False:
        return "the run did not report every check it selected (rerun it, or pass --allow-partial)"
    if baseline is not None:
        for key, ran in (
            ("profiles", sorted(info.get("profiles", []))),
            ("requirements", sorted(results["requirements"])),
        ):
            recorded = baseline.get(key)
            if recorded is not None and sorted(recorded) != ran:
                return f"the run's {key} differ from the baseline's (pass --allow-partial, or --update the baseline)"
    return None


def compare(results: dict[str, Any], baseline: dict[str, Any]) -> GateReport:
    known = {k["test"]: k for k in baseline.get("known", [])}
    report = GateReport()
    ran = {r["test"]: r for r in results["results"]}
    for test, r in ran.items():
        entry = known.get(test)
        if r["status"] in BLOCKING and (entry is None or entry["status"] != r["status"]):
            report.new.append(r)
        elif r["status"] == "WARN" and entry is None:
            report.new_warnings.append(r)
        elif entry is not None and r["status"] in NOT_PASSING:
            report.known.append({**entry, "message": r["message"]})
        elif entry is not None:
            report.fixed.append(entry)
    if not results["run_info"].get("partial"):
        report.missing = sorted(set(known) - set(ran))
    return report


def updated_baseline(results: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    """A baseline that accepts the run as it is, keeping reasons and links already written."""
    previous = {k["test"]: k for k in (old or {}).get("known", [])}
    stamp = time.strftime("%Y-%m-%d")
    known = []
    for r in results["results"]:
        if r["status"] not in NOT_PASSING:
            continue
        prev = previous.get(r["test"], {})
        known.append(
            {
                "test": r["test"],
                "status": r["status"],
                "requirements": r["requirements"],
                "reason": prev.get("reason") or f"recorded by `lakecert gate --update` on {stamp}; explain",
                "link": prev.get("link", ""),
            }
        )
    return {
        "target": results["run_info"]["target"],
        "profiles": sorted(results["run_info"].get("profiles", [])),
        "requirements": sorted(results["requirements"]),
        "known": known,
    }


def render(report: GateReport) -> str:
    lines = []
    for title, rows in (("NEW failures (blocking)", report.new), ("new warnings", report.new_warnings)):
        lines += [f"{title}: {len(rows)}"] + [f"  {r['status']:<5} {r['test']}  {r['message'][:120]}" for r in rows]
    lines.append(f"known failures still failing: {len(report.known)}")
    lines += [f"fixed (remove from the baseline): {len(report.fixed)}"] + [f"  {k['test']}" for k in report.fixed]
    if report.missing:
        lines += [f"known but not run: {len(report.missing)}"] + [f"  {t}" for t in report.missing]
    lines.append("gate: " + ("BLOCKED" if report.blocked else "OPEN"))
    return "\n".join(lines)

"""The regression gate: compare a run with a baseline of expected results (docs/gate.md).

A baseline lists the known non-passing checks of one target, each with a reason and a link
(a bug, an issue). The gate blocks on any FAIL or ERROR that is not known, reports known failures
that are fixed, and can rewrite the baseline from a run.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

BLOCKING = ("FAIL", "ERROR")
NOT_PASSING = ("FAIL", "ERROR", "WARN")
# The gate's output goes to CI logs: every line of a check's block is indented under its check, and
# a long message is cut (the reproducer keeps all of it).
INDENT = " " * 8
MAX_MESSAGE_LINES = 12
# How many differing rule IDs a refusal names before it only counts the rest.
MAX_NAMED = 8


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
        # run_info does not say which option selected the checks: name both, and what ran.
        count = len(results.get("results", []))
        return (
            f"the run is a selection of checks (--select or --requirement; {count} ran), and the checks it left out "
            "would pass the gate unseen; run the profiles whole, or pass --allow-partial to judge it anyway"
        )
    if info.get("complete") is False:
        return "the run did not report every check it selected (rerun it, or pass --allow-partial)"
    if baseline is not None:
        recorded_options = baseline.get("target_options")
        options = {k: v for k, v in (info.get("target_options") or {}).items() if k != "version"}
        if recorded_options is not None and recorded_options != options:
            return (
                f"the run's target options {options} differ from the baseline's {recorded_options} "
                "(another release is the `version` option; for two releases use `lakecert diff`)"
            )
        for key, ran in (
            ("profiles", sorted(info.get("profiles", []))),
            ("requirements", sorted(results["requirements"])),
        ):
            recorded = baseline.get(key)
            if recorded is not None and sorted(recorded) != ran:
                return (
                    f"the run's {key} differ from the baseline's: {_difference(ran, sorted(recorded))} "
                    "(run the baseline's profiles, --update the baseline, or pass --allow-partial)"
                )
    return None


def _difference(ran: list[str], recorded: list[str]) -> str:
    """ "only in the run: a, b; only in the baseline: c", naming at most ``MAX_NAMED`` of each."""

    def named(items: list[str]) -> str:
        shown = ", ".join(items[:MAX_NAMED])
        return shown + (f" and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else "")

    extra, lacking = [x for x in ran if x not in recorded], [x for x in recorded if x not in ran]
    parts = [f"only in the run: {named(extra)}"] if extra else []
    parts += [f"only in the baseline: {named(lacking)}"] if lacking else []
    return "; ".join(parts) or f"run {ran}, baseline {recorded}"


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
    info = results["run_info"]
    return {
        "target": info["target"],
        # What the baseline was recorded on: the release (observed) and the options that shape the
        # run other than the release itself, which the gate refuses to mix silently.
        "target_versions": info.get("target_versions") or {},
        "target_options": {k: v for k, v in (info.get("target_options") or {}).items() if k != "version"},
        "profiles": sorted(info.get("profiles", [])),
        "requirements": sorted(results["requirements"]),
        "known": known,
    }


def _reproducer(out: Path | None, rel: str | None) -> dict[str, Any]:
    if out is None or not rel:
        return {}
    try:
        data = json.loads((out / rel).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _check_lines(row: dict[str, Any], out: Path | None) -> list[str]:
    """One check that did not pass, as a block under its status and id: its rules, why (every line
    of the message indented, never at column 0), the reproducer, the HTTP replay script of a network
    check and the command that reruns it."""
    lines = [f"  {row['status']:<5} {row['test']}"]
    rules = row.get("violated") or row.get("requirements") or []
    if rules:
        lines.append(f"{INDENT}rules:      {', '.join(rules)}")
    message = (row.get("message") or "").strip().splitlines() or ["(no message)"]
    lines.append(f"{INDENT}why:        {message[0]}")
    lines += [f"{INDENT}            {m}" for m in message[1:MAX_MESSAGE_LINES]]
    if len(message) > MAX_MESSAGE_LINES:
        lines.append(f"{INDENT}            ... {len(message) - MAX_MESSAGE_LINES} more lines in the reproducer")
    rel = row.get("reproducer")
    if rel:
        lines.append(f"{INDENT}reproducer: {out / rel if out is not None else rel}")
    repro = _reproducer(out, rel)
    replay = (repro.get("http") or {}).get("replay") if isinstance(repro.get("http"), dict) else None
    if replay and out is not None and rel:
        lines.append(f"{INDENT}http:       bash {(out / rel).parent / replay}")
    if repro.get("rerun"):
        needs = repro.get("rerun_secrets") or []
        first = f" (set {', '.join('$' + n for n in needs)} first)" if needs else ""
        lines.append(f"{INDENT}rerun{first}: {repro['rerun']}")
    return lines


def render(report: GateReport, out: Path | None = None) -> str:
    """The gate's verdict for a CI log. ``out``: the run's folder, where the reproducers are."""
    lines = [f"NEW failures (blocking): {len(report.new)}"]
    for r in report.new:
        lines += _check_lines(r, out)
    lines.append(f"new warnings: {len(report.new_warnings)}")
    for r in report.new_warnings:
        lines += _check_lines(r, out)
    lines.append(f"known failures still failing: {len(report.known)}")
    for k in report.known:  # listed, so a log shows what the baseline excuses, and why
        lines.append(f"  {k['status']:<5} {k['test']}")
        lines.append(f"{INDENT}reason:     {k.get('reason') or '(none given)'}")
        now = (k.get("message") or "").strip().splitlines()
        if now:
            lines.append(f"{INDENT}why now:    {now[0]}")
        if k.get("link"):
            lines.append(f"{INDENT}link:       {k['link']}")
    lines += [f"fixed (remove from the baseline): {len(report.fixed)}"] + [f"  {k['test']}" for k in report.fixed]
    if report.missing:
        lines += [f"known but not run: {len(report.missing)}"] + [f"  {t}" for t in report.missing]
    lines.append("gate: " + ("BLOCKED" if report.blocked else "OPEN"))
    return "\n".join(lines)

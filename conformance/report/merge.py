"""The parts of a split run (``lakecert run --shard K/N``, ``conformance/plugin/split.py``) judged as
one run: one results.json, certificate, JUnit file and Allure results (``lakecert merge``).

A part is a partial run of its own and never certifies. The merge takes every part exactly once, of
one split (the same plan digest) of one run (the same target, options, observed versions, seed,
profiles, settings and lakecert version), or refuses with one line (``MergeRefused``): a missing
part would leave checks unjudged, a part twice would count checks twice, and a foreign part would
judge another product or another run's checks. The merged rows are judged by ``RunSummary`` as a
run in one process would be: not partial (unless the whole plan was a ``--requirement``
selection), interrupted or incomplete when any part was.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.report.allure_meta import write_run_metadata
from conformance.report.certificate import write_certificate
from conformance.report.junit import write_junit
from conformance.report.results import CheckResult, RunSummary
from conformance.requirements import profiles as profile_rules

# What makes two parts parts of one run: run_info fields that must be equal.
SAME_RUN = (
    "target",
    "label",
    "target_kind",
    "target_version",
    "target_versions",
    "target_options",
    "catalog_target",
    "catalog_target_version",
    "catalog_target_versions",
    "profiles",
    "seed",
    "suite_version",
    "spec_revisions",
)
# Settings that may differ between the machines of one run: how many local processes, where the
# caches are, the label (compared as run_info's), other targets' options and the asked profiles
# (the run's own are compared above); every other setting shapes what the checks ask.
MACHINE_SETTINGS = ("paths", "label", "targets", "profiles")
# Allure files of the run as a whole: written again for the merged run, not copied from a part.
RUN_FILES = ("environment.properties", "executor.json", "categories.json")


class MergeRefused(ValueError):
    """The folders are not every part, once, of one split run; the message says why, in one line."""


@dataclass
class Part:
    folder: Path
    results: dict[str, Any]

    @property
    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = self.results["run_info"]
        return info

    @property
    def shard(self) -> dict[str, Any]:
        shard: dict[str, Any] = self.info["shard"]
        return shard

    def settings(self) -> dict[str, Any]:
        return {k: v for k, v in (self.info.get("config") or {}).items() if k not in MACHINE_SETTINGS}


def load_part(folder: Path) -> Part:
    path = folder / "results.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise MergeRefused(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    if not isinstance(data, dict) or not {"run_info", "results", "requirements"} <= data.keys():
        raise MergeRefused(f"{path} is not a lakecert results.json")
    if not isinstance(data["run_info"].get("shard"), dict):
        raise MergeRefused(f"{folder} is not a part of a split run (it was not run with --shard K/N)")
    return Part(folder, data)


def check_parts(parts: list[Part]) -> list[Part]:
    """The parts in order 1..N, or ``MergeRefused`` naming the first problem."""
    if not parts:
        raise MergeRefused("no parts to merge")
    first = parts[0]
    for part in parts[1:]:
        for key in SAME_RUN:
            if part.info.get(key) != first.info.get(key):
                raise MergeRefused(
                    f"{part.folder} is foreign: its {key} {part.info.get(key)!r} differs from "
                    f"{first.info.get(key)!r} of {first.folder}"
                )
        if part.settings() != first.settings():
            mine, theirs = part.settings(), first.settings()
            changed = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
            raise MergeRefused(f"{part.folder} is foreign: its settings {changed} differ from those of {first.folder}")
        for key in ("count", "plan_digest", "selection"):
            if part.shard.get(key) != first.shard.get(key):
                raise MergeRefused(
                    f"{part.folder} is foreign: another split ({key} {part.shard.get(key)!r}, not "
                    f"{first.shard.get(key)!r} as in {first.folder}; give every part the same N and --shard-costs)"
                )
    count = int(first.shard["count"])
    by_index: dict[int, Part] = {}
    for part in parts:
        index = int(part.shard["index"])
        if index in by_index:
            raise MergeRefused(f"part {index}/{count} is given twice: {by_index[index].folder} and {part.folder}")
        by_index[index] = part
    missing = [k for k in range(1, count + 1) if k not in by_index]
    if missing:
        raise MergeRefused(
            f"part(s) {', '.join(f'{k}/{count}' for k in missing)} missing: a partial set of parts is never merged"
        )
    ordered = [by_index[k] for k in range(1, count + 1)]
    plan = first.shard["plan"]
    for part in ordered:  # a part's rows are its own checks of the plan, none other
        own = {c for c, k in zip(plan, first.shard["parts"], strict=True) if k == part.shard["index"]}
        strays = [r["test"] for r in part.results["results"] if r["test"] not in own]
        if strays:
            raise MergeRefused(f"{part.folder} holds checks of no part {part.shard['index']}/{count}: {strays[0]}")
    return ordered


def _held(parts: list[Part]) -> dict[str, dict[str, object]]:
    """The explorer's counts per format: asks and engine runs of every part add up."""
    total: dict[str, dict[str, object]] = {}
    for part in parts:
        for fmt, counts in (part.info.get("held_schedules") or {}).items():
            mine = total.setdefault(fmt, {**counts, "asked": 0, "engine_runs": 0})
            for key in ("asked", "engine_runs"):
                mine[key] = int(str(mine[key])) + int(str(counts[key]))
    return total


def merged_summary(parts: list[Part]) -> RunSummary:
    """The parts (checked, in order) as one run."""
    first = parts[0]
    plan: list[str] = first.shard["plan"]
    place = {c: i for i, c in enumerate(plan)}
    rows = sorted(
        (CheckResult.from_json(r) for p in parts for r in p.results["results"]),
        key=lambda r: place.get(r.test, len(place)),
    )
    done = ("partial", "interrupted", "complete", "checks_selected", "shard")  # RunSummary writes its own
    info = {k: v for k, v in first.info.items() if k not in done}
    profiles: list[str] = list(first.info["profiles"])
    left_out: dict[str, str] = {}
    not_installed: dict[str, str] = {}
    for part in parts:
        for p in part.results["profiles"].values():
            left_out.update(p.get("left_out") or {})
        not_installed.update(part.info.get("profiles_not_installed") or {})
    info |= {
        "started": min(p.info["started"] for p in parts),
        "duration_s": max(float(p.info["duration_s"]) for p in parts),  # the parts ran side by side
        "held_schedules": _held(parts),
        "profiles_not_installed": not_installed,
        "stopped_at_first_fail": next(
            (p.info["stopped_at_first_fail"] for p in parts if p.info.get("stopped_at_first_fail")), None
        ),
        "shards": {
            "count": len(parts),
            "plan_digest": first.shard["plan_digest"],
            "costs": first.shard.get("costs"),
            "parts": [
                {
                    "index": p.shard["index"],
                    "folder": str(p.folder),
                    "checks": p.shard["checks"],
                    "expected_s": p.shard["expected_s"][int(p.shard["index"]) - 1],
                    "duration_s": p.info["duration_s"],
                    "started": p.info["started"],
                    "warehouse": p.info.get("warehouse"),
                    "platform": p.info.get("platform"),
                }
                for p in parts
            ],
        },
    }
    reqs = {r.id: r for p in profiles for r in profile_rules().get(p, [])}
    return RunSummary(
        info,
        rows,
        reqs,
        profiles,
        partial=bool(first.shard.get("selection")),
        interrupted=any(p.info.get("interrupted") for p in parts),
        collected=int(first.shard["plan_checks"]),
        left_out=left_out,
    )


def write_merged(parts: list[Part], out: Path) -> dict[str, Any]:
    """The checked parts (``check_parts``) written as one run into ``out``: results.json, junit.xml,
    the certificate (a finished run only), the parts' Allure results and reproducers. Returns what
    results.json holds."""
    summary = merged_summary(parts)
    out.mkdir(parents=True, exist_ok=True)
    allure = out / "allure-results"
    for part in parts:
        source = part.folder / "allure-results"
        if source.is_dir():  # every file is named by a uuid of its own: the parts' never collide
            allure.mkdir(exist_ok=True)
            for f in source.iterdir():
                if f.is_file() and f.name not in RUN_FILES:
                    shutil.copy2(f, allure / f.name)
        if (part.folder / "reproducers").is_dir():  # rows name them relative to the run folder
            shutil.copytree(part.folder / "reproducers", out / "reproducers", dirs_exist_ok=True)
    results_path = out / "results.json"
    data = summary.write(results_path)
    write_junit(data, out / "junit.xml")
    if summary.finished:
        write_certificate(results_path, out / "certificate.json")
    else:
        (out / "certificate.json").unlink(missing_ok=True)
    if allure.is_dir():
        write_run_metadata(allure, data)
    return data

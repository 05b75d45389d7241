"""Two runs of one target, compared check by check: what changed between two releases under test.

A client project gating a release runs lakecert on the release it ships and on the candidate, then
asks which checks and rules changed. Every change of status counts, PASS <-> NOT_APPLICABLE and
changes to or from ERROR included: a check that stops applying is as telling as one that fails.
Runs of different targets, profiles, seeds or target options (other than the ``version`` being
compared) are refused: their checks are not the same questions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Where a status sits, for "better" and "worse": a PASS lost is a regression, whatever replaced it.
_RANK = {"PASS": 3, "WARN": 2, "NOT_APPLICABLE": 1, "FAIL": 0, "ERROR": 0}
COMPARED_OPTION = "version"


class Incomparable(ValueError):
    """The two runs do not ask the same questions (exit 2, one line)."""


@dataclass
class Change:
    test: str
    before: str | None  # None: the check did not run in the first run
    after: str | None
    requirements: list[str]
    message: str = ""

    @property
    def regression(self) -> bool:
        """A check that passed (or was judged at all) and now is judged worse, or no longer runs."""
        if self.before is None:
            return False
        if self.after is None:
            return True
        return _RANK[self.after] < _RANK[self.before]


@dataclass
class VersionDiff:
    before: dict[str, Any]  # run_info of each run
    after: dict[str, Any]
    changes: list[Change] = field(default_factory=list)
    rules: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # rule -> (before, after)
    unchanged: int = 0

    @property
    def regressed(self) -> bool:
        return any(c.regression for c in self.changes)


def _options(info: dict[str, Any]) -> dict[str, Any]:
    options = dict(info.get("target_options") or {})
    options.pop(COMPARED_OPTION, None)
    return options


def comparable(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Nothing when the runs ask the same questions; else ``Incomparable`` naming the difference."""
    a, b = before["run_info"], after["run_info"]
    for key in ("target", "catalog_target", "seed"):
        if a.get(key) != b.get(key):
            raise Incomparable(f"the runs differ in {key}: {a.get(key)!r} and {b.get(key)!r}")
    if sorted(a.get("profiles", [])) != sorted(b.get("profiles", [])):
        raise Incomparable(f"the runs differ in profiles: {a.get('profiles')} and {b.get('profiles')}")
    if _options(a) != _options(b):
        raise Incomparable(
            f"the runs differ in target options other than {COMPARED_OPTION!r}: {_options(a)} and {_options(b)}"
        )
    for run, info in (("first", a), ("second", b)):
        if info.get("interrupted") or info.get("complete") is False:
            raise Incomparable(f"the {run} run did not finish: it did not ask every question it chose")
    if a.get("partial") != b.get("partial"):
        raise Incomparable("one run is a selection of checks (--select, --requirement) and the other is not")
    tests_a, tests_b = ({r["test"] for r in x["results"]} for x in (before, after))
    if a.get("partial") and tests_a != tests_b:  # two selections compare only when they are the same
        raise Incomparable(f"the runs selected other checks ({len(tests_a ^ tests_b)} differ)")


def diff(before: dict[str, Any], after: dict[str, Any]) -> VersionDiff:
    comparable(before, after)
    old = {r["test"]: r for r in before["results"]}
    new = {r["test"]: r for r in after["results"]}
    out = VersionDiff(before["run_info"], after["run_info"])
    for test in sorted(set(old) | set(new)):
        o, n = old.get(test), new.get(test)
        s_old, s_new = (o or {}).get("status"), (n or {}).get("status")
        if s_old == s_new:
            out.unchanged += 1
            continue
        reqs = (n or o or {}).get("requirements", [])
        out.changes.append(Change(test, s_old, s_new, list(reqs), str((n or {}).get("message") or "")))
    for rule in sorted(set(before["requirements"]) | set(after["requirements"])):
        r_old = before["requirements"].get(rule, {}).get("status")
        r_new = after["requirements"].get(rule, {}).get("status")
        if r_old != r_new:
            out.rules[rule] = (r_old, r_new)
    return out


def _versions(info: dict[str, Any]) -> str:
    seen = info.get("target_versions") or {}
    return ", ".join(f"{k} {v}" for k, v in seen.items()) or str(info.get("target_version"))


def render(d: VersionDiff) -> str:
    lines = [
        f"target {d.before['target']}: {_versions(d.before)}  ->  {_versions(d.after)}",
        f"checks changed: {len(d.changes)}, unchanged: {d.unchanged}",
    ]
    for c in d.changes:
        mark = "worse" if c.regression else "     "
        lines.append(f"  {mark} {c.before or 'absent':<14} -> {c.after or 'absent':<14} {c.test}")
        lines.append(f"        rules: {', '.join(c.requirements) or '-'}")
    lines.append(f"rules changed: {len(d.rules)}")
    lines += [f"  {rule}: {a or 'absent'} -> {b or 'absent'}" for rule, (a, b) in d.rules.items()]
    lines.append(
        "diff: " + ("REGRESSED (a check judged before is judged worse now)" if d.regressed else "no regression")
    )
    return "\n".join(lines)


def as_json(d: VersionDiff) -> dict[str, Any]:
    return {
        "target": d.before["target"],
        "before": {"versions": d.before.get("target_versions"), "version": d.before.get("target_version")},
        "after": {"versions": d.after.get("target_versions"), "version": d.after.get("target_version")},
        "changes": [
            {
                "test": c.test,
                "before": c.before,
                "after": c.after,
                "requirements": c.requirements,
                "regression": c.regression,
            }
            for c in d.changes
        ],  # fmt: skip
        "rules": {rule: {"before": a, "after": b} for rule, (a, b) in d.rules.items()},
        "regressed": d.regressed,
    }

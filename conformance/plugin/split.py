"""One run's plan split into N parts, each run on a machine of its own (``lakecert run --shard K/N``)
and merged into one verdict by ``lakecert merge`` (``conformance/report/merge.py``).

Not to be confused with ``shards``, which shares one run's checks among processes of one machine as
they become free: here every machine must agree beforehand, without talking to the others, on which
checks are its own. So the split is a pure function of the whole plan (the checks left once the
profiles' selection and the budget's deselection are done, in the plan's order) and of the checks'
costs: greedy bin packing, the costliest check first into the part with the least cost so far, ties
broken by node id and then by the lowest part. The same configuration, seed, N and costs give the
same parts on every machine; the ``digest`` of the plan and its split, recorded in each part's
results.json, lets the merge refuse parts of different splits.

Checks are the unit: an explorer check (one per table configuration) is not cut into its schedules.
Cutting inside it would need the runner to judge a check from runs of other machines. With a model
plan, a class of equivalent schedules needed by checks of two parts is run once in each part (the
first member that part needs), not once in the whole run: more engine runs in all, the same
verdicts wherever the model's claim of equivalence holds (what the model plan already relies on).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conformance.checks.explorer.collection import planned_of
from conformance.config import ConfigError
from conformance.run_context import RunContext

# The estimate of a check's cost when no earlier run recorded it, in seconds, fitted to the
# reference's default run on a 2-core machine (418 checks: 22.1 s estimated, 22.4 s recorded): a
# plain check; each held schedule of an explorer check; a check drawing with hypothesis. Only the
# ratios matter when nothing is recorded; with an earlier run's costs, the estimates of the checks
# it lacks are scaled to its figures. A real engine's schedules cost far more than the reference's:
# give its deep budgets an earlier run's costs (docs/benchmarks.md, session 11).
PLAIN_S = 0.03
SCHEDULE_S = 0.001
GENERATED_S = 1.0
# Costs are packed as whole microseconds: integer sums are the same on every machine.
UNIT = 1_000_000


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N``: part K (from 1) of N."""
    k, sep, n = text.partition("/")
    try:
        index, count = int(k), int(n)
    except ValueError:
        index = count = 0
    if not sep or count < 1 or not 1 <= index <= count:
        raise ValueError(f"not a part K/N with 1 <= K <= N: {text!r}")
    return index, count


def load_costs(path: Path) -> dict[str, float]:
    """Each check's ``duration_s`` in an earlier run's results.json (a whole run or a merged one)."""
    try:
        data = json.loads(path.read_text())
        rows = data["results"]
        costs = {str(r["test"]): float(r["duration_s"]) for r in rows}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"--shard-costs {path}: not a lakecert results.json with check durations ({e})") from None
    return costs


def estimate(item: pytest.Item) -> float:
    """What a check is expected to cost when no earlier run says: by its kind."""
    planned = planned_of(item)
    if planned is not None:
        return PLAIN_S + SCHEDULE_S * len(planned.scenario.schedules_on(planned.setup))
    # A check that draws its steps with hypothesis (a state machine run inside it, not ``@given``,
    # so only its module tells) runs many examples.
    module = getattr(item, "module", None)
    draws = (
        any(getattr(v, "__module__", "").startswith("hypothesis") for v in vars(module).values()) if module else False
    )
    return PLAIN_S + (GENERATED_S if draws else 0.0)


def costs_of(estimates: Mapping[str, float], recorded: Mapping[str, float] | None) -> dict[str, int]:
    """Each check's cost in microseconds: recorded where an earlier run has it, else its estimate
    scaled by how the recorded checks' estimates compare with what they cost."""
    scale = 1.0
    if recorded:
        known = [c for c in estimates if c in recorded]
        guessed = sum(estimates[c] for c in known)
        if known and guessed > 0:
            scale = sum(recorded[c] for c in known) / guessed
    out = {}
    for check, guess in estimates.items():
        seconds = recorded[check] if recorded and check in recorded else guess * scale
        out[check] = max(1, round(seconds * UNIT))  # a check that cost nothing still counts
    return out


def assign(costs: Mapping[str, int], count: int) -> dict[str, int]:
    """Each check's part (1..count): the costliest first, each into the part with the least cost so
    far (the lowest part on a tie); checks of equal cost in node id order."""
    loads = [0] * count
    parts = {}
    for check in sorted(costs, key=lambda c: (-costs[c], c)):
        k = min(range(count), key=lambda j: (loads[j], j))
        loads[k] += costs[check]
        parts[check] = k + 1
    return parts


def digest(plan: list[str], parts: Mapping[str, int], count: int) -> str:
    """The plan and its split, as one hash: parts of one split share it."""
    text = json.dumps({"count": count, "parts": sorted((c, parts[c]) for c in plan)}, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(eq=False)  # a plugin object: compared (and hashed) by identity, as pluggy expects
class Split:
    """This run's part of the split (a pytest plugin): it deselects the other parts' checks."""

    index: int
    count: int
    recorded: dict[str, float] | None = None  # ``--shard-costs``
    costs_from: str | None = None  # the file they came from
    selection: bool = False  # the whole plan is itself a selection (``--requirement``): the merge is partial
    loads: list[float] = field(default_factory=list)  # each part's cost, in seconds

    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> Generator[None, None, None]:
        # Around every other implementation: the profiles' selection and the budget's deselection
        # (the conftests) make the whole plan first, and order it, the same on every machine.
        yield
        plan = [item.nodeid for item in items]
        costs = costs_of({item.nodeid: estimate(item) for item in items}, self.recorded)
        parts = assign(costs, self.count)
        self.loads = [sum(costs[c] for c in plan if parts[c] == k) / UNIT for k in range(1, self.count + 1)]
        keep = [item for item in items if parts[item.nodeid] == self.index]
        drop = [item for item in items if parts[item.nodeid] != self.index]
        _narrow_plans(config, items, {item.nodeid for item in keep})
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep
        RunContext.of(config).shard = {
            "index": self.index,
            "count": self.count,
            "seed": RunContext.of(config).config.seed,
            "plan_digest": digest(plan, parts, self.count),
            "plan_checks": len(plan),
            "checks": len(keep),
            "selection": self.selection,
            "costs": self.costs_from or "estimated",
            "expected_s": [round(x, 3) for x in self.loads],
            # The whole plan in its order and each check's part: the merge orders the rows by it
            # and checks every part against it.
            "plan": plan,
            "parts": [parts[c] for c in plan],
        }


def _narrow_plans(config: pytest.Config, whole: list[pytest.Item], kept: set[str]) -> None:
    """A model plan (a format's conftest: ``PLAN_KEY``, ``WHERE``) starts the engine runs of its
    checks ahead; it was made for the whole plan, so it is cut to this part's checks. The planned
    list follows the format's checks that have a plan entry, in the run's order (``order``)."""
    # ``list_name_plugin``: ``get_plugins`` builds a set, and the run's plugin objects (dataclasses)
    # are not hashable.
    for _, plugin in config.pluginmanager.list_name_plugin():
        key, where = getattr(plugin, "PLAN_KEY", None), getattr(plugin, "WHERE", None)
        if not isinstance(key, pytest.StashKey) or not isinstance(where, str):
            continue
        stashed: Any = config.stash.get(key, None)
        if stashed is None:
            continue
        plan, planned = stashed
        ours = [item for item in whole if where in item.nodeid and planned_of(item) is not None]
        if len(ours) != len(planned):  # the conftest's order changed shape: a lakecert bug, said at once
            raise pytest.UsageError(f"the model plan of {where} does not match its checks ({len(planned)} planned)")
        config.stash[key] = (plan, [p for item, p in zip(ours, planned, strict=True) if item.nodeid in kept])

"""A run split into parts (``lakecert run --shard K/N``, conformance/plugin/split.py) and merged
(``lakecert merge``, conformance/report/merge.py) judges what the whole run judges, check by check;
a set of parts with one missing, one twice or one of another run is refused and certifies nothing."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conformance.plugin.split import assign, costs_of, digest, parse_shard
from tests.helpers import QUICK_BUDGET, lakecert, results

pytestmark = pytest.mark.slow  # minutes: started first (tests/conftest.py)

REFERENCE = ("reference", "delta-cm-catalog,delta-row-conflicts")
FAULTY = ("faulty:ratify-twice", "delta-cm-catalog,delta-cm-interop")


def _run(out: Path, target: str, profiles: str, *extra: str) -> subprocess.CompletedProcess[str]:
    proc = lakecert("run", "--target", target, "--profile", profiles, "--out", str(out), *extra, env=QUICK_BUDGET)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc


def _split(root: Path, target: str, profiles: str, count: int, *extra: str) -> list[Path]:
    folders = [root / f"part-{k}" for k in range(1, count + 1)]
    for k, folder in enumerate(folders, 1):
        _run(folder, target, profiles, "--shard", f"{k}/{count}", *extra)
    return folders


def _checks(res: dict[str, Any]) -> dict[str, tuple[str, tuple[str, ...], bool]]:
    return {r["test"]: (r["status"], tuple(r["violated"]), r["premise_broken"]) for r in res["results"]}


@pytest.fixture(scope="module")
def reference_parts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _split(tmp_path_factory.mktemp("reference-parts"), *REFERENCE, 3)


@pytest.mark.parametrize("which", ["reference", "faulty"])
def test_merged_parts_judge_what_the_whole_run_judges(which: str, reference_parts: list[Path], tmp_path: Path) -> None:
    target, profiles = REFERENCE if which == "reference" else FAULTY
    whole = _run(tmp_path / "whole", target, profiles)
    parts = reference_parts if which == "reference" else _split(tmp_path, target, profiles, 3)
    for part in parts:  # each part is a partial run: judged, never certified
        res = results(part)
        assert res["run_info"]["partial"] and res["run_info"]["complete"]
        assert not (part / "certificate.json").exists()
    merged = lakecert("merge", *map(str, parts), "--out", str(tmp_path / "merged"), "--no-allure")
    assert merged.returncode == whole.returncode, merged.stdout[-2000:] + merged.stderr[-2000:]
    one, many = results(tmp_path / "whole"), results(tmp_path / "merged")
    assert _checks(many) == _checks(one)  # every check, its status, broken rules and premise
    assert [r["test"] for r in many["results"]] == [r["test"] for r in one["results"]]  # in the plan's order
    assert {k: v["status"] for k, v in many["requirements"].items()} == {
        k: v["status"] for k, v in one["requirements"].items()
    }
    assert many["profiles"] == one["profiles"] and many["verdict"] == one["verdict"]
    info = many["run_info"]
    assert not info["partial"] and info["complete"] and info["checks_selected"] == len(one["results"])
    assert info["target_versions"] == one["run_info"]["target_versions"]
    assert info["target_options"] == one["run_info"]["target_options"]
    assert [p["index"] for p in info["shards"]["parts"]] == [1, 2, 3]
    for row in many["results"]:  # each failure's reproducer came along from its part
        if row["status"] != "PASS":
            assert (tmp_path / "merged" / row["reproducer"]).is_file(), row["test"]
    assert len(list((tmp_path / "merged" / "allure-results").glob("*-result.json"))) == len(many["results"])
    if which == "reference":
        assert many["verdict"] == "CERTIFIED"
        cert = tmp_path / "merged" / "certificate.json"
        assert lakecert("verify-certificate", str(cert)).returncode == 0
        # The gate judges the merged run as any whole run, and refuses a part on its own.
        baseline = tmp_path / "baseline.yaml"
        assert lakecert("gate", str(tmp_path / "merged"), "--baseline", str(baseline), "--update").returncode == 0
        assert lakecert("gate", str(tmp_path / "merged"), "--baseline", str(baseline)).returncode == 0
        assert lakecert("gate", str(parts[0]), "--baseline", str(baseline)).returncode == 2
    else:
        assert many["verdict"] == "NOT_CERTIFIED" and any(r["status"] == "FAIL" for r in many["results"])


def _refused(parts: list[Path], out: Path, why: str) -> None:
    proc = lakecert("merge", *map(str, parts), "--out", str(out), "--no-allure")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lakecert: merge refused: ") and why in lines[0], lines
    assert not (out / "certificate.json").exists() and not (out / "results.json").exists()


def test_a_missing_duplicated_or_foreign_part_is_refused(reference_parts: list[Path], tmp_path: Path) -> None:
    first, second, third = reference_parts
    _refused([first, second], tmp_path / "m1", "part(s) 3/3 missing")
    _refused([first, second, second], tmp_path / "m2", "part 2/3 is given twice")
    other_seed = tmp_path / "seed"
    _run(other_seed, *REFERENCE, "--shard", "3/3", "--seed", "7")
    _refused([first, second, other_seed], tmp_path / "m3", "is foreign: its seed 7 differs")
    # Another split of the same run (other costs, so other parts): its third part is not this one's.
    costs = tmp_path / "costs.json"
    rows = [{"test": r["test"], "duration_s": 1.0} for r in results(third)["results"]]
    costs.write_text(json.dumps({"results": rows}))
    resplit = tmp_path / "resplit"
    _run(resplit, *REFERENCE, "--shard", "3/3", "--shard-costs", str(costs))
    _refused([first, second, resplit], tmp_path / "m4", "another split (plan_digest")
    _refused([first, second, tmp_path / "nothing"], tmp_path / "m5", "cannot read")
    # A folder of a whole run is no part; an earlier merge into the same --out is not left standing.
    whole = tmp_path / "whole"
    _run(whole, *REFERENCE)
    _refused([first, second, whole], tmp_path / "m6", "is not a part of a split run")


def test_usage_errors_write_nothing(tmp_path: Path) -> None:
    for args in (("--shard", "0/3"), ("--shard", "4/3"), ("--shard", "1-3"), ("--shard-costs", "x.json")):
        proc = lakecert("run", *args, "--out", str(tmp_path / "out"))
        assert proc.returncode == 2 and not (tmp_path / "out").exists(), args
    proc = lakecert("run", "--shard", "1/2", "--select", "checks/delta/catalog", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "--select" in proc.stderr and not (tmp_path / "out").exists()


def test_the_split_is_a_function_of_the_plan_and_costs() -> None:
    rng = random.Random(11)
    estimates = {f"checks/m{i % 7}.py::test_{i}": rng.choice([0.03, 0.03, 0.2, 1.0, 2.5]) for i in range(300)}
    plan = list(estimates)
    parts = assign(costs_of(estimates, None), 4)
    shuffled = dict(rng.sample(sorted(estimates.items()), len(estimates)))  # another collection order
    assert assign(costs_of(shuffled, None), 4) == parts  # the same parts whatever the order
    assert digest(plan, parts, 4) == digest(list(shuffled), assign(costs_of(shuffled, None), 4), 4)
    assert set(parts) == set(plan) and set(parts.values()) == {1, 2, 3, 4}  # every check in one part
    loads = [sum(estimates[c] for c in plan if parts[c] == k) for k in range(1, 5)]
    assert max(loads) - min(loads) <= max(estimates.values())  # greedy packing: within one check
    # Recorded costs move checks; the estimates of checks an earlier run lacks are scaled to its figures.
    recorded = {c: 10 * e for c, e in list(estimates.items())[:200]}
    costs = costs_of(estimates, recorded)
    assert all(costs[c] == round(10 * e * 1_000_000) for c, e in estimates.items())
    other = assign(costs_of(estimates, {plan[0]: estimates[plan[0]], plan[1]: 50 * estimates[plan[1]]}), 4)
    assert other != parts and digest(plan, other, 4) != digest(plan, parts, 4)
    assert digest(plan, assign(costs_of(estimates, None), 3), 3) != digest(plan, parts, 4)


@pytest.mark.parametrize(("text", "part"), [("1/1", (1, 1)), ("3/8", (3, 8))])
def test_shard_argument(text: str, part: tuple[int, int]) -> None:
    assert parse_shard(text) == part
    for bad in ("0/2", "3/2", "2", "a/b", "1/0"):
        with pytest.raises(ValueError):
            parse_shard(bad)

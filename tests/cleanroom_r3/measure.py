"""Run the round-3 clean-room variants and baselines through lakecert's CLI entry point, in this process.

``python -m tests.cleanroom_r3.measure OUT [--seeds 1-10] [--only NAME ...]`` runs ``lakecert run`` once
per variant and seed on the profile it targets (the baselines on the three catalog-managed profiles)
into ``OUT/<name>-<seed>/`` and writes ``OUT/summary.json``: per run the exit code, the verdict, the
rules flagged, and whether the variant was caught by a rule it breaks. Used by
tests/test_cleanroom_r3.py (seed 1) and, over seeds 1-10, for the closing note and docs/mutation.md.

The helper who wrote the variants named some rules lakecert did not have under those names ("NEW ...");
``SAME_RULE`` says which of lakecert's rules states each (an equivalent, not a looser one).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path
from typing import Any

from conformance.cli import main as lakecert_main
from tests.cleanroom_r3.variant import Variant
from tests.cleanroom_r3.variants import CORRECT_BASELINES, VARIANTS

BASELINE_PROFILES = "delta-cm-catalog,delta-cm-writer,delta-cm-reader"
SAME_RULE = {
    "WRT-TXNID-GLOBAL": ("WRT-TXNID-UNIQUE",),  # widened to every table and client of a run
    "WRT-LOST-ANSWER": ("WRT-LOST-ANSWER-ONCE",),
    "WRT-ICT-EPOCH": ("WRT-ICT-WALLCLOCK",),
    # lakecert has no rule of its own for log compaction files on the read side: a wrong snapshot
    # from one is a wrong read of a published version
    "RDR-COMPACTION-RANGE": ("RDR-LIST-FALLBACK", "RDR-GOLDEN-TABLES"),
}


def rules_of(v: Variant) -> set[str]:
    """lakecert's ids for the rules the variant breaks."""
    found: set[str] = set()
    for rule in v.rules:
        if rule.startswith("NEW "):
            found.update(SAME_RULE[rule.removeprefix("NEW ").split(":")[0]])
        else:
            found.add(rule)
    return found


def run_one(spec: str, profile: str, seed: int, out: Path) -> tuple[int, dict[str, Any]]:
    log = io.StringIO()
    args = ["run", "--target", spec, "--profile", profile, "--out", str(out), "--seed", str(seed)]
    with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        code = lakecert_main(args)
    (out.parent / f"{out.name}.log").write_text(log.getvalue())
    return code, json.loads((out / "results.json").read_text())


def judge(v: Variant | None, code: int, res: dict[str, Any]) -> dict[str, Any]:
    flagged = sorted(r for r, s in res["requirements"].items() if s["status"] in ("FAIL", "WARN"))
    row: dict[str, Any] = {"exit": code, "verdict": res["verdict"], "flagged": flagged}
    if v is None:
        row["ok"] = (code, res["verdict"]) == (0, "CERTIFIED")
        return row
    on_rule = bool(rules_of(v) & set(flagged))
    blocked = res["verdict"] == "NOT_CERTIFIED"
    row["caught"] = "right rule" if on_rule else ("elsewhere" if flagged else "missed")
    row["ok"] = on_rule and (blocked or v.level != "MUST")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--only", nargs="*", default=None)
    ns = parser.parse_args()
    lo, _, hi = ns.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    ns.out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, dict[str, Any]] = {}
    runs: list[tuple[str, str, str, Variant | None]] = [
        (spec.rsplit(":", 1)[1], spec, BASELINE_PROFILES, None) for spec in CORRECT_BASELINES
    ]
    runs += [(v.name, v.target, v.profile, v) for v in VARIANTS]
    for name, spec, profile, variant in runs:
        if ns.only and name not in ns.only:
            continue
        for seed in seeds:
            code, res = run_one(spec, profile, seed, ns.out / f"{name}-{seed}")
            summary.setdefault(name, {})[str(seed)] = judge(variant, code, res)
            row = summary[name][str(seed)]
            print(
                f"{name:40} seed {seed:2}  {'ok  ' if row['ok'] else 'MISS'} {row.get('caught', '')} {row['flagged']}"
            )
    (ns.out / "summary.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()

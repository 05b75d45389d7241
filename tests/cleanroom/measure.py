"""Run the clean-room variants through lakecert's CLI entry point, all in this one process.

``python -m tests.cleanroom.measure OUT [--seed N] [--only NAME ...]`` runs ``lakecert run`` once per
variant, on the profile it targets, into ``OUT/<variant>/``, and writes ``OUT/exit_codes.json``.
One interpreter for all runs: the start-up and imports of a fresh process per run cost several times
the checks themselves. Used by tests/test_cleanroom.py and to fill docs/mutation.md.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

from conformance.cli import main as lakecert_main
from tests.cleanroom.variants import VARIANTS, Variant


def run_all(out: Path, seed: int, only: set[str] | None = None) -> dict[str, int]:
    codes: dict[str, int] = {}
    for v in VARIANTS:
        if only and v.name not in only:
            continue
        args = ["run", "--target", v.spec, "--profile", v.profile, "--out", str(out / v.name), "--seed", str(seed)]
        log = io.StringIO()
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            codes[v.name] = lakecert_main(args)
        (out / f"{v.name}.log").write_text(log.getvalue())
    (out / "exit_codes.json").write_text(json.dumps(codes, indent=1))
    return codes


def verdict_of(out: Path, v: Variant) -> str:
    """One line for docs/mutation.md: caught on the broken rule, caught elsewhere, or missed."""
    data = json.loads((out / v.name / "results.json").read_text())
    bad = {r: s["status"] for r, s in data["requirements"].items() if s["status"] in ("FAIL", "WARN", "ERROR")}
    wanted = "FAIL" if v.level == "MUST" else "WARN"
    on_rule = [r for r in v.expected if bad.get(r) in (wanted, "FAIL")]
    blocked = data["verdict"] != "CERTIFIED"
    if on_rule and (blocked or v.level != "MUST"):
        verdict = "caught"
    elif bad and (blocked or v.level != "MUST"):
        verdict = "caught elsewhere"
    else:
        verdict = "missed"
    details = ", ".join(f"{r} {s}" for r, s in sorted(bad.items())) or "-"
    return f"{verdict}: {details}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--summarize", action="store_true", help="only print the verdicts of an earlier run in OUT")
    ns = parser.parse_args()
    ns.out.mkdir(parents=True, exist_ok=True)
    if ns.summarize:
        codes = json.loads((ns.out / "exit_codes.json").read_text())
    else:
        codes = run_all(ns.out, ns.seed, set(ns.only) if ns.only else None)
    for v in VARIANTS:
        if v.name in codes:
            print(f"{v.name:34} exit {codes[v.name]}  {verdict_of(ns.out, v)}")


if __name__ == "__main__":
    main()

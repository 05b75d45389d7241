"""The observed matrix of profile ``delta-row-conflicts`` on a Delta engine: every two-operation
schedule of the exhaustive check (``scenarios.EVERY_PAIR``) on every table configuration, each
judged by the history checker against the table's isolation level, summarised per operation pair.

A check stops at its first finding; this walks every schedule, so that docs/compatibility.md can say
for each (configuration, operation pair) PASS, FAIL (with the anomaly) or NOT_APPLICABLE. It uses
the explorer's runner and the engine's preset (``model_preset``): one engine run per class, each
configuration's first run its own (a refused configuration is NOT_APPLICABLE); ``--no-plan`` runs
every schedule. Not a test. Appends each schedule's outcome to ``--out`` (JSON lines) as it is
judged, so a run stopped early still gives its part of the matrix (``--from FILE`` prints it), and
prints the matrix as markdown. Schedules are walked pair by pair, every chosen configuration of a
schedule in turn.

    nice -n 10 .venv/bin/python bench/delta_matrix.py --target delta-rs-engine [--no-plan] [--out FILE]
        [--config serializable-nodv ...]
    .venv/bin/python bench/delta_matrix.py --from FILE
"""

from __future__ import annotations

import argparse
import collections
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance.adapters.delta_rs_engine import DeltaRsEngineTarget
from conformance.adapters.delta_spark.target import DeltaSparkTarget
from conformance.checks.delta_conflicts.plan import PRESETS, delta_plan
from conformance.checks.delta_conflicts.scenarios import CONFIGS, EVERY_PAIR, MENU, config_id, serial_order
from conformance.checks.explorer.runner import ScheduleRunner
from conformance.contract.delta_engine import DeltaSetup, NotSupported
from conformance.contract.iceberg import COLUMNS, Operation, OpKind
from conformance.contract.target import TargetEnv
from conformance.history import check
from conformance.schedules.enumerate import HeldSchedule
from reference_impl.storage.local import LocalStorage

TARGETS: dict[str, Any] = {"delta-rs-engine": DeltaRsEngineTarget, "delta-spark": DeltaSparkTarget}


def short(op: Operation) -> str:
    """The menu's operations in a few words (the matrix's rows)."""
    if op.kind is OpKind.UPDATE:
        column = next(c for c, v in zip(COLUMNS, op.values, strict=True) if v is not None)
        return f"UPDATE {op.id} {column}"
    words = {OpKind.COMPACT: "OPTIMIZE", OpKind.METADATA: "SET TBLPROPERTIES"}
    return words.get(op.kind) or f"{op.kind.value} {op.id}"


def pair(schedule: HeldSchedule) -> str:
    """The operation pair of a schedule, as the menu lists it (order-free)."""
    return " + ".join(sorted(short(op) for _, op in schedule.ops))


def racing_first(schedules: list[HeldSchedule]) -> list[HeldSchedule]:
    """Only the schedules where both writers begin before either is released, each pair's
    first-released-first interleaving before any pair's other one: on a slow engine, every pair
    is seen racing once as early as possible."""
    racing = [s for s in schedules if [what for what, _ in s.events[:2]] == ["begin", "begin"]]
    return sorted(racing, key=lambda s: s.events[2][1])  # stable: menu order within each pass


def observe(
    target: Any, planned: bool, workdir: Path, configs: list[DeltaSetup], out: Path | None, racing: bool = False
) -> list[dict[str, Any]]:
    engine = target.make_delta_engine(TargetEnv(workdir, workdir.as_uri(), LocalStorage()))
    plan = delta_plan(PRESETS[target.model_preset]) if planned else None
    runner = ScheduleRunner(engine, plan)
    work: list[tuple[DeltaSetup, HeldSchedule]] = [
        (c, s) for s in (racing_first(list(EVERY_PAIR)) if racing else EVERY_PAIR) for c in configs
    ]
    if plan is not None:
        runner.prefetch(work)
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    try:
        for n, (setup, schedule) in enumerate(work):
            row: dict[str, Any] = {"config": config_id(setup), "pair": pair(schedule), "steps": schedule.describe()}
            try:
                ran = runner.run(f"m{n:04d}", setup, schedule)
            except NotSupported as e:
                row |= {"status": "NOT_APPLICABLE", "why": f"{type(e).__name__}: {e}"}
            else:
                found = check(ran.history, serial_order(setup))
                row |= {"status": "FAIL" if found else "PASS", "anomalies": sorted({a.kind.value for a in found})}
                row |= {"ran_as": config_id(ran.setup), "history": [step.text for step in ran.history.schedule]}
            row["at_s"] = round(time.monotonic() - started, 1)
            row["engine_runs"] = runner.ran if plan else runner.asked
            rows.append(row)
            if out is not None:
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
    finally:
        runner.close()
        engine.close()
    return rows


def summary(rows: list[dict[str, Any]]) -> str:
    fails = [r for r in rows if r["status"] == "FAIL"]
    first = f"{fails[0]['at_s']} s" if fails else "none"
    last = rows[-1] if rows else {"engine_runs": 0, "at_s": 0}
    return (
        f"schedules judged: {len(rows)}; engine runs: {last['engine_runs']}; wall: {last['at_s']} s; "
        f"first FAIL after: {first}"
    )


def matrix(rows: list[dict[str, Any]]) -> None:
    cells: dict[tuple[str, str], list[dict[str, Any]]] = collections.defaultdict(list)
    for r in rows:
        cells[(r["pair"], r["config"])].append(r)
    configs = [c for c in (config_id(c) for c in CONFIGS) if any(r["config"] == c for r in rows)]
    print("| operation pair (schedules judged / FAIL) | " + " | ".join(configs) + " |")
    print("|---|" + "---|" * len(configs))
    for p in sorted({r["pair"] for r in rows}):
        out = []
        for c in configs:
            got = cells[(p, c)]
            if all(r["status"] == "NOT_APPLICABLE" for r in got):
                out.append("N/A")
                continue
            fails = [r for r in got if r["status"] == "FAIL"]
            kinds = sorted({k for r in fails for k in r["anomalies"]})
            out.append(f"**FAIL** {len(fails)}/{len(got)} ({', '.join(kinds)})" if fails else f"PASS ({len(got)})")
        print(f"| {p} | " + " | ".join(out) + " |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="delta-rs-engine", choices=sorted(TARGETS))
    parser.add_argument("--no-plan", action="store_true", help="run every schedule on the engine")
    parser.add_argument("--racing", action="store_true", help="only racing schedules, one pass per release order")
    parser.add_argument("--from", dest="source", type=Path, help="print the matrix of this (partial) --out file")
    parser.add_argument("--config", action="append", help="only this configuration id (repeatable)")
    parser.add_argument("--out", type=Path, help="write the per-schedule outcomes here (JSON)")
    args = parser.parse_args()
    if args.source is not None:
        done = [json.loads(line) for line in args.source.read_text().splitlines() if line.strip()]
        words = {op.describe(): short(op) for op in MENU}  # files written with the operations' long wording
        for r in done:
            r["pair"] = " + ".join(sorted(words.get(w, w) for w in r["pair"].split(" + ")))
        print(summary(done))
        matrix(done)
        return
    target = TARGETS[args.target]()
    with tempfile.TemporaryDirectory() as tmp:
        configs = [c for c in CONFIGS if not args.config or config_id(c) in args.config]
        rows = observe(target, not args.no_plan, Path(tmp), configs, args.out, args.racing)
    target.close()
    print(f"target: {args.target} ({target.version()}); plan: {'none' if args.no_plan else target.model_preset}")
    print(summary(rows))
    matrix(rows)


if __name__ == "__main__":
    main()

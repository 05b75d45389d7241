"""Benchmark: time to the first counterexample of each faulty variant of the Delta model.

Walks the checks' schedules of profile ``delta-row-conflicts`` in order (scenario by scenario,
configuration by configuration, each schedule of a catalog-managed table with both publication
lags) on each ``delta-*`` engine variant, in process, until the history checker finds an anomaly
of the scenario's kinds; prints a Markdown table for docs/benchmarks.md, and the time of the same
walk on the reference (every schedule, nothing found). Not a test: nothing here asserts a time.

    .venv/bin/python bench/delta_model_variants.py
"""

from __future__ import annotations

import time

from conformance.checks.delta_conflicts.harness import schedules_for
from conformance.checks.delta_conflicts.scenarios import ALL_SCENARIOS, config_id, serial_order
from conformance.history import check
from conformance.schedules.held_run import run_held
from reference_impl.delta_conflicts import DeltaModelEngine
from reference_impl.faults.registry import all_faults


def walk(engine: DeltaModelEngine) -> tuple[str | None, str | None, int, float]:
    """(requirement, configuration) of the first finding, schedules run, seconds."""
    ran, began = 0, time.perf_counter()
    for n, (scenario, setups) in enumerate(ALL_SCENARIOS):
        for setup in setups:
            for k, schedule in enumerate(schedules_for(setup, scenario.schedules)):
                ran += 1
                history = run_held(engine, f"t{n}_{config_id(setup)}_{k}", setup, schedule, report=False)
                if any(a.kind in scenario.kinds for a in check(history, serial_order(setup))):
                    return scenario.requirement, config_id(setup), ran, time.perf_counter() - began
    return None, None, ran, time.perf_counter() - began


def main() -> None:
    req, _, ran, took = walk(DeltaModelEngine())
    print(f"reference: {ran} schedules, {took:.2f} s ({took / ran * 1000:.2f} ms per schedule), found {req}")
    print("| variant | first finding | configuration | schedules run | time |\n|---|---|---|---|---|")
    for name, fault in sorted(all_faults().items()):
        if name.startswith("delta-"):
            engine = fault.cls(None)
            assert isinstance(engine, DeltaModelEngine)
            req, config, ran, took = walk(engine)
            print(f"| `{name}` | {req} | {config} | {ran} | {took * 1000:.1f} ms |")


if __name__ == "__main__":
    main()

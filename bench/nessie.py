"""Benchmark: Project Nessie 0.99 as the ``nessie`` target, and Spark's resurrected-row cell through it.

Prints, as a Markdown table: how long Nessie takes to be ready (``NessieServer`` started and stopped
``--starts`` times on its own moto), the wall time of ``lakecert run --target nessie --profile
iceberg-catalog-commit`` (one Nessie start included) with its checks' own time, and, unless
``--no-spark``, the wall time of the MOR/MOR snapshot v2 cell on ``spark-iceberg`` with ``catalog:
nessie`` (SparkSession and Nessie start-ups included) and that check's own time. Not a test:
nothing here asserts a time.

    .venv/bin/python bench/nessie.py [--starts N] [--no-spark]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from conformance.adapters.nessie.java import find_java  # noqa: E402
from conformance.adapters.nessie.server import NessieServer  # noqa: E402

CELL = "checks/iceberg/test_update_delete.py::test_update_then_delete_of_one_row[upd-mor-del-mor-snapshot-v2]"


def lakecert(out: Path, *args: str) -> tuple[float, dict[str, Any]]:
    began = time.monotonic()
    cmd = [sys.executable, "-m", "conformance.cli", "run", "--out", str(out), *args]
    subprocess.run(cmd, cwd=REPO, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results: dict[str, Any] = json.loads((out / "results.json").read_text())
    return time.monotonic() - began, results


def check_time(results: dict[str, Any]) -> float:
    return float(sum(r["duration_s"] for r in results["results"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--no-spark", action="store_true")
    args = parser.parse_args()
    java = find_java()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        starts = []
        for i in range(args.starts):
            with NessieServer(java, root / f"start{i}") as server:
                starts.append(server.startup_s)
        print(f"Java: {java}\n\n| figure | value |\n|---|---|")
        print(
            f"| Nessie ready (median of {len(starts)}) | {statistics.median(starts):.1f} s "
            f"(min {min(starts):.1f}, max {max(starts):.1f}) |"
        )
        config = root / "nessie.yaml"
        config.write_text("target: nessie\n")
        wall, res = lakecert(root / "catalog", "--config", str(config), "--profile", "iceberg-catalog-commit")
        print(
            f"| `nessie`, profile iceberg-catalog-commit ({len(res['results'])} checks, {res['verdict']}) "
            f"| {wall:.0f} s wall, checks {check_time(res):.1f} s |"
        )
        if not args.no_spark:
            config = root / "spark.yaml"
            config.write_text("target: spark-iceberg\ntargets:\n  spark-iceberg:\n    options: {catalog: nessie}\n")
            wall, res = lakecert(
                root / "spark", "--config", str(config), "--profile", "iceberg-row-delta", "--select", CELL
            )
            (cell,) = res["results"]
            print(
                f"| Spark's MOR/MOR snapshot v2 cell through Nessie ({cell['status']}) "
                f"| {wall:.0f} s wall, the check {cell['duration_s']:.1f} s |"
            )


if __name__ == "__main__":
    main()

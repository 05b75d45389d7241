"""Benchmark: where the first real-Spark Iceberg check spends its time.

Times, in one fresh process each, the stages the first check of ``--target spark-iceberg`` pays
for: importing pyspark, starting the SparkSession (bare, or with the Iceberg jars and extensions),
starting lakecert's REST catalog, pointing the session at it (catalog init, CREATE NAMESPACE), the
first CREATE TABLE and appends of the set-up, the first read, and a first held schedule. Run with
``--mode`` to time one variant of the start-up; not a test: nothing here asserts a time.

    .venv/bin/python bench/spark_startup.py [--mode bare|jars|engine] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process, from /proc (the JVM is not our child to reap)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _jvm_pid() -> int | None:
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None) if gateway is not None else None
    return int(proc.pid) if proc is not None else None


def stages(mode: str) -> dict[str, tuple[float, float]]:
    """One process's stages: seconds since it began, and CPU seconds of this interpreter and the
    JVM together (a loaded machine stretches the first, hardly the second). Run in a child: a JVM
    per measurement."""
    began = time.perf_counter()
    marks: dict[str, tuple[float, float]] = {}

    def mark(name: str) -> None:
        jvm = _jvm_pid()
        cpu = _cpu_s(os.getpid()) + (_cpu_s(jvm) if jvm is not None else 0.0)
        marks[name] = (round(time.perf_counter() - began, 2), round(cpu, 2))

    import pyspark  # noqa: F401

    mark("import pyspark")
    if mode == "bare":
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
        mark("bare SparkSession")
        spark.sql("SELECT 1").collect()
        mark("first query")
        spark.stop()
        return marks
    from conformance.adapters.spark_iceberg.session import spark_session, stop

    spark = spark_session("local[2]")
    mark("SparkSession with the Iceberg jars")
    if mode == "jars":
        stop()
        return marks
    from conformance.adapters.spark_iceberg.engine import SparkIcebergEngine
    from conformance.checks.iceberg.scenarios import CONFIGS, UPDATE_THEN_DELETE
    from conformance.contract.target import TargetEnv
    from conformance.schedules.held_run import run_held
    from reference_impl.storage import make_storage

    work = Path(tempfile.mkdtemp())
    env = TargetEnv(work, (work / "wh").as_uri(), make_storage())
    mark("imports of lakecert")
    engine = SparkIcebergEngine(env)
    mark("engine (REST catalog, catalog config, CREATE NAMESPACE)")
    engine.create_table("t0", CONFIGS[0])
    mark("first create_table (CREATE TABLE, 2 appends, read)")
    engine.create_table("t1", CONFIGS[0])
    mark("second create_table")
    run_held(engine, "t2", CONFIGS[0], UPDATE_THEN_DELETE.schedules[0])
    mark("first held schedule")
    run_held(engine, "t3", CONFIGS[0], UPDATE_THEN_DELETE.schedules[0])
    mark("second held schedule")
    engine.close()
    stop()
    del spark
    return marks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("bare", "jars", "engine"), action="append")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(stages(args.child)))
        return
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    for mode in args.mode or ["bare", "jars", "engine"]:
        for _ in range(args.repeat):
            out = subprocess.run(
                [sys.executable, __file__, "--child", mode], capture_output=True, text=True, check=True, cwd=REPO
            ).stdout
            marks = json.loads(out.strip().splitlines()[-1])
            print(f"\n{mode}:\n| stage | s since start | CPU s since start (Python + JVM) |\n|---|---|---|")
            for name, (t, cpu) in marks.items():
                print(f"| {name} | {t:.2f} | {cpu:.2f} |")


if __name__ == "__main__":
    main()

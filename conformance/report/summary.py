"""The short summary printed at the end of every run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.report.results import exit_code


def print_summary(results: dict[str, Any], out: Path) -> int:
    """Print verdicts per profile, failures by requirement and where the reports are; return the exit code."""
    info = results["run_info"]
    print(f"\nlakecert {info['suite_version']}  target={info['target']}  seed={info['seed']}")
    for name, p in results["profiles"].items():
        print(f"  {name:<20} {p['verdict']}")
    bad = {rid: r for rid, r in results["requirements"].items() if r["status"] in ("FAIL", "WARN", "ERROR")}
    for rid, r in sorted(bad.items()):
        print(f"  {r['status']:<5} {rid} ({r['level']})")
    counts = ", ".join(f"{v} {k}" for k, v in results["counts"].items() if v)
    print(f"  checks: {counts}")
    print(f"verdict: {results['verdict']}")
    print(f"  results:     {out / 'results.json'}\n  certificate: {out / 'certificate.json'}")
    print(f"  junit:       {out / 'junit.xml'}\n  allure:      {out / 'allure-results'}  (HTML: lakecert report {out})")
    return exit_code(results)

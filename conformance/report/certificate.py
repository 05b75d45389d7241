"""certificate.json: a compact, checkable statement of a run's verdict.

It names the target, profiles, verdict, suite version, spec revisions and requirement counts,
and binds them to the exact results.json by its SHA-256 digest.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

CERTIFICATE_VERSION = 1


def build_certificate(results_path: Path) -> dict[str, Any]:
    raw = results_path.read_bytes()  # read once: the digest must be of the bytes that were parsed
    res = json.loads(raw)
    info = res["run_info"]
    counts: dict[str, dict[str, int]] = {}
    for r in res["requirements"].values():
        per = counts.setdefault(r["profile"], {})
        per[r["status"]] = per.get(r["status"], 0) + 1
    return {
        "certificate_version": CERTIFICATE_VERSION,
        "target": {
            "name": info["target"],
            "label": info.get("target_label"),
            "kind": info["target_kind"],
            "version": info["target_version"],
        },
        "profiles": {p: v["verdict"] for p, v in res["profiles"].items()},
        "verdict": res["verdict"],
        "partial": info.get("partial", False),
        "suite_version": info["suite_version"],
        "spec_revisions": info["spec_revisions"],
        "seed": info["seed"],
        "requirement_counts": counts,
        "results_sha256": hashlib.sha256(raw).hexdigest(),
        "issued": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def write_certificate(results_path: Path, path: Path) -> dict[str, Any]:
    cert = build_certificate(results_path)
    path.write_text(json.dumps(cert, indent=2) + "\n")
    return cert


def verify_certificate(cert_path: Path, results_path: Path) -> list[str]:
    """What does not match between a certificate and a results file; empty when it is valid."""
    cert = json.loads(cert_path.read_text())
    if cert.get("certificate_version") != CERTIFICATE_VERSION:
        return [f"unknown certificate_version {cert.get('certificate_version')!r}"]
    problems = []
    expected = build_certificate(results_path)
    if cert.get("results_sha256") != expected["results_sha256"]:
        problems.append("results.json digest differs: the results were changed or belong to another run")
    for key in (
        "target",
        "profiles",
        "verdict",
        "partial",
        "suite_version",
        "spec_revisions",
        "seed",
        "requirement_counts",
    ):
        if cert.get(key) != expected[key]:
            problems.append(f"`{key}` does not match the results")
    return problems

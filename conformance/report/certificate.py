"""certificate.json: a compact, checkable statement of a run's verdict.

It names the target, profiles, verdict, suite version, spec revisions and requirement counts,
and binds them to the exact results.json by its SHA-256 digest. The digest proves only that the
two files belong together; who issued them is proved by the optional Ed25519 signature of the
vendor's key (``conformance.report.signing``). The trust model is in docs/results.md.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

CERTIFICATE_VERSION = 1


class MalformedFile(ValueError):
    """A certificate or results file that is not what lakecert wrote; the message names the file."""


def _load(path: Path, what: str) -> tuple[bytes, dict[str, Any]]:
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
    except (OSError, ValueError) as e:
        raise MalformedFile(f"{path} is not a readable {what} (JSON): {e}") from None
    if not isinstance(data, dict):
        raise MalformedFile(f"{path} is not a {what}: a JSON object was expected")
    return raw, data


def build_certificate(results_path: Path) -> dict[str, Any]:
    raw, res = _load(results_path, "results.json")  # read once: the digest is of the bytes parsed
    try:
        return _certificate(raw, res)
    except (KeyError, TypeError, AttributeError) as e:
        raise MalformedFile(f"{results_path} is not a lakecert results.json: missing or bad field {e}") from None


def _certificate(raw: bytes, res: dict[str, Any]) -> dict[str, Any]:
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
            "run_label": info.get("label"),  # what the run tested (``--label``, or the target and its URL)
            "kind": info["target_kind"],
            "version": info["target_version"],
            # What really ran, part by part, as observed at run time (absent in older results).
            "versions": info.get("target_versions") or {},
            # Interop runs only: the catalog the client was judged through.
            **(
                {
                    "catalog_target": info["catalog_target"],
                    "catalog_version": info.get("catalog_target_version"),
                    "catalog_versions": info.get("catalog_target_versions") or {},
                }
                if info.get("catalog_target")
                else {}
            ),
        },
        "profiles": {p: v["verdict"] for p, v in res["profiles"].items()},
        # Rules a profile's budget ran no check of: the profile is certified without them.
        "not_judged": {p: v["left_out"] for p, v in res["profiles"].items() if v.get("left_out")},
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


def load_certificate(path: Path) -> dict[str, Any]:
    """A certificate file as data; ``MalformedFile`` names it when it is not JSON."""
    return _load(path, "certificate")[1]


def verify_certificate(cert_path: Path, results_path: Path, key: Path | None = None) -> list[str]:
    """What does not match between a certificate and a results file (and, given the vendor's public
    ``key``, the certificate's signature); empty when it is valid. ``MalformedFile`` names a file
    that is not what lakecert wrote."""
    _, cert = _load(cert_path, "certificate")
    if cert.get("certificate_version") != CERTIFICATE_VERSION:
        return [f"unknown certificate_version {cert.get('certificate_version')!r}"]
    problems = []
    if key is not None:
        from conformance.report.signing import signature_problem

        problem = signature_problem(cert, key)
        if problem:
            problems.append(problem)
    expected = build_certificate(results_path)
    if cert.get("results_sha256") != expected["results_sha256"]:
        problems.append("results.json digest differs: the results were changed or belong to another run")
    for field in (
        "target",
        "profiles",
        "verdict",
        "partial",
        "suite_version",
        "spec_revisions",
        "seed",
        "requirement_counts",
    ):
        if cert.get(field) != expected[field]:
            problems.append(f"{field} does not match the results")
    return problems

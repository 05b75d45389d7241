"""The test command of one mutant: is the reference (with the mutant in place) still certified?

``python -m tests.mutation.kill GROUP [--select CHECK ...]`` exits 0 when the run of the group's
profiles certifies with every check passing, as the unmutated reference does (the mutant
survives), and 1 otherwise (killed: not certified, or a WARN on a SHOULD). With ``--select`` (the CI
sample) only those checks run, and the mutant is killed when one of them does not pass.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.mutation.groups import GROUPS, Group

FORKSERVER_ENV = "LAKECERT_MUTATION_FORKSERVER"  # the socket of run.py's fork server, if any


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The run's own output is of no use here; cosmic-ray keeps what the command prints."""
    saved = os.dup(1), os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)


@contextlib.contextmanager
def _target_config(group: Group, work: Path) -> Iterator[dict[str, Any]]:
    """The run's configuration: the embedded reference, or the `uc` target against the served one."""
    budget: dict[str, Any] = dict(group.settings)  # else the default seed and budget, as `make certify` judges
    if not group.served:
        yield {**budget, "target": "reference"}
        return
    from tests.tooling.server import served  # the server extra, only for the served group

    with served("--db", str(work / "served.sqlite")) as (url, _):  # the warehouse beside the database
        adapter = {"adapter": "conformance.adapters.uc:UCTarget", "options": {"url": url}}
        yield {**budget, "target": "uc", "targets": {"uc": adapter}}


def verdict(group: Group, select: list[str]) -> tuple[bool, str]:
    """(certified, why): one `lakecert run` in this process over the group's profiles."""
    from conformance.cli import main

    with tempfile.TemporaryDirectory(prefix="lakecert-mutant-") as tmp:
        work = Path(tmp)
        with _target_config(group, work) as config:
            config["profiles"] = list(group.profiles)
            (work / "lakecert.yaml").write_text(json.dumps(config))
            args = ["run", "--config", str(work / "lakecert.yaml"), "--out", str(work / "out")]
            args += [a for s in select for a in ("--select", s)]
            with _quiet():
                code = main(args)
        res_file = work / "out" / "results.json"
        if not res_file.exists():
            return False, f"no results (exit {code})"
        res = json.loads(res_file.read_text())
    bad = sorted(f"{r['test']}: {r['status']}" for r in res["results"] if r["status"] not in ("PASS", "NOT_APPLICABLE"))
    if select:
        return not bad, "; ".join(bad) or "selected checks pass"
    # The unmutated reference passes every check. A WARN (a SHOULD broken) leaves the verdict
    # CERTIFIED but is reported to the vendor: the mutant was seen, so it counts as killed.
    clean = not bad and code == 0 and res["verdict"] == "CERTIFIED"
    return clean, "; ".join(bad) or f"{res['verdict']} (exit {code})"


def judge(argv: list[str]) -> tuple[int, str]:
    """(exit code, what the run said): 0 when the mutant survives, 1 when it is killed."""
    parser = argparse.ArgumentParser(prog="python -m tests.mutation.kill")
    parser.add_argument("group", choices=sorted(GROUPS))
    parser.add_argument("--select", action="append", default=[], help="check path(s) under conformance/")
    args = parser.parse_args(argv)
    os.environ["LAKECERT__MODEL__SHRINK"] = "false"  # which rule broke, not the shortest reproducer
    certified, why = verdict(GROUPS[args.group], args.select)
    return (0, "SURVIVED: " + why) if certified else (1, "KILLED: " + why)


def _via_forkserver(path: str, argv: list[str]) -> tuple[int, str]:
    """Ask the group's fork server (run.py starts one) to judge the mutant in a child of its own."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        conn.sendall(json.dumps({"argv": argv}).encode() + b"\n")
        line = conn.makefile().readline()
    if not line:  # the child died without answering (the hang guard's alarm, a crash): killed
        return 1, "KILLED: the run ended without a verdict"
    reply = json.loads(line)
    return int(reply["code"]), str(reply["output"])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    server = os.environ.get(FORKSERVER_ENV)
    code, why = _via_forkserver(server, argv) if server else judge(argv)
    print(why)
    return code


if __name__ == "__main__":
    sys.exit(main())

"""``make mutation``: mutation testing of the reference implementation with cosmic-ray.

``python -m tests.mutation.run [--modules catalog,client] [--budget-s S] [--retry-survivors]``

For each group of ``groups.GROUPS`` the tracked files are copied into a tree of its own under
``.mutation/`` (cosmic-ray edits the module on disk while a mutant is tested; the checkout is never
touched, and an interrupted run leaves only the copy mutated, which the next run replaces). Each
module gets a cosmic-ray session keyed by the module's hash: results are cached, an unchanged
module is not run again, and a run stopped by its budget resumes where it stopped. Survivors are run
again when the rest of the code changed since they survived (new or stronger checks), or with
``--retry-survivors``. Prints the score per module and every survivor; exit 0 when every group has
finished and reached ``--goal`` (of non-equivalent mutants killed), 1 otherwise, 2 on a broken set-up
(the unmutated reference is not certified).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers import REPO
from tests.mutation.equivalent import EQUIVALENT
from tests.mutation.groups import EXCLUDED_OPERATORS, GROUPS, OUT_OF_SCOPE, Group
from tests.mutation.kill import FORKSERVER_ENV

WORKDIR = REPO / ".mutation"
LAKECERT = ("conformance/", "reference_impl/")
OUT_OF_SCOPE_MARK = "out of scope: "
GAP = "gap:"  # an explained survivor that is not equivalent (tests/mutation/equivalent.py)


@dataclass
class Survivor:
    file: str
    line: int
    operator: str
    source: str
    diff: str
    equivalent: str | None


@dataclass
class Score:
    file: str
    killed: int = 0
    survived: int = 0
    equivalent: int = 0
    pending: int = 0
    skipped: int = 0  # operators left out (groups.EXCLUDED_OPERATORS) or nothing to mutate
    out_of_scope: int = 0  # in functions no profile judges (groups.OUT_OF_SCOPE)
    survivors: list[Survivor] = field(default_factory=list)

    @property
    def rate(self) -> float:
        judged = self.killed + self.survived - self.equivalent
        return 1.0 if judged == 0 else self.killed / judged


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True
    )
    return [f for f in out.stdout.splitlines() if (REPO / f).is_file() or (REPO / f).is_symlink()]


def copy_tree(dest: Path, files: list[str]) -> None:
    """A fresh copy of the checkout's files (uncommitted edits included) for cosmic-ray to edit."""
    shutil.rmtree(dest, ignore_errors=True)
    for f in files:
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        if (REPO / f).is_symlink():  # conformance/fixtures points at the golden tables
            os.symlink(os.readlink(REPO / f), dest / f)
        else:
            shutil.copy2(REPO / f, dest / f)


def digest(paths: list[str]) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.encode() + b"\0" + (REPO / p).read_bytes() + b"\0")
    return h.hexdigest()[:16]


def suite_digest(files: list[str], module: str) -> str:
    """Everything a mutant's verdict depends on besides the module itself."""
    judged_by = ("tests/mutation/kill.py", "tests/mutation/groups.py")
    return digest(
        [f for f in files if f.endswith(".py") and f != module and (f.startswith(LAKECERT) or f in judged_by)]
    )


def write_config(group: Group, module: str, tree: Path, path: Path) -> None:
    command = f"{sys.executable} -m tests.mutation.kill {group.name}"
    excluded = ", ".join(json.dumps(e) for e in EXCLUDED_OPERATORS)
    path.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(str(tree / module))}\n"
        f"timeout = {group.timeout_s}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(command)}\n\n"
        '[cosmic-ray.distributor]\nname = "local"\n\n'
        "[cosmic-ray.filters.operators-filter]\n"
        f"exclude-operators = [{excluded}]\n"
    )


@contextlib.contextmanager
def forkserver(group: Group, tree: Path, workdir: Path = WORKDIR) -> Iterator[None]:
    """The group's fork server (forkserver.py) for the length of the run; kill.py finds it by
    ``FORKSERVER_ENV``. Without it every mutant pays for importing the heavy dependencies again."""
    path = workdir / f"fork-{group.name}.sock"
    path.unlink(missing_ok=True)
    ready = Path(str(path) + ".ready")
    ready.unlink(missing_ok=True)
    # No bytecode cache: a mutant and the original written within one second with the same size
    # would look alike to it, and a child would run the stale one.
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "tests.mutation.forkserver", str(path), str(group.timeout_s)]
    proc = subprocess.Popen(command, cwd=tree, env=env, start_new_session=True)
    try:
        while not ready.exists():  # the imports take seconds; a crash ends the wait too
            if proc.poll() is not None:
                raise RuntimeError(f"the fork server of {group.name} exited with {proc.returncode}")
            time.sleep(0.2)
        os.environ[FORKSERVER_ENV] = str(path)
        yield
    finally:
        os.environ.pop(FORKSERVER_ENV, None)
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
        path.unlink(missing_ok=True)
        ready.unlink(missing_ok=True)


def cosmic(args: list[str], tree: Path, timeout: float | None = None) -> int:
    """A cosmic-ray command in the group's tree; stopped (its whole process group) at ``timeout``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    bindir = Path(sys.executable).parent
    proc = subprocess.Popen([str(bindir / args[0]), *args[1:]], cwd=tree, env=env, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        return -1


def slug(module: str) -> str:
    return module.replace("/", ".").removesuffix(".py")


def session_for(group: Group, module: str, tree: Path, files: list[str], retry: bool) -> tuple[Path, Path]:
    """The module's cached session (created when the module is new or changed) and its config."""
    sessions = WORKDIR / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    config = sessions / f"{group.name}.{slug(module)}.toml"
    write_config(group, module, tree, config)
    session = sessions / f"{group.name}.{slug(module)}.{digest([module])}.sqlite"
    meta = session.with_suffix(".json")
    suite = suite_digest(files, module)
    if not session.exists():
        for old in sessions.glob(f"{group.name}.{slug(module)}.*.sqlite"):
            old.unlink()
        if cosmic(["cosmic-ray", "init", str(config), str(session)], tree) != 0:
            raise RuntimeError(f"cosmic-ray init failed for {module}")
    elif retry or (meta.exists() and json.loads(meta.read_text()).get("suite") != suite):
        # Survivors of an older suite are tested again, except those explained as equivalent:
        # no check can kill them, so only --retry-survivors spends a run on each again.
        with sqlite3.connect(session) as db:
            again = [(job,) for job in unexplained_survivors(module, db, everyone=retry)]
            db.executemany("DELETE FROM work_results WHERE job_id = ?", again)
    meta.write_text(json.dumps({"suite": suite}))
    repoint(session, str(tree / module))
    cosmic(["cr-filter-operators", str(session), str(config)], tree)  # marks left-out operators skipped
    skip_out_of_scope(module, session)
    return session, config


def unexplained_survivors(module: str, db: sqlite3.Connection, *, everyone: bool = False) -> list[str]:
    """Job ids of the module's survivors that no equivalence explains (no entry, or a "gap:")."""
    lines = (REPO / module).read_text().splitlines()
    rows = db.execute(
        "SELECT r.job_id, r.diff, s.start_pos_row FROM work_results r JOIN mutation_specs s ON s.job_id = r.job_id"
        " WHERE r.test_outcome = 'SURVIVED'"
    ).fetchall()
    out = []
    for job, diff, row in rows:
        why = EQUIVALENT.get((module, lines[row - 1].strip(), mutated_line(diff or "")))
        if everyone or why is None or why.startswith(GAP):
            out.append(job)
    return out


def repoint(session: Path, module_path: str) -> None:
    """cosmic-ray stores the absolute path of the module it mutates in each work item. A cache
    copied from another checkout (or a moved one) would mutate that checkout's tree while this
    one's runs unmutated, and every such mutant would "survive": point them at this tree."""
    with sqlite3.connect(session) as db:
        db.execute("UPDATE mutation_specs SET module_path = ? WHERE module_path != ?", (module_path, module_path))


def skip_out_of_scope(module: str, session: Path) -> None:
    """Mark the pending mutants of ``groups.OUT_OF_SCOPE`` functions skipped, with the reason."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in db.pending_work_items:
            why = OUT_OF_SCOPE.get((module, item.mutations[0].definition_name or ""))
            if why is not None:
                db.set_result(
                    item.job_id, WorkResult(output=f"{OUT_OF_SCOPE_MARK}{why}", worker_outcome=WorkerOutcome.SKIPPED)
                )


def baseline(group: Group, tree: Path) -> bool:
    """The unmutated reference must be certified by the group's run, or no kill means anything."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, "-m", "tests.mutation.kill", group.name], cwd=tree, env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        print(f"{group.name}: the unmutated reference is not certified: {proc.stdout.strip()}", file=sys.stderr)
    return proc.returncode == 0


def mutated_line(diff: str) -> str:
    """The first added line of a mutant's unified diff, stripped."""
    added = [x[1:].strip() for x in diff.splitlines() if x.startswith("+") and not x.startswith("+++")]
    return added[0] if added else ""


def score(module: str, session: Path) -> Score:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    lines = (REPO / module).read_text().splitlines()
    s = Score(module)
    with use_db(str(session), WorkDB.Mode.open) as db:
        s.pending = len(db.pending_work_items)
        for item, result in db.completed_work_items:
            if result.worker_outcome in (WorkerOutcome.SKIPPED, WorkerOutcome.NO_TEST):
                scope = (result.output or "").startswith(OUT_OF_SCOPE_MARK)
                s.out_of_scope += scope
                s.skipped += not scope
                continue
            if result.test_outcome != TestOutcome.SURVIVED:
                s.killed += 1
                continue
            m = item.mutations[0]
            line = m.start_pos[0]
            source = lines[line - 1].strip()
            why = EQUIVALENT.get((module, source, mutated_line(result.diff or "")))
            s.survived += 1
            s.equivalent += why is not None and not why.startswith(GAP)
            s.survivors.append(Survivor(module, line, m.operator_name, source, result.diff or "", why))
    s.survivors.sort(key=lambda v: (v.line, v.operator))
    return s


def run_group(group: Group, files: list[str], deadline: float, retry: bool) -> list[Score] | None:
    tree = WORKDIR / f"tree-{group.name}"
    copy_tree(tree, files)
    with forkserver(group, tree):
        if not baseline(group, tree):
            return None
        sessions = {m: session_for(group, m, tree, files, retry) for m in group.files}
        pending = {m: score(m, s).pending for m, (s, _) in sessions.items()}
        for module, (session, config) in sessions.items():
            # Each module gets the share of what is left that its pending mutants are of all still
            # pending (cosmic-ray takes them in random order): a budget too small for the group
            # samples every module instead of finishing the first and never starting the last.
            left = deadline - time.monotonic()
            share = left * pending[module] / max(1, sum(pending.values()))
            pending[module] = 0
            if share > 0 and left > 0:
                cosmic(["cosmic-ray", "exec", str(config), str(session)], tree, timeout=share)
                shutil.copy2(REPO / module, tree / module)  # undo a mutation left by a stopped exec
        return [score(m, s) for m, (s, _) in sessions.items()]


def report(group: Group, scores: list[Score], verbose: bool) -> None:
    for s in scores:
        more = f", {s.out_of_scope} out of scope" if s.out_of_scope else ""
        more += f", {s.pending} pending" if s.pending else ""
        print(
            f"{group.name:8} {s.file:45} {100 * s.rate:5.1f} %  killed {s.killed}, survived {s.survived}"
            f" ({s.equivalent} equivalent){more}"
        )
        for v in s.survivors:
            mark = (
                "SURVIVED" if not v.equivalent else "SURVIVED (gap)" if v.equivalent.startswith(GAP) else "equivalent"
            )
            print(f"    {mark} {v.file}:{v.line} {v.operator}: {v.source}")
            if verbose and not v.equivalent:
                print("      " + "\n      ".join(v.diff.splitlines()[2:]))


def markdown(scores: dict[str, list[Score]]) -> str:
    """The scores and every survivor's disposition as Markdown, for docs/mutation.md."""
    out = [
        "| group | module | killed | equivalent | survived | out of scope | not run yet | score |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, group_scores in scores.items():
        for s in group_scores:
            survived = s.survived - s.equivalent
            row = [name, f"`{s.file}`", s.killed, s.equivalent, survived, s.out_of_scope, s.pending]
            out.append("| " + " | ".join(map(str, row)) + f" | {100 * s.rate:.1f} % |")
    out += ["", "| survivor | mutation | disposition |", "|---|---|---|"]
    for group_scores in scores.values():
        for s in group_scores:
            for v in s.survivors:
                after = mutated_line(v.diff).replace("|", "\\|")
                what = v.equivalent or "**not killed, not explained**"
                out.append(f"| `{Path(v.file).name}:{v.line}` | `{after}` | {what} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutation.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", default="catalog,client", help=f"groups, comma-separated: {', '.join(GROUPS)}")
    parser.add_argument("--budget-s", type=float, default=3600.0, help="stop testing new mutants after this (cached)")
    parser.add_argument("--goal", type=float, default=95.0, help="percent of non-equivalent mutants to kill")
    parser.add_argument("--retry-survivors", action="store_true")
    parser.add_argument("--report-only", action="store_true", help="print the cached results, run nothing")
    parser.add_argument("-v", "--verbose", action="store_true", help="show each survivor's diff")
    parser.add_argument("--markdown", action="store_true", help="with --report-only: Markdown for docs/mutation.md")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.modules.split(",") if n.strip()]
    unknown = [n for n in names if n not in GROUPS]
    if unknown or not names:
        parser.error(f"unknown group(s) {unknown}; choose from {', '.join(GROUPS)}")
    files = tracked_files()
    deadline = time.monotonic() + (0 if args.report_only else args.budget_s)
    ok = True
    table: dict[str, list[Score]] = {}
    for name in names:
        group = GROUPS[name]
        if args.report_only:
            found_sessions = [(m, s) for m in group.files for s in (WORKDIR / "sessions").glob(f"{name}.{slug(m)}.*")]
            scores = [score(m, s) for m, s in found_sessions if s.suffix == ".sqlite"]
        else:
            found = run_group(group, files, deadline, args.retry_survivors)
            if found is None:
                return 2
            scores = found
        table[name] = scores
        if args.markdown:
            continue
        report(group, scores, args.verbose)
        killed = sum(s.killed for s in scores)
        judged = sum(s.killed + s.survived - s.equivalent for s in scores)
        pending = sum(s.pending for s in scores)
        rate = 100.0 * killed / judged if judged else 100.0
        more = f"; {pending} pending" if pending else ""
        print(f"{name:8} TOTAL {rate:5.1f} % of {judged} non-equivalent mutants killed{more}")
        ok = ok and rate >= args.goal and not pending
    if args.markdown:
        print(markdown(table))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

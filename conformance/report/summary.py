"""The console summary printed at the end of every run: verdicts, then every check that did not
pass with its rule, why, the reproducer and the command that reruns it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from conformance.report.results import exit_code
from conformance.requirements import load_all

# How much of a check's message the console shows: the first line is the why; the lines after it
# (a history explanation with its schedule) up to this many, the rest stays in the reproducer.
MAX_DETAIL_LINES = 40
# Beyond this many checks that did not pass, the rest get one line each (the details are in their
# reproducers): a broken product can fail a hundred parametrized checks the same way.
MAX_DETAILED = 10
STYLE = {
    "CERTIFIED": "bold green",
    "NOT_CERTIFIED": "bold red",
    "NOT_APPLICABLE": "dim",
    "PASS": "green",
    "FAIL": "bold red",
    "WARN": "yellow",
    "ERROR": "bold magenta",
}
PARTIAL = "partial run, not a certification"


def _styled(word: str) -> str:
    style = STYLE.get(word)
    return f"[{style}]{escape(word)}[/]" if style else escape(word)


def _reproducer(out: Path, rel: str | None) -> dict[str, Any]:
    if not rel:
        return {}
    try:
        data: dict[str, Any] = json.loads((out / rel).read_text())
    except (OSError, ValueError):
        return {}
    return data


def _print_failure(console: Console, row: dict[str, Any], results: dict[str, Any], out: Path) -> None:
    catalog = load_all()
    rules = row.get("violated") or row["requirements"]
    console.print(f"\n{_styled(row['status'])} {escape(row['test'])}")
    if row.get("premise_broken"):  # nothing was judged: no rule line that reads as a defect
        console.print(f"  not judged: {escape(', '.join(rules))} (a set-up step did not hold)")
        rules = []
    for rid in rules:
        req = catalog.get(rid)
        level = results["requirements"].get(rid, {}).get("level", req.level if req else "")
        statement = f": {req.statement}" if req else ""
        console.print(f"  rule:       {escape(rid)} ({level}){escape(statement)}")
    lines = (row.get("message") or "(no message)").strip().splitlines() or ["(no message)"]
    console.print(f"  why:        {escape(lines[0])}")
    for line in lines[1 : 1 + MAX_DETAIL_LINES]:
        console.print(f"              {escape(line)}")
    if len(lines) > 1 + MAX_DETAIL_LINES:
        console.print(f"              ... {len(lines) - 1 - MAX_DETAIL_LINES} more lines in the reproducer")
    for seen in row.get("observations") or []:
        console.print(f"  observed:   {escape(seen)}")
    if row.get("reproducer"):
        console.print(f"  reproducer: {escape(str(out / row['reproducer']))}")
        picture = (out / row["reproducer"]).with_suffix(".svg")
        if picture.exists():
            console.print(f"  swimlanes:  {escape(str(picture))}")
    repro = _reproducer(out, row.get("reproducer"))
    http = repro.get("http")
    if isinstance(http, dict) and http.get("replay"):  # a network check: its requests, replayable with curl
        script = (out / row["reproducer"]).parent / str(http["replay"])
        console.print(f"  http:       bash {escape(str(script))}  (replays the check's requests; docs/results.md)")
    if repro.get("rerun"):
        needs = repro.get("rerun_secrets") or []
        if needs:
            console.print(f"  rerun (set {escape(', '.join('$' + n for n in needs))} first):")
        else:
            console.print("  rerun:")
        console.print(f"    {escape(repro['rerun'])}")


def print_summary(results: dict[str, Any], out: Path, console: Console | None = None) -> int:
    """Print verdicts per profile, each check that did not pass and where the reports are; return
    the exit code."""
    console = console or Console(highlight=False, soft_wrap=True)
    info = results["run_info"]
    partial = bool(info.get("partial"))
    console.print(f"\nlakecert {info['suite_version']}  target={info['target']}  seed={info['seed']}")
    if partial:
        console.print(f"[bold yellow]{PARTIAL}[/]: only the selected checks ran; no certificate is written")
    if stopped := info.get("stopped_at_first_fail"):
        console.print(
            f"[bold yellow]{PARTIAL}[/]: stopped at the first FAIL (fail-fast), after {escape(stopped)}; "
            f"{info.get('checks_selected', '?')} checks selected, {len(results['results'])} run; no certificate"
        )
    elif info.get("interrupted"):  # stopped while the run's own process waited for the other one
        console.print("[bold red]INTERRUPTED[/]: the run was stopped before its end; no certificate")
    elif info.get("complete") is False:  # a process of a shared run ended early
        console.print(
            f"[bold red]INCOMPLETE[/]: {info.get('checks_selected', '?')} checks selected, "
            f"{len(results['results'])} have a result; no certificate"
        )
    bad = [r for r in results["results"] if r["status"] in ("FAIL", "WARN", "ERROR")]
    for row in bad[:MAX_DETAILED]:
        _print_failure(console, row, results, out)
    if len(bad) > MAX_DETAILED:
        console.print(f"\n{len(bad) - MAX_DETAILED} more (each reproducer has its rerun command):")
        for row in bad[MAX_DETAILED:]:
            why = (row.get("message") or "").strip().splitlines()[:1]
            rules = ", ".join(row.get("violated") or row["requirements"])
            console.print(f"  {_styled(row['status'])} {escape(row['test'])} ({escape(rules)}): {escape(''.join(why))}")
    console.print("\nprofiles:")
    for name, p in results["profiles"].items():
        console.print(f"  {name:<22} {PARTIAL if partial else _styled(p['verdict'])}")
        for rid, how in (p.get("left_out") or {}).items():  # the certificate lists them too
            console.print(f"    not judged: {escape(rid)}, {escape(how)}")
    for name, why in (info.get("profiles_not_installed") or {}).items():
        console.print(f"  {name:<22} not run: {escape(why)}")
    failing = {rid: r for rid, r in results["requirements"].items() if r["status"] in ("FAIL", "WARN", "ERROR")}
    for rid, r in sorted(failing.items()):
        console.print(f"  {_styled(r['status'])}{' ' * (6 - len(r['status']))}{escape(rid)} ({r['level']})")
    seen = list(dict.fromkeys(o for r in results["results"] for o in r.get("observations") or []))
    if seen:  # accepted, judged by none of the rules, and worth a vendor's look
        console.print("observed (answers of another shape than the API declares; accepted):")
        for text in seen[:MAX_DETAILED]:
            console.print(f"  {escape(text)}")
    counts = ", ".join(f"{v} {k}" for k, v in results["counts"].items() if v)
    console.print(f"checks: {counts}")
    if partial:
        console.print(f"verdict: [bold yellow]{PARTIAL}[/]" + ("" if bad else " (every selected check passed)"))
    else:
        console.print(f"verdict: {_styled(results['verdict'])}")
    console.print(f"  results:     {out / 'results.json'}")
    if (out / "certificate.json").exists():
        console.print(f"  certificate: {out / 'certificate.json'}")
    console.print(f"  junit:       {out / 'junit.xml'}")
    console.print(f"  allure:      {out / 'allure-results'}  (HTML: lakecert report {out})")
    return exit_code(results)

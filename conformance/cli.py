"""The ``lakecert`` command line: run, targets, selftest, requirements."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, NoReturn

from conformance.config import ConfigError, json_schema, load_config
from conformance.report import allure_history
from conformance.report.summary import print_summary
from conformance.run import USAGE_ERROR
from conformance.version import SUITE_VERSION
from reference_impl.server.cli import add_serve_arguments, serve_main

EPILOG = """\
exit codes (run, merge, selftest, gate, verify-certificate):
  0  certified / valid / ok     1  not certified: a check failed, or the certificate does not match
  2  error: bad usage or configuration, an unavailable target, an ERROR outcome, an unfinished run
  other commands: 0 on success, 2 on error

examples:
  lakecert targets                                       what can be certified
  lakecert run --profile delta-cm-reader --out out/cert  certify the embedded reference client
  LAKECERT__targets__uc__options__url=http://127.0.0.1:8080 \\
  LAKECERT__targets__uc__options__token="$UC_TOKEN" \\
    lakecert run --target uc --profile delta-cm-catalog --out out/uc
  lakecert run --select 'checks/delta/catalog/test_ratification.py::test_gap_is_refused'
  lakecert report out/uc --github-summary                Allure, JUnit, matrix, job summary
  lakecert sign-certificate out/uc/certificate.json --key vendor.pem
  lakecert verify-certificate out/uc/certificate.json --key vendor.pub.pem
  lakecert gate out/uc --baseline lakecert-baseline.yaml
  lakecert diff out/kernel-4.3.1 out/kernel-4.4.0              what changed between two releases
  lakecert requirements --json

docs: {docs}/certify.md (certify), {docs}/results.md (outputs and certificate), {docs}/gate.md
"""
# The documents: docs/ in a checkout (conformance/docs links there), shipped in the wheel too.
DOCS = Path(__file__).resolve().parent / "docs"


def _profiles_arg(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


def _requirements_arg(values: list[str] | None) -> frozenset[str] | None:
    """``--requirement``: known requirement IDs, or a ConfigError before anything is written."""
    from conformance.requirements import load_all

    ids = _profiles_arg(values)  # the same repeatable, comma-separated form as --profile
    if not ids:
        return None
    unknown = sorted(set(ids) - set(load_all()))
    if unknown:
        raise ConfigError(f"unknown requirement(s) {unknown}; see `lakecert requirements`")
    return frozenset(ids)


def _shard_arg(text: str) -> tuple[int, int]:
    from conformance.plugin.split import parse_shard

    try:
        return parse_shard(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def cmd_run(args: argparse.Namespace) -> int:
    """``lakecert run``: the request, typed from the command line, for ``run.execute``."""
    from conformance.run import RunRequest, execute

    return execute(
        RunRequest(
            config_file=Path(args.config) if args.config else None,
            target=args.target,
            seed=args.seed,
            profiles=_profiles_arg(args.profile),
            requirements=_requirements_arg(args.requirement),
            catalog_target=args.catalog_target,
            fail_fast=args.fail_fast,
            label=args.label,
            select=tuple(args.select or ()),
            out=Path(args.out) if args.out else None,
            verbose=args.verbose,
            shard=args.shard,
            shard_costs=Path(args.shard_costs) if args.shard_costs else None,
        )
    )


def cmd_report(args: argparse.Namespace) -> int:
    from conformance.report.junit import write_junit
    from conformance.report.matrix import write_matrix

    dirs = [Path(d) for d in args.dirs]
    missing = [str(d) for d in dirs if not (d / "results.json").exists()]
    if missing:
        print(f"lakecert: no results.json in {missing}", file=sys.stderr)
        return USAGE_ERROR
    for i, d in enumerate(dirs, 1):
        results = json.loads((d / "results.json").read_text())
        print(f"[{i}/{len(dirs)}] {d} ({results['run_info']['target']})", flush=True)
        write_junit(results, d / "junit.xml")
        print(f"  junit:         {d / 'junit.xml'}", flush=True)
        if not args.no_allure and (d / "allure-results").is_dir() and not _allure_report(d, results, args):
            return USAGE_ERROR
    out = (
        Path(args.out)
        if args.out
        else (dirs[0] if len(dirs) == 1 else Path(f"reports/matrix-{time.strftime('%Y%m%d-%H%M%S')}"))
    )
    print(f"matrix:          {write_matrix(dirs, out / 'matrix.html')}")
    if args.github_summary:
        return _github_summary(args.github_summary, dirs)
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    """The parts of a split run as one run: results.json, certificate, then what ``report`` builds."""
    from conformance.report.merge import MergeRefused, check_parts, load_part, write_merged
    from conformance.run import clear_stale, writable_dir

    out = Path(args.out or f"reports/merged-{time.strftime('%Y%m%d-%H%M%S')}").resolve()
    try:
        parts = check_parts([load_part(Path(d)) for d in args.dirs])
        if any(out == p.folder.resolve() for p in parts):
            raise MergeRefused(f"--out {out} is one of the parts; merge into a folder of its own")
    except MergeRefused as e:  # nothing was written: a partial or mixed set leaves no results behind
        print(f"lakecert: merge refused: {e}", file=sys.stderr)
        return USAGE_ERROR
    clear_stale(writable_dir(out, "--out"))  # an earlier merge's certificate must not outlive it
    write_merged(parts, out)
    print(f"merged {len(args.dirs)} parts into {out}", flush=True)
    args.dirs, args.out = [str(out)], None
    if cmd_report(args) != 0:  # JUnit, the Allure HTML and the matrix, as for any run folder
        return USAGE_ERROR
    return print_summary(json.loads((out / "results.json").read_text()), out)


def _allure_report(run_dir: Path, results: dict[str, Any], args: argparse.Namespace) -> bool:
    """The run's Allure HTML, its trend carried on from the target's history; False on failure."""
    from conformance.report.allure_cli import AllureMissing, allure_bin, generate

    info = results["run_info"]
    try:
        allure_bin()  # before the history is touched
    except AllureMissing as e:
        print(f"lakecert: cannot build the Allure report: {e}", file=sys.stderr)
        return False
    history = None
    if not args.no_history:
        history = allure_history.history_file(run_dir, str(info.get("label") or info["target"]))
        if args.history_dir:
            history = Path(args.history_dir) / history.name
        allure_history.forget_previous_report(run_dir, history)
    verdict = "partial run, not a certification" if info.get("partial") else results["verdict"]
    n = len(list((run_dir / "allure-results").glob("*-result.json")))
    print(f"  allure:        {n} results -> HTML (Allure 3, Node)...", end="", flush=True)
    started = time.monotonic()
    try:
        index = generate(
            run_dir / "allure-results",
            run_dir / "allure-report",
            name=f"lakecert: {info['target']} - {verdict}",
            history=history,
            banner=_verdict_banner(results, verdict),
        )
    except (AllureMissing, OSError, subprocess.CalledProcessError) as e:
        detail = (e.stderr or "").strip().splitlines()[-1:] if isinstance(e, subprocess.CalledProcessError) else []
        print(f"\nlakecert: cannot build the Allure report: {e} {' '.join(detail)}".rstrip(), file=sys.stderr)
        return False
    print(f" {time.monotonic() - started:.1f} s\n  allure report: {index}", flush=True)
    if history is not None:
        points = allure_history.remember_report(run_dir, history)
        print(f"  allure trend:  {points} report(s) of {info['target']} in {history}", flush=True)
    return True


def _verdict_banner(results: dict[str, Any], verdict: str) -> tuple[str, bool]:
    """The verdict line across the top of the Allure report, and whether it is good."""
    statuses = {rid: r["status"] for rid, r in results["requirements"].items()}
    judged = [rid for rid, s in statuses.items() if s not in ("NOT_RUN", "NOT_APPLICABLE")]
    failed = sorted(rid for rid, s in statuses.items() if s in ("FAIL", "ERROR"))
    warned = sorted(rid for rid, s in statuses.items() if s == "WARN")
    text = f"lakecert verdict: {verdict.replace('_', ' ')} - {len(judged)} rules judged"
    if failed:
        shown = ", ".join(failed[:6]) + (f" and {len(failed) - 6} more" if len(failed) > 6 else "")
        text += f"; not met: {shown}"
    if warned:
        text += f"; warnings (SHOULD): {len(warned)}"
    if verdict != "CERTIFIED":
        text += ". The overview's percentage counts checks that passed, not the verdict."
    return text, verdict == "CERTIFIED"


def _github_summary(where: str, dirs: list[Path]) -> int:
    from conformance.report.github_summary import render_markdown

    target = os.environ.get("GITHUB_STEP_SUMMARY", "") if where == "$GITHUB_STEP_SUMMARY" else where
    if not target:
        print(
            "lakecert: --github-summary without a FILE needs $GITHUB_STEP_SUMMARY (set by GitHub Actions)",
            file=sys.stderr,
        )
        return USAGE_ERROR
    text = "\n".join(render_markdown(json.loads((d / "results.json").read_text()), d) for d in dirs)
    try:
        with open(target, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        print(f"lakecert: cannot write the job summary {target}: {e.strerror or e}", file=sys.stderr)
        return USAGE_ERROR
    print(f"job summary:   {target}")
    return 0


def cmd_verify_certificate(args: argparse.Namespace) -> int:
    from conformance.report.certificate import MalformedFile, verify_certificate

    cert = Path(args.certificate)
    results = Path(args.results) if args.results else cert.parent / "results.json"
    absent = [str(p) for p in (cert, results) if not p.is_file()]
    if absent:
        print(
            f"lakecert: not found: {', '.join(absent)} (a certificate is checked against its results.json)",
            file=sys.stderr,
        )
        return USAGE_ERROR
    try:
        problems = verify_certificate(cert, results, key=Path(args.key) if args.key else None)
    except MalformedFile as e:
        print(f"lakecert: {e}", file=sys.stderr)
        return USAGE_ERROR
    for p in problems:
        print(f"MISMATCH: {p}")
    print("certificate: " + ("INVALID" if problems else "VALID"))
    return 1 if problems else 0


def cmd_sign_certificate(args: argparse.Namespace) -> int:
    from conformance.report.certificate import MalformedFile, load_certificate
    from conformance.report.signing import sign

    cert = Path(args.certificate)
    try:
        data = load_certificate(cert)
    except MalformedFile as e:
        print(f"lakecert: {e}", file=sys.stderr)
        return USAGE_ERROR
    signed = sign(data, Path(args.key))
    cert.write_text(json.dumps(signed, indent=2) + "\n")
    print(f"signed: {cert} (key {signed['signature']['key_id']})")
    return 0


def cmd_gate(args: argparse.Namespace) -> int:
    import yaml

    from conformance.report.gate import (
        BaselineError,
        compare,
        load_baseline,
        render,
        unfit_for_gate,
        updated_baseline,
    )

    results_file = Path(args.dir) / "results.json"
    if not results_file.exists():
        print(f"lakecert: no results.json in {args.dir}", file=sys.stderr)
        return USAGE_ERROR
    results = json.loads(results_file.read_text())
    baseline_path = Path(args.baseline)
    try:
        old = load_baseline(baseline_path) if baseline_path.exists() else None
    except BaselineError as e:
        print(f"lakecert: {e}", file=sys.stderr)
        return USAGE_ERROR
    refusal = unfit_for_gate(results, old, allow_partial=args.allow_partial)
    if refusal:
        print(f"lakecert: gate refused: {refusal}", file=sys.stderr)
        return USAGE_ERROR
    if args.update:
        try:
            baseline_path.write_text(yaml.safe_dump(updated_baseline(results, old), sort_keys=False, width=120))
        except OSError as e:
            print(f"lakecert: cannot write baseline {baseline_path}: {e.strerror or e}", file=sys.stderr)
            return USAGE_ERROR
        print(f"baseline written: {baseline_path}")
        return 0
    if old is None:
        print(
            f"lakecert: baseline {baseline_path} does not exist; a first run creates it: "
            f"lakecert gate {args.dir} --baseline {baseline_path} --update (docs/gate.md)",
            file=sys.stderr,
        )
        return USAGE_ERROR
    report = compare(results, old)
    ran, recorded = results["run_info"].get("target_versions") or {}, old.get("target_versions")
    if recorded is not None and recorded != ran:  # the gate judges the checks; the release changed too
        print(f"release: the baseline was recorded on {recorded}; this run ran {ran}")
    print(render(report, Path(args.dir)))
    return 1 if report.blocked else 0


def _results_of(folder: str) -> dict[str, Any] | None:
    path = Path(folder) / "results.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        print(f"lakecert: cannot read {path}: {getattr(e, 'strerror', None) or e}", file=sys.stderr)
        return None
    if not isinstance(data, dict) or not {"run_info", "results", "requirements"} <= data.keys():
        print(f"lakecert: {path} is not a lakecert results.json", file=sys.stderr)
        return None
    return data


def cmd_diff(args: argparse.Namespace) -> int:
    from conformance.report.version_diff import Incomparable, as_json, diff, render

    before, after = _results_of(args.before), _results_of(args.after)
    if before is None or after is None:
        return USAGE_ERROR
    try:
        d = diff(before, after)
    except Incomparable as e:
        print(f"lakecert: diff refused: {e}", file=sys.stderr)
        return USAGE_ERROR
    print(json.dumps(as_json(d), indent=2) if args.json else render(d))
    return 1 if d.regressed else 0


# The records of docs/who-may-write.md: fixtures/compatibility in a checkout (conformance/fixtures links
# there), shipped in the wheel too.
COMPAT_RECORDS = Path(__file__).resolve().parent / "fixtures" / "compatibility"


def cmd_record_compat(args: argparse.Namespace) -> int:
    from conformance.report.compat import record, record_name

    into = Path(args.into)
    for folder in args.dirs:
        results = _results_of(folder)
        if results is None:
            return USAGE_ERROR
        try:
            rec = record(results)
        except ValueError as e:
            print(f"lakecert: {folder}: {e}", file=sys.stderr)
            return USAGE_ERROR
        into.mkdir(parents=True, exist_ok=True)
        path = into / record_name(rec)
        path.write_text(json.dumps(rec, indent=1) + "\n")
        print(f"recorded: {path}")
    return 0


def cmd_compat_page(args: argparse.Namespace) -> int:
    import yaml

    from conformance.report.compat import load_records, page

    folder = Path(args.records)
    try:
        reproducers = (
            yaml.safe_load((folder / "reproducers.yaml").read_text()) if (folder / "reproducers.yaml").exists() else {}
        )
        records = load_records(folder)
    except (OSError, ValueError, yaml.YAMLError) as e:
        print(f"lakecert: cannot read the records in {folder}: {e}", file=sys.stderr)
        return USAGE_ERROR
    print(page(records, reproducers or {}), end="")
    return 0


def cmd_targets(args: argparse.Namespace) -> int:
    from conformance.registry import list_targets

    cfg = load_config(Path(args.config) if args.config else None)
    rows = list_targets(cfg)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        # A faulty variant breaks one side (catalog, client, engine): the side says which profiles
        # catch it; a target without one ("-") is judged on every side it declares.
        print(f"{'TARGET':<40} {'KIND':<12} {'SIDE':<15} DESCRIPTION")
        for r in rows:
            side = r.get("side") or "-"
            print(f"{r['name']:<40} {r['kind']:<12} {side:<15} {r.get('description', r.get('adapter', ''))}")
    return 0


def cmd_selftest(args: argparse.Namespace) -> int:
    from conformance.selftest import run_selftest

    if os.environ.get("PYTHONHASHSEED") != "0":
        # Every run is forked from this process and shares its hash seed: fix it, so that a
        # self-test gives the same verdicts every time (set iteration order included).
        argv = ["selftest", "--jobs", str(args.jobs), *(["--out", args.out] if args.out else [])]
        argv += (["--json"] if args.json else []) + (["--complete"] if args.complete else [])
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        os.execve(sys.executable, [sys.executable, "-m", "conformance.cli", *argv], env)

    return run_selftest(
        Path(args.out or f"reports/selftest-{time.strftime('%Y%m%d-%H%M%S')}"),
        jobs=args.jobs,
        as_json=args.json,
        complete=args.complete,
    )


def cmd_requirements(args: argparse.Namespace) -> int:
    from conformance.requirements.docs import render, render_json

    print(json.dumps(render_json(), indent=2) if args.json else render())
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lakecert",
        description="Conformance suite for lakehouse catalogs and table-format clients.",
        epilog=EPILOG.format(docs=DOCS),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"lakecert {SUITE_VERSION}")
    sub = p.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND")
    run = sub.add_parser("run", help="certify a target against one or more profiles")
    run.add_argument("--target", help="target name (default: the config's, else reference); see: lakecert targets")
    run.add_argument("--profile", action="append", help="profile(s), repeatable or comma-separated")
    run.add_argument(
        "--catalog-target",
        help="interop: bind the target's client to this target's catalog (e.g. uc); profile delta-cm-interop",
    )
    run.add_argument("--config", help="YAML configuration file")
    run.add_argument("--out", help="output directory (default: reports/<timestamp>)")
    run.add_argument("--seed", type=int, help="seed for races and generated schedules")
    run.add_argument(
        "--label",
        help="what this run tested, shown in the matrix, Allure and the certificate (default: the target "
        "and the URL it was given, if any)",
    )
    run.add_argument(
        "--select", action="append", help="rerun only this check (a node id from a reproducer), repeatable"
    )
    run.add_argument(
        "--requirement",
        action="append",
        help="run only the checks of these requirement IDs, repeatable or comma-separated (a partial run; "
        "the profiles default to theirs)",
    )
    run.add_argument(
        "--fail-fast",
        action="store_true",
        help="stop at the first FAIL, with its reproducer (a partial run: no certificate, exit 1)",
    )
    run.add_argument(
        "--shard",
        type=_shard_arg,
        metavar="K/N",
        help="run part K of N of the plan (a partial run; lakecert merge judges the N folders as one run)",
    )
    run.add_argument(
        "--shard-costs",
        metavar="FILE",
        help="an earlier run's results.json: each check's duration balances the parts (default: an estimate)",
    )
    run.add_argument("-v", "--verbose", action="store_true")
    run.set_defaults(func=cmd_run)
    tg = sub.add_parser("targets", help="list the targets lakecert can run")
    tg.add_argument("--json", action="store_true")
    tg.add_argument("--config", help="YAML configuration file (adds its targets)")
    tg.set_defaults(func=cmd_targets)
    st = sub.add_parser("selftest", help="run the reference and every faulty variant")
    st.add_argument("--out", help="output directory")
    st.add_argument("--jobs", type=int, default=0, help="parallel runs (default: CPU count)")
    st.add_argument("--json", action="store_true", help="print the outcome as JSON")
    st.add_argument(
        "--complete",
        action="store_true",
        help="run each variant on every profile of its side, not only the checks of the rules it breaks",
    )
    st.set_defaults(func=cmd_selftest)
    mg = sub.add_parser("merge", help="merge the folders of a run split with --shard K/N into one run and verdict")
    mg.add_argument("dirs", nargs="+", help="the N part folders (each with results.json)")
    mg.add_argument("--out", help="where to write the merged run (default: reports/merged-<timestamp>)")
    mg.add_argument("--no-allure", action="store_true", help="skip the Allure HTML report")
    mg.add_argument("--history-dir", metavar="DIR", help="as for report")
    mg.add_argument("--no-history", action="store_true", help="as for report")
    mg.add_argument("--github-summary", nargs="?", const="$GITHUB_STEP_SUMMARY", metavar="FILE", help="as for report")
    mg.set_defaults(func=cmd_merge)
    rp = sub.add_parser("report", help="Allure HTML, JUnit XML and the compatibility matrix from run directories")
    rp.add_argument("dirs", nargs="+", help="run directories (each with results.json)")
    rp.add_argument("--out", help="where to write matrix.html (default: the run directory, or reports/matrix-*)")
    rp.add_argument("--no-allure", action="store_true", help="skip the Allure HTML report")
    rp.add_argument(
        "--history-dir",
        metavar="DIR",
        help="where each target's Allure history (trend) file lives (default: allure-history/ beside the run"
        " directories, e.g. reports/allure-history/)",
    )
    rp.add_argument("--no-history", action="store_true", help="neither read nor extend the Allure history")
    rp.add_argument(
        "--github-summary",
        nargs="?",
        const="$GITHUB_STEP_SUMMARY",
        metavar="FILE",
        help="append a Markdown summary for a GitHub Actions job (default FILE: $GITHUB_STEP_SUMMARY)",
    )
    rp.set_defaults(func=cmd_report)
    vc = sub.add_parser("verify-certificate", help="check that a certificate matches its results.json")
    vc.add_argument("certificate")
    vc.add_argument("--results", help="results.json (default: beside the certificate)")
    vc.add_argument("--key", help="the vendor's Ed25519 public key (PEM): also check the certificate's signature")
    vc.set_defaults(func=cmd_verify_certificate)
    sg = sub.add_parser("sign-certificate", help="sign a certificate with the vendor's Ed25519 private key (PEM)")
    sg.add_argument("certificate")
    sg.add_argument(
        "--key", required=True, help="Ed25519 private key, unencrypted PEM (openssl genpkey -algorithm ed25519)"
    )
    sg.set_defaults(func=cmd_sign_certificate)
    gt = sub.add_parser("gate", help="compare a run with a baseline of known failures (docs/gate.md)")
    gt.add_argument("dir", help="run directory with results.json")
    gt.add_argument("--baseline", required=True, help="baseline YAML file")
    gt.add_argument("--update", action="store_true", help="write the baseline from this run instead")
    gt.add_argument(
        "--allow-partial",
        action="store_true",
        help="judge a --select, interrupted or incomplete run, or one with other profiles than the baseline's",
    )
    gt.set_defaults(func=cmd_gate)
    df = sub.add_parser(
        "diff", help="compare two runs of one target (two releases under test) check by check (docs/gate.md)"
    )
    df.add_argument("before", help="run directory of the first release (results.json)")
    df.add_argument("after", help="run directory of the second release")
    df.add_argument("--json", action="store_true", help="the changes as JSON")
    df.set_defaults(func=cmd_diff)
    rc = sub.add_parser("record-compat", help="keep an engine run as a record of docs/who-may-write.md")
    rc.add_argument("dirs", nargs="+", help="run directories of engine targets (results.json)")
    rc.add_argument("--into", default=str(COMPAT_RECORDS), help="the records' folder (default fixtures/compatibility)")
    rc.set_defaults(func=cmd_record_compat)
    cp = sub.add_parser("compat-page", help="print the page of which engines may write which tables (Markdown)")
    cp.add_argument("--records", default=str(COMPAT_RECORDS), help="the records' folder")
    cp.set_defaults(func=cmd_compat_page)
    sv = sub.add_parser("serve", help="serve the reference catalog (or a faulty variant) over HTTP (docs/server.md)")
    add_serve_arguments(sv)
    sv.set_defaults(func=serve_main)
    rq = sub.add_parser("requirements", help="print the requirement catalog with its coverage (Markdown or JSON)")
    fmt = rq.add_mutually_exclusive_group()
    fmt.add_argument("--markdown", action="store_true", help="Markdown, as in docs/requirements.md (the default)")
    fmt.add_argument("--json", action="store_true", help="JSON: one object per requirement")
    rq.set_defaults(func=cmd_requirements)
    cs = sub.add_parser("config-schema", help="print the JSON Schema of the configuration file")
    cs.set_defaults(func=lambda args: print(json.dumps(json_schema(), indent=2)) or 0)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse exits 2 on bad usage, 0 on --help
        return int(e.code or 0)
    try:
        return int(args.func(args))
    except ConfigError as e:
        print(f"lakecert: {e}", file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:  # the reader of our output went away (`lakecert targets --json | head`)
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        return 0
    except KeyboardInterrupt:
        print("lakecert: interrupted", file=sys.stderr)
        return USAGE_ERROR
    except Exception:
        log = Path(tempfile.gettempdir()) / f"lakecert-crash-{time.strftime('%Y%m%d-%H%M%S')}.log"
        log.write_text(traceback.format_exc())
        kind = type(sys.exc_info()[1]).__name__
        print(f"lakecert: internal error ({kind}); the traceback is in {log}", file=sys.stderr)
        return USAGE_ERROR


def entry() -> NoReturn:
    """The ``lakecert`` command."""
    sys.exit(main())


if __name__ == "__main__":
    entry()

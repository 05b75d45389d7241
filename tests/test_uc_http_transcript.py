"""The HTTP-level transcript of the `uc` target: the wire client records every exchange (bodies as
digests, credentials redacted), and a failing run's reproducer carries it with a curl script whose
replay against the server answers as the run was answered."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.adapters.uc.wire import UCClient, UCConnectionError, UCHttpError
from conformance.observe.http_transcript import REDACTED, HttpLog, capture, exchange
from conformance.report.http_replay import write_replay
from tests.helpers import lakecert, results
from tests.tooling.server import served

TOKEN = "s3cr3t-t0ken-value"
GAP_CHECK = "checks/delta/catalog/test_ratification.py::test_gap_is_refused"


def test_client_records_every_exchange_in_order_with_secrets_redacted(tmp_path: Path) -> None:
    with served("--db", str(tmp_path / "c.sqlite")) as (url, _):
        client = UCClient(url, TOKEN)
        client.request("GET", "/catalogs?max_results=1")  # outside any log: kept nowhere
        log = HttpLog()
        body = {"name": "t1", "catalog_name": "unity", "schema_name": "default"}
        with capture(log):
            client.request("GET", "/catalogs?max_results=1")
            client.request("POST", "/staging-tables", body)
            with pytest.raises(UCHttpError):
                client.request("GET", "/tables/unity.default.nope")
        client.close()
    seen = log.exchanges()
    assert [(e.method, e.target, e.status) for e in seen] == [
        ("GET", "/api/2.1/unity-catalog/catalogs?max_results=1", 200),
        ("POST", "/api/2.1/unity-catalog/staging-tables", 200),
        ("GET", "/api/2.1/unity-catalog/tables/unity.default.nope", 404),
    ]
    assert seen[1].request_body == json.dumps(body).encode()
    assert seen[1].request_sha256 == hashlib.sha256(json.dumps(body).encode()).hexdigest()
    assert all(e.response_size > 0 and len(e.response_sha256) == 64 for e in seen)
    assert all(dict(e.request_headers)["authorization"] == REDACTED for e in seen)
    assert TOKEN not in repr(seen)


def test_no_answer_is_recorded_and_raised_as_an_os_error() -> None:
    client = UCClient("http://127.0.0.1:9", TOKEN, timeout_s=10)  # the discard port: nothing listens
    log = HttpLog()
    with capture(log), pytest.raises(UCConnectionError) as raised:
        client.request("GET", "/catalogs")
    client.close()
    assert isinstance(raised.value, OSError)
    [ex] = log.exchanges()
    assert ex.status is None and ex.error is not None and TOKEN not in repr(ex)


def test_failing_run_reproducer_carries_the_transcript_and_curl_replays_it(tmp_path: Path) -> None:
    assert shutil.which("curl"), "curl is needed to replay reproducers"
    out = tmp_path / "out"
    env = {"LAKECERT__targets__uc__options__token": TOKEN}
    with served("--db", str(tmp_path / "c.sqlite"), "--fault", "accept-gap") as (url, _):
        env["LAKECERT__targets__uc__options__url"] = url
        proc = lakecert("run", "--target", "uc", "--select", GAP_CHECK, "--out", str(out), env=env)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        [row] = results(out)["results"]
        assert row["status"] == "FAIL"
        repro_path = out / row["reproducer"]
        http = json.loads(repro_path.read_text())["http"]
        script = repro_path.parent / http["replay"]
        replay = subprocess.run(
            ["bash", str(script)],
            capture_output=True,
            text=True,
            env={**os.environ, "LAKECERT_REPLAY_URL": url, http["token_variable"]: TOKEN},
            timeout=600,  # a hang guard only
        )
    assert replay.returncode == 0, replay.stderr
    exchanges = http["exchanges"]
    commits = [e for e in exchanges if e["target"].endswith("/delta/preview/commits")]
    # The ratified gap is on the wire: every proposal answered 200, the last one over a gap.
    assert [e["status"] for e in commits] == [200] * len(commits) and len(commits) >= 2
    for e in exchanges:
        assert e["request_headers"].get("authorization") == REDACTED
        assert len(e["request_sha256"]) == 64 and len(e["response_sha256"]) == 64
    body_files = sorted((script.parent / "bodies").iterdir())
    assert [hashlib.sha256(p.read_bytes()).hexdigest() for p in body_files] == [
        e["request_sha256"] for e in exchanges if e["method"] == "POST"
    ]
    # The token never reaches the reproducer's files, only the variable's name does.
    assert not [p for p in out.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert http["token_variable"] in script.read_text()
    # One line per exchange: seq method target recorded replayed. The same table's commits are
    # answered again as recorded (identical proposals of ratified commits are answered 200).
    lines = [line.split() for line in replay.stdout.splitlines()]
    assert [int(line[0]) for line in lines] == [e["seq"] for e in exchanges]
    replayed = {int(seq): (recorded, now) for seq, _, _, recorded, now in lines}
    assert {replayed[e["seq"]] for e in commits} == {("200", "200")}


def test_replay_script_keeps_encoded_targets_and_unanswered_requests(tmp_path: Path) -> None:
    target = "/api/2.1/unity-catalog/tables/unity.default.no%5Fsuch"
    with served("--db", str(tmp_path / "c.sqlite")) as (url, _):
        exchanges = [
            exchange(url, "GET", target, 404, [("Authorization", "Bearer x")], b"", b"{}"),
            exchange(url, "POST", "/api/2.1/unity-catalog/staging-tables", None, [], b"{}", b"", "ConnectError"),
        ]
        entry = write_replay(tmp_path / "r.http", exchanges, "UC_TOKEN")
        replay = subprocess.run(
            ["bash", str(tmp_path / entry["replay"])], capture_output=True, text=True, timeout=600
        )  # a hang guard only
    assert replay.returncode == 0, replay.stderr
    lines = [line.split() for line in replay.stdout.splitlines()]
    assert lines[0] == ["0", "GET", target, "404", "404"]
    assert lines[1][:4] == ["1", "POST", "/api/2.1/unity-catalog/staging-tables", "-"]
    assert [e["status"] for e in entry["exchanges"]] == [404, None]
    assert (tmp_path / "r.http" / "bodies" / "0001.body").read_bytes() == b"{}"

"""A credential the catalog refuses is the user's set-up, never the product's fault: against
`lakecert serve --tokens`, a reader's token (which may not create tables) and a writer's (which
may not drop them) give no FAIL and no WARN, and the ERRORs name the refused call. The admin's
token certifies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import QUICK_BUDGET, lakecert, results
from tests.tooling.server import served

TOKENS = """
tokens:
  admin-token: admin
  writer-token: {role: writer}
  reader-token: {role: reader}
"""


def _certify(work: Path, url: str, token: str) -> tuple[int, dict[str, Any]]:
    config = {
        "target": "uc",
        "profiles": ["delta-cm-catalog"],
        "targets": {"uc": {"options": {"url": url, "token": token}}},
    }
    (work / f"{token}.yaml").write_text(json.dumps(config))
    out = work / token
    proc = lakecert("run", "--config", str(work / f"{token}.yaml"), "--out", str(out), env=QUICK_BUDGET)
    assert (out / "results.json").exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc.returncode, results(out)


@pytest.mark.slow
def test_refused_credentials_are_errors_of_the_set_up_and_the_admin_certifies(tmp_path: Path) -> None:
    (tmp_path / "tokens.yaml").write_text(TOKENS)
    with served("--db", str(tmp_path / "c.sqlite"), "--tokens", str(tmp_path / "tokens.yaml")) as (url, _):
        verdicts = {token: _certify(tmp_path, url, token) for token in ("reader-token", "writer-token", "admin-token")}
    for token in ("reader-token", "writer-token"):
        code, res = verdicts[token]
        statuses = {r["status"] for r in res["results"]}
        assert "FAIL" not in statuses and "WARN" not in statuses, (token, statuses)
        refused = [r for r in res["results"] if r["status"] == "ERROR"]
        assert refused and all("refused lakecert's credential" in r["message"] for r in refused), token
        assert code == 2, token
    code, res = verdicts["admin-token"]
    assert code == 0 and res["verdict"] == "CERTIFIED"
    # Runs against two servers are told apart in the matrix and Allure: the label names the URL.
    assert res["run_info"]["label"] == f"uc @ {url}"

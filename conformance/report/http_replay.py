"""A check's HTTP transcript beside its reproducer, replayable with curl.

``write_replay`` writes, for the exchanges of one check, a folder beside the reproducer's JSON:

- ``bodies/NNNN.body``: each request body as it was sent (``curl --data-binary @file`` sends it
  byte for byte);
- ``replay.sh``: one curl call per exchange, in the recorded order, against ``$LAKECERT_REPLAY_URL``
  (default: the server the run talked to). Each call prints ``seq method target recorded replayed``
  (the recorded and the replayed status), so a reader sees at once where the server now answers
  otherwise. The bearer token comes from an environment variable named in the script (the same one
  the reproducer's ``rerun`` asks for); its value is never written anywhere.

The reproducer's JSON carries the ordered transcript itself (``http.exchanges``: digests and sizes
of both bodies, statuses) and the script's path.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.observe.http_transcript import REDACTED, HttpExchange

REPLAY_URL_VARIABLE = "LAKECERT_REPLAY_URL"


def _curl(seq: int, ex: HttpExchange, body: str | None) -> str:
    words = ["curl", "-sS", "-o", "/dev/null", "-X", ex.method]
    for name, value in ex.request_headers:
        if value != REDACTED:
            words += ["-H", f"{name}: {value}"]
    line = shlex.join(words) + ' "${AUTH[@]}"'
    if body is not None:
        line += f' --data-binary "@$HERE/{body}"'
    recorded = "-" if ex.status is None else str(ex.status)
    shown = ex.target.replace("%", "%%")  # curl's -w reads % as the start of a variable
    status_line = f"{seq} {ex.method} {shown} {recorded} %{{http_code}}\\n"
    line += " -w " + shlex.quote(status_line)
    return line + f' "$BASE"{shlex.quote(ex.target)}'


def replay_script(exchanges: Sequence[HttpExchange], token_variable: str, bodies: dict[int, str]) -> str:
    base = exchanges[0].base_url if exchanges else "http://127.0.0.1:8080"
    lines = [
        "#!/usr/bin/env bash",
        "# Replays a check's HTTP exchanges in their recorded order (written by lakecert).",
        "# Prints per request: seq method target recorded-status replayed-status.",
        f"# Against another server: {REPLAY_URL_VARIABLE}=http://host:port bash replay.sh",
        f"# Credentials: set {token_variable} to a bearer token (never saved with the reproducer).",
        "set -u",
        'HERE="$(cd "$(dirname "$0")" && pwd)"',
        f'BASE="${{{REPLAY_URL_VARIABLE}:-{base}}}"',
        "AUTH=()",
        f'if [ -n "${{{token_variable}:-}}" ]; then AUTH=(-H "Authorization: Bearer ${{{token_variable}}}"); fi',
    ]
    for seq, ex in enumerate(exchanges):
        lines.append(_curl(seq, ex, bodies.get(seq)))
    return "\n".join(lines) + "\n"


def write_replay(
    folder: Path, exchanges: Sequence[HttpExchange], token_variable: str, dropped: int = 0
) -> dict[str, Any]:
    """Bodies and ``replay.sh`` into ``folder``; the reproducer's ``http`` entry (paths relative to
    the reproducers folder, the folder's parent)."""
    bodies: dict[int, str] = {}
    (folder / "bodies").mkdir(parents=True, exist_ok=True)
    for seq, ex in enumerate(exchanges):
        if ex.request_body or ex.method in ("POST", "PUT", "PATCH"):
            name = f"bodies/{seq:04d}.body"
            (folder / name).write_bytes(ex.request_body)
            bodies[seq] = name
    script = folder / "replay.sh"
    script.write_text(replay_script(exchanges, token_variable, bodies))
    script.chmod(0o755)
    return {
        "replay": str(script.relative_to(folder.parent)),
        "token_variable": token_variable,
        "replay_url_variable": REPLAY_URL_VARIABLE,
        "dropped": dropped,
        "exchanges": [ex.to_json(seq) for seq, ex in enumerate(exchanges)],
    }

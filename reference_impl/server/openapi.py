"""The OpenAPI document of what ``lakecert serve`` serves (also at ``/openapi.json``).

``python -m reference_impl.server.openapi [PATH]`` writes it (default ``docs/openapi.json``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from reference_impl.server.cli import build, parse_serve_args

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def document() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as work:
        built = build(parse_serve_args(["--db", str(Path(work) / "catalog.sqlite")]))
        try:
            doc: dict[str, Any] = built.app.openapi()
            return doc
        finally:
            built.close()


def render() -> str:
    return json.dumps(document(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else DEFAULT_PATH
    path.write_text(render())
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Write the RFC worked-example golden table to fixtures/rfc-worked-example (or --out DIR)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reference_impl.delta.rfc_fixture import write_fixture  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "fixtures" / "rfc-worked-example")
    args = parser.parse_args(argv)
    write_fixture(args.out.resolve())
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

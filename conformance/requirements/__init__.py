"""The requirement catalog: every normative rule as data (one YAML file per spec)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml

Level = Literal["MUST", "SHOULD", "MAY"]
LEVELS: tuple[Level, ...] = ("MUST", "SHOULD", "MAY")
BINDS = ("catalog", "writer", "reader", "engine", "pair")  # pair: a client and the catalog it is bound to
HERE = Path(__file__).parent


@dataclass(frozen=True)
class Spec:
    key: str
    name: str
    revision: str
    url: str


@dataclass(frozen=True)
class Breach:
    """One way an implementation can break a requirement, and the checks that see it (issue 18)."""

    way: str
    checks: tuple[str, ...]  # check function names (``test_...``) marked with the requirement


@dataclass(frozen=True)
class Requirement:
    id: str
    level: Level
    binds: str
    profile: str
    section: str
    statement: str
    spec: Spec
    untestable: str | None = None
    violations: tuple[Breach, ...] = ()
    # Why the rule no longer binds anyone (its ID stays reserved, never reused): a retired rule is
    # in no profile, has no checks, and is listed with its reason.
    retired: str | None = None

    @property
    def link(self) -> str:
        """Where the rule's section is, for reports (GitHub renders heading anchors)."""
        anchor = self.section.split(";")[0].split("(")[0].strip().lower()
        anchor = "-".join(w for w in anchor.replace("-", " ").split())
        return f"{self.spec.url}#{anchor}"


class RequirementError(ValueError):
    """The catalog itself is malformed."""


def _breaches(path: Path, rid: object, raw: object) -> tuple[Breach, ...]:
    """``violations:``: a list of ``{way: <text>, checks: [<check name>, ...]}``."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        raise RequirementError(f"{path.name}: {rid!r}: violations must be a non-empty list")
    out = []
    for item in raw:
        ok = isinstance(item, dict) and set(item) == {"way", "checks"}
        way, checks = (item.get("way"), item.get("checks")) if isinstance(item, dict) else (None, None)
        ok = ok and isinstance(way, str) and bool(way.strip()) and isinstance(checks, list) and bool(checks)
        if not ok or not all(isinstance(c, str) and c.startswith("test_") for c in checks or []):
            raise RequirementError(f"{path.name}: {rid!r}: bad violation {item!r}")
        out.append(Breach(str(way), tuple(checks or [])))
    return tuple(out)


def _parse(path: Path) -> list[Requirement]:
    # libyaml's loader (PyYAML's wheels carry it) reads the specs' ~300 entries 7x faster than
    # the pure-Python one: every run and every process of a shared run parses them.
    doc = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    s = doc["spec"]
    spec = Spec(path.stem, s["name"], s["revision"], s["url"])
    out = []
    for raw in doc["requirements"]:
        unknown = set(raw) - {
            "id",
            "level",
            "binds",
            "profile",
            "section",
            "statement",
            "untestable",
            "violations",
            "retired",
        }
        if unknown or raw.get("level") not in LEVELS or raw.get("binds") not in BINDS:
            raise RequirementError(f"{path.name}: bad entry {raw.get('id')!r}")
        fields = {k: v for k, v in raw.items() if k != "violations"}
        out.append(Requirement(spec=spec, violations=_breaches(path, raw.get("id"), raw.get("violations")), **fields))
    return out


@functools.cache
def load_all(directory: Path = HERE) -> dict[str, Requirement]:
    """All requirements by ID, across every spec file; IDs must be unique."""
    reqs: dict[str, Requirement] = {}
    for path in sorted(directory.glob("*.yaml")):
        for r in _parse(path):
            if r.id in reqs:
                raise RequirementError(f"duplicate requirement ID {r.id}")
            reqs[r.id] = r
    return reqs


def profiles() -> dict[str, list[Requirement]]:
    """Profile name -> its requirements in force (not retired), in catalog order."""
    out: dict[str, list[Requirement]] = {}
    for r in load_all().values():
        if r.retired is None:
            out.setdefault(r.profile, []).append(r)
    return out

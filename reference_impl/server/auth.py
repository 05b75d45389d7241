"""Bearer tokens with roles, from a YAML tokens file.

```yaml
tokens:
  "s3cret-admin": admin                       # short form: the role
  "s3cret-etl": {role: writer}                # every table
  "s3cret-orders": {role: writer, tables: ["unity.default.orders", "unity.sales.*"]}
  "s3cret-bi": {role: reader}
```

Roles are ordered: ``reader`` (resolve, list, read commits) < ``writer`` (create tables,
commit data changes, report publication) < ``admin`` (also commits that change the protocol
or metadata, i.e. schema and table properties, and catalog/schema creation). ``tables``
limits a token to the tables whose full name matches one of the glob patterns. Without a
tokens file the server is open: every request acts as an unscoped admin.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal, cast

import yaml

from reference_impl.server.errors import ApiError

Role = Literal["reader", "writer", "admin"]
ROLES: tuple[Role, ...] = ("reader", "writer", "admin")


class TokenFileError(ValueError):
    """The tokens file is unreadable or malformed."""


@dataclass(frozen=True)
class Principal:
    label: str  # for logs and messages; never the token itself
    role: Role
    tables: tuple[str, ...] | None = None  # glob patterns of full table names; None: every table

    def has_role(self, needed: Role) -> bool:
        return ROLES.index(self.role) >= ROLES.index(needed)

    def may_touch(self, full_name: str) -> bool:
        return self.tables is None or any(fnmatchcase(full_name, p) for p in self.tables)

    def require(self, needed: Role, table: str | None = None, *, action: str) -> None:
        """``PERMISSION_DENIED`` (403) unless the role and the table scope allow ``action``."""
        if not self.has_role(needed):
            raise ApiError("PERMISSION_DENIED", f"{action} needs the {needed} role; {self.label} is a {self.role}")
        if table is not None and not self.may_touch(table):
            raise ApiError("PERMISSION_DENIED", f"{self.label} is not allowed on table {table}")

    @property
    def unscoped(self) -> bool:
        return self.tables is None


OPEN_ACCESS = Principal("anonymous (no tokens configured)", "admin")


def _principal(index: int, spec: object) -> Principal:
    label = f"token #{index}"
    if isinstance(spec, str):
        spec = {"role": spec}
    if not isinstance(spec, dict) or set(spec) - {"role", "tables"}:
        raise TokenFileError(f"{label}: expected a role or {{role, tables}}")
    role = spec.get("role")
    if role not in ROLES:
        raise TokenFileError(f"{label}: role must be one of {', '.join(ROLES)}")
    tables = spec.get("tables")
    if tables is not None and (not isinstance(tables, list) or not all(isinstance(t, str) and t for t in tables)):
        raise TokenFileError(f"{label}: tables must be a list of full table names or glob patterns")
    return Principal(label, cast(Role, role), tuple(tables) if tables is not None else None)


def load_tokens(path: str | Path) -> dict[str, Principal]:
    """Token -> principal; ``TokenFileError`` for anything malformed."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as e:
        raise TokenFileError(f"cannot read tokens file {path}: {e}") from e
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, dict) or not tokens:
        raise TokenFileError(f"{path}: expected a non-empty `tokens:` mapping")
    out: dict[str, Principal] = {}
    for i, (token, spec) in enumerate(tokens.items(), start=1):
        if not isinstance(token, str) or not token.strip() or any(c.isspace() for c in token):
            raise TokenFileError(f"token #{i}: a token is a non-empty string without spaces")
        out[token] = _principal(i, spec)
    return out


class Authenticator:
    """Maps an ``Authorization`` header to a principal; ``None`` tokens means open access."""

    def __init__(self, tokens: dict[str, Principal] | None) -> None:
        self._tokens = [(t.encode(), p) for t, p in (tokens or {}).items()]
        self.open = tokens is None

    def authenticate(self, authorization: str | None) -> Principal:
        if self.open:
            return OPEN_ACCESS
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError("UNAUTHENTICATED", "missing bearer token (Authorization: Bearer <token>)")
        given = token.strip().encode()
        found = None
        for known, principal in self._tokens:  # compare with every token: no early exit on a match
            if hmac.compare_digest(known, given):
                found = principal
        if found is None:
            raise ApiError("UNAUTHENTICATED", "invalid access token")
        return found

"""Reads of tables whose ratified commits the catalog holds inline (RFC "Terminology: Commits").

Inline commits exist only where the client's catalog API carries commit content. A client bound
through an API without them (Unity Catalog's lists commits as staged files) cannot be handed such
a table; it raises ``NotSupported``, and the checks that need inline commits are then
NOT_APPLICABLE. Only then: a refusal on a table without inline commits is the reader's failure.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance.contract.delta import RatifiedCommit

REASON = "the client's catalog API cannot carry inline commits (verified: the table has some and the read was refused)"


def has_inline(commits: Sequence[RatifiedCommit]) -> bool:
    return any(c.inline_content is not None for c in commits)

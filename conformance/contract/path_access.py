"""Optional contract: path-based access to a table, without a catalog.

Catalog-managed tables must not be read or written through their storage location alone
(RFC "Catalog-managed tables": filesystem-based access is not supported; the feature is there
to warn filesystem-based readers and to block filesystem-based writers). The checks of the
``delta-cm-path-access`` profile hand a client only the location of a catalog-managed table and
see what it does with it.

A client (the object a target's ``make_client`` returns) offers path access by also having the
two methods below. Structural typing: nothing to inherit. A client without them is judged
NOT_APPLICABLE, after lakecert verified that nothing was written to the table.

- ``read_path(location)``: read the table at ``location`` (an absolute ``file://`` or
  ``s3://`` URI, the table root) as the client would read any Delta table given its path; return
  its rows as dicts (schema ``id: long, value: string``) sorted by ``id``.
- ``append_path(location, rows)``: append ``rows`` to the table at ``location`` as the client
  would append to any Delta table given its path.

**Raising any exception is a refusal**, which is what a client must do with a catalog-managed
table: lakecert never reads the exception's class or text to judge (it records the class in the
transcript). Returning rows from ``read_path``, or any new or changed file in ``_delta_log``
(published commits or ``_staged_commits``) after ``append_path``, is non-conformant.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class PathClient(Protocol):
    """A client that can be pointed at a table's storage location instead of a catalog name."""

    def read_path(self, location: str) -> list[dict[str, object]]:
        """Rows of the table at ``location``, sorted by ``id``; raise to refuse."""

    def append_path(self, location: str, rows: Sequence[dict[str, object]]) -> None:
        """Append ``rows`` to the table at ``location``; raise to refuse."""

"""Catalogs of the target built over warehouses whose path has awkward characters, for
CAT-RESOLVE-LOCATION.

RFC "Table Discovery" and "Reader Requirements": resolving a name returns the table's storage location,
the one the table was created at. A catalog that passes the location through a URL codec on one path
(quoting it for an HTTP answer, form-decoding it from a query string) and not on the other answers
another location, but only when the path has characters such a codec changes; the run's warehouse is
plain ASCII. So the check builds further catalogs of the target, each over a warehouse of its own below
the run's, whose last folder holds one kind of such character (every kind on every run): the catalog is
handed the warehouse as lakecert hands any warehouse (``TargetEnv``), in a work folder of its own, as the
restart nemesis rebuilds one. A target whose catalog places tables where it likes (a server with a
warehouse of its own) is not judged here: its locations do not follow the warehouse it is handed.
"""

from __future__ import annotations

from dataclasses import replace

from conformance.contract.delta import Catalog
from conformance.observe.deadline import DeadlineExceeded, deadline
from conformance.run_context import RunContext

# (what, the warehouse's last folder): each changes under quoting, unquoting or form decoding. No
# percent sign: in a URI ``%41`` and ``A`` name the same thing (RFC 3986 section 6.2.2.2), so a catalog
# that normalises one of its answers would be blamed for what URI semantics allows.
AWKWARD: tuple[tuple[str, str], ...] = (
    ("a space", "team data"),
    ("a hash", "h#1"),
    ("non-ASCII letters", "caf\u00e9_\u00fc"),
    ("a plus sign", "a+b"),
)


def awkward_warehouse(lakecert: RunContext, index: int) -> str:
    """The warehouse of the ``index``-th awkward catalog: below the run's, its own folder."""
    return f"{lakecert.env.warehouse_uri.rstrip('/')}/awkward-{index}/{AWKWARD[index][1]}"


def catalog_over(lakecert: RunContext, index: int) -> Catalog | str:
    """A new catalog of the target over ``awkward_warehouse(index)``; or, when the target would not
    build one there, why (a target may refuse a warehouse path it cannot serve: then it is not judged)."""
    workdir = lakecert.env.workdir / f"awkward-warehouse-{index}"
    workdir.mkdir(exist_ok=True)
    env = replace(lakecert.env, workdir=workdir, warehouse_uri=awkward_warehouse(lakecert, index))
    try:
        with deadline(lakecert.config.settings.deadlines.call_s, "the target's make_catalog"):
            return lakecert.target.make_catalog(env)
    except (Exception, DeadlineExceeded) as e:  # a refusal of the warehouse is the target's to make
        return f"{type(e).__name__}: {e}"


def close(catalog: Catalog) -> None:
    """Close a catalog that has a ``close`` (the reference's holds a database open)."""
    closer = getattr(catalog, "close", None)
    if callable(closer):
        closer()

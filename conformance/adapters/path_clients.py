"""Built-in targets for clients that do not implement catalog-managed tables.

delta-rs (``deltalake``), polars and a naive Parquet reader (``pyarrow.dataset``) know nothing
of a managing catalog: all they can be given is a table's path. They implement only the path
contract (``path_contract.PathClient``), and are judged only on the ``delta-cm-path-access``
profile: given a catalog-managed table's location, they must refuse to read and write it.

Every ``DeltaClient`` method of their clients raises ``NotSupported``. They read and write the
run's warehouse directly with their own I/O (not through ``env.storage``), so only local
(``file://``) warehouses are supported; the checks judge what they find in storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from typing import Any, ClassVar
from urllib.parse import unquote, urlparse

from conformance.contract.delta import Catalog, NotSupported, ReadResult
from conformance.contract.target import Kind, Side, TargetEnv

PATH_ACCESS_PROFILE = "delta-cm-path-access"
Rows = list[dict[str, object]]


def local_path(location: str) -> str:
    """The filesystem path of a ``file://`` location; other URIs are not supported."""
    parsed = urlparse(location)
    if parsed.scheme != "file":
        raise ValueError(f"path clients only run on local (file://) warehouses, not {location}")
    return unquote(parsed.path)


def _sorted(rows: list[dict[str, Any]]) -> Rows:
    """The contract's row shape, sorted by ``id`` (rows without an int id last)."""
    out: Rows = [{"id": r.get("id"), "value": r.get("value")} for r in rows]
    return sorted(out, key=lambda r: (0, r["id"]) if isinstance(r["id"], int) else (1, 0))


def _arrow(rows: Sequence[dict[str, object]]) -> Any:
    import pyarrow as pa

    from reference_impl.delta.data_files import ARROW_SCHEMA

    return pa.Table.from_pylist([{"id": r["id"], "value": r.get("value")} for r in rows], schema=ARROW_SCHEMA)


class PathOnlyClient:
    """A client with no catalog support: the ``DeltaClient`` methods all raise ``NotSupported``."""

    def _unsupported(self) -> NotSupported:
        return NotSupported(f"{type(self).__name__} has no catalog support: path access only")

    def create_table(self, name: str) -> None:
        raise self._unsupported()

    def append(self, name: str, rows: Sequence[dict[str, object]]) -> int:
        raise self._unsupported()

    def delete(self, name: str, ids: Sequence[int]) -> int:
        raise self._unsupported()

    def publish(self, name: str) -> None:
        raise self._unsupported()

    def checkpoint(self, name: str) -> int | None:
        raise self._unsupported()

    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        raise self._unsupported()

    def cleanup(self, name: str, cutoff_version: int) -> None:
        raise self._unsupported()

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        raise self._unsupported()


class DeltaRsClient(PathOnlyClient):
    """delta-rs: ``DeltaTable(path).to_pyarrow_table()`` and ``write_deltalake(path, mode="append")``."""

    def read_path(self, location: str) -> Rows:
        from deltalake import DeltaTable

        return _sorted(DeltaTable(local_path(location)).to_pyarrow_table().to_pylist())

    def append_path(self, location: str, rows: Sequence[dict[str, object]]) -> None:
        from deltalake import write_deltalake

        write_deltalake(local_path(location), _arrow(rows), mode="append")


class PolarsClient(PathOnlyClient):
    """polars: ``pl.read_delta(path)`` and ``DataFrame.write_delta(path, mode="append")``."""

    def read_path(self, location: str) -> Rows:
        import polars as pl

        return _sorted(pl.read_delta(local_path(location)).to_dicts())

    def append_path(self, location: str, rows: Sequence[dict[str, object]]) -> None:
        import polars as pl

        frame = pl.DataFrame(
            [{"id": r["id"], "value": r.get("value")} for r in rows], schema={"id": pl.Int64, "value": pl.String}
        )
        frame.write_delta(local_path(location), mode="append")


class PyArrowDatasetClient(PathOnlyClient):
    """A naive reader: every Parquet file under the location, ``_delta_log`` never read.

    ``pyarrow.dataset`` skips names starting with ``_`` or ``.`` (so ``_delta_log`` itself), and
    reads every data file it finds, whether a commit added it, removed it or was never ratified.
    It cannot write a Delta table, so ``append_path`` refuses.
    """

    def read_path(self, location: str) -> Rows:
        import pyarrow.dataset as ds

        table = ds.dataset(local_path(location), format="parquet").to_table(columns=["id", "value"])
        return _sorted(table.to_pylist())

    def append_path(self, location: str, rows: Sequence[dict[str, object]]) -> None:
        raise NotImplementedError("pyarrow.dataset writes Parquet files, not Delta commits")


class PathClientTarget:
    """A third-party client target judged only on path access (``profiles``)."""

    kind: Kind = "third-party"
    sides: frozenset[Side] = frozenset({"client"})
    profiles: frozenset[str] = frozenset({PATH_ACCESS_PROFILE})
    name: ClassVar[str]
    distribution: ClassVar[str]  # the package whose version is reported
    client_class: ClassVar[type[PathOnlyClient]]

    def version(self) -> str:
        try:
            return f"{self.distribution} {dist_version(self.distribution)}"
        except PackageNotFoundError:
            return f"{self.distribution} (not installed: pip install 'lakecert[clients]')"

    def make_catalog(self, env: TargetEnv) -> Catalog:
        raise NotSupported(f"{self.name} is a client, not a catalog")

    def make_client(self, catalog: Catalog, env: TargetEnv) -> PathOnlyClient:
        # The client does its own I/O: refuse a warehouse it cannot reach rather than let an
        # unreachable location pass for a refusal of the table (ends the check as ERROR).
        local_path(env.warehouse_uri)
        return self.client_class()

    def close(self) -> None:
        return None


class DeltaRsTarget(PathClientTarget):
    name = "delta-rs"
    distribution = "deltalake"
    client_class = DeltaRsClient


class PolarsTarget(PathClientTarget):
    name = "polars"
    distribution = "polars"
    client_class = PolarsClient


class PyArrowDatasetTarget(PathClientTarget):
    name = "pyarrow-dataset"
    distribution = "pyarrow"
    client_class = PyArrowDatasetClient

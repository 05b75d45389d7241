"""Clients without catalog-managed support, handed only a table's path (profile delta-cm-path-access).

The CLI runs record what each client actually did (docs/compatibility.md, "Clients without
catalog-managed support"); the direct calls show that the adapters do work on an ordinary Delta
table, so a refusal of the catalog-managed one is about the table, not a broken adapter.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import deltalake
import pyarrow as pa
import pytest

from conformance.adapters.path_clients import DeltaRsClient, PathOnlyClient, PolarsClient, PyArrowDatasetClient
from conformance.contract.delta import Catalog, ReadResult
from conformance.contract.path_access import PathClient
from conformance.contract.target import Kind, Side, TargetEnv
from reference_impl.catalog.catalog import ReferenceCatalog
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.path_access import CatalogManagedPathAccessError
from reference_impl.storage import make_storage
from tests.helpers import lakecert, results

PROFILE = "delta-cm-path-access"
READ = "checks/delta/path_access/test_path_access.py::test_reader_refuses_a_catalog_managed_table_by_path"
WRITE = "checks/delta/path_access/test_path_access.py::test_writer_refuses_a_catalog_managed_table_by_path"


def _run(target: str, out: Path, *extra: str) -> dict[str, str]:
    proc = lakecert("run", "--target", target, "--profile", PROFILE, "--out", str(out), *extra)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    return {r["test"]: r["status"] for r in results(out)["results"]}


# ---------------------------------------------------------------- observed through the CLI


def test_reference_refuses_reading_and_writing_by_path(out: Path) -> None:
    statuses = _run("reference", out)
    assert statuses == {READ: "PASS", WRITE: "PASS"}
    assert results(out)["verdict"] == "CERTIFIED"


def test_delta_rs_refuses_reading_and_writing_by_path(out: Path) -> None:
    statuses = _run("delta-rs", out)
    res = results(out)
    assert statuses == {READ: "PASS", WRITE: "PASS"}
    assert res["run_info"]["target_version"] == f"deltalake {deltalake.__version__}"
    assert res["profiles"] == {PROFILE: {"verdict": "CERTIFIED"}}


def test_polars_refuses_reading_and_writing_by_path(out: Path) -> None:
    assert _run("polars", out) == {READ: "PASS", WRITE: "PASS"}
    assert results(out)["verdict"] == "CERTIFIED"


def test_pyarrow_dataset_returns_rows_and_cannot_write(out: Path) -> None:
    statuses = _run("pyarrow-dataset", out)
    res = results(out)
    assert statuses == {READ: "FAIL", WRITE: "PASS"}
    assert res["requirements"]["RDR-PATH-READ-REFUSED"]["status"] == "FAIL"
    assert res["requirements"]["WRT-PATH-WRITE-REFUSED"]["status"] == "PASS"
    assert res["verdict"] == "NOT_CERTIFIED"


def test_faulty_path_variants_are_caught(tmp_path: Path) -> None:
    assert _run("faulty:path-reader", tmp_path / "r") == {READ: "FAIL", WRITE: "PASS"}
    assert _run("faulty:path-writer", tmp_path / "w") == {READ: "PASS", WRITE: "FAIL"}


def test_path_targets_only_run_the_path_access_profile(out: Path) -> None:
    proc = lakecert("run", "--target", "polars", "--out", str(out))
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert results(out)["run_info"]["profiles"] == [PROFILE]
    assert lakecert("run", "--target", "delta-rs", "--profile", "delta-cm-reader", "--out", str(out)).returncode == 2


class _NoPathClient:
    """A DeltaClient without the path contract (hides the reference client's read_path/append_path)."""

    def __init__(self, inner: ReferenceClient) -> None:
        self._inner = inner

    def create_table(self, name: str) -> None:
        self._inner.create_table(name)

    def append(self, name: str, rows: Sequence[dict[str, object]]) -> int:
        return self._inner.append(name, rows)

    def delete(self, name: str, ids: Sequence[int]) -> int:
        return self._inner.delete(name, ids)

    def publish(self, name: str) -> None:
        self._inner.publish(name)

    def checkpoint(self, name: str) -> int | None:
        return self._inner.checkpoint(name)

    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        return self._inner.compact_log(name, start_version, end_version)

    def cleanup(self, name: str, cutoff_version: int) -> None:
        self._inner.cleanup(name, cutoff_version)

    def read(self, name: str, *, version: int | None = None, timestamp_ms: int | None = None) -> ReadResult:
        return self._inner.read(name, version=version, timestamp_ms=timestamp_ms)


class NoPathTarget:
    name = "no-path-client"
    kind: Kind = "third-party"
    sides: frozenset[Side] = frozenset({"client"})

    def version(self) -> str:
        return "0"

    def make_catalog(self, env: TargetEnv) -> Catalog:
        raise NotImplementedError

    def make_client(self, catalog: Catalog, env: TargetEnv) -> _NoPathClient:
        return _NoPathClient(ReferenceClient(catalog, env.storage))

    def close(self) -> None:
        return None


def test_client_without_path_access_is_not_applicable(out: Path) -> None:
    statuses = _run(f"{__name__}:NoPathTarget", out)
    assert statuses == {READ: "NOT_APPLICABLE", WRITE: "NOT_APPLICABLE"}
    assert results(out)["profiles"][PROFILE]["verdict"] == "NOT_APPLICABLE"
    assert results(out)["verdict"] == "NOT_CERTIFIED", "a run of nothing but a not-applicable profile certifies nothing"


def test_profile_that_does_not_apply_leaves_the_others_certified(out: Path) -> None:
    proc = lakecert("run", "--target", f"{__name__}:NoPathTarget", "--out", str(out))
    res = results(out)
    assert res["profiles"][PROFILE]["verdict"] == "NOT_APPLICABLE"
    assert res["profiles"]["delta-cm-writer"]["verdict"] == "CERTIFIED"
    assert res["verdict"] == "CERTIFIED" and proc.returncode == 0


# ---------------------------------------------------------------- the adapters, called directly


@pytest.fixture
def reference(tmp_path: Path) -> tuple[ReferenceCatalog, ReferenceClient]:
    (tmp_path / "wh").mkdir()
    storage = make_storage()
    catalog = ReferenceCatalog(tmp_path / "catalog.sqlite", (tmp_path / "wh").as_uri(), storage)
    return catalog, ReferenceClient(catalog, storage)


@pytest.fixture
def catalog_managed(reference: tuple[ReferenceCatalog, ReferenceClient]) -> str:
    """A catalog-managed table written by the reference client: v1 published, v2 ratified only."""
    catalog, client = reference
    client.create_table("t")
    client.append("t", [{"id": 1, "value": "a"}])
    client.publish("t")
    client.append("t", [{"id": 2, "value": "b"}])
    return catalog.resolve("t").location


@pytest.fixture
def ordinary(tmp_path: Path) -> str:
    """An ordinary (filesystem-committed) Delta table written by delta-rs."""
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("value", pa.string())])
    deltalake.write_deltalake(str(tmp_path / "plain"), pa.Table.from_pylist([{"id": 1, "value": "a"}], schema=schema))
    return (tmp_path / "plain").as_uri()


def test_refusals_are_these_exception_classes(
    catalog_managed: str, reference: tuple[ReferenceCatalog, ReferenceClient]
) -> None:
    for client in (DeltaRsClient(), PolarsClient()):
        with pytest.raises(deltalake.exceptions.DeltaError):
            client.read_path(catalog_managed)
        with pytest.raises(deltalake.exceptions.DeltaError):
            client.append_path(catalog_managed, [{"id": 9, "value": "z"}])
    with pytest.raises(NotImplementedError):
        PyArrowDatasetClient().append_path(catalog_managed, [{"id": 9, "value": "z"}])
    with pytest.raises(CatalogManagedPathAccessError):
        reference[1].read_path(catalog_managed)
    with pytest.raises(CatalogManagedPathAccessError):
        reference[1].append_path(catalog_managed, [{"id": 9, "value": "z"}])


def test_naive_reader_returns_unpublished_rows(catalog_managed: str) -> None:
    assert PyArrowDatasetClient().read_path(catalog_managed) == [{"id": 1, "value": "a"}, {"id": 2, "value": "b"}]


@pytest.mark.parametrize("client", [DeltaRsClient(), PolarsClient()], ids=["delta-rs", "polars"])
def test_adapters_read_and_append_an_ordinary_table(ordinary: str, client: PathOnlyClient) -> None:
    assert isinstance(client, PathClient)
    client.append_path(ordinary, [{"id": 2, "value": "b"}])
    assert client.read_path(ordinary) == [{"id": 1, "value": "a"}, {"id": 2, "value": "b"}]


def test_reference_path_access_reads_and_appends_an_ordinary_table(
    ordinary: str, reference: tuple[ReferenceCatalog, ReferenceClient]
) -> None:
    client = reference[1]
    client.append_path(ordinary, [{"id": 2, "value": "b"}])
    assert client.read_path(ordinary) == [{"id": 1, "value": "a"}, {"id": 2, "value": "b"}]
    assert deltalake.DeltaTable(ordinary.removeprefix("file://")).version() == 1

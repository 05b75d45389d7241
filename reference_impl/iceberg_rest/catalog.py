"""The catalog's operations: the pointer store plus metadata files, with pyiceberg doing the Iceberg work.

pyiceberg builds new metadata (``new_table_metadata``), checks requirements (``.validate(base)``),
applies updates (``update_table_metadata``) and parses metadata files read through ``files.py``
(bounded, confined to the allowed locations); ``metadata_json`` serializes them (pyiceberg's own
writer refuses v3). A commit holds the table's lock from reading the current pointer to swapping
it, and the swap itself is a compare-and-swap in the store, so two commits can never both build on the same base.
"""

from __future__ import annotations

import contextlib
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from pyiceberg.catalog.rest import (
    ListNamespaceResponse,
    ListTableResponseEntry,
    ListTablesResponse,
    NamespaceResponse,
    TableResponse,
    UpdateNamespacePropertiesResponse,
)
from pyiceberg.exceptions import CommitFailedException, ResolveError
from pyiceberg.exceptions import ValidationError as IcebergValidationError
from pyiceberg.io import FileIO, load_file_io
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.table import CommitTableResponse
from pyiceberg.table.metadata import (
    TableMetadata,
    TableMetadataUtil,
    TableMetadataV1,
    TableMetadataV3,
    new_table_metadata,
)
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.table.update import AssertCreate, TableRequirement, TableUpdate, update_table_metadata
from pyiceberg.typedef import IcebergBaseModel

from reference_impl.iceberg_rest import errors
from reference_impl.iceberg_rest.defaults import keep_defaults
from reference_impl.iceberg_rest.files import (
    DEFAULT_MAX_METADATA_BYTES,
    DEFAULT_READ_TIMEOUT_S,
    FileAccessError,
    WarehouseFiles,
)
from reference_impl.iceberg_rest.ids import check_table_metadata
from reference_impl.iceberg_rest.locations import AllowedLocations
from reference_impl.iceberg_rest.names import Namespace, dotted
from reference_impl.iceberg_rest.requests import CreateTableRequest
from reference_impl.iceberg_rest.store import Kind, PointerStore, Rename
from reference_impl.iceberg_rest.updates import adapt, reformat

_VERSION = re.compile(r"^(\d+)-.*\.metadata\.json$")
_METADATA_PATH = "write.metadata.path"  # TableProperties.WRITE_METADATA_PATH
# What applying updates raises for updates that do not fit the table (unknown snapshot, bad schema...;
# StopIteration: a lookup of a default spec or sort order the updates never added).
_UPDATE_ERRORS = (
    ValueError,
    KeyError,
    NotImplementedError,
    IcebergValidationError,
    ResolveError,
    RecursionError,
    StopIteration,
)
_CACHE_SIZE = 256
# What parsing a metadata file raises for content that is not table metadata (pydantic's
# ValidationError is a ValueError); none of their messages is shown: they quote the file.
_PARSE_ERRORS = (
    IcebergValidationError,
    UnicodeDecodeError,
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
    RecursionError,
    StopIteration,
)


def metadata_file_location(metadata: TableMetadata, version: int) -> str:
    """``<metadata dir>/<version>-<uuid>.metadata.json``, as pyiceberg's default location provider names it.

    Not ``load_location_provider``: it imports a class named by a table property, which a server
    must not do for its clients.
    """
    directory = metadata.properties.get(_METADATA_PATH, f"{metadata.location.rstrip('/')}/metadata").rstrip("/")
    return f"{directory}/{version:05d}-{uuid.uuid4()}.metadata.json"


def metadata_version(location: str) -> int:
    """The version in a metadata file's name; -1 when it has none (the next one is then 0)."""
    match = _VERSION.match(location.rsplit("/", 1)[-1])
    return int(match.group(1)) if match else -1


def metadata_json(metadata: TableMetadata) -> str:
    """The metadata file's JSON, for every format version.

    pyiceberg 0.12 models v3 metadata (row lineage included) but its ``TableMetadataV3`` refuses
    ``model_dump_json`` (iceberg-python#1551); the base model's serializer writes it like v1 and v2.
    """
    return IcebergBaseModel.model_dump_json(metadata)


def with_row_lineage(metadata: TableMetadata) -> TableMetadata:
    """v3 metadata must carry ``next-row-id`` (Iceberg spec, row lineage); Spark assigns row ids from it.

    pyiceberg leaves it unset on new v3 metadata and then never advances it; from there on it is
    the end of the highest row-id range any snapshot took (``first-row-id + added-rows``), or 0.
    """
    if not isinstance(metadata, TableMetadataV3) or metadata.next_row_id is not None:
        return metadata
    ends = [s.first_row_id + (s.added_rows or 0) for s in metadata.snapshots if s.first_row_id is not None]
    return metadata.model_copy(update={"next_row_id": max(ends, default=0)})


def _empty_metadata() -> TableMetadata:
    """The base a create transaction's updates build on (pyiceberg's catalogs use the same)."""
    return TableMetadataV1.model_construct(last_column_id=-1, schema=Schema())


def _committed(metadata: TableMetadata, location: str) -> CommitTableResponse:
    return CommitTableResponse.model_validate({"metadata-location": location, "metadata": metadata})


class _TableLocks:
    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[tuple[Namespace, str], threading.Lock] = {}

    def __call__(self, namespace: Namespace, table: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault((namespace, table), threading.Lock())


class RestCatalogService:
    """Namespaces and tables of one warehouse (``file:///...`` or ``s3://bucket/prefix``).

    ``io_properties`` configure the server's own FileIO (e.g. ``s3.endpoint``); ``table_config``
    is returned as the ``config`` of every LoadTableResult, for clients that take storage settings
    from the catalog. Tables and namespace locations must lie in the warehouse or one of
    ``allowed_locations``.
    """

    def __init__(
        self,
        store: PointerStore,
        warehouse: str,
        io_properties: Mapping[str, str] | None = None,
        table_config: Mapping[str, str] | None = None,
        allowed_locations: Iterable[str] = (),
        *,
        max_metadata_bytes: int = DEFAULT_MAX_METADATA_BYTES,
        read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
    ) -> None:
        self.store = store
        self.warehouse = warehouse.rstrip("/")
        self.locations = AllowedLocations([self.warehouse, *allowed_locations])
        self.io: FileIO = load_file_io(dict(io_properties or {}), self.warehouse)
        self.files = WarehouseFiles(self.io, self.locations, max_bytes=max_metadata_bytes, timeout_s=read_timeout_s)
        self._table_config = dict(table_config or {})
        self._lock_of = _TableLocks()
        self._cache: OrderedDict[str, TableMetadata] = OrderedDict()
        self._cache_lock = threading.Lock()

    # metadata files

    def read_metadata(self, location: str) -> TableMetadata:
        """A metadata file never changes once written, so reads are cached by location."""
        with self._cache_lock:
            if (cached := self._cache.get(location)) is not None:
                self._cache.move_to_end(location)
                return cached
        data = self.read_file(location)
        try:
            metadata = TableMetadataUtil.parse_raw(data.decode("utf-8"))
        except _PARSE_ERRORS:
            raise errors.bad_request(f"Not a valid Iceberg table metadata file: {location}") from None
        self._remember(location, metadata)
        return metadata

    def read_file(self, location: str) -> bytes:
        """A metadata file's bytes, bounded and confined (``files.py``); 404 when nothing is there,
        400 for anything else that is not a regular file within the limits."""
        try:
            return self.files.read(location)
        except FileAccessError as e:
            if e.missing:
                raise errors.metadata_file_missing(location) from None
            raise errors.bad_request(f"Cannot use the metadata file: {e}") from None

    def _write_metadata(self, metadata: TableMetadata, location: str) -> None:
        self.write_new_file(location, metadata_json(metadata))
        self._remember(location, metadata)

    def write_new_file(self, location: str, text: str) -> None:
        """Serialise first, so a value that cannot be written leaves no file behind."""
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            raise errors.bad_request("Metadata holds a string with no UTF-8 form") from None
        try:
            self.files.create(location, data)
        except FileAccessError as e:
            if e.client_fault:
                raise errors.bad_request(str(e)) from None
            raise errors.IcebergApiError(503, "ServiceUnavailableException", str(e)) from None

    def _remember(self, location: str, metadata: TableMetadata) -> None:
        with self._cache_lock:
            self._cache[location] = metadata
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)

    # namespaces

    def _require_namespace(self, namespace: Namespace) -> dict[str, str]:
        properties = self.store.namespace_properties(namespace)
        if properties is None:
            raise errors.no_such_namespace(namespace)
        return properties

    def create_namespace(self, namespace: Namespace, properties: Mapping[str, str]) -> NamespaceResponse:
        if "location" in properties:
            self.locations.check(properties["location"], "Namespace location")
        if not self.store.create_namespace(namespace, properties):
            raise errors.namespace_exists(namespace)
        return NamespaceResponse(namespace=namespace, properties=dict(properties))

    def load_namespace(self, namespace: Namespace) -> NamespaceResponse:
        return NamespaceResponse(namespace=namespace, properties=self._require_namespace(namespace))

    def list_namespaces(self, parent: Namespace) -> ListNamespaceResponse:
        if parent:
            self._require_namespace(parent)
        return ListNamespaceResponse(namespaces=self.store.child_namespaces(parent))

    def drop_namespace(self, namespace: Namespace) -> None:
        if not self.store.drop_namespace(namespace):
            self._require_namespace(namespace)
            raise errors.namespace_not_empty(namespace)

    def update_namespace_properties(
        self, namespace: Namespace, removals: set[str], updates: Mapping[str, str]
    ) -> UpdateNamespacePropertiesResponse:
        if overlap := removals & set(updates):
            raise errors.unprocessable(f"Keys both updated and removed: {sorted(overlap)}")
        if "location" in updates:
            self.locations.check(updates["location"], "Namespace location")
        result = self.store.update_namespace_properties(namespace, removals, updates)
        if result is None:
            raise errors.no_such_namespace(namespace)
        updated, removed, missing = result
        return UpdateNamespacePropertiesResponse(updated=updated, removed=removed, missing=missing)

    # tables

    def _current(self, namespace: Namespace, table: str) -> str:
        location = self.store.metadata_location(namespace, table)
        if location is None:
            raise errors.no_such_table(namespace, table)
        return location

    def _response(self, location: str | None, metadata: TableMetadata) -> TableResponse:
        # By alias through model_validate: mypy sees only the aliases; a TableMetadata passes as is.
        return TableResponse.model_validate(
            {"metadata-location": location, "metadata": metadata, "config": dict(self._table_config)}
        )

    def default_location(self, namespace: Namespace, table: str) -> str:
        """Under the namespace's ``location`` property if it has one, else ``<warehouse>/<ns levels>/<table>``."""
        if base := self._require_namespace(namespace).get("location"):
            return f"{base.rstrip('/')}/{table}"
        return "/".join((self.warehouse, *namespace, table))

    def create_table(self, namespace: Namespace, request: CreateTableRequest) -> TableResponse:
        location = self.default_location(namespace, request.name)  # also: 404 when the namespace is missing
        location = (request.location or "").rstrip("/") or location
        if self.store.metadata_location(namespace, request.name) is not None:
            raise errors.table_exists(namespace, request.name)
        self.refuse_if_taken(namespace, request.name, Kind.TABLE)
        try:
            metadata = new_table_metadata(
                schema=request.table_schema,
                partition_spec=request.partition_spec or UNPARTITIONED_PARTITION_SPEC,
                sort_order=request.write_order or UNSORTED_SORT_ORDER,
                location=location,
                properties=dict(request.properties),  # it pops format-version from the dict it is given
            )
            schema = keep_defaults(metadata.schemas[0], request.table_schema)
            metadata = with_row_lineage(metadata.model_copy(update={"schemas": [schema]}))
        except _UPDATE_ERRORS as e:
            raise errors.bad_request(f"Cannot create table metadata: {e}") from None
        self.locations.check_table(metadata.location, metadata.properties)
        if request.stage_create:
            # Nothing is stored: the commit with assert-create creates the table (the spec's create transaction).
            return self._response(None, metadata)
        metadata_location = metadata_file_location(metadata, 0)
        self._write_metadata(metadata, metadata_location)
        if not self.store.create_table(namespace, request.name, metadata_location):
            self._discard(metadata_location)
            self._require_namespace(namespace)
            self.refuse_if_taken(namespace, request.name, Kind.TABLE)
            raise errors.table_exists(namespace, request.name)
        return self._response(metadata_location, metadata)

    def load_table(self, namespace: Namespace, table: str, snapshots: str = "all") -> TableResponse:
        location = self._current(namespace, table)
        if not self.files.exists(location):  # the cache must not hide a file deleted under the table
            raise errors.metadata_file_missing(location)
        metadata = self.read_metadata(location)
        if snapshots == "refs":
            referenced = {ref.snapshot_id for ref in metadata.refs.values()}
            metadata = metadata.model_copy(
                update={"snapshots": [s for s in metadata.snapshots if s.snapshot_id in referenced]}
            )
        return self._response(location, metadata)

    def register_table(
        self, namespace: Namespace, table: str, metadata_location: str, overwrite: bool
    ) -> TableResponse:
        """Point ``table`` at an existing metadata file (``overwrite``: even if the table exists)."""
        self._require_namespace(namespace)
        self.locations.check(metadata_location, "Metadata location")
        self.refuse_if_taken(namespace, table, Kind.TABLE)
        with self._lock_of(namespace, table):
            current = self.store.metadata_location(namespace, table)
            if current is not None and not overwrite:
                raise errors.table_exists(namespace, table)
            metadata = self.read_metadata(metadata_location)
            check_table_metadata(metadata)  # adopted as if committed: the same bounds
            self.locations.check_table(metadata.location, metadata.properties)
            if current is None:
                registered = self.store.create_table(namespace, table, metadata_location)
            else:
                registered = self.store.swap(namespace, table, current, metadata_location)
            if not registered:
                raise errors.commit_failed(namespace, table, "the table changed concurrently")
        return self._response(metadata_location, metadata)

    def refuse_if_taken(self, namespace: Namespace, name: str, kind: Kind) -> None:
        """409 when an object of the other kind (a view for a table, a table for a view) has the name."""
        if self.store.metadata_location(namespace, name, kind.other) is not None:
            raise errors.name_taken(namespace, name, by_view=kind.other is Kind.VIEW)

    def lock_of(self, namespace: Namespace, name: str) -> threading.Lock:
        return self._lock_of(namespace, name)

    def discard(self, location: str) -> None:
        self._discard(location)

    def table_exists(self, namespace: Namespace, table: str) -> None:
        self._current(namespace, table)

    def list_tables(self, namespace: Namespace) -> ListTablesResponse:
        self._require_namespace(namespace)
        names = self.store.table_names(namespace)
        return ListTablesResponse(identifiers=[ListTableResponseEntry(namespace=namespace, name=n) for n in names])

    def drop_table(self, namespace: Namespace, table: str) -> None:
        """Forget the table; its files stay where they are (purge is not implemented)."""
        with self._lock_of(namespace, table):
            if not self.store.drop_table(namespace, table):
                raise errors.no_such_table(namespace, table)

    def rename_table(self, source: tuple[Namespace, str], target: tuple[Namespace, str]) -> None:
        result = self.store.rename_table(source, target)
        if result is Rename.NO_SUCH_TABLE:
            raise errors.no_such_table(*source)
        if result is Rename.NO_SUCH_NAMESPACE:
            raise errors.no_such_namespace(target[0])
        if result in (Rename.TARGET_EXISTS, Rename.TARGET_IS_VIEW):
            raise errors.rename_target_taken(source, target, by_view=result is Rename.TARGET_IS_VIEW)

    def commit(
        self,
        namespace: Namespace,
        table: str,
        requirements: tuple[TableRequirement, ...],
        updates: tuple[TableUpdate, ...],
    ) -> CommitTableResponse:
        """Check the requirements against the current metadata, apply the updates, swap the pointer."""
        with self._lock_of(namespace, table):
            current = self.store.metadata_location(namespace, table)
            if current is None and not any(isinstance(r, AssertCreate) for r in requirements):
                raise errors.no_such_table(namespace, table)
            if current is None:
                self._require_namespace(namespace)
                self.refuse_if_taken(namespace, table, Kind.TABLE)
            base = None if current is None else self.read_metadata(current)
            for requirement in requirements:
                self._check_requirement(namespace, table, requirement, base)
            if current is not None and base is not None and not updates:
                return _committed(base, current)  # nothing to change
            try:
                start = base or _empty_metadata()
                adapted, format_version = adapt(start, updates)
                updated = update_table_metadata(start, adapted, metadata_location=current)
                updated = with_row_lineage(reformat(updated, format_version))
                # Re-parse the result as a whole: a commit must never store metadata a reader would reject.
                updated = TableMetadataUtil.parse_obj(updated.model_dump())
            except _UPDATE_ERRORS as e:
                raise errors.bad_request(f"Cannot apply updates: {e}") from None
            check_table_metadata(updated)
            previous = None if base is None else {**base.properties, "location": base.location}
            self.locations.check_table(updated.location, updated.properties, previous)
            updated = self._to_store(updated)
            location = metadata_file_location(updated, metadata_version(current) + 1 if current else 0)
            self._write_metadata(updated, location)
            if current is None:
                swapped = self.store.create_table(namespace, table, location)
            else:
                swapped = self.store.swap(namespace, table, current, location)
            if not swapped:
                # Another server process sharing the store moved the pointer first.
                self._discard(location)
                raise errors.commit_failed(namespace, table, "the table changed concurrently")
        return _committed(updated, location)

    def _check_requirement(
        self, namespace: Namespace, table: str, requirement: TableRequirement, base: TableMetadata | None
    ) -> None:
        """409 ``CommitFailedException`` unless ``requirement`` holds on ``base`` (a hook of the faulty variants)."""
        try:
            requirement.validate(base)
        except CommitFailedException as e:
            if isinstance(requirement, AssertCreate):
                # A create transaction lost to another create: a 409 CommitFailedException (spec),
                # worded as Java's catalogs word it (the REST Compatibility Kit asserts it).
                message = f"Table already exists: {dotted((*namespace, table))}"
                raise errors.IcebergApiError(409, "CommitFailedException", message) from None
            raise errors.commit_failed(namespace, table, str(e)) from None

    def _to_store(self, metadata: TableMetadata) -> TableMetadata:
        """The metadata a commit stores: what it built (a hook of the faulty variants)."""
        return metadata

    def _discard(self, location: str) -> None:
        with contextlib.suppress(OSError):  # an orphan metadata file is harmless: nothing points at it
            self.files.delete(location)

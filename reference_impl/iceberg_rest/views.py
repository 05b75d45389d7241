"""The catalog's view operations (REST spec: ``/namespaces/{namespace}/views...``, ``/views/rename``).

A view is a metadata file and a pointer, like a table: the pointer store keeps views beside tables
(one name is a table or a view, never both), metadata files are written next to the view under
the same location rules, and a replace is a compare-and-swap of the pointer under the view's lock.
"""

from __future__ import annotations

import uuid

from pydantic import Field, ValidationError
from pyiceberg.catalog.rest import ListTableResponseEntry, ListTablesResponse
from pyiceberg.typedef import IcebergBaseModel
from pyiceberg.view.metadata import ViewMetadata

from reference_impl.iceberg_rest import errors
from reference_impl.iceberg_rest.catalog import RestCatalogService, metadata_version
from reference_impl.iceberg_rest.names import Namespace
from reference_impl.iceberg_rest.store import Kind, Rename
from reference_impl.iceberg_rest.view_metadata import (
    CommitViewRequest,
    CreateViewRequest,
    apply_view_updates,
    new_view_metadata,
)

_METADATA_PATH = "write.metadata.path"


class LoadViewResult(IcebergBaseModel):
    """``LoadViewResult``; pyiceberg's base model writes it by alias."""

    metadata_location: str = Field(alias="metadata-location")
    metadata: ViewMetadata
    config: dict[str, str] = Field(default_factory=dict)


class ViewService:
    def __init__(self, tables: RestCatalogService) -> None:
        self.tables = tables
        self.store = tables.store

    def _result(self, location: str, metadata: ViewMetadata) -> LoadViewResult:
        return LoadViewResult.model_validate({"metadata-location": location, "metadata": metadata})

    def _read(self, location: str) -> ViewMetadata:
        data = self.tables.read_file(location)  # bounded and confined, as table metadata
        try:
            return ViewMetadata.model_validate_json(data)
        except (ValidationError, ValueError, RecursionError):
            # Never the parser's message: it quotes the file, which may not be a view at all.
            raise errors.bad_request(f"Not a valid Iceberg view metadata file: {location}") from None

    def _write(self, metadata: ViewMetadata, version: int) -> str:
        self.tables.locations.check_table(metadata.location, metadata.properties)
        directory = metadata.properties.get(_METADATA_PATH, f"{metadata.location.rstrip('/')}/metadata")
        location = f"{directory.rstrip('/')}/{version:05d}-{uuid.uuid4()}.metadata.json"
        self.tables.write_new_file(location, metadata.model_dump_json(by_alias=True, exclude_none=True))
        return location

    def _current(self, namespace: Namespace, view: str) -> str:
        location = self.store.metadata_location(namespace, view, Kind.VIEW)
        if location is None:
            raise errors.no_such_view(namespace, view)
        return location

    def list_views(self, namespace: Namespace) -> ListTablesResponse:
        self.tables.load_namespace(namespace)
        names = self.store.table_names(namespace, Kind.VIEW)
        return ListTablesResponse(identifiers=[ListTableResponseEntry(namespace=namespace, name=n) for n in names])

    def create_view(self, namespace: Namespace, request: CreateViewRequest) -> LoadViewResult:
        location = (request.location or "").rstrip("/") or self.tables.default_location(namespace, request.name)
        if self.store.metadata_location(namespace, request.name, Kind.VIEW) is not None:
            raise errors.view_exists(namespace, request.name)
        self.tables.refuse_if_taken(namespace, request.name, Kind.VIEW)
        metadata = new_view_metadata(request, location)
        metadata_location = self._write(metadata, 0)
        if not self.store.create_table(namespace, request.name, metadata_location, Kind.VIEW):
            self.tables.discard(metadata_location)
            self.tables.load_namespace(namespace)
            self.tables.refuse_if_taken(namespace, request.name, Kind.VIEW)
            raise errors.view_exists(namespace, request.name)
        return self._result(metadata_location, metadata)

    def load_view(self, namespace: Namespace, view: str) -> LoadViewResult:
        location = self._current(namespace, view)
        return self._result(location, self._read(location))

    def view_exists(self, namespace: Namespace, view: str) -> None:
        self._current(namespace, view)

    def drop_view(self, namespace: Namespace, view: str) -> None:
        with self.tables.lock_of(namespace, view):
            if not self.store.drop_table(namespace, view, Kind.VIEW):
                raise errors.no_such_view(namespace, view)

    def replace_view(self, namespace: Namespace, view: str, request: CommitViewRequest) -> LoadViewResult:
        with self.tables.lock_of(namespace, view):
            current = self._current(namespace, view)
            base = self._read(current)
            for requirement in request.requirements:
                if requirement.uuid != base.view_uuid:
                    reason = f"View UUID does not match: {requirement.uuid} != {base.view_uuid}"
                    raise errors.commit_failed(namespace, view, reason)
            updated = apply_view_updates(base, list(request.updates))
            location = self._write(updated, metadata_version(current) + 1)
            if not self.store.swap(namespace, view, current, location, Kind.VIEW):
                self.tables.discard(location)
                raise errors.commit_failed(namespace, view, "the view changed concurrently")
        return self._result(location, updated)

    def rename_view(self, source: tuple[Namespace, str], target: tuple[Namespace, str]) -> None:
        result = self.store.rename_table(source, target, Kind.VIEW)
        if result is Rename.NO_SUCH_TABLE:
            raise errors.no_such_view(*source)
        if result is Rename.NO_SUCH_NAMESPACE:
            raise errors.no_such_namespace(target[0])
        if result in (Rename.TARGET_EXISTS, Rename.TARGET_IS_VIEW):
            raise errors.rename_target_taken(source, target, by_view=result is Rename.TARGET_IS_VIEW)

    def register_view(self, namespace: Namespace, view: str, metadata_location: str) -> LoadViewResult:
        self.tables.load_namespace(namespace)
        self.tables.locations.check(metadata_location, "Metadata location")
        if self.store.metadata_location(namespace, view, Kind.VIEW) is not None:
            raise errors.view_exists(namespace, view)
        self.tables.refuse_if_taken(namespace, view, Kind.VIEW)
        metadata = self._read(metadata_location)
        self.tables.locations.check_table(metadata.location, metadata.properties)
        if not self.store.create_table(namespace, view, metadata_location, Kind.VIEW):
            self.tables.refuse_if_taken(namespace, view, Kind.VIEW)
            raise errors.view_exists(namespace, view)
        return self._result(metadata_location, metadata)

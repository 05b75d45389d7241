"""View metadata (Iceberg view spec, format 1): the requests that change it and how they apply.

pyiceberg 0.12 models view metadata (``pyiceberg.view.metadata``) but has no view updates; these
follow the REST spec's ``ViewUpdate`` shapes and apply as Java's ``ViewMetadata.Builder`` does:

- ``add-schema``: an equal schema already in the view keeps its id, else the next free id.
- ``add-view-version``: an equal version (same summary, representations, default catalog and
  namespace, schema) keeps its id; schema id -1 is the schema just added. A different version
  proposed under an id already taken is a 409: the client built on stale metadata, and the
  catalog does not rebase commits (it declares no server-side retry).
- ``set-current-view-version``: -1 is the version just added; a change of current version is
  logged in ``version-log`` (with the version's timestamp if it was added by this commit).
- ``version.history.num-entries`` (default 10) versions are kept, never the current one nor
  those this commit added.
"""

from __future__ import annotations

import time
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pyiceberg.schema import Schema
from pyiceberg.table import TableIdentifier
from pyiceberg.view.metadata import ViewHistoryEntry, ViewMetadata, ViewVersion

from reference_impl.iceberg_rest import errors

_LAST_ADDED = -1
_HISTORY_SIZE = "version.history.num-entries"  # ViewProperties.VERSION_HISTORY_SIZE
_HISTORY_SIZE_DEFAULT = 10


class _Update(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


class AssignUUID(_Update):
    action: Literal["assign-uuid"]
    uuid: str


class UpgradeFormatVersion(_Update):
    action: Literal["upgrade-format-version"]
    format_version: int = Field(alias="format-version")


class AddSchema(_Update):
    action: Literal["add-schema"]
    schema_: Schema = Field(alias="schema")
    last_column_id: int | None = Field(alias="last-column-id", default=None)


class SetLocation(_Update):
    action: Literal["set-location"]
    location: str


class SetProperties(_Update):
    action: Literal["set-properties"]
    updates: dict[str, str]


class RemoveProperties(_Update):
    action: Literal["remove-properties"]
    removals: list[str]


class AddViewVersion(_Update):
    action: Literal["add-view-version"]
    view_version: ViewVersion = Field(alias="view-version")


class SetCurrentViewVersion(_Update):
    action: Literal["set-current-view-version"]
    view_version_id: int = Field(alias="view-version-id")


ViewUpdate = Annotated[
    AssignUUID
    | UpgradeFormatVersion
    | AddSchema
    | SetLocation
    | SetProperties
    | RemoveProperties
    | AddViewVersion
    | SetCurrentViewVersion,
    Field(discriminator="action"),
]


class AssertViewUUID(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["assert-view-uuid"]
    uuid: str


class CommitViewRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    identifier: TableIdentifier | None = None
    requirements: list[AssertViewUUID] = Field(default_factory=list)
    updates: list[ViewUpdate]


class CreateViewRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    name: str
    location: str | None = None
    schema_: Schema = Field(alias="schema")
    view_version: ViewVersion = Field(alias="view-version")
    properties: dict[str, str] = Field(default_factory=dict)


class RegisterViewRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True, strict=True)
    name: str
    metadata_location: str = Field(alias="metadata-location")


def _same_version(one: ViewVersion, two: ViewVersion) -> bool:
    return (
        one.summary == two.summary
        and one.representations == two.representations
        and one.default_catalog == two.default_catalog
        and one.default_namespace == two.default_namespace
        and one.schema_id == two.schema_id
    )


class _Builder:
    """The state of one commit's application; ``-1`` references resolve to what it added."""

    def __init__(self, base: ViewMetadata | None) -> None:
        self.uuid = base.view_uuid if base else str(uuid.uuid4())
        self.location = base.location if base else None
        self.schemas = list(base.schemas) if base else []
        self.versions = list(base.versions) if base else []
        self.current = base.current_version_id if base else None
        self.history = list(base.version_log) if base else []
        self.properties = dict(base.properties) if base else {}
        self.last_schema: int | None = None
        self.last_version: int | None = None
        self.added_versions: set[int] = set()
        self.history_entry: ViewHistoryEntry | None = None

    def add_schema(self, schema: Schema) -> None:
        next_id = 0
        for existing in self.schemas:
            if existing.fields == schema.fields and existing.identifier_field_ids == schema.identifier_field_ids:
                self.last_schema = existing.schema_id
                return
            next_id = max(next_id, existing.schema_id + 1)
        self.schemas.append(schema.model_copy(update={"schema_id": next_id}))
        self.last_schema = next_id

    def add_version(self, version: ViewVersion) -> None:
        if version.schema_id == _LAST_ADDED:
            if self.last_schema is None:
                raise errors.bad_request("Cannot set last added schema: no schema has been added")
            version = version.model_copy(update={"schema_id": self.last_schema})
        if all(s.schema_id != version.schema_id for s in self.schemas):
            raise errors.bad_request(f"Cannot add version with unknown schema: {version.schema_id}")
        dialects: set[str] = set()
        for representation in version.representations:
            dialect = representation.root.dialect.lower()
            if dialect in dialects:
                message = f"Invalid view version: Cannot add multiple queries for dialect {dialect}"
                raise errors.illegal_argument(message)
            dialects.add(dialect)
        next_id = version.version_id
        for existing in self.versions:
            if _same_version(existing, version):
                self.last_version = existing.version_id  # re-adding an equal version selects it
                return
            if existing.version_id == version.version_id:
                # The client built on a version list that has changed since; without server-side
                # retry (the catalog declares none) that is a conflict, not something to rebase.
                raise errors.IcebergApiError(
                    409, "CommitFailedException", f"Cannot commit: view version {version.version_id} already exists"
                )
            next_id = max(next_id, existing.version_id + 1)
        self.versions.append(version.model_copy(update={"version_id": next_id}))
        self.added_versions.add(next_id)
        self.last_version = next_id

    def set_current(self, version_id: int) -> None:
        if version_id == _LAST_ADDED:
            if self.last_version is None:
                raise errors.bad_request("Cannot set last version id: no current version id has been set")
            version_id = self.last_version
        if version_id == self.current:
            return
        version = next((v for v in self.versions if v.version_id == version_id), None)
        if version is None:
            raise errors.bad_request(f"Cannot set current version to unknown version: {version_id}")
        self.current = version_id
        stamp = version.timestamp_ms if version_id in self.added_versions else int(time.time() * 1000)
        self.history_entry = ViewHistoryEntry.model_validate({"timestamp-ms": stamp, "version-id": version_id})

    def apply(self, update: Any) -> None:
        if isinstance(update, AssignUUID):
            self.uuid = update.uuid
        elif isinstance(update, UpgradeFormatVersion):
            if update.format_version != 1:
                raise errors.bad_request(f"Unsupported view format version: {update.format_version}")
        elif isinstance(update, AddSchema):
            self.add_schema(update.schema_)
        elif isinstance(update, SetLocation):
            self.location = update.location
        elif isinstance(update, SetProperties):
            self.properties.update(update.updates)
        elif isinstance(update, RemoveProperties):
            for key in update.removals:
                self.properties.pop(key, None)
        elif isinstance(update, AddViewVersion):
            self.add_version(update.view_version)
        elif isinstance(update, SetCurrentViewVersion):
            self.set_current(update.view_version_id)

    def _retained(self) -> tuple[list[ViewVersion], list[ViewHistoryEntry]]:
        history = self.history + ([self.history_entry] if self.history_entry else [])
        try:
            size = int(self.properties.get(_HISTORY_SIZE, _HISTORY_SIZE_DEFAULT))
        except ValueError:
            raise errors.bad_request(f"{_HISTORY_SIZE} must be an integer") from None
        if size <= 0:
            raise errors.bad_request(f"{_HISTORY_SIZE} must be positive but was {size}")
        keep = max(size, len(self.added_versions | {self.current}))
        if len(self.versions) <= keep:
            return self.versions, history
        # The current version and the newest others stay.
        others = sorted((v.version_id for v in self.versions if v.version_id != self.current), reverse=True)
        kept_ids = {self.current, *others[: keep - 1]}
        versions = [v for v in self.versions if v.version_id in kept_ids]
        return versions, [h for h in history if h.version_id in kept_ids]

    def build(self) -> ViewMetadata:
        if self.location is None:
            raise errors.bad_request("Invalid view location: null")
        if self.current is None or not self.versions:
            raise errors.bad_request("Invalid view: no versions were added")
        versions, history = self._retained()
        return ViewMetadata.model_validate(
            {
                "view-uuid": self.uuid,
                "format-version": 1,
                "location": self.location,
                "schemas": self.schemas,
                "current-version-id": self.current,
                "versions": versions,
                "version-log": history,
                "properties": self.properties,
            }
        )


def new_view_metadata(request: CreateViewRequest, location: str) -> ViewMetadata:
    builder = _Builder(None)
    builder.location = location
    builder.properties = dict(request.properties)
    builder.add_schema(request.schema_)
    builder.add_version(request.view_version.model_copy(update={"schema_id": builder.last_schema}))
    builder.set_current(_LAST_ADDED)
    return builder.build()


def apply_view_updates(base: ViewMetadata, updates: list[Any]) -> ViewMetadata:
    builder = _Builder(base)
    for update in updates:
        builder.apply(update)
    return builder.build()

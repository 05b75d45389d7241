"""The operations of the UC API on a wrapped ``ReferenceCatalog`` (or one faulty variant).

Every request is validated completely before the catalog is called, so a refused request
changes nothing. The catalog decides ratification, conflicts, gaps and names; the service
adds what UC's server adds around it (``DeltaCommitRepository`` in unitycatalog/unitycatalog):
the ``table_uri`` check, the limit on unpublished ("unbackfilled") commits (429), idempotent
replays of an accepted commit (200), and lakecert's role checks on commit content.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from conformance.contract.delta import (
    CommitConflict,
    CommitRejected,
    InvalidRequest,
    NotSupported,
    RatifiedCommit,
    Storage,
    TableInfo,
    TableNotFound,
)
from reference_impl.catalog.catalog import DroppedTable, ReferenceCatalog, alongside, delta_file_uri, staged_dir_uri
from reference_impl.catalog.store import TableRow, Tx
from reference_impl.server import models as M
from reference_impl.server.auth import Principal, Role
from reference_impl.server.errors import ApiError, invalid
from reference_impl.server.meta import MetaStore, Namespace, StagingRecord, TableRecord, now_ms
from reference_impl.storage.commit_file import CommitFileError, read_commit_file

# UC's ValidationUtils.validateSqlObjectName.
_SQL_NAME = re.compile(r"[a-zA-Z0-9_@-]{1,255}")
UC_TABLE_ID = "io.unitycatalog.tableId"
CATALOG_MANAGED_PROPS = ("delta.feature.catalogManaged", "delta.feature.catalogOwned-preview")
OWNER = "lakecert"


@dataclass(frozen=True)
class Limits:
    """Server policies. ``max_unpublished``: UC's ``MAX_NUM_COMMITS_PER_TABLE`` (10); None: no limit."""

    max_unpublished: int | None = 10


def check_name(name: str, what: str) -> str:
    if not _SQL_NAME.fullmatch(name):
        raise invalid(f"invalid {what} name {name!r}: use letters, digits, _, @ or - (at most 255)")
    return name


def normalize_uri(uri: str) -> str:
    """``file:/a``, ``file:///a`` and ``file:///a/`` are the same location (UC's NormalizedURL)."""
    uri = uri.rstrip("/")
    if uri.startswith("file:") and not uri.startswith("file://"):
        uri = "file://" + "/" + uri[len("file:") :].lstrip("/")
    return uri


def changes_protocol_or_metadata(content: bytes) -> bool:
    """Whether a commit (NDJSON actions) has a ``protocol`` or ``metaData`` action."""
    try:
        # Only a newline ends a line: splitlines() would also cut at U+0085, U+2028 and U+2029, which
        # JSON keeps raw inside a string, and refuse a valid commit.
        lines = content.decode("utf-8").split("\n")
        actions = [json.loads(line) for line in lines if line.strip()]
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise invalid("the commit is not newline-delimited JSON actions") from e
    if not actions or not all(isinstance(a, dict) for a in actions):
        raise invalid("the commit is not newline-delimited JSON actions")
    return any("protocol" in a or "metaData" in a for a in actions)


@contextmanager
def catalog_errors() -> Iterator[None]:
    """The catalog's contract exceptions as UC answers them."""
    try:
        yield
    except CommitConflict as e:
        meta = {} if e.latest_version is None else {"latest_table_version": str(e.latest_version)}
        raise ApiError("COMMIT_VERSION_CONFLICT", str(e) or "version already ratified", meta) from e
    except CommitRejected as e:  # a gap: UC answers INVALID_ARGUMENT ("must be the next version")
        raise invalid(str(e) or "commit refused") from e
    except DroppedTable as e:  # dropped while the request ran (a drop that committed first)
        raise ApiError("TABLE_NOT_FOUND", f"table not found: {e}") from e
    except InvalidRequest as e:
        raise invalid(str(e) or "invalid request") from e
    except TableNotFound as e:
        raise ApiError("TABLE_NOT_FOUND", f"table not found: {e}") from e
    except NotSupported as e:
        raise ApiError("INVALID_ARGUMENT", f"not supported: {e}") from e


class CatalogService:
    def __init__(
        self,
        catalog: ReferenceCatalog,
        meta: MetaStore,
        storage: Storage | None,
        *,
        limits: Limits = Limits(),
        server_name: str = "lakecert-reference",
    ) -> None:
        self.catalog = catalog
        self.meta = meta
        self.storage = storage
        self.limits = limits
        self.server_name = server_name

    # ============================================================ catalogs and schemas

    def ensure_namespace(self, catalog: str, schema: str) -> None:
        """Create a catalog and schema if absent (UC OSS ships ``unity.default`` the same way)."""
        check_name(catalog, "catalog")
        check_name(schema, "schema")
        self.meta.create_catalog(catalog, "created by lakecert serve", {}, None)
        self.meta.create_schema(catalog, schema, "created by lakecert serve", {}, None)

    def _catalog(self, name: str) -> Namespace:
        found = self.meta.catalogs(name)
        if not found:
            raise ApiError("CATALOG_NOT_FOUND", f"catalog not found: {name}")
        return found[0]

    def _schema(self, catalog: str, name: str) -> Namespace:
        self._catalog(catalog)
        found = self.meta.schemas(catalog, name)
        if not found:
            raise ApiError("SCHEMA_NOT_FOUND", f"schema not found: {catalog}.{name}")
        return found[0]

    @staticmethod
    def _catalog_info(ns: Namespace) -> M.CatalogInfo:
        return M.CatalogInfo(
            name=ns.catalog_name,
            comment=ns.comment,
            properties=ns.properties,
            owner=OWNER,
            created_at=ns.created_at,
            created_by=OWNER,
            id=ns.id,
            storage_root=ns.storage_root,
        )

    @staticmethod
    def _schema_info(ns: Namespace) -> M.SchemaInfo:
        assert ns.schema_name is not None
        return M.SchemaInfo(
            name=ns.schema_name,
            catalog_name=ns.catalog_name,
            comment=ns.comment,
            properties=ns.properties,
            full_name=f"{ns.catalog_name}.{ns.schema_name}",
            owner=OWNER,
            created_at=ns.created_at,
            created_by=OWNER,
            schema_id=ns.id,
            storage_root=ns.storage_root,
        )

    def create_catalog(self, who: Principal, req: M.CreateCatalog) -> M.CatalogInfo:
        who.require("admin", action="creating a catalog")
        if not who.unscoped:
            raise ApiError("PERMISSION_DENIED", "a token scoped to tables cannot create catalogs")
        check_name(req.name, "catalog")
        if not self.meta.create_catalog(req.name, req.comment, req.properties or {}, req.storage_root):
            raise ApiError("CATALOG_ALREADY_EXISTS", f"catalog already exists: {req.name}")
        return self._catalog_info(self._catalog(req.name))

    def get_catalog(self, who: Principal, name: str) -> M.CatalogInfo:
        who.require("reader", action="reading a catalog")
        return self._catalog_info(self._catalog(name))

    def list_catalogs(self, who: Principal) -> M.ListCatalogsResponse:
        who.require("reader", action="listing catalogs")
        return M.ListCatalogsResponse(catalogs=[self._catalog_info(c) for c in self.meta.catalogs()])

    def create_schema(self, who: Principal, req: M.CreateSchema) -> M.SchemaInfo:
        who.require("admin", action="creating a schema")
        if not who.unscoped:
            raise ApiError("PERMISSION_DENIED", "a token scoped to tables cannot create schemas")
        check_name(req.name, "schema")
        self._catalog(req.catalog_name)
        if not self.meta.create_schema(req.catalog_name, req.name, req.comment, req.properties or {}, req.storage_root):
            raise ApiError("SCHEMA_ALREADY_EXISTS", f"schema already exists: {req.catalog_name}.{req.name}")
        return self._schema_info(self._schema(req.catalog_name, req.name))

    def get_schema(self, who: Principal, full_name: str) -> M.SchemaInfo:
        who.require("reader", action="reading a schema")
        parts = full_name.split(".")
        if len(parts) != 2 or not all(parts):
            raise invalid(f"invalid schema name {full_name!r}: expected catalog.schema")
        return self._schema_info(self._schema(parts[0], parts[1]))

    def list_schemas(self, who: Principal, catalog: str) -> M.ListSchemasResponse:
        who.require("reader", action="listing schemas")
        self._catalog(catalog)
        return M.ListSchemasResponse(schemas=[self._schema_info(s) for s in self.meta.schemas(catalog)])

    # ============================================================ tables

    def create_staging_table(self, who: Principal, req: M.CreateStagingTable) -> M.StagingTableInfo:
        full = f"{req.catalog_name}.{req.schema_name}.{req.name}"
        who.require("writer", full, action="creating a table")
        for name, what in ((req.catalog_name, "catalog"), (req.schema_name, "schema"), (req.name, "table")):
            check_name(name, what)
        self._schema(req.catalog_name, req.schema_name)
        if self.meta.table_by_name(req.catalog_name, req.schema_name, req.name) is not None:
            raise ApiError("TABLE_ALREADY_EXISTS", f"table already exists: {full}")
        with catalog_errors():
            staged = self.catalog.create_staging_table()
        self.meta.add_staging(
            StagingRecord(staged.table_id, req.catalog_name, req.schema_name, req.name, staged.location)
        )
        return M.StagingTableInfo(
            name=req.name,
            catalog_name=req.catalog_name,
            schema_name=req.schema_name,
            id=staged.table_id,
            staging_location=staged.location,
        )

    def create_table(self, who: Principal, req: M.CreateTable) -> M.TableInfo:
        full = f"{req.catalog_name}.{req.schema_name}.{req.name}"
        who.require("writer", full, action="creating a table")
        for name, what in ((req.catalog_name, "catalog"), (req.schema_name, "schema"), (req.name, "table")):
            check_name(name, what)
        if req.table_type != "MANAGED":
            raise invalid("lakecert serves MANAGED (catalog-managed) Delta tables only")
        if req.data_source_format != "DELTA":
            raise invalid("Managed table creation is only supported for Delta format.")
        if req.view_definition is not None or req.view_dependencies is not None:
            raise invalid("view_definition and view_dependencies are for views")
        if req.storage_location is None:
            raise invalid("storage_location is required: the staging table's location")
        properties = dict(req.properties or {})
        table_id = properties.get(UC_TABLE_ID)
        if not table_id:
            raise invalid(f"Properties does not contain {UC_TABLE_ID}.")
        self._schema(req.catalog_name, req.schema_name)
        staging = self.meta.staging(table_id)
        if staging is None or normalize_uri(staging.location) != normalize_uri(req.storage_location):
            raise ApiError("TABLE_NOT_FOUND", f"Staging table not found: {req.storage_location}")
        if self.meta.table_by_name(req.catalog_name, req.schema_name, req.name) is not None:
            raise ApiError("TABLE_ALREADY_EXISTS", f"table already exists: {full}")
        columns = [c.model_dump(exclude_none=True) for c in req.columns]
        record = TableRecord(
            table_id, req.catalog_name, req.schema_name, req.name, columns, properties, req.comment, now_ms()
        )
        # The name and the record in one transaction: a drop racing the creation sees both or neither.
        try:
            with catalog_errors(), alongside(lambda tx, _: MetaStore.add_table_in(tx, record)) as ran:
                info = self.catalog.register_table(full, table_id)
        except ApiError:
            if self.meta.table_by_name(req.catalog_name, req.schema_name, req.name) is not None:
                raise ApiError("TABLE_ALREADY_EXISTS", f"table already exists: {full}") from None  # created meanwhile
            raise
        if not ran():  # a faulty variant that registers in a transaction of its own
            self.meta.add_table(record)
        return self.table_info(info, record)

    def drop_table(self, who: Principal, full_name: str) -> None:
        """A soft drop (RFC "Creating and Dropping"), the UC records going in the same transaction."""
        info, _ = self.resolve(who, full_name)
        with catalog_errors(), alongside(MetaStore.delete_table_in) as ran:
            self.catalog.drop_table(full_name)
        if not ran():  # a faulty variant that drops (or keeps the name) on its own
            self.meta.delete_table(info.table_id)

    @staticmethod
    def _split_table_name(full_name: str) -> tuple[str, str, str]:
        parts = full_name.split(".")
        if len(parts) != 3:
            raise invalid(f"Invalid table name: {full_name!r} (expected catalog.schema.table)")
        check_name(parts[0], "catalog")
        check_name(parts[1], "schema")
        check_name(parts[2], "table")
        return parts[0], parts[1], parts[2]

    def table_info(self, info: TableInfo, record: TableRecord | None) -> M.TableInfo:
        catalog, schema, name = info.name.split(".", 2) if info.name.count(".") == 2 else ("", "", info.name)
        properties = dict(record.properties) if record else {}
        for key in CATALOG_MANAGED_PROPS:
            properties.pop(key, None)
        if info.catalog_managed:  # the catalog's answer, whatever the client sent at creation
            properties[CATALOG_MANAGED_PROPS[0]] = "supported"
        properties[UC_TABLE_ID] = info.table_id
        created = record.created_at if record else None
        return M.TableInfo(
            name=record.name if record else name,
            catalog_name=record.catalog_name if record else catalog,
            schema_name=record.schema_name if record else schema,
            table_type="MANAGED",
            data_source_format="DELTA",
            columns=record.columns if record else [],
            storage_location=info.location,
            comment=record.comment if record else None,
            properties=properties,
            owner=OWNER,
            created_at=created,
            created_by=OWNER,
            updated_at=created,
            updated_by=OWNER,
            table_id=info.table_id,
        )

    def resolve(self, who: Principal, full_name: str) -> tuple[TableInfo, TableRecord | None]:
        self._split_table_name(full_name)
        who.require("reader", full_name, action="reading a table")
        with catalog_errors():
            info = self.catalog.resolve(full_name)
        return info, self.meta.table(info.table_id)

    def get_table(self, who: Principal, full_name: str) -> M.TableInfo:
        return self.table_info(*self.resolve(who, full_name))

    def list_tables(self, who: Principal, catalog: str, schema: str) -> M.ListTablesResponse:
        who.require("reader", action="listing tables")
        self._schema(catalog, schema)
        out = []
        for record in self.meta.tables_in(catalog, schema):
            if not who.may_touch(record.full_name):
                continue
            try:
                info = self.catalog.resolve(record.full_name)
            except TableNotFound:
                continue
            out.append(self.table_info(info, record))
        return M.ListTablesResponse(tables=out)

    # ============================================================ commits

    def _registered_table(self, who: Principal, table_id: str, role: Role, action: str) -> TableRow:
        """The registered table ``table_id`` names, the caller authorized for ``role`` on it."""
        try:
            uuid.UUID(table_id)
        except ValueError as e:
            raise invalid(f"invalid table_id {table_id!r}: not a UUID") from e
        row = self.meta.table_row(table_id)
        if row is None or row.name is None:
            raise ApiError("TABLE_NOT_FOUND", f"Table not found: {table_id}")
        record = self.meta.table(table_id)
        who.require(role, record.full_name if record else row.name, action=action)
        return row

    def _commit_target(self, who: Principal, table_id: str, table_uri: str, *, writing: bool) -> TableRow:
        """The registered table ``table_id`` names, its ``table_uri`` checked, the caller authorized."""
        if writing:
            row = self._registered_table(who, table_id, "writer", "committing")
        else:
            row = self._registered_table(who, table_id, "reader", "reading")
        if normalize_uri(table_uri) != normalize_uri(row.location):
            raise invalid(f"Table URI in the request {table_uri} does not match the table path {row.location}")
        return row

    def _staged_uri(self, row: TableRow, file_name: str) -> str:
        if any(c in file_name for c in "/\\\x00") or file_name in (".", ".."):
            raise invalid("Field must be a single file name without path separators: file_name")
        return staged_dir_uri(row.location) + file_name

    def _read(self, row: TableRow, uri: str) -> bytes:
        """A commit file of the table: a regular file below it, bounded and never blocking; every
        kind of failure the same 400, so the answer says nothing about paths outside the table."""
        if self.storage is None:
            raise invalid("this server has no storage to read staged commits from")
        try:
            return read_commit_file(self.storage, uri, row.location, self.catalog.read_limits)
        except CommitFileError as e:
            raise invalid(f"the commit file cannot be used: {e}") from e

    def _content(self, row: TableRow, staged_uri: str | None, inline: bytes | None) -> bytes:
        if inline is not None:
            return inline
        assert staged_uri is not None
        return self._read(row, staged_uri)

    def commit(self, who: Principal, req: M.DeltaCommit) -> None:
        row = self._commit_target(who, req.table_id, req.table_uri, writing=True)
        info = req.commit_info
        backfilled = req.latest_backfilled_version
        if info is None:
            if backfilled is None:
                raise invalid("Either commit_info or latest_backfilled_version must be defined")
            if req.metadata is not None or req.uniform is not None:
                raise invalid("metadata shouldn't be set for backfill only commit")
            with catalog_errors():
                self.catalog.mark_published(row.table_id, backfilled)
            return
        staged_uri, inline = self._proposal(row, info)
        if backfilled is not None and backfilled >= info.version:
            raise invalid(f"Latest backfilled version {backfilled} must be below the commit version {info.version}")
        if req.metadata is not None:
            who.require("admin", action="a commit that changes table metadata")
        with catalog_errors():  # the staged name and version are checked before the file is opened
            # By the catalog's own test of a proposal, so that a served faulty catalog which skips
            # part of it (`--fault staged-any-version`) is seen over the wire as it would be in process.
            self.catalog._check_proposal(row.location, RatifiedCommit(info.version, staged_uri, inline, info.timestamp))
        # Read once: the bytes judged here are the bytes the catalog binds to the version.
        content = self._content(row, staged_uri, inline)
        if not who.has_role("admin") and changes_protocol_or_metadata(content):
            raise ApiError("PERMISSION_DENIED", "changing the protocol or metadata needs the admin role")
        self._check_unpublished_limit(row, info.version, backfilled)
        details = self._details_recorder(info)
        try:
            with catalog_errors(), alongside(details) as ran:
                self.catalog.commit(
                    row.table_id,
                    info.version,
                    staged_uri=staged_uri,
                    inline_content=inline,
                    in_commit_timestamp=info.timestamp,
                    latest_published_version=backfilled,
                    staged_content=content if staged_uri is not None else None,
                )
        except ApiError as e:
            if e.error_code == "COMMIT_VERSION_CONFLICT" and self._is_replay(row, info.version, staged_uri, inline):
                return  # UC: replaying an accepted commit is an idempotent no-op (200)
            raise
        if details is not None and not ran():  # a faulty variant that ratifies in a transaction of its own
            details(None, row.table_id)
        if req.metadata is not None:
            self._apply_metadata(row.table_id, req.metadata)

    def _details_recorder(self, info: M.DeltaCommitInfo) -> Callable[[Tx | None, str], None] | None:
        """Stores the file details a listing serves (size, modification time), in the ratification's
        own transaction (``alongside``): a kill -9 or a full disk can no longer leave a ratified
        commit listed with size and time 0. ``tx`` None: in a transaction of its own."""
        name, size, mtime = info.file_name, info.file_size, info.file_modification_timestamp
        if name is None or not size or not mtime:
            return None

        def record(tx: Tx | None, table_id: str) -> None:
            if tx is None:
                self.meta.record_commit_file(table_id, name, size, mtime)
            else:
                MetaStore.record_commit_file_in(tx, table_id, name, size, mtime)

        return record

    def _proposal(self, row: TableRow, info: M.DeltaCommitInfo) -> tuple[str | None, bytes | None]:
        if (info.file_name is None) == (info.inline_content is None):
            raise invalid("commit_info needs exactly one of file_name and inline_content (lakecert extension)")
        if info.file_name is not None:
            if info.file_size is None or info.file_modification_timestamp is None:
                raise invalid("commit_info needs file_size and file_modification_timestamp with file_name")
            return self._staged_uri(row, info.file_name), None
        assert info.inline_content is not None
        try:
            inline = base64.b64decode(info.inline_content, validate=True)
        except (binascii.Error, ValueError) as e:
            raise invalid("inline_content is not base64") from e
        if not inline:
            raise invalid("inline_content is empty")
        return None, inline

    def _check_unpublished_limit(self, row: TableRow, version: int, backfilled: int | None) -> None:
        """UC's ``checkCommitLimit``: unpublished commits after this one must stay within the limit."""
        limit = self.limits.max_unpublished
        if limit is None or version != row.latest_version + 1:
            return  # conflicts and gaps are the catalog's to answer
        published = max(row.latest_published_version, -1 if backfilled is None else backfilled)
        if version - published > limit:
            raise ApiError(
                "RESOURCE_EXHAUSTED",
                f"Max number of commits per table reached ({limit} unpublished): publish (backfill) first",
            )

    def _is_replay(self, row: TableRow, version: int, staged_uri: str | None, inline: bytes | None) -> bool:
        """The same proposal was already ratified at ``version`` (UC: same version and file name)."""
        stored = self.meta.stored_commit(row.table_id, version)
        if stored is not None:
            return stored.staged_uri == staged_uri and stored.inline_content == inline
        current = self.meta.table_row(row.table_id)
        if current is None or version > current.latest_published_version or self.storage is None:
            return False
        # Published and dropped: compare with the published file, as UC does.
        published_uri = delta_file_uri(row.location, version)
        try:
            return self._content(row, staged_uri, inline) == self._read(row, published_uri)
        except ApiError:
            return False

    def _apply_metadata(self, table_id: str, metadata: M.DeltaMetadata) -> None:
        # As UC's DeltaCommitRepository.updateTableMetadata (0.6.0): properties and columns are
        # replaced whole (protocol-derived properties sent at creation go too), the comment set.
        props = metadata.properties.properties if metadata.properties else None
        schema = metadata.schema_.columns if metadata.schema_ is not None else None
        columns = None if schema is None else [c.model_dump(exclude_none=True) for c in schema]
        self.meta.update_table(table_id, properties=props, comment=metadata.description, columns=columns)

    def get_commits(self, who: Principal, req: M.DeltaGetCommits) -> M.DeltaGetCommitsResponse:
        row = self._commit_target(who, req.table_id, req.table_uri, writing=False)
        if req.end_version is not None and req.end_version < req.start_version:
            raise invalid("end_version must be >=start_version if set")
        with catalog_errors():
            resp = self.catalog.get_commits(row.table_id, req.start_version, req.end_version)
        names = [c.staged_uri.rsplit("/", 1)[-1] for c in resp.commits if c.staged_uri is not None]
        files = self.meta.commit_files(row.table_id, names)
        return M.DeltaGetCommitsResponse(
            commits=[self._commit_out(c, files) for c in resp.commits], latest_table_version=resp.latest_version
        )

    def _commit_out(self, commit: RatifiedCommit, files: dict[str, tuple[int, int]]) -> M.DeltaCommitInfoOut:
        ts = commit.in_commit_timestamp or 0
        if commit.staged_uri is None:
            # UC's models require the file fields: an inline commit has no file (empty name, size of
            # its content, its timestamp), so SDKs parse the listing; inline_content says what it is.
            raw = commit.inline_content or b""
            content = base64.b64encode(raw).decode("ascii")
            return M.DeltaCommitInfoOut(
                version=commit.version,
                timestamp=ts,
                file_name="",
                file_size=len(raw),
                file_modification_timestamp=ts,
                inline_content=content,
            )
        file_name = commit.staged_uri.rsplit("/", 1)[-1]
        size, mtime = files.get(file_name, (0, 0))
        return M.DeltaCommitInfoOut(
            version=commit.version, timestamp=ts, file_name=file_name, file_size=size, file_modification_timestamp=mtime
        )

    # ============================================================ lakecert extensions

    def capabilities(self, who: Principal) -> M.Capabilities:
        who.require("reader", action="reading capabilities")
        return M.Capabilities(
            server=self.server_name,
            inline_commits=True,
            maintenance_policy=True,
            max_unpublished_commits=self.limits.max_unpublished,
        )

    def maintenance_policy(self, who: Principal, table_id: str) -> M.MaintenancePolicyInfo:
        self._registered_table(who, table_id, "reader", "reading a maintenance policy")
        with catalog_errors():
            policy = self.catalog.maintenance_policy(table_id)
        return M.MaintenancePolicyInfo(table_id=table_id, allowed=sorted(policy.allowed))

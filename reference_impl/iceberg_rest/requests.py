"""Request bodies, parsed into pyiceberg's models where pyiceberg has them.

Anything that does not parse is a 400 ``BadRequestException`` before the catalog is touched, so a
bad request never changes state. An unknown requirement ``type`` or update ``action`` fails the
discriminated unions ``TableRequirement``/``TableUpdate`` and is a 400 too, as the spec requires.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pyiceberg.catalog.rest import CreateTableRequest as PyIcebergCreateTableRequest
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.table import TableIdentifier
from pyiceberg.table.sorting import SortOrder
from pyiceberg.table.update import TableRequirement, TableUpdate
from pyiceberg.typedef import IcebergBaseModel

from reference_impl.iceberg_rest.errors import bad_request
from reference_impl.iceberg_rest.ids import out_of_range
from reference_impl.iceberg_rest.names import Namespace, valid_name

M = TypeVar("M", bound=BaseModel)


class CreateTableRequest(PyIcebergCreateTableRequest):
    """pyiceberg's model, with the fields the spec makes optional optional (Java omits them when unset)."""

    location: str | None = None
    partition_spec: PartitionSpec | None = Field(alias="partition-spec", default=None)
    write_order: SortOrder | None = Field(alias="write-order", default=None)


class CommitTableRequest(IcebergBaseModel):
    """``CommitTableRequest``: both lists are required; the identifier is optional for a single table."""

    identifier: TableIdentifier | None = None
    requirements: tuple[TableRequirement, ...]
    updates: tuple[TableUpdate, ...]


class CreateNamespaceRequest(BaseModel):
    model_config = ConfigDict(strict=True)
    namespace: list[str] = Field(min_length=1)
    properties: dict[str, str] = Field(default_factory=dict)


class UpdateNamespacePropertiesRequest(BaseModel):
    model_config = ConfigDict(strict=True)
    removals: list[str] = Field(default_factory=list)
    updates: dict[str, str] = Field(default_factory=dict)


class RegisterTableRequest(BaseModel):
    """``RegisterTableRequest``: adopt an existing metadata file as a table's current one."""

    model_config = ConfigDict(strict=True, populate_by_name=True)
    name: str
    metadata_location: str = Field(alias="metadata-location")
    overwrite: bool = False


class RenameTableRequest(BaseModel):
    source: TableIdentifier
    destination: TableIdentifier


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are unique: with a duplicate, which value counts depends on the parser
    (Python's and Jackson's keep the last, others the first), so a commit could mean two things."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKey("duplicate key in a JSON object")
    return out


def json_body(raw: bytes) -> Any:
    """The body as JSON: UTF-8 only (RFC 8259 section 8.1), every string encodable again.

    ``json.loads`` would guess UTF-16/32 from the bytes and let ``\\ud800`` through as a lone
    surrogate, which has no UTF-8 form: it would fail only when written to a metadata file. Nesting
    too deep for the parser is malformed input, not a server error; so are a duplicate key and an
    integer outside Java's ``long`` (every number of the REST API is an int or a long).
    """
    try:
        body = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except _DuplicateKey:
        raise bad_request("Malformed JSON body: an object has a duplicate key") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise bad_request(f"Malformed JSON body: {e}") from None
    except UnicodeEncodeError:
        raise bad_request("Malformed JSON body: a string holds a lone surrogate") from None
    except RecursionError:
        raise bad_request("Malformed JSON body: nested too deeply") from None
    if out_of_range(body):
        raise bad_request("Malformed JSON body: an integer is outside the range of a 64-bit long")
    return body


def parse(model: type[M], body: Any) -> M:
    if not isinstance(body, dict):
        raise bad_request(f"The body must be a JSON object, not {type(body).__name__}")
    try:
        return model.model_validate(body)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors()[:5])
        raise bad_request(f"Invalid {model.__name__}: {problems}") from None
    except (ValueError, TypeError, AttributeError, KeyError, RecursionError) as e:
        # pyiceberg's own validators raise these for shapes pydantic let through (e.g. a list of properties).
        raise bad_request(f"Invalid {model.__name__}: {e}") from None


def namespace_of(levels: list[str]) -> Namespace:
    if not levels or not all(valid_name(level) for level in levels):
        raise bad_request(f"Invalid namespace: {levels!r}")
    return tuple(levels)


def identifier_of(identifier: TableIdentifier) -> tuple[Namespace, str]:
    if not valid_name(identifier.name):
        raise bad_request(f"Invalid table name: {identifier.name!r}")
    return namespace_of(list(identifier.namespace.root)), identifier.name

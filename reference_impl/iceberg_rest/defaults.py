"""Column default values (``initial-default``, ``write-default``, Iceberg spec v3) kept through table creation.

pyiceberg's ``new_table_metadata`` gives the requested schema fresh field ids and, doing so,
rebuilds every field without its defaults. Fresh ids change nothing else, so the two schemas
have the same shape: the defaults are copied back field by field, in order.
"""

from __future__ import annotations

from pyiceberg.schema import Schema
from pyiceberg.types import IcebergType, ListType, MapType, NestedField, StructType


def _field(fresh: NestedField, requested: NestedField) -> NestedField:
    return fresh.model_copy(
        update={
            "field_type": _type(fresh.field_type, requested.field_type),
            "initial_default": requested.initial_default,
            "write_default": requested.write_default,
        }
    )


def _type(fresh: IcebergType, requested: IcebergType) -> IcebergType:
    if isinstance(fresh, StructType) and isinstance(requested, StructType):
        return StructType(*(_field(f, r) for f, r in zip(fresh.fields, requested.fields, strict=True)))
    if isinstance(fresh, ListType) and isinstance(requested, ListType):
        return fresh.model_copy(update={"element_type": _type(fresh.element_type, requested.element_type)})
    if isinstance(fresh, MapType) and isinstance(requested, MapType):
        return fresh.model_copy(
            update={
                "key_type": _type(fresh.key_type, requested.key_type),
                "value_type": _type(fresh.value_type, requested.value_type),
            }
        )
    return fresh


def keep_defaults(fresh: Schema, requested: Schema) -> Schema:
    """``fresh`` (``requested`` with new ids) with ``requested``'s default values."""
    fields = [_field(f, r) for f, r in zip(fresh.fields, requested.fields, strict=True)]
    return Schema(*fields, schema_id=fresh.schema_id, identifier_field_ids=fresh.identifier_field_ids)

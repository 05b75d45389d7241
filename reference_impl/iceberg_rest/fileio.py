"""FileIO properties for Iceberg tables on an S3-compatible store, for every client at once.

The catalog hands these to clients in each LoadTableResult's ``config`` (Iceberg REST spec), and
uses them for its own FileIO. pyiceberg and Java Iceberg (``S3FileIO``) name some settings
differently, so both spellings are given; each ignores the other's.
"""

from __future__ import annotations

from reference_impl.storage.s3 import S3Settings


def s3_properties(s3: S3Settings) -> dict[str, str]:
    properties = {
        "s3.endpoint": s3.endpoint_url,
        # One host serves every bucket (moto, MinIO): path-style addressing.
        "s3.path-style-access": "true",  # Java
        "s3.force-virtual-addressing": "false",  # pyiceberg
        "client.region": s3.region,  # Java
        "s3.region": s3.region,  # pyiceberg
    }
    if s3.access_key_id is not None:
        properties["s3.access-key-id"] = s3.access_key_id
    if s3.secret_access_key is not None:
        properties["s3.secret-access-key"] = s3.secret_access_key
    return properties

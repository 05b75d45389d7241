"""Storage backends of the reference implementation, routed by URI scheme."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from conformance.contract.delta import FileInfo, Storage
from reference_impl.storage.local import LocalStorage
from reference_impl.storage.s3 import S3Settings, S3Storage

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

__all__ = ["LocalStorage", "RoutingStorage", "S3Settings", "S3Storage", "make_storage"]


class RoutingStorage:
    """``contract.Storage`` that hands each URI to the backend of its scheme."""

    def __init__(self, backends: Mapping[str, Storage]) -> None:
        self._backends = dict(backends)

    def backend(self, uri: str) -> Storage:
        scheme, sep, _ = uri.partition("://")
        if not sep or scheme not in self._backends:
            raise ValueError(f"no storage for URI {uri!r}")
        return self._backends[scheme]

    def put(self, uri: str, data: bytes, *, if_absent: bool = False) -> None:
        self.backend(uri).put(uri, data, if_absent=if_absent)

    def get(self, uri: str) -> bytes:
        return self.backend(uri).get(uri)

    def list(self, prefix_uri: str) -> list[FileInfo]:
        return self.backend(prefix_uri).list(prefix_uri)

    def delete(self, uri: str) -> None:
        self.backend(uri).delete(uri)

    def exists(self, uri: str) -> bool:
        return self.backend(uri).exists(uri)


def make_storage(
    s3_endpoint: str | None = None,
    *,
    s3_client: S3Client | None = None,
    aws_access_key_id: str | None = None,
    aws_secret_access_key: str | None = None,
    region_name: str | None = None,
) -> RoutingStorage:
    """``file://`` and ``s3://`` storage; S3 uses ``s3_client`` or one built lazily."""
    s3 = S3Storage(
        s3_client,
        endpoint_url=s3_endpoint,
        aws_access_key_id=aws_access_key_id,
        aws_secret_access_key=aws_secret_access_key,
        region_name=region_name,
    )
    return RoutingStorage({"file": LocalStorage(), "s3": s3})

"""``s3://bucket/key`` storage over boto3.

Put-if-absent relies on S3 conditional writes (``If-None-Match: *``), so the
object store itself decides which of several racing writers wins.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from conformance.contract.delta import FileInfo
from conformance.contract.target import S3Settings

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

__all__ = ["S3Settings", "S3Storage", "split_uri"]

SCHEME = "s3://"
# 412: the key exists; 409: a concurrent conditional write on the key is in flight.
_EXISTS_CODES = {"PreconditionFailed", "ConditionalRequestConflict"}
_MISSING_CODES = {"NoSuchKey", "NotFound", "404"}


def split_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/a/b`` -> ``("bucket", "a/b")``."""
    if not uri.startswith(SCHEME):
        raise ValueError(f"not an s3:// URI: {uri!r}")
    bucket, _, key = uri[len(SCHEME) :].partition("/")
    if not bucket:
        raise ValueError(f"no bucket in {uri!r}")
    return bucket, key


def _code(err: ClientError) -> str:
    return str(err.response.get("Error", {}).get("Code", ""))


def _status(err: ClientError) -> int:
    return int(err.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))


class S3Storage:
    """``contract.Storage`` for S3 and S3-compatible stores.

    Pass a ready boto3 S3 ``client``, or the connection settings; the client is
    then created on first use (boto3 clients are thread-safe once built).
    """

    def __init__(
        self,
        client: S3Client | None = None,
        *,
        endpoint_url: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        region_name: str | None = None,
    ) -> None:
        self._client = client
        self._endpoint_url = endpoint_url
        self._key_id = aws_access_key_id
        self._secret = aws_secret_access_key
        self._region = region_name
        self._lock = threading.Lock()

    @property
    def client(self) -> S3Client:
        with self._lock:
            if self._client is None:
                # Imported on first use: boto3's sessions cost a run on local storage a few tenths of a second.
                import boto3

                # A private session: the default one is not safe to share across threads.
                self._client = boto3.session.Session().client(
                    "s3",
                    endpoint_url=self._endpoint_url,
                    aws_access_key_id=self._key_id,
                    aws_secret_access_key=self._secret,
                    region_name=self._region,
                )
            return self._client

    def put(self, uri: str, data: bytes, *, if_absent: bool = False) -> None:
        bucket, key = split_uri(uri)
        if not if_absent:
            self.client.put_object(Bucket=bucket, Key=key, Body=data)
            return
        try:
            self.client.put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
        except ClientError as err:
            if _code(err) in _EXISTS_CODES or _status(err) in (409, 412):
                raise FileExistsError(uri) from err
            raise

    def get(self, uri: str) -> bytes:
        bucket, key = split_uri(uri)
        try:
            return self.client.get_object(Bucket=bucket, Key=key)["Body"].read()
        except ClientError as err:
            if _code(err) in _MISSING_CODES or _status(err) == 404:
                raise FileNotFoundError(uri) from err
            raise

    def list(self, prefix_uri: str) -> list[FileInfo]:
        """Objects below the "directory" ``prefix_uri``, sorted by URI; ``[]`` if none."""
        bucket, key = split_uri(prefix_uri)
        # Directory semantics, like LocalStorage: ``t/log`` must not match ``t/log2/x``.
        prefix = key.rstrip("/") + "/" if key.strip("/") else ""
        found: list[FileInfo] = []
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        try:
            for page in pages:
                for obj in page.get("Contents", []):
                    found.append(
                        FileInfo(
                            f"{SCHEME}{bucket}/{obj['Key']}",
                            obj["Size"],
                            int(obj["LastModified"].timestamp() * 1000),
                        )
                    )
        except ClientError as err:
            if _code(err) == "NoSuchBucket":
                return []
            raise
        found.sort(key=lambda f: f.uri)
        return found

    def delete(self, uri: str) -> None:
        bucket, key = split_uri(uri)
        self.client.delete_object(Bucket=bucket, Key=key)  # S3 ignores missing keys

    def exists(self, uri: str) -> bool:
        bucket, key = split_uri(uri)
        try:
            self.client.head_object(Bucket=bucket, Key=key)
        except ClientError as err:
            if _code(err) in _MISSING_CODES or _status(err) == 404:
                return False
            raise
        return True

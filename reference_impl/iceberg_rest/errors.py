"""Errors in the REST catalog's wire shape, ``IcebergErrorResponse``: ``{"error": {message, type, code}}``.

The ``type`` names follow the examples of ``open-api/rest-catalog-open-api.yaml`` (``NoSuchTableError``,
``NoSuchNamespaceError``, ``TableAlreadyExistsError``...), which are also the names Java's
``ErrorHandlers`` and pyiceberg map from status codes.
"""

from __future__ import annotations

from pyiceberg.catalog.rest.response import ErrorResponse, ErrorResponseMessage

from reference_impl.iceberg_rest.names import Namespace, dotted


class IcebergApiError(Exception):
    """An error answered to the client; raised anywhere below the routes."""

    def __init__(self, code: int, type_: str, message: str) -> None:
        super().__init__(f"{code} {type_}: {message}")
        self.code, self.type, self.message = code, type_, message

    def body(self) -> str:
        error = ErrorResponseMessage(message=self.message, type=self.type, code=self.code)
        return ErrorResponse(error=error).model_dump_json()


def bad_request(message: str) -> IcebergApiError:
    return IcebergApiError(400, "BadRequestException", message)


def no_such_namespace(namespace: Namespace) -> IcebergApiError:
    return IcebergApiError(404, "NoSuchNamespaceException", f"Namespace does not exist: {dotted(namespace)}")


def no_such_table(namespace: Namespace, table: str) -> IcebergApiError:
    return IcebergApiError(404, "NoSuchTableException", f"Table does not exist: {dotted((*namespace, table))}")


def namespace_exists(namespace: Namespace) -> IcebergApiError:
    # Java's catalogs' wording, which the REST Compatibility Kit asserts.
    return IcebergApiError(409, "AlreadyExistsException", f"Namespace already exists: {dotted(namespace)}")


def table_exists(namespace: Namespace, table: str) -> IcebergApiError:
    return IcebergApiError(409, "AlreadyExistsException", f"Table already exists: {dotted((*namespace, table))}")


def metadata_file_missing(location: str) -> IcebergApiError:
    """404 ``NotFoundException`` (Java maps it to its ``NotFoundException``), in Java FileIO's wording."""
    return IcebergApiError(404, "NotFoundException", f"Failed to open input stream for file: {location}")


def no_such_view(namespace: Namespace, view: str) -> IcebergApiError:
    return IcebergApiError(404, "NoSuchViewException", f"View does not exist: {dotted((*namespace, view))}")


def view_exists(namespace: Namespace, view: str) -> IcebergApiError:
    return IcebergApiError(409, "AlreadyExistsException", f"View already exists: {dotted((*namespace, view))}")


def name_taken(namespace: Namespace, name: str, by_view: bool) -> IcebergApiError:
    """409: a table and a view cannot share a name; says which holds it, in Java's catalogs' words."""
    kind = "View" if by_view else "Table"
    return IcebergApiError(
        409, "AlreadyExistsException", f"{kind} with same name already exists: {dotted((*namespace, name))}"
    )


def rename_target_taken(source: tuple[Namespace, str], target: tuple[Namespace, str], by_view: bool) -> IcebergApiError:
    kind = "View" if by_view else "Table"
    names = f"{dotted((*source[0], source[1]))} to {dotted((*target[0], target[1]))}"
    return IcebergApiError(409, "AlreadyExistsException", f"Cannot rename {names}. {kind} already exists")


def namespace_not_empty(namespace: Namespace) -> IcebergApiError:
    return IcebergApiError(409, "NamespaceNotEmptyException", f"Namespace is not empty: {dotted(namespace)}")


def commit_failed(namespace: Namespace, table: str, reason: str) -> IcebergApiError:
    """409: a requirement failed or a concurrent commit won; the client may refresh and retry."""
    return IcebergApiError(409, "CommitFailedException", f"Cannot commit {dotted((*namespace, table))}: {reason}")


def unprocessable(message: str) -> IcebergApiError:
    return IcebergApiError(422, "UnprocessableEntityException", message)


def unavailable(message: str) -> IcebergApiError:
    """503: the request was not processed (a hold expired or was cancelled); nothing changed."""
    return IcebergApiError(503, "ServiceUnavailableException", message)


def illegal_argument(message: str) -> IcebergApiError:
    """400 that Java's client raises as ``IllegalArgumentException`` (a request its own builder would refuse)."""
    return IcebergApiError(400, "IllegalArgumentException", message)


def payload_too_large(limit: int) -> IcebergApiError:
    return IcebergApiError(413, "PayloadTooLargeException", f"The request body exceeds {limit} bytes")


def unsupported_media_type(content_type: str) -> IcebergApiError:
    return IcebergApiError(415, "UnsupportedMediaTypeException", f"Expected a JSON body, got {content_type!r}")


def request_timeout(timeout_s: float) -> IcebergApiError:
    return IcebergApiError(408, "RequestTimeoutException", f"The request body did not arrive within {timeout_s:g} s")


def closes_connection(error: IcebergApiError) -> bool:
    """408 and 413 are answered before the body was read: the rest of it may still be on its way, so
    the connection cannot carry another request."""
    return error.code in (408, 413)

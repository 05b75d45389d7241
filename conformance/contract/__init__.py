"""The contract: everything a target implements, and the only part of lakecert a vendor imports.

This package imports nothing else of lakecert (``tests/test_layering.py`` keeps it so):

- ``delta``: the catalog, client and storage protocols of catalog-managed Delta tables, and the errors;
- ``iceberg``: the engine protocol of the Iceberg write-conflict profile;
- ``path_access``: the optional path-based access of a client;
- ``target``: ``Target``, ``TargetEnv``, ``TargetBase`` (every optional member, declared) and ``S3Settings``.
"""

from conformance.contract.delta import (
    AdapterBroken,
    Catalog,
    CatalogError,
    CommitConflict,
    CommitRejected,
    CredentialRefused,
    DeltaClient,
    FileInfo,
    GetCommitsResponse,
    InvalidRequest,
    MaintenancePolicy,
    NotSupported,
    RatifiedCommit,
    ReadResult,
    StagingTable,
    Storage,
    TableInfo,
    TableNotFound,
)
from conformance.contract.path_access import PathClient
from conformance.contract.target import (
    IcebergBudget,
    Kind,
    S3Settings,
    Side,
    Target,
    TargetBase,
    TargetEnv,
    TargetUnavailable,
)

__all__ = [
    "AdapterBroken",
    "Catalog",
    "CatalogError",
    "CommitConflict",
    "CommitRejected",
    "CredentialRefused",
    "DeltaClient",
    "FileInfo",
    "GetCommitsResponse",
    "IcebergBudget",
    "InvalidRequest",
    "Kind",
    "MaintenancePolicy",
    "NotSupported",
    "PathClient",
    "RatifiedCommit",
    "ReadResult",
    "S3Settings",
    "Side",
    "StagingTable",
    "Storage",
    "TableInfo",
    "TableNotFound",
    "Target",
    "TargetBase",
    "TargetEnv",
    "TargetUnavailable",
]

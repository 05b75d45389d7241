"""Built-in target ``uc``: a catalog speaking Unity Catalog's REST API, over HTTP.

``wire`` speaks the API (requests, errors), ``catalog`` maps the catalog contract onto it (UC's
preview commits API), ``delta_v1`` onto UC's Delta REST API ``/delta/v1`` (option ``api: v1``),
``target`` is what the registry builds.
"""

from conformance.adapters.uc.catalog import UCCatalog
from conformance.adapters.uc.delta_v1 import UCDeltaV1Catalog
from conformance.adapters.uc.target import UCTarget
from conformance.adapters.uc.wire import UCClient, UCHttpError, UCServerError

__all__ = ["UCCatalog", "UCClient", "UCDeltaV1Catalog", "UCHttpError", "UCServerError", "UCTarget"]

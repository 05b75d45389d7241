"""Built-in target ``uc``: a catalog speaking Unity Catalog's REST API, over HTTP.

``wire`` speaks the API (requests, errors), ``catalog`` maps the catalog contract onto it,
``target`` is what the registry builds.
"""

from conformance.adapters.uc.catalog import UCCatalog
from conformance.adapters.uc.target import UCTarget
from conformance.adapters.uc.wire import UCClient, UCHttpError, UCServerError

__all__ = ["UCCatalog", "UCClient", "UCHttpError", "UCServerError", "UCTarget"]

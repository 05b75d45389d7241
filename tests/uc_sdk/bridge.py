"""UC's Python SDK as a subprocess: JSON lines in, JSON lines out (run by the SDK's own venv).

tests/test_uc_python_sdk.py runs this file with ``.cache/venvs/uc-sdk/bin/python`` (made by ``make
setup`` from ``requirements.txt`` beside it), so the SDK's pins never reach lakecert's venv. It
imports nothing of lakecert. One request per line on stdin:

- ``{"host": URL, "call": "TablesApi.get_table", "args": [...], "kwargs": {...}}``: an argument
  ``{"$model": "CreateTable", "fields": {...}}`` is built with the SDK's ``Model.from_dict``;
- ``{"host": URL, "get_commits": {"table_id", "table_uri", "start_version"}}``: GET
  ``/delta/preview/commits`` with the fields in the query string, through the SDK's own transport
  and models (its ``get_commits`` drops the body of a GET).

One answer per line on stdout: ``{"ok": true, "type": <class of the result>, "value": <to_dict()>}``
or ``{"ok": false, "exception": <class>, "api_exception": <is it the SDK's ApiException or a subclass>,
"status": <HTTP status or null>}``.
"""

from __future__ import annotations

import asyncio
import enum
import importlib
import json
import sys
from typing import Any

uc: Any = importlib.import_module("unitycatalog.client")
UM: Any = importlib.import_module("unitycatalog.client.models")


def _argument(value: Any) -> Any:
    if isinstance(value, dict) and "$model" in value:
        return getattr(UM, value["$model"]).from_dict(value["fields"])
    return value


def _plain(value: Any) -> Any:
    """A JSON value: models by ``to_dict()``, enums by their value."""
    if hasattr(value, "to_dict"):
        return _plain(value.to_dict())
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


async def _call(client: Any, request: dict[str, Any]) -> Any:
    if "get_commits" in request:
        fields = request["get_commits"]
        query = [(k, str(fields[k])) for k in ("table_id", "table_uri", "start_version") if k in fields]
        serialized = client.param_serialize("GET", "/delta/preview/commits", query_params=query)
        response = await client.call_api(*serialized)
        await response.read()
        return client.response_deserialize(response, {"200": "DeltaGetCommitsResponse"}).data
    api_name, method = request["call"].split(".")
    api = getattr(uc, api_name)(client)
    args = [_argument(a) for a in request.get("args", [])]
    kwargs = {k: _argument(v) for k, v in request.get("kwargs", {}).items()}
    return await getattr(api, method)(*args, **kwargs)


async def _answer(request: dict[str, Any]) -> dict[str, Any]:
    try:
        async with uc.ApiClient(uc.Configuration(host=request["host"])) as client:
            result = await _call(client, request)
    except Exception as e:  # the SDK's refusal is the answer: its class and status
        refused = isinstance(e, uc.ApiException)
        return {
            "ok": False,
            "exception": type(e).__name__,
            "api_exception": refused,
            "status": getattr(e, "status", None),
        }
    return {"ok": True, "type": type(result).__name__, "value": _plain(result)}


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(asyncio.run(_answer(json.loads(line)))), flush=True)


if __name__ == "__main__":
    main()

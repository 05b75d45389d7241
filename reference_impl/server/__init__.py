"""The reference catalog over HTTP, wire-compatible with Unity Catalog OSS (``lakecert serve``).

Modules: ``app`` (routes of the UC API), ``delta_v1`` (UC's ``/delta/v1`` table API),
``models``/``models_v1`` (wire models), ``service`` (operations on the wrapped catalog),
``meta`` (the server's own records: catalogs, schemas, table metadata), ``auth`` (bearer
tokens and roles), ``edge`` (body size, content type, JSON well-formedness), ``errors``
(UC's error shapes), ``cli`` (``serve_main``), ``openapi`` (the published document).
"""

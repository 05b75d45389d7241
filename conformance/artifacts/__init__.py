"""Releases of the engines and clients under test, fetched on first use into a cache keyed by version.

A client project gates each of its releases on lakecert, so the version under test is a setting of
the target (``version:``), not whatever ``make setup`` happened to fetch. ``cache`` says where
fetched releases live and announces each fetch on stderr; ``maven`` and ``pypi`` fetch from the two
registries; each adapter's ``release.py`` says which artifacts make one release of its engine and
how lakecert's own driver is built against it.
"""

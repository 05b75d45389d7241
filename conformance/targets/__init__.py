"""Deprecated package, kept for one release so that adapters written against it keep working.

The contract moved to ``conformance.contract``; built-in adapters to ``conformance.adapters``; the
run's configuration and the target registry to ``conformance.config`` and ``conformance.registry``.
"""

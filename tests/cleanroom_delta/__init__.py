"""A clean-room Delta engine and its faulty variants (issues 15 and 18; docs/mutation.md).

Written from lakecert's public documents (README, docs/*.md, ``conformance/contract``, the
requirement catalog of ``delta-row-conflicts``) and Delta's public protocol and concurrency-control
documentation only: never ``reference_impl/``, the checks, the model or ``tests/cleanroom/``.
"""

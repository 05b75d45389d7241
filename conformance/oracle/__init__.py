"""lakecert's own decoder of the Delta log, written from the protocol, not from ``reference_impl``.

The checks judge what a client wrote with this package, so a misreading of the protocol shared by
the reference implementation and a client under test does not pass unnoticed (issue 28 item 5).
It imports nothing of the reference (``tests/test_layering.py`` keeps it so). Every function cites
the section of Delta's PROTOCOL.md ("PROTOCOL") or of the catalog-managed RFC ("RFC") it follows.

- ``names``: the entries of ``_delta_log`` by file name;
- ``commits``: commit content (newline-delimited JSON actions) and what one commit may hold;
- ``checkpoint``: the actions of a Parquet checkpoint;
- ``replay``: the live files, protocol and metadata of a version;
- ``clock``: in-commit timestamps judged against the wall clock around the writer's calls;
- ``txn_ids``: every txnId of a run, to find one used twice.
"""

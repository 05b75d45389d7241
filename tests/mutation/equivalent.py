"""Surviving mutants that are equivalent, with the reason (docs/mutation.md lists them too).

Keyed by (file, the stripped source line, the stripped mutated line): stable while the line does
not change, unlike cosmic-ray's occurrence numbers, and exact (two mutants of one line differ).
A mutant here is one no conforming-or-not distinction can see: the RFC allows both behaviours,
or only a path no conforming counterpart takes differs (the error raised after giving up).
"""

from __future__ import annotations

CLIENT = "reference_impl/delta/client.py"
CATALOG = "reference_impl/catalog/catalog.py"

EQUIVALENT: dict[tuple[str, str, str], str] = {
    (CLIENT, "return time.time_ns() // 1_000_000", "return time.time_ns() // 1000001"): (
        "the wall clock only proposes an in-commit timestamp; max(now, previous + 1) keeps them"
        " increasing whatever the clock says, and a clock a millionth slow is still a clock"
    ),
    (CLIENT, "max_retries: int = 10,", "max_retries: int = 11,"): "how often a writer retries is its own choice",
    (CLIENT, "max_retries: int = 10,", "max_retries: int = 9,"): "how often a writer retries is its own choice",
    (
        CLIENT,
        "return now if previous is None else max(now, previous + 1)",
        "return now if previous is None else max(now, previous + 2)",
    ): "previous + 2 is still strictly after the previous commit's timestamp (PROTOCOL.md In-Commit Timestamps)",
    (
        CLIENT,
        "return 0 <= start <= end and all(v in seg.published for v in range(start, end + 1))",
        "return 0 <= start < end and all(v in seg.published for v in range(start, end + 1))",
    ): "declines one-version compactions: log compaction is optional (a MAY), declining any range conforms",
    (
        CLIENT,
        "self.storage.put(compaction_uri(table.location, start_version, end_version), data, if_absent=True)",
        "self.storage.put(compaction_uri(table.location, start_version, end_version), data, if_absent=False)",
    ): "a compaction of the same published range has the same reconciled bytes: overwriting changes nothing",
    (CLIENT, "assert conflict is not None", "assert conflict is None"): (
        "only reached after every retry lost a race; which exception a writer raises when it gives up"
        " is not an RFC rule (the conflict is reported either way, and nothing was ratified)"
    ),
    (
        CATALOG,
        "if ict is not None and not (_is_int(ict) and ict >= 0):",
        "if not ict is not None and not (_is_int(ict) and ict >= 0):",
    ): (
        "refuses proposals without an in-commit timestamp (catalog-managed tables require ICTs, so a"
        " catalog may) and no longer type-checks the ones given; no catalog rule of the RFC is about an"
        " ICT's value (the writer's WRT-ICT-MONOTONIC is)"
    ),
    (
        CATALOG,
        "if row is None or row.name is not None or row.latest_version >= 0:  # >= 0: registered, maybe dropped",
        "if row is None and row.name is not None or row.latest_version >= 0:  # >= 0: registered, maybe dropped",
    ): (
        "registering an unknown staging table raises AttributeError instead of InvalidRequest: misuse"
        " is still refused and changes nothing; the error's class is the contract's business, not the RFC's"
    ),
    (CATALOG, "if published is not None:", "if published is None:"): (
        "ignores the publication report carried by a commit: the catalog then keeps published commits"
        " longer, which the RFC allows (it may drop them, never must)"
    ),
}

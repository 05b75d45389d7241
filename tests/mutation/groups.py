"""What ``make mutation`` mutates, and which run judges each mutant.

A group is a set of reference modules and the profile(s) whose checks judge that code: a mutant is
killed when the reference, with the mutant in place, is no longer certified on those profiles.
Catalog code is judged by the catalog profile only (the client profiles use the reference catalog
as their counterpart, and a client profile failing on a broken counterpart would be a kill for the
wrong reason); client code by the writer and reader profiles.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Group:
    name: str
    files: tuple[str, ...]  # repository-relative paths of the mutated modules
    profiles: tuple[str, ...]
    served: bool = False  # judged through the `uc` target against `lakecert serve` in the kill process
    timeout_s: float = 120.0  # per mutant: a hang guard (a mutant that loops is killed by it), not a limit
    # Settings of the judging run besides the default ones (`lakecert.yaml` keys): a smaller budget
    # where the default one costs minutes per mutant and the smaller one still runs every check
    # that covers the mutated code (the baseline must still certify: run.py checks it).
    settings: tuple[tuple[str, object], ...] = ()


# The generated catalog schedules with a small budget: they judge the served commit path as well as
# the fixed checks do, and the default budget is most of a served run.
SMALL_MODEL = ("model", {"examples": 5, "steps": 10})


GROUPS: dict[str, Group] = {
    g.name: g
    for g in (
        Group(
            "catalog",
            (
                "reference_impl/catalog/catalog.py",
                "reference_impl/catalog/transaction.py",
                "reference_impl/catalog/sqlite_store.py",
            ),
            ("delta-cm-catalog",),
        ),
        Group(
            "client",
            (
                "reference_impl/delta/client.py",
                "reference_impl/delta/checkpoint.py",
                "reference_impl/delta/cleanup.py",
                "reference_impl/delta/compaction.py",
            ),
            ("delta-cm-writer", "delta-cm-reader"),
        ),
        # Snapshot reads and log file names: the same judges, a group of its own so that the two
        # halves of the client can run side by side (`make mutation MODULES=client,client-log`).
        Group(
            "client-log",
            ("reference_impl/delta/snapshot.py", "reference_impl/delta/log_paths.py"),
            ("delta-cm-writer", "delta-cm-reader"),
        ),
        Group(
            "server", ("reference_impl/server/service.py",), ("delta-cm-catalog",), served=True, settings=(SMALL_MODEL,)
        ),
        # The model's validation judged by the directed and the exhaustive two-operation checks on the
        # 8 core table configurations (both isolation levels, v2 and v3) and a small generated budget:
        # ~20 s a run instead of ~3 min for the full matrix, with every requirement still judged.
        Group(
            "iceberg",
            ("conformance/model/iceberg/validation.py",),
            ("iceberg-row-delta",),
            settings=(("iceberg", {"matrix": "core", "exhaustive": True}), SMALL_MODEL),
        ),
    )
}

# cosmic-ray's operators that are not run (regular expressions over operator names). Kept: each
# comparison turned into its boundary neighbour and its negation (< into <= and >=, == into !=, is
# into is not), + and - swapped, `not` added or removed, True/False, and/or, break/continue, numbers
# +-1, loops that never run and handlers that never match. Left out, to keep a run within an hour:
# the other comparison swaps (they are caught whenever the neighbour and the negation are), swaps
# to arithmetic the code does not mix (a `+` turned into `<<` fails on first use), and the
# variable insertion/replacement operators, which are many and mostly crash on first use.
EXCLUDED_OPERATORS: tuple[str, ...] = (
    r"core/ReplaceBinaryOperator_(?!Add_Sub$|Sub_Add$|FloorDiv_Mul$)",
    r"core/ReplaceComparisonOperator_(?!(Eq_NotEq|NotEq_Eq|Lt_LtE|Lt_GtE|LtE_Lt|LtE_Gt|Gt_GtE|Gt_LtE|GtE_Gt|GtE_Lt|Is_IsNot|IsNot_Is)$)",
    r"core/ReplaceUnaryOperator_(?!Delete_Not$)",
    r"core/VariableReplacer",
    r"core/VariableInserter",
    r"core/RemoveDecorator",
)

# Functions of the mutated modules that no profile judges, with the reason: their mutants are
# marked skipped ("out of scope") and counted apart, neither killed nor survived.
OUT_OF_SCOPE: dict[tuple[str, str], str] = {
    ("reference_impl/catalog/catalog.py", "import_table"): (
        "lakecert's own seeding of reader tables (an admin call outside the catalog contract); its"
        " input checks guard the suite's fixtures, which are always well formed"
    ),
    ("reference_impl/catalog/catalog.py", "set_maintenance_policy"): (
        "the suite's admin call that sets a table's policy for the writer checks (the counterpart's"
        " side); the catalog contract the catalog profile drives only reads policies"
    ),
    # UC's catalogs, schemas and table listing (issue #18): the uc target is given one catalog and schema that
    # exist and only names them in POST /tables; the Delta catalog contract has no namespaces, and
    # these endpoints are judged by the server's own tests (test_server_auth, _input, _hostile, _openapi).
    **{
        ("reference_impl/server/service.py", name): (
            "UC's catalog and schema endpoints (create, get, list, their records, the table listing), which the Delta"
            " catalog contract does not have and no catalog check calls through the uc target"
        )
        for name in (
            "create_catalog",
            "get_catalog",
            "create_schema",
            "get_schema",
            "list_schemas",
            "_schema_info",
            "list_tables",
        )
    },
}

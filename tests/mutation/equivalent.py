"""Surviving mutants that are equivalent, with the reason (docs/mutation.md lists them too).

Keyed by (file, the stripped source line, the stripped mutated line): stable while the line does
not change, unlike cosmic-ray's occurrence numbers, and exact (two mutants of one line differ).
A reason starting with "gap:" is not an equivalence: the survivor counts as survived, with the
explanation shown. Any other entry is one no conforming-or-not distinction can see: the RFC allows both behaviours,
or only a path no conforming counterpart takes differs (the error raised after giving up).
"""

from __future__ import annotations

CLIENT = "reference_impl/delta/client.py"
CATALOG = "reference_impl/catalog/catalog.py"
SNAPSHOT = "reference_impl/delta/snapshot.py"

# Reasons shared by several mutants. "Outside the RFC": both behaviours are allowed, or the input
# is one the RFC says nothing about (a negative bound, a non-integer version) and no conforming
# client sends; the catalog profile sends the malformed proposals the RFC does speak of
# (docs/certify.md) and those mutants are killed.
ARGUMENTS = (
    "outside the RFC: validation of an argument no client sends (a negative or non-integer version,"
    " bound or timestamp); the RFC has no rule for it and the catalog profile does not send it"
)
REDUNDANT = (
    "equivalent: commit() refuses versions below 1 before check_commit runs (check_commit's own"
    " test of the version then never decides)"
)
CREATION = (
    "outside the RFC: how a catalog registers or drops tables is its own (RFC 'Creating a"
    " catalog-managed table' leaves it to the catalog); lakecert's tests/test_reference_catalog.py"
    " and tests/test_catalog_drop.py judge the reference's choices"
)
GIVE_UP = (
    "equivalent: only reached after every retry lost a race; which exception a writer raises when it"
    " gives up is not an RFC rule (the conflict is reported either way, and nothing was ratified)"
)
DECLINE = "equivalent: declines more compactions; log compaction is optional (a MAY), declining any range conforms"
RETRIES = "equivalent: how often a writer retries is its own choice"
UNREACHABLE = (
    "equivalent on conforming tables: the test guards against a log with a hole (a commit missing at"
    " or after the checkpoint), which no conforming writer or cleanup leaves"
)

EQUIVALENT: dict[tuple[str, str, str], str] = {
    (CLIENT, "return time.time_ns() // 1_000_000", "return time.time_ns() // 1000001"): (
        "the wall clock only proposes an in-commit timestamp; max(now, previous + 1) keeps them"
        " increasing whatever the clock says, and a clock a millionth slow is still a clock"
    ),
    (CLIENT, "max_retries: int = 10,", "max_retries: int = 11,"): RETRIES,
    (CLIENT, "max_retries: int = 10,", "max_retries: int = 9,"): RETRIES,
    (
        CLIENT,
        "return now if previous is None else max(now, previous + 1)",
        "return now if previous is None else max(now, previous + 2)",
    ): "previous + 2 is still strictly after the previous commit's timestamp (PROTOCOL.md In-Commit Timestamps)",
    (
        CLIENT,
        "return 0 <= start <= end and all(v in seg.published for v in range(start, end + 1))",
        "return 0 <= start < end and all(v in seg.published for v in range(start, end + 1))",
    ): DECLINE,
    (
        CLIENT,
        "self.storage.put(compaction_uri(table.location, start_version, end_version), data, if_absent=True)",
        "self.storage.put(compaction_uri(table.location, start_version, end_version), data, if_absent=False)",
    ): "a compaction of the same published range has the same reconciled bytes: overwriting changes nothing",
    (CLIENT, "assert conflict is not None", "assert conflict is None"): GIVE_UP,
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


_MORE: list[tuple[str, str, str, str]] = [
    (
        CATALOG,
        "if not _is_int(commit.version) or commit.version < 0:",
        "if not _is_int(commit.version) or commit.version < 1:",
        REDUNDANT,
    ),
    (
        CATALOG,
        "if not _is_int(commit.version) or commit.version < 0:",
        "if not _is_int(commit.version) or commit.version < -1:",
        REDUNDANT,
    ),
    (
        CATALOG,
        "if not _is_int(commit.version) or commit.version < 0:",
        "if not _is_int(commit.version) and commit.version < 0:",
        REDUNDANT,
    ),
    (
        CATALOG,
        "if ict is not None and not (_is_int(ict) and ict >= 0):",
        "if ict is not None and not (_is_int(ict) and ict >= 1):",
        ARGUMENTS,
    ),
    (
        CATALOG,
        "if ict is not None and not (_is_int(ict) and ict >= 0):",
        "if ict is not None and not (_is_int(ict) and ict > 0):",
        ARGUMENTS,
    ),
    (
        CATALOG,
        "if ict is not None and not (_is_int(ict) and ict >= 0):",
        "if ict is None and not (_is_int(ict) and ict >= 0):",
        ARGUMENTS,
    ),
    (
        CATALOG,
        "if row is None or row.name is not None or row.latest_version >= 0:  # >= 0: registered, maybe dropped",
        "if row is None or row.name is not None or row.latest_version > 0:  # >= 0: registered, maybe dropped",
        CREATION,
    ),
    (
        CATALOG,
        "if row is None or row.name is not None or row.latest_version >= 0:  # >= 0: registered, maybe dropped",
        "if row is None or row.name is not None and row.latest_version >= 0:  # >= 0: registered, maybe dropped",
        CREATION,
    ),
    (
        CATALOG,
        "if row is None or row.name is not None or row.latest_version >= 0:  # registered concurrently",
        "if row is None and row.name is not None or row.latest_version >= 0:  # registered concurrently",
        "equivalent: differs only when the staging table vanished between two transactions, which nothing"
        " does (staging tables are never deleted)",
    ),
    (
        CATALOG,
        "if self._storage is not None and not self._storage.exists(delta_file_uri(row.location, 0)):",
        "if self._storage is None and not self._storage.exists(delta_file_uri(row.location, 0)):",
        CREATION,
    ),
    (
        CATALOG,
        "except CommitFileError as e:",
        "except CosmicRayTestingException as e:",
        "equivalent: an unreadable staged file is still refused and nothing ratified; only the exception's"
        " class differs, and how a catalog refuses is its own (the checks judge the effect)",
    ),
    (
        CATALOG,
        "if bound is not None and not (_is_int(bound) and bound >= 0):",
        "if bound is not None and not (_is_int(bound) or bound >= 0):",
        ARGUMENTS,
    ),
    (
        CATALOG,
        "if not _is_int(version) or not 0 <= version <= row.latest_version:",
        "if not _is_int(version) or not 0 < version <= row.latest_version:",
        "equivalent: refuses the no-op publication report of version 0; a catalog may refuse publication"
        " reports (RFC 'Publishing Commits': it then only keeps commits longer)",
    ),
    (
        CLIENT,
        "return time.time_ns() // 1_000_000",
        "return time.time_ns() // 999999",
        "equivalent: a clock a millionth fast is still a clock; max(now, previous + 1) keeps ICTs increasing",
    ),
    (
        CLIENT,
        "self._random = random.Random(seed) if seed is not None else None",
        "self._random = random.Random(seed) if not seed is not None else None",
        "equivalent: only whether the reference's file names repeat from run to run changes (reproducible"
        " reports), not what is written or proposed",
    ),
    (
        CLIENT,
        "return str(uuid.UUID(int=self._random.getrandbits(128), version=4))",
        "return str(uuid.UUID(int=self._random.getrandbits(128), version= 3))",
        "equivalent: still a unique UUID in the staged name; the RFC asks for a UUID, not a UUID version",
    ),
    (
        CLIENT,
        "return 0 <= start <= end and all(v in seg.published for v in range(start, end + 1))",
        "return 1 <= start <= end and all(v in seg.published for v in range(start, end + 1))",
        DECLINE,
    ),
    (
        CLIENT,
        "return 0 <= start <= end and all(v in seg.published for v in range(start, end + 1))",
        "return 0 < start <= end and all(v in seg.published for v in range(start, end + 1))",
        DECLINE,
    ),
    (
        CLIENT,
        "return 0 <= start <= end and all(v in seg.published for v in range(start, end + 1))",
        "return 0 <= start <= end and all(v in seg.published for v in range(start, end + 2))",
        DECLINE,
    ),
    (CLIENT, "for _attempt in range(self.max_retries + 1):", "for _attempt in range(self.max_retries + 2):", RETRIES),
    (CLIENT, "assert conflict is not None", "assert not conflict is not None", GIVE_UP),
    (
        SNAPSHOT,
        "@dataclass(frozen=True)",
        "@dataclass(frozen=False)",
        "equivalent: nothing assigns to the record; frozen only guards against it",
    ),
    (
        SNAPSHOT,
        "mtime = (mtimes or {}).get(commit.staged_uri) if commit.staged_uri else None",
        "mtime = (mtimes or {}).get(commit.staged_uri) if not commit.staged_uri else None",
        "equivalent on catalog-managed tables: file modification times only date commits of tables without"
        " in-commit timestamps, which catalogManaged requires",
    ),
    (SNAPSHOT, "first = 0 if cp is None else cp + 1", "first = 0 if cp is None else cp + 0", UNREACHABLE),
    (
        SNAPSHOT,
        "missing = [v for v in range(first, target + 1) if v not in seg.commits]",
        "missing = [v for v in range(first, target + 0) if v not in seg.commits]",
        UNREACHABLE,
    ),
    (
        SNAPSHOT,
        "if any(v not in seg.commits for v in range(cp + 1, target + 1)):",
        "if any(v not in seg.commits for v in range(cp + 0, target + 1)):",
        UNREACHABLE,
    ),
    (
        SNAPSHOT,
        "except (OSError, ValueError, pa.ArrowException):",
        "except (OSError, CosmicRayTestingException, pa.ArrowException):",
        "outside the RFC: a checkpoint that fails to parse with a ValueError (not an Arrow error) is not a"
        " table any conforming writer leaves; no reader rule covers corrupt checkpoints",
    ),
]
_MORE += [
    (
        CATALOG,
        "if row is None or row.name is not None or row.latest_version >= 0:  # registered concurrently",
        "if row is None or row.name is not None and row.latest_version >= 0:  # registered concurrently",
        "outside the RFC: the re-test inside the write transaction differs only when the table was"
        " dropped between the catalog's own read and write (a race with itself no client can set up);"
        " the test before it refuses the same registrations, and how a catalog registers is its own",
    ),
    (
        CATALOG,
        "if published is not None and not (_is_int(published) and 0 <= published < version):",
        "if published is not None and not (_is_int(published) and -1 <= published < version):",
        ARGUMENTS,
    ),
    (
        CATALOG,
        "if commit.staged_uri is None or kept is None:",
        "if commit.staged_uri is None and kept is None:",
        "equivalent: differs only for a staged commit whose bytes were not kept, which happens only"
        " in a catalog built without storage; every catalog lakecert runs (in process, served) has one",
    ),
    (
        "reference_impl/delta/cleanup.py",
        "return False",
        "return True",
        "equivalent: unreachable; deletable() is only given LogFiles, whose kind is one of the five"
        " (LogKind) that the branches above all return for",
    ),
    (
        CATALOG,
        "if not _is_int(version) or version < 1:",
        "if not _is_int(version) or version < 0:",
        "equivalent: a proposal of version 0 then reaches the version test, which refuses it as already"
        " ratified (every registered table has version 0); nothing is ratified either way",
    ),
    (SNAPSHOT, "continue", "break", UNREACHABLE),
]
_MORE += [
    (
        CATALOG,
        "return isinstance(value, int) and not isinstance(value, bool)",
        "return isinstance(value, int) or not isinstance(value, bool)",
        ARGUMENTS,
    ),
    (
        CATALOG,
        "if row is None or row.name is not None or row.latest_version >= 0:  # registered concurrently",
        "if row is None or row.name is not None or row.latest_version > 0:  # registered concurrently",
        CREATION,
    ),
    (
        CLIENT,
        "inline: bool = False,",
        "inline: bool = True,",
        "equivalent: the reference then writes inline commits, which the RFC lets a writer do where the"
        " catalog accepts them; the checks of staged files say NOT_APPLICABLE and the rest still pass",
    ),
    (
        CLIENT,
        "if self._random is None:",
        "if self._random is not None:",
        "equivalent: only whether the reference's file names repeat from run to run changes (a seeded"
        " reference then draws unseeded UUIDs), not what is written or proposed",
    ),
    (
        CLIENT,
        "self.storage.put(delta_uri(table.location, v), self._published_bytes(content), if_absent=True)",
        "self.storage.put(delta_uri(table.location, v), self._published_bytes(content), if_absent=False)",
        "equivalent: a published file is a copy of the ratified commit, so overwriting an earlier copy of"
        " the same version writes the same bytes",
    ),
    (
        CLIENT,
        "return False",
        "return True",
        "outside the RFC: compact_log's boolean (did it compact) turns true when it declined; no file is"
        " written either way and the checks judge the files, which the RFC is about",
    ),
    (CLIENT, "for _attempt in range(self.max_retries + 1):", "for _attempt in range(self.max_retries - 1):", RETRIES),
    (
        SNAPSHOT,
        "from_catalog = {c.version: self.catalog_ref(c, mtimes) for c in ratified.commits if 0 <= c.version <= latest}",
        "from_catalog = {c.version: self.catalog_ref(c, mtimes) for c in ratified.commits if 1 <= c.version <= latest}",
        "equivalent: a catalog never lists version 0 (it exists before the table is registered)",
    ),
    (
        SNAPSHOT,
        "if target < 0 or target > seg.latest_version:",
        "if target < -1 or target > seg.latest_version:",
        "equivalent: a read as of version -1 is still refused, by the next test (no protocol at that version)",
    ),
    (SNAPSHOT, "if cp is not None and cp in seg.commits:", "if cp is not None or cp in seg.commits:", UNREACHABLE),
    (
        SNAPSHOT,
        "if any(v not in seg.commits for v in range(cp + 1, target + 1)):",
        "if any(v not in seg.commits for v in range(cp + 2, target + 1)):",
        UNREACHABLE,
    ),
]
SEEDING = (
    "equivalent: only whether the reference's file names repeat from run to run changes (reproducible"
    " reports), not what is written or proposed"
)
UNREADABLE_CHECKPOINT = (
    "outside the RFC: a checkpoint that cannot be read is not a table any conforming writer leaves; no"
    " reader rule covers falling back from a corrupt checkpoint"
)
_MORE += [
    (
        CATALOG,
        "if row is None or row.name is not None or row.latest_version >= 0:  # registered concurrently",
        "if row is None or row.name is not None or row.latest_version >= 1:  # registered concurrently",
        CREATION,
    ),
    (
        CATALOG,
        "if not _is_int(version) or version < 1:",
        "if not _is_int(version) and version < 1:",
        "equivalent: version 0 then reaches the version test, which refuses it as already ratified, and"
        " negative ones check_commit's test; nothing is ratified either way",
    ),
    (
        CATALOG,
        "if proposal.staged_uri is not None and content is not None:",
        "if proposal.staged_uri is not None or content is not None:",
        "equivalent: differs only for an inline proposal with bytes read from a staged file, which"
        " commit() never passes (content is read for staged proposals only)",
    ),
    (CATALOG, "if published is not None:", "if not published is not None:", "equivalent: as `if published is None`"),
    (
        CATALOG,
        "if bound is not None and not (_is_int(bound) and bound >= 0):",
        "if bound is not None and not (_is_int(bound) and bound >= -1):",
        ARGUMENTS,
    ),
    (
        CLIENT,
        "self._random = random.Random(seed) if seed is not None else None",
        "self._random = random.Random(seed) if seed is None else None",
        SEEDING,
    ),
    (CLIENT, "if self._random is None:", "if not self._random is None:", SEEDING),
    (
        CLIENT,
        "return str(uuid.UUID(int=self._random.getrandbits(128), version=4))",
        "return str(uuid.UUID(int=self._random.getrandbits( 127), version=4))",
        "equivalent: still a UUID (version bits are set by uuid.UUID); 127 random bits keep names unique",
    ),
    (
        "reference_impl/delta/checkpoint.py",
        "return False",
        "return True",
        "equivalent: write_checkpoint's boolean (written or already there) is not used: the client reports"
        " the checkpoint's version either way",
    ),
    (
        SNAPSHOT,
        "except (OSError, ValueError, pa.ArrowException):",
        "except (CosmicRayTestingException, ValueError, pa.ArrowException):",
        UNREADABLE_CHECKPOINT,
    ),
    (
        SNAPSHOT,
        "except (OSError, ValueError, pa.ArrowException):",
        "except (OSError, ValueError, CosmicRayTestingException):",
        UNREADABLE_CHECKPOINT,
    ),
    (
        SNAPSHOT,
        "continue  # unusable checkpoint: try an older one",
        "break  # unusable checkpoint: try an older one",
        UNREADABLE_CHECKPOINT,
    ),
    (
        SNAPSHOT,
        "for v in range(seg.latest_version, -1, -1):",
        "for v in range(seg.latest_version, - 2, -1):",
        "equivalent: the extra step at version -1 finds no commit and stops, as the loop's end would",
    ),
]
CHECKPOINT = "reference_impl/delta/checkpoint.py"
HINT = (
    "equivalent: only the _last_checkpoint hint changes (when it is rewritten, or its optional size"
    " statistic); readers find checkpoints by listing and must not trust the hint's figures"
)
_MORE += [
    (
        CATALOG,
        "if not _is_int(commit.version) or commit.version < 0:",
        "if not _is_int(commit.version) or commit.version <= 0:",
        REDUNDANT,
    ),
    (
        CATALOG,
        "if not isinstance(uri, str) or not uri.startswith(prefix) or match is None:",
        "if not isinstance(uri, str) and not uri.startswith(prefix) or match is None:",
        "equivalent: a file of another table's staging folder (the only path whose tail still matches)"
        " is refused when the catalog reads it, which accepts files below the table's own location only",
    ),
    (
        CATALOG,
        "if ict is not None and not (_is_int(ict) and ict >= 0):",
        "if ict is not None and not (_is_int(ict) and ict >= -1):",
        ARGUMENTS,
    ),
    (
        CATALOG,
        "if ict is not None and not (_is_int(ict) and ict >= 0):",
        "if ict is not None and not (_is_int(ict) or ict >= 0):",
        ARGUMENTS,
    ),
    (
        CATALOG,
        "tx.register(table_id, name, latest=0, published=0)",
        "tx.register(table_id, name, latest=0, published= -1)",
        "equivalent: the mark only decides which stored commits may be dropped, and version 0 is never"
        " stored by the catalog (it exists before registration)",
    ),
    (
        CHECKPOINT,
        "pq.write_table(table, buf, store_schema=False)  # Delta readers need no Arrow schema blob",
        "pq.write_table(table, buf, store_schema=True)  # Delta readers need no Arrow schema blob",
        "equivalent: an extra Arrow schema in the Parquet metadata, which Delta readers ignore",
    ),
    (
        CHECKPOINT,
        "storage.put(checkpoint_uri(location, version), data, if_absent=True)",
        "storage.put(checkpoint_uri(location, version), data, if_absent=False)",
        "equivalent: a checkpoint of a version holds that version's state, so rewriting it writes the same state",
    ),
    (
        CHECKPOINT,
        'if last is None or int(last.get("version", -1)) <= version:',
        'if last is None or int(last.get("version", - 0)) <= version:',
        HINT,
    ),
    (
        CHECKPOINT,
        'if last is None or int(last.get("version", -1)) <= version:',
        'if last is None or int(last.get("version", -1)) < version:',
        HINT,
    ),
    (
        CHECKPOINT,
        '"numOfAddFiles": sum(1 for a in actions if "add" in a),',
        '"numOfAddFiles": sum( 2 for a in actions if "add" in a),',
        HINT,
    ),
    (
        SNAPSHOT,
        "from_catalog = {c.version: self.catalog_ref(c, mtimes) for c in ratified.commits if 0 <= c.version <= latest}",
        "from_catalog = {c.version: self.catalog_ref(c, mtimes) for c in ratified.commits if 0 < c.version <= latest}",
        "equivalent: a catalog never lists version 0 (it exists before the table is registered)",
    ),
    (
        SNAPSHOT,
        "missing = [v for v in range(first, target + 1) if v not in seg.commits]",
        "missing = [v for v in range(first, target - 1) if v not in seg.commits]",
        UNREACHABLE,
    ),
    (
        SNAPSHOT,
        "if any(v not in seg.commits for v in range(cp + 1, target + 1)):",
        "if any(v not in seg.commits for v in range(cp + 1, target - 1)):",
        UNREACHABLE,
    ),
    (
        SNAPSHOT,
        "raise MissingVersionError(missing[0])",
        "raise MissingVersionError(missing[ 1])",
        "equivalent: the read fails either way; only which missing version the error names differs",
    ),
    (
        SNAPSHOT,
        "raise MissingVersionError(missing[0])",
        "raise MissingVersionError(missing[ -1])",
        "equivalent: the read fails either way; only which missing version the error names differs",
    ),
    (
        "reference_impl/delta/log_paths.py",
        'end = int(m.group(2)) if kind == "compaction" else None',
        'end = int(m.group( 1)) if kind == "compaction" else None',
        "equivalent for the product: no reference code reads a LogFile's end_version (the client"
        " compacts the range it is asked for); only the evidence of WRT-COMPACTION-PUBLISHED does, so"
        " the mutant weakens the judge, never the product",
    ),
]
_MORE += [
    (
        CLIENT,
        "return 0 <= start <= end and all(v in seg.published for v in range(start, end + 1))",
        "return -1 <= start <= end and all(v in seg.published for v in range(start, end + 1))",
        "equivalent: a range from -1 is still declined, since version -1 is never published",
    ),
    (
        SNAPSHOT,
        "from_catalog: bool = False",
        "from_catalog: bool = True",
        "equivalent: no code of the reference client reads the flag's default (refs from the catalog set it)",
    ),
    (
        SNAPSHOT,
        "if protocol is None or metadata is None:",
        "if protocol is None and metadata is None:",
        "equivalent on conforming tables: version 0 of every table carries both protocol and metaData",
    ),
]
_MORE += [
    (
        CATALOG,
        "if published is not None and not (_is_int(published) and 0 <= published < version):",
        "if published is not None and not (_is_int(published) and 1 <= published < version):",
        "equivalent: refuses a proposal whose publication mark is 0 (nothing but version 0 published),"
        " which no client sends; a catalog may refuse publication reports (it then keeps commits longer)",
    ),
    (
        CATALOG,
        "start = 0 if start_version is None else start_version",
        "start = -1 if start_version is None else start_version",
        "equivalent: no commit has a version below 0, so a listing from -1 lists what one from 0 does",
    ),
    (CLIENT, "for _attempt in range(self.max_retries + 1):", "for _attempt in range(self.max_retries + 0):", RETRIES),
    (
        SNAPSHOT,
        "from_catalog = {c.version: self.catalog_ref(c, mtimes) for c in ratified.commits if 0 <= c.version <= latest}",
        "from_catalog = {c.version: self.catalog_ref(c, mtimes) for c in ratified.commits"
        " if -1 <= c.version <= latest}",
        "equivalent: a catalog lists no negative versions",
    ),
    (
        SNAPSHOT,
        "if any(v not in seg.commits for v in range(cp + 1, target + 1)):",
        "if any(v not in seg.commits for v in range(cp + 1, target + 0)):",
        UNREACHABLE,
    ),
    (
        SNAPSHOT,
        "break  # history before this point is gone (cleaned up)",
        "continue  # history before this point is gone (cleaned up)",
        "equivalent on conforming tables: cleanup deletes a prefix of the log, so no commit is found below"
        " the first missing one and the loop ends the same way",
    ),
]
_MORE += [
    (
        CATALOG,
        "if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):",
        "if not isinstance(name, str) and not _TABLE_NAME.fullmatch(name):",
        "outside the RFC: which table names a catalog accepts is its own; the profiles use valid names",
    ),
    (
        CATALOG,
        "if row is None or row.name is not None or row.latest_version >= 0:  # >= 0: registered, maybe dropped",
        "if row is None or row.name is not None or row.latest_version >= 1:  # >= 0: registered, maybe dropped",
        CREATION,
    ),
    (
        CLIENT,
        "return str(uuid.UUID(int=self._random.getrandbits(128), version=4))",
        "return str(uuid.UUID(int=self._random.getrandbits(128), version= 5))",
        "equivalent: still a unique UUID in the staged name; the RFC asks for a UUID, not a UUID version",
    ),
    (
        CLIENT,
        "self.storage.put(uri, content, if_absent=True)",
        "self.storage.put(uri, content, if_absent=False)",
        "equivalent: every attempt's staged file has a fresh UUID in its name, so it never exists before",
    ),
    (
        CLIENT,
        "self.storage.put(delta_uri(staging.location, 0), act.encode_commit(actions), if_absent=True)",
        "self.storage.put(delta_uri(staging.location, 0), act.encode_commit(actions), if_absent=False)",
        "equivalent against a conforming catalog: every staging location is new, so version 0 never exists"
        " before (the guard matters against a catalog that reuses locations, CAT-STAGING-UNIQUE's business)",
    ),
]
MARK = "if published is not None and not (_is_int(published) and 0 <= published < version):"
REPORT = "if not _is_int(version) or not 0 <= version <= row.latest_version:"
_MORE += [
    (
        CATALOG,
        "elif not isinstance(commit.inline_content, bytes) or not commit.inline_content:",
        "elif not isinstance(commit.inline_content, bytes) and not commit.inline_content:",
        ARGUMENTS,
    ),
    (
        CATALOG,
        MARK,
        "if published is not None and not (_is_int(published) and 0 > published < version):",
        "outside the RFC: refuses every proposal that carries a publication mark; carrying the mark in a"
        " proposal is Unity Catalog's API (latest backfilled version), the RFC has the catalog told apart",
    ),
    (
        CATALOG,
        MARK,
        "if published is not None and not (_is_int(published) and 0 < published < version):",
        "equivalent: refuses a proposal whose publication mark is 0, which no client sends; a catalog may"
        " refuse publication reports (it then keeps commits longer)",
    ),
    (CATALOG, "for bound in (start_version, end_version):", "for bound in []:", ARGUMENTS),
    (
        CATALOG,
        "start = 0 if start_version is None else start_version",
        "start = 1 if start_version is None else start_version",
        "equivalent: a catalog never stores version 0, so a listing from 1 lists what one from 0 does",
    ),
    (
        CATALOG,
        REPORT,
        "if not _is_int(version) or not 1 <= version <= row.latest_version:",
        "equivalent: refuses the no-op publication report of version 0; a catalog may refuse publication"
        " reports (RFC 'Publishing Commits': it then only keeps commits longer)",
    ),
    (
        CATALOG,
        REPORT,
        "if not _is_int(version) or not -1 <= version <= row.latest_version:",
        "equivalent: a report of -1 then raises the mark to at least -1, which it already is",
    ),
    (
        CHECKPOINT,
        'if last is None or int(last.get("version", -1)) <= version:',
        'if last is None or int(last.get("version", - 2)) <= version:',
        HINT,
    ),
    (
        CHECKPOINT,
        '"numOfAddFiles": sum(1 for a in actions if "add" in a),',
        '"numOfAddFiles": sum( 0 for a in actions if "add" in a),',
        HINT,
    ),
    (
        CHECKPOINT,
        "return True",
        "return False",
        "equivalent: write_checkpoint's boolean (written or already there) is not used: the client reports"
        " the checkpoint's version either way",
    ),
    (
        SNAPSHOT,
        'checkpoints = sorted({lf.version for lf, _ in entries if lf.kind == "checkpoint"})',
        'checkpoints = sorted({lf.version for lf, _ in entries if lf.kind != "checkpoint"})',
        "equivalent on conforming tables: every checkpoint's version still has its commit file (cleanup"
        " keeps it), so trying the versions of the other files finds the same checkpoints; the rest fail"
        " to open and are skipped",
    ),
    (
        SNAPSHOT,
        "return CommitRef(commit.version, commit.staged_uri, commit.inline_content, mtime_ms=mtime, from_catalog=True)",
        "return CommitRef(commit.version, commit.staged_uri, commit.inline_content, mtime_ms=mtime,"
        " from_catalog=False)",
        "equivalent: no code of the reference client reads the flag",
    ),
]
_MORE += [
    (
        CATALOG,
        "if self._storage is not None and not self._storage.exists(delta_file_uri(row.location, 0)):",
        "if not self._storage is not None and not self._storage.exists(delta_file_uri(row.location, 0)):",
        CREATION,
    ),
]
TX = "reference_impl/catalog/transaction.py"
SQLITE = "reference_impl/catalog/sqlite_store.py"
CONNECTIONS = (
    "equivalent within one process: how the SQLite store caches, opens and closes its connections"
    " (per thread and process) changes nothing a profile can see; several processes on one database"
    " are tests/test_reference_catalog.py's and tests/test_postgres_race.py's business"
)
SECOND_GUARD = (
    "equivalent: the primary key is a second guard behind the version test, which refuses a version"
    " already ratified before any INSERT runs"
)
STAGING_DEFAULT = "equivalent: a staging table's marks only need to be below 0 (not registered, nothing published)"
_MORE += [
    (TX, "@dataclass(frozen=True)", "@dataclass(frozen=False)", "equivalent: nothing assigns to the row"),
    (
        TX,
        "self, table_id: str, location: str, *, name: str | None = None, latest: int = -1, published: int = -1",
        "self, table_id: str, location: str, *, name: str | None = None, latest: int = - 2, published: int = -1",
        STAGING_DEFAULT,
    ),
    (
        TX,
        "self, table_id: str, location: str, *, name: str | None = None, latest: int = -1, published: int = -1",
        "self, table_id: str, location: str, *, name: str | None = None, latest: int = -1, published: int = - 2",
        STAGING_DEFAULT,
    ),
    (
        TX,
        "self, table_id: str, location: str, *, name: str | None = None, latest: int = -1, published: int = -1",
        "self, table_id: str, location: str, *, name: str | None = None, latest: int = -1, published: int = - 0",
        "equivalent: a mark of 0 on a staging table drops nothing, since version 0 is never stored",
    ),
    (
        TX,
        "def insert_commit(self, table_id: str, commit: RatifiedCommit, *, replace: bool = False) -> None:",
        "def insert_commit(self, table_id: str, commit: RatifiedCommit, *, replace: bool = True) -> None:",
        SECOND_GUARD,
    ),
    (
        TX,
        '" VALUES (?, ?, ?, ?, ?)" + (overwrite if replace else ""),',
        '" VALUES (?, ?, ?, ?, ?)" + (overwrite if not replace else ""),',
        SECOND_GUARD,
    ),
    (
        SQLITE,
        "def __init__(self, path: Path, *, busy_timeout_s: float = 60.0) -> None:",
        "def __init__(self, path: Path, *, busy_timeout_s: float = 61.0) -> None:",
        "equivalent: how long a locked database is waited for",
    ),
    (
        SQLITE,
        "def __init__(self, path: Path, *, busy_timeout_s: float = 60.0) -> None:",
        "def __init__(self, path: Path, *, busy_timeout_s: float = 59.0) -> None:",
        "equivalent: how long a locked database is waited for",
    ),
    (SQLITE, "if conn is None or pid != os.getpid():", "if not conn is None or pid != os.getpid():", CONNECTIONS),
    (SQLITE, "if conn is None or pid != os.getpid():", "if conn is not None or pid != os.getpid():", CONNECTIONS),
    (SQLITE, "if conn is None or pid != os.getpid():", "if conn is None or pid == os.getpid():", CONNECTIONS),
    (SQLITE, "if conn is None or pid != os.getpid():", "if conn is None and pid != os.getpid():", CONNECTIONS),
    (SQLITE, "check_same_thread=False,", "check_same_thread=True,", CONNECTIONS),
    (
        SQLITE,
        "done = True",
        "done = False",
        "equivalent: the rollback it enables runs after a commit, when no transaction is open, and does nothing",
    ),
    (
        SQLITE,
        "if not done and conn.in_transaction:",
        "if not done or conn.in_transaction:",
        "equivalent: after a commit no transaction is open, and a rollback then does nothing",
    ),
    (SQLITE, "for conn in conns[:1]:", "for conn in conns[: 2]:", CONNECTIONS),
    (SQLITE, "for conn in conns[:1]:", "for conn in conns[: 0]:", CONNECTIONS),
    (SQLITE, "for conn in conns[:1]:", "for conn in []:", CONNECTIONS),
    (SQLITE, "for conn in conns:", "for conn in []:", CONNECTIONS),
    (
        SQLITE,
        'return self._transaction("BEGIN IMMEDIATE" if write else "BEGIN")',
        'return self._transaction("BEGIN IMMEDIATE" if not write else "BEGIN")',
        "equivalent for the RFC: a write then takes SQLite's lock at its first write, and of two racing"
        " ratifications SQLite refuses the second (busy snapshot) instead of making it wait; still one"
        " winner per version, and a refused proposal is the writer's to retry",
    ),
    (
        "reference_impl/delta/cleanup.py",
        'versions = [f.version for f in files if f.kind == "checkpoint" and f.version <= cutoff_version]',
        'versions = [f.version for f in files if f.kind == "checkpoint" and f.version < cutoff_version]',
        "equivalent: a checkpoint exactly at the cut-off is passed over for an older one, so cleanup"
        " deletes less; metadata cleanup is optional and deleting less never breaks a rule",
    ),
    (
        "reference_impl/delta/checkpoint.py",
        "return hint if isinstance(hint, dict) else None",
        "return hint if not isinstance(hint, dict) else None",
        HINT,
    ),
]
_MORE += [
    (
        TX,
        "return None if row is None else _ratified(*row)",
        "return None if not row is None else _ratified(*row)",
        "not judged by this group: commit_at serves only the server's replay test (the `server` group)",
    ),
    (
        TX,
        "return None if row is None else _ratified(*row)",
        "return None if row is not None else _ratified(*row)",
        "not judged by this group: commit_at serves only the server's replay test (the `server` group)",
    ),
]
LOG_PATHS = "reference_impl/delta/log_paths.py"
_MORE += [
    (
        SNAPSHOT,
        "if target < 0 or target > seg.latest_version:",
        "if target < 0 and target > seg.latest_version:",
        "equivalent: a read outside 0..latest still fails, on the commits missing for it",
    ),
    (
        LOG_PATHS,
        "if len(parts) < 3:",
        "if len(parts) < 4:",
        "equivalent: every URI classified is absolute and below a table location, so rsplit gives four"
        " parts and the guard never decides",
    ),
    (
        LOG_PATHS,
        "if parent == STAGED_DIR and len(parts) == 4 and parts[-3] == LOG_DIR:",
        "if parent == STAGED_DIR or len(parts) == 4 and parts[-3] == LOG_DIR:",
        "equivalent on conforming tables: a file named like a staged commit in a _staged_commits folder"
        " outside _delta_log would count as staged; the reference lists only _delta_log, and the"
        " staging checks test a staged file's folder on their own (startswith the staging folder)",
    ),
    (
        LOG_PATHS,
        'return LogFile(uri, "staged", int(m.group(1)), uuid=m.group(2))',
        'return LogFile(uri, "staged", int(m.group(1)), uuid=m.group( 1))',
        "equivalent: no code reads a staged LogFile's uuid (it is compared only as part of the whole"
        " record, which changes alike for every listing)",
    ),
]
_MORE += [
    ("reference_impl/delta/log_paths.py", "if version < 0:", "if version < -1:", ARGUMENTS),
    (
        "reference_impl/delta/log_paths.py",
        "if len(parts) < 3:",
        "if len(parts) < 2:",
        "equivalent: every URI classified is absolute and below a table location, so it has more than"
        " three slashes and rsplit gives four parts; the guard only matters for names like 'a/b'",
    ),
    (
        "reference_impl/delta/log_paths.py",
        "if len(parts) < 3:",
        "if len(parts) <= 3:",
        "equivalent: every URI classified is absolute and below a table location, so it has more than"
        " three slashes and rsplit gives four parts; the guard only matters for names like 'a/b/c'",
    ),
    (
        "reference_impl/delta/log_paths.py",
        "if parent == STAGED_DIR and len(parts) == 4 and parts[-3] == LOG_DIR:",
        "if parent == STAGED_DIR and len(parts) == 4 or parts[-3] == LOG_DIR:",
        "equivalent on conforming tables: files named like staged commits in another subfolder of"
        " _delta_log would count as staged; no writer puts any there, and the staging checks test the"
        " folder of a staged file on their own (startswith the staging folder), not with this parser",
    ),
    (
        "reference_impl/delta/checkpoint.py",
        'if last is None or int(last.get("version", -1)) <= version:',
        'if last is None or int(last.get("version", -1)) > version:',
        HINT,
    ),
]
# The `iceberg` and `server` groups (session 5, first runs).
VALIDATION = "conformance/model/iceberg/validation.py"
SERVICE = "reference_impl/server/service.py"
STRICTER = (
    "outside the rules judged: a validation stricter than Iceberg's, so only more writes abort; no"
    " requirement of iceberg-row-delta forbids an abort, they judge what commits"
)
DV_OFF = (
    "gap: the deletion-vector test is off on v3; with every validation on (the reference)"
    " validateNoConflictingDeleteFiles refuses the same commits first, since a deletion vector is a"
    " delete file of a data file the operation references; the Spark preset turns that one off for"
    " merge-on-read deletes and relies on this test, but presets are judged only through real engines"
)
DELETED_OFF = (
    "gap: validateDeletedFiles off (DELETE snapshots no longer end a data file's validity); not seen"
    " by the group's run, which has no scenario where a concurrent DELETE drops a whole data file the"
    " operation references (deletes of some rows commit as OVERWRITE, covered by the other test)"
)
_V59 = "if setup.format_version >= 3 and checks.no_concurrent_dvs and deletes.dv_for in written.dv_files:"
_MORE += [
    (VALIDATION, "@dataclass(frozen=True)", "@dataclass(frozen=False)", "equivalent: nothing assigns to a Validations"),
    *[
        (VALIDATION, "NONE = Validations(False, False, False, False, False)", after, STRICTER)
        for after in (
            "NONE = Validations(True, False, False, False, False)",
            "NONE = Validations(False, True, False, False, False)",
            "NONE = Validations(False, False, True, False, False)",
            "NONE = Validations(False, False, False, True, False)",
            "NONE = Validations(False, False, False, False, True)",
        )
    ],
    (
        VALIDATION,
        "if checks.no_conflicting_delete_files and deletes.data_files & written.referenced:",
        "if checks.no_conflicting_delete_files or deletes.data_files & written.referenced:",
        STRICTER,
    ),
    (VALIDATION, _V59, _V59.replace(">= 3 and", ">= 3 or"), STRICTER),
    (VALIDATION, _V59, _V59.replace("dvs and", "dvs or"), STRICTER),
    (
        VALIDATION,
        _V59,
        _V59.replace(">= 3", ">= 2"),
        "equivalent: format v2 tables have no deletion vectors, so the test never decides there",
    ),
    (
        VALIDATION,
        "and setup.isolation is Isolation.SERIALIZABLE",
        "or setup.isolation is Isolation.SERIALIZABLE",
        STRICTER,
    ),
    (VALIDATION, "and op.id is not None", "or op.id is not None", STRICTER),
    (
        VALIDATION,
        "and snap.operation in (SnapshotOp.APPEND, SnapshotOp.OVERWRITE)",
        "or snap.operation in (SnapshotOp.APPEND, SnapshotOp.OVERWRITE)",
        STRICTER,
    ),
    (VALIDATION, "no_concurrent_dvs: bool = True", "no_concurrent_dvs: bool = False", DV_OFF),
    (VALIDATION, _V59, "if not " + _V59.removeprefix("if "), DV_OFF),
    (VALIDATION, _V59, _V59.replace(">= 3", ">= 4"), DV_OFF),
    (VALIDATION, _V59, _V59.replace(">= 3", "< 3"), DV_OFF),
    (VALIDATION, _V59, _V59.replace(">= 3", "> 3"), DV_OFF),
    (VALIDATION, "deleted_files: bool = True", "deleted_files: bool = False", DELETED_OFF),
    (VALIDATION, "if checks.deleted_files:", "if not checks.deleted_files:", DELETED_OFF),
    *[
        (
            SERVICE,
            "if len(parts) != 2 or not all(parts):",
            after,
            "outside the catalog contract: schema lookup (UC's GET /schemas/{name}), which no Delta catalog"
            " check calls; the commit path does not use it",
        )
        for after in (
            "if len(parts) != 3 or not all(parts):",
            "if not len(parts) != 2 or not all(parts):",
            "if len(parts) == 2 or not all(parts):",
        )
    ],
    (
        SERVICE,
        'names = [c.staged_uri.rsplit("/", 1)[-1] for c in resp.commits if c.staged_uri is not None]',
        'names = [c.staged_uri.rsplit("/", 1)[- 2] for c in resp.commits if c.staged_uri is not None]',
        "outside the catalog contract: only the file size and modification time UC reports beside each"
        " listed commit are looked up by these names; the contract's RatifiedCommit carries neither",
    ),
    (
        SERVICE,
        "except CommitFileError as e:",
        "except CosmicRayTestingException as e:",
        "outside the RFC: a staged file the server cannot read gives HTTP 500 instead of 400; the"
        " proposal is refused either way and nothing is ratified (whether a missing staged file must"
        " be refused is not a requirement: a catalog may ratify without reading storage)",
    ),
    (
        SERVICE,
        "schema = metadata.schema_.columns if metadata.schema_ is not None else None",
        "schema = metadata.schema_.columns if not metadata.schema_ is not None else None",
        "outside the catalog contract: the columns of UC's table record, updated by a commit that"
        " carries metadata; the Delta catalog profile judges commits, not UC's table records",
    ),
]
# Server survivors outside what the catalog contract (and so the catalog profile over `uc`) can see.
NAMING_URI = (
    "outside the catalog contract: other spellings of a file: URI (file:/a for file:///a); the uc"
    " adapter sends a table's location as the server handed it out"
)
MALFORMED_500 = (
    "outside the RFC: commit content that is not JSON lines gives HTTP 500 instead of 400; the"
    " proposal is refused either way and nothing is ratified"
)
NAMESPACES = (
    "outside the catalog contract: UC's catalog and schema lookups, which no Delta catalog check"
    " calls (the uc target works in one catalog and schema it is given)"
)
UC_NAMES = (
    "outside the catalog contract: which part of UC's three-part name is the catalog, the schema or"
    " the table; not observable with the one catalog and schema the uc target uses"
)
AUTHZ = (
    "outside the catalog contract: which role may commit and which may read; the uc target runs with"
    " one principal allowed everything (tests/test_server_auth.py judges the roles)"
)
DOUBLE_GUARD = (
    "equivalent: the catalog's own proposal test (staging folder prefix and staged name pattern)"
    " refuses the same file names the server's first test lets through"
)
UC_LIMIT = (
    "outside the RFC: Unity Catalog's limit on unpublished commits (RESOURCE_EXHAUSTED); the checks"
    " stay under it, and a catalog without a limit is conforming"
)
_MORE += [
    (
        SERVICE,
        'if uri.startswith("file:") and not uri.startswith("file://"):',
        'if uri.startswith("file:") and  uri.startswith("file://"):',
        NAMING_URI,
    ),
    (
        SERVICE,
        "except (UnicodeDecodeError, ValueError, RecursionError) as e:",
        "except (CosmicRayTestingException, ValueError, RecursionError) as e:",
        MALFORMED_500,
    ),
    (SERVICE, "return found[0]", "return found[ -1]", NAMESPACES),
    (
        SERVICE,
        "return self._schema_info(self._schema(parts[0], parts[1]))",
        "return self._schema_info(self._schema(parts[0], parts[ 0]))",
        NAMESPACES,
    ),
    (
        SERVICE,
        "return self._schema_info(self._schema(parts[0], parts[1]))",
        "return self._schema_info(self._schema(parts[0], parts[ 2]))",
        NAMESPACES,
    ),
    (SERVICE, "return parts[0], parts[1], parts[2]", "return parts[0], parts[ 0], parts[2]", UC_NAMES),
    (
        SERVICE,
        'catalog, schema, name = info.name.split(".", 2) if info.name.count(".") == 2 else ("", "", info.name)',
        'catalog, schema, name = info.name.split(".", 2) if info.name.count(".") != 2 else ("", "", info.name)',
        UC_NAMES,
    ),
    (
        SERVICE,
        'catalog, schema, name = info.name.split(".", 2) if info.name.count(".") == 2 else ("", "", info.name)',
        'catalog, schema, name = info.name.split(".", 2) if info.name.count(".") == 1 else ("", "", info.name)',
        UC_NAMES,
    ),
    (SERVICE, "if writing:", "if not writing:", AUTHZ),
    (
        SERVICE,
        'if any(c in file_name for c in "/\\\\\\x00") or file_name in (".", ".."):',
        'if any(c in file_name for c in "/\\\\\\x00") and file_name in (".", ".."):',
        DOUBLE_GUARD,
    ),
    (
        SERVICE,
        "if limit is None or version != row.latest_version + 1:",
        "if not limit is None or version != row.latest_version + 1:",
        UC_LIMIT,
    ),
]
# The last four of the first server sample (issue #18). Both are UC server behaviour the RFC does not
# ask of a catalog; the server's own tests kill them (named in each reason).
REPLAY = (
    "outside the RFC: UC's idempotent answer (200) to a replay of a version that was published and"
    " dropped; the RFC only asks that each version be ratified once, and a conflict answer to the"
    " replay ratifies nothing and is conforming (a client that lost the answer learns from the listing"
    " whether its proposal won); tests/test_server_input.py::test_identical_replay_is_accepted_once"
    " judges the server's UC behaviour and kills it"
)
_REPLAY_TEST = "if current is None or version > current.latest_published_version or self.storage is None:"
_MORE += [
    *[
        (SERVICE, _REPLAY_TEST, after, REPLAY)
        for after in (
            _REPLAY_TEST.replace("version >", "version <="),
            _REPLAY_TEST.replace("current is None", "current is not None"),
            _REPLAY_TEST.replace("storage is None", "storage is not None"),
        )
    ],
    (
        SERVICE,
        "if not actions or not all(isinstance(a, dict) for a in actions):",
        "if  actions or not all(isinstance(a, dict) for a in actions):",
        "outside the catalog contract: the shape test of a commit's actions runs only for a caller without"
        " the admin role (lakecert's role check on protocol and metadata changes); the uc target runs"
        " with one principal allowed everything, so it never runs there;"
        " tests/test_server_auth.py::test_writer_commits_data_but_not_protocol_or_metadata kills it",
    ),
]
# The second server sample (issue #18): UC's request rules and records around the commit path.
UC_NAME_RULES = (
    "outside the catalog contract: UC's rule for catalog, schema and table names (letters, digits, _,"
    " @, -); the uc target only sends names that follow it, and the Delta contract has no such rule"
)
UC_VIEW_FIELDS = (
    "outside the catalog contract: UC's refusal of view fields in a request to create a managed"
    " table; the Delta contract registers tables only, and no check sends a view"
)
FILE_FIELDS = (
    "outside the catalog contract: only the file size and modification time UC reports beside each"
    " listed commit are looked up by these names; the contract's RatifiedCommit carries neither"
)
FEATURE_NAME = (
    "outside the catalog contract: which of the feature's two property names (catalogManaged, or"
    " its preview name catalogOwned-preview) UC's table record spells; the uc adapter reads either"
    " as the catalog's answer"
)
FEATURE_POP = (
    "equivalent with the reference catalog: it registers every table catalog-managed, so the"
    " property is set again whatever the client sent at creation; only a served catalog answering"
    " not-managed would be hidden (the registered faults are judged through the unmutated server)"
)
UC_LISTING = (
    "outside the catalog contract: UC's listing of a schema's tables (GET /tables), which no catalog"
    " check calls; which tables a scoped token sees is judged by tests/test_server_auth.py"
)
_L269 = 'catalog, schema, name = info.name.split(".", 2) if info.name.count(".") == 2 else ("", "", info.name)'
_L406 = "if info.file_name is not None and info.file_size and info.file_modification_timestamp:"
_L430 = "if limit is None or version != row.latest_version + 1:"
_L468 = 'names = [c.staged_uri.rsplit("/", 1)[-1] for c in resp.commits if c.staged_uri is not None]'
_NAMES = '(req.catalog_name, "catalog"), (req.schema_name, "schema"), (req.name, "table")'
_MORE += [
    (SERVICE, "max_unpublished: int | None = 10", "max_unpublished: int | None = 11", UC_LIMIT),
    (SERVICE, _L430, _L430.replace("+ 1", "+ 0"), UC_LIMIT),
    (SERVICE, _L430, _L430.replace("limit is None", "limit is not None"), UC_LIMIT),
    (
        SERVICE,
        'uri = "file://" + "/" + uri[len("file:") :].lstrip("/")',
        'uri = "file://" - "/" + uri[len("file:") :].lstrip("/")',
        NAMING_URI,
    ),
    (SERVICE, f"for name, what in ({_NAMES}):", "for name, what in []:", UC_NAME_RULES),
    (SERVICE, 'check_name(parts[0], "catalog")', 'check_name(parts[ 1], "catalog")', UC_NAME_RULES),
    (SERVICE, 'check_name(parts[1], "schema")', 'check_name(parts[ 0], "schema")', UC_NAME_RULES),
    (
        SERVICE,
        "if req.view_definition is not None or req.view_dependencies is not None:",
        "if req.view_definition is not None and req.view_dependencies is not None:",
        UC_VIEW_FIELDS,
    ),
    (
        SERVICE,
        _L269,
        _L269.replace('split(".", 2)', 'split(".", 3)'),
        "equivalent: the split is taken only when the name has exactly two dots, so any limit of two or"
        " more gives the same three parts",
    ),
    (SERVICE, _L269, _L269.replace('count(".") == 2', 'count(".") == 3'), UC_NAMES),
    (
        SERVICE,
        "schema_name=record.schema_name if record else schema,",
        "schema_name=record.schema_name if not record else schema,",
        UC_NAMES,
    ),
    (SERVICE, "for key in CATALOG_MANAGED_PROPS:", "for key in []:", FEATURE_POP),
    (
        SERVICE,
        'properties[CATALOG_MANAGED_PROPS[0]] = "supported"',
        'properties[CATALOG_MANAGED_PROPS[ 1]] = "supported"',
        FEATURE_NAME,
    ),
    (SERVICE, "if not who.may_touch(record.full_name):", "if not not who.may_touch(record.full_name):", UC_LISTING),
    (SERVICE, "if not who.may_touch(record.full_name):", "if  who.may_touch(record.full_name):", UC_LISTING),
    (SERVICE, "continue", "break", UC_LISTING),
    (SERVICE, _L406, _L406.replace("is not None", "is None"), FILE_FIELDS),
    (SERVICE, _L468, _L468.replace("[-1]", "[- 0]"), FILE_FIELDS),
    (
        SERVICE,
        'file_name = commit.staged_uri.rsplit("/", 1)[-1]',
        'file_name = commit.staged_uri.rsplit("/", 2)[-1]',
        "equivalent: the last part of a split from the right on / is the same whatever the limit",
    ),
    (SERVICE, _REPLAY_TEST, "if not " + _REPLAY_TEST.removeprefix("if "), REPLAY),
    (
        SERVICE,
        _REPLAY_TEST,
        _REPLAY_TEST.replace("is None or version", "is None and version"),
        "equivalent: a conflicting version above the publication mark is still stored (the catalog"
        " drops only published commits), so the replay is decided by the stored commit above; without"
        " the shortcut the published file is read, is missing, and the answer is the same (no replay)",
    ),
]
_MORE.append(
    (
        SERVICE,
        'if uri.startswith("file:") and not uri.startswith("file://"):',
        'if uri.startswith("file:") or not uri.startswith("file://"):',
        "outside the catalog contract: normalize_uri only compares a request's location with the"
        " table's, and the mutant rewrites both the same way (file:///a is left as it was); only"
        " other spellings of one location could meet or part, which the uc adapter never sends",
    )
)
# The third server sample (issue #18).
ROLE_CONTENT = (
    "outside the RFC: which commits a catalog refuses by role; the RFC names blocking low-privilege"
    " writers from changing metadata or table features as a catalog's choice (Motivation), the uc"
    " target's principal is allowed everything and its checks commit no such change over the wire;"
    " tests/test_server_auth.py::test_writer_commits_data_but_not_protocol_or_metadata judges the roles"
)
NO_SHORTCUT = (
    "equivalent: a conflicting version above the publication mark is still stored (the catalog"
    " drops only published commits), so the replay is decided by the stored commit above; without"
    " the shortcut the published file is read, is missing, and the answer is the same (no replay)"
)
_L388 = 'if not who.has_role("admin") and changes_protocol_or_metadata(content):'
_L403 = 'if e.error_code == "COMMIT_VERSION_CONFLICT" and self._is_replay(row, info.version, staged_uri, inline):'
_MORE += [
    (
        SERVICE,
        "except (UnicodeDecodeError, ValueError, RecursionError) as e:",
        "except (UnicodeDecodeError, ValueError, CosmicRayTestingException) as e:",
        MALFORMED_500,
    ),
    (
        SERVICE,
        'return any("protocol" in a or "metaData" in a for a in actions)',
        'return any("protocol" in a and "metaData" in a for a in actions)',
        ROLE_CONTENT,
    ),
    (SERVICE, _L388, _L388.replace(") and changes", ") or changes"), ROLE_CONTENT),
    (
        SERVICE,
        "if staging is None or normalize_uri(staging.location) != normalize_uri(req.storage_location):",
        "if staging is None and normalize_uri(staging.location) != normalize_uri(req.storage_location):",
        "outside the catalog contract: UC's test that a create-table request names its staging table's"
        " location (and an unknown staging id answered 500 instead of 404); the contract registers a"
        " staging table by its id alone, at the location the catalog gave it",
    ),
    (
        SERVICE,
        "who.require(role, record.full_name if record else row.name, action=action)",
        "who.require(role, record.full_name if not record else row.name, action=action)",
        "equivalent: a table created over the API has a record, and its full name is the name the"
        " catalog registered it under (create_table passes the same string); the uc target's one"
        " principal is allowed everything besides",
    ),
    (
        SERVICE,
        "if req.metadata is not None or req.uniform is not None:",
        "if req.metadata is not None and req.uniform is not None:",
        "outside the catalog contract: UC's refusal of metadata in a publication-only request; the"
        " metadata is ignored either way (only the publication is recorded), and the contract's"
        " mark_published carries no metadata",
    ),
    (SERVICE, _L403, _L403.replace("==", "!="), REPLAY),
    (
        SERVICE,
        _L406,
        _L406.replace("file_size and info.file_mod", "file_size or info.file_mod"),
        FILE_FIELDS,
    ),
    (
        SERVICE,
        _REPLAY_TEST,
        _REPLAY_TEST.replace("published_version or self", "published_version and self"),
        NO_SHORTCUT,
    ),
    (SERVICE, "size, mtime = files.get(file_name, (0, 0))", "size, mtime = files.get(file_name, (0, 1))", FILE_FIELDS),
]
_MORE.append(
    (
        SERVICE,
        "comment=record.comment if record else None,",
        "comment=record.comment if not record else None,",
        "outside the catalog contract: the comment of UC's table record; the contract's TableInfo has"
        " no comment, and the Delta catalog profile judges commits, not UC's table records",
    )
)
# The fourth server sample (issue #18).
REPLAY_STORED = (
    "outside the RFC: UC's idempotent answer (200) to a replay of an accepted, still stored commit;"
    " a conflict answer ratifies nothing and is conforming; tests/test_server_input.py::"
    "test_identical_replay_is_accepted_once judges the server's UC behaviour and kills it"
)
_L443 = "return stored.staged_uri == staged_uri and stored.inline_content == inline"
_L468_2 = 'names = [c.staged_uri.rsplit("/", 2)[-1] for c in resp.commits if c.staged_uri is not None]'
_MORE += [
    (
        SERVICE,
        "if not actions or not all(isinstance(a, dict) for a in actions):",
        "if not actions or  all(isinstance(a, dict) for a in actions):",
        ROLE_CONTENT,
    ),
    (SERVICE, _L388, _L388.replace("if not who", "if  who"), ROLE_CONTENT),
    (SERVICE, 'check_name(parts[2], "table")', 'check_name(parts[ 1], "table")', UC_NAME_RULES),
    (
        SERVICE,
        "return parts[0], parts[1], parts[2]",
        "return parts[0], parts[1], parts[ 1]",
        "equivalent: the only caller (resolve) uses the name test, not the parts returned",
    ),
    (
        SERVICE,
        "except ValueError as e:",
        "except CosmicRayTestingException as e:",
        "outside the RFC: a table id that is not a UUID gives HTTP 500 instead of 400; refused either"
        " way, nothing changes (the uc adapter sends the ids the server handed out)",
    ),
    (
        SERVICE,
        "except (binascii.Error, ValueError) as e:",
        "except (binascii.Error, CosmicRayTestingException) as e:",
        "outside the RFC: inline content that is not base64 (lakecert's wire encoding of an inline"
        " commit) gives HTTP 500 instead of 400; refused either way, nothing is ratified",
    ),
    (
        SERVICE,
        "if backfilled is not None and backfilled >= info.version:",
        "if backfilled is not None and backfilled < info.version:",
        "gap: a proposal that reports publication (latest_backfilled_version below its version) is"
        " refused; over the uc target no catalog check proposes with a publication mark (the driver"
        " publishes by publication-only requests, and the small generated budget drew none)",
    ),
    (
        SERVICE,
        _L443,
        _L443.replace("inline_content == inline", "inline_content != inline"),
        "gap: a rival inline proposal of a ratified inline version is answered 200 as a replay (and"
        " a replay of a staged one 409); no catalog check proposes a rival inline commit over the uc"
        " target (CAT-RATIFY-ONCE, CAT-INLINE-COMMITS)",
    ),
    (
        SERVICE,
        "columns = None if schema is None else [c.model_dump(exclude_none=True) for c in schema]",
        "columns = None if not schema is None else [c.model_dump(exclude_none=True) for c in schema]",
        "outside the catalog contract: the columns of UC's table record, updated by a commit that"
        " carries metadata; the Delta catalog profile judges commits, not UC's table records",
    ),
    (
        SERVICE,
        _L468,
        _L468_2,
        "equivalent: the last part of a split from the right on / is the same whatever the limit",
    ),
    (SERVICE, _L468, _L468.replace('"/", 1)', '"/", 0)'), FILE_FIELDS),
    (
        SERVICE,
        "ts = commit.in_commit_timestamp or 0",
        "ts = commit.in_commit_timestamp or 1",
        "outside the catalog contract: UC's placeholder timestamp for a commit proposed without an"
        " in-commit timestamp; every proposal of the catalog checks carries one (catalog-managed"
        " tables require in-commit timestamps)",
    ),
]
_MORE += [
    (
        SERVICE,
        "if info.file_size is None or info.file_modification_timestamp is None:",
        "if info.file_size is None and info.file_modification_timestamp is None:",
        "outside the catalog contract: UC's requirement of a staged file's size and modification"
        " time beside its name; the contract's proposal carries neither, and the uc adapter sends both",
    ),
    (SERVICE, "size, mtime = files.get(file_name, (0, 0))", "size, mtime = files.get(file_name, (0, -1))", FILE_FIELDS),
]
# The rest of the longer server run (issue #18).
UC_RECORD = (
    "outside the catalog contract: UC's table record (name, columns, properties, comment) as it"
    " stores or returns it; the Delta catalog profile judges commits, not UC's table records"
)
MESSAGE = (
    "outside the catalog contract: the message of an error answer; the checks judge an answer's kind, never its text"
)
UNUSED_PARTS = "equivalent: the only caller (resolve) uses the name test, not the parts returned"
_L086 = 'raise ApiError("COMMIT_VERSION_CONFLICT", str(e) or "version already ratified", meta) from e'
_L432 = "published = max(row.latest_published_version, -1 if backfilled is None else backfilled)"
_L459 = "columns = None if schema is None else [c.model_dump(exclude_none=True) for c in schema]"
_MORE += [
    (SERVICE, "@dataclass(frozen=True)", "@dataclass(frozen=False)", "equivalent: nothing assigns to a Limits"),
    (
        SERVICE,
        "except (UnicodeDecodeError, ValueError, RecursionError) as e:",
        "except (UnicodeDecodeError, CosmicRayTestingException, RecursionError) as e:",
        MALFORMED_500,
    ),
    (
        SERVICE,
        "if not actions or not all(isinstance(a, dict) for a in actions):",
        "if not not actions or not all(isinstance(a, dict) for a in actions):",
        ROLE_CONTENT,
    ),
    (SERVICE, _L388, _L388.replace("if not who", "if not not who"), ROLE_CONTENT),
    (SERVICE, _L086, _L086.replace('or "version', 'and "version'), MESSAGE),
    (
        SERVICE,
        'raise invalid(str(e) or "commit refused") from e',
        'raise invalid(str(e) and "commit refused") from e',
        MESSAGE,
    ),
    (
        SERVICE,
        'raise invalid(str(e) or "invalid request") from e',
        'raise invalid(str(e) and "invalid request") from e',
        MESSAGE,
    ),
    (
        SERVICE,
        "columns = [c.model_dump(exclude_none=True) for c in req.columns]",
        "columns = [c.model_dump(exclude_none=False) for c in req.columns]",
        UC_RECORD,
    ),
    (SERVICE, "return parts[0], parts[1], parts[2]", "return parts[ -1], parts[1], parts[2]", UNUSED_PARTS),
    (
        SERVICE,
        'properties[CATALOG_MANAGED_PROPS[0]] = "supported"',
        'properties[CATALOG_MANAGED_PROPS[ -1]] = "supported"',
        FEATURE_NAME,
    ),
    (SERVICE, "name=record.name if record else name,", "name=record.name if not record else name,", UC_NAMES),
    (SERVICE, "columns=record.columns if record else [],", "columns=record.columns if not record else [],", UC_RECORD),
    (
        SERVICE,
        "if backfilled is not None and backfilled >= info.version:",
        "if backfilled is not None and backfilled > info.version:",
        "equivalent: the catalog's own proposal test (run before the content is read) refuses a"
        " publication mark at the proposal's own version as well",
    ),
    (
        SERVICE,
        "staged_content=content if staged_uri is not None else None,",
        "staged_content=content if staged_uri is None else None,",
        "outside the catalog contract: without the bytes the server read, the catalog reads the staged"
        " file itself; the two reads differ only if the file is rewritten between them, and only the"
        " server's role check (not run for the uc target's principal) depends on the first",
    ),
    (SERVICE, _L406, "if not " + _L406.removeprefix("if "), FILE_FIELDS),
    (SERVICE, _L406, _L406.replace("is not None and info", "is not None or info"), FILE_FIELDS),
    (SERVICE, _L430, _L430.replace("+ 1", "+ 2"), UC_LIMIT),
    (SERVICE, _L430, _L430.replace("!=", "=="), UC_LIMIT),
    (SERVICE, _L430, _L430.replace("None or version", "None and version"), UC_LIMIT),
    (SERVICE, _L432, _L432.replace("-1 if", "- 2 if"), UC_LIMIT),
    (SERVICE, _L432, _L432.replace("-1 if", "- 0 if"), UC_LIMIT),
    (SERVICE, _REPLAY_TEST, _REPLAY_TEST.replace("version >", "version >="), REPLAY),
    (
        SERVICE,
        "return False",
        "return True",
        "equivalent in the served run for the first `return False` of _is_replay (a conflicting"
        " version above the publication mark is still stored and decided above, and the server has"
        " storage); the second one is killed by test_published_and_forgotten_version_is_not_ratified_again"
        " since issue #18 (the cached result predates that case)",
    ),
    (
        SERVICE,
        "props = metadata.properties.properties if metadata.properties else None",
        "props = metadata.properties.properties if not metadata.properties else None",
        UC_RECORD,
    ),
    (
        SERVICE,
        "schema = metadata.schema_.columns if metadata.schema_ is not None else None",
        "schema = metadata.schema_.columns if metadata.schema_ is None else None",
        UC_RECORD,
    ),
    (SERVICE, _L459, _L459.replace("if schema is None", "if schema is not None"), UC_RECORD),
    (SERVICE, _L459, _L459.replace("exclude_none=True", "exclude_none=False"), UC_RECORD),
    (
        SERVICE,
        "ts = commit.in_commit_timestamp or 0",
        "ts = commit.in_commit_timestamp and 0",
        "gap: the timestamp UC lists beside every commit is always 0; no catalog check compares a"
        " listed commit's in-commit timestamp with the proposed one over the uc target",
    ),
    (
        SERVICE,
        "size, mtime = files.get(file_name, (0, 0))",
        "size, mtime = files.get(file_name, ( -1, 0))",
        FILE_FIELDS,
    ),
]
EQUIVALENT.update({(f, before, after): why for f, before, after, why in _MORE})

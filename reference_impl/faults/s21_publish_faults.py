"""Faults for the round-16 blind misses (issue 28, session 21): see docs/mutation.md, round 16."""

from __future__ import annotations

import contextlib

from conformance.contract.delta import TableInfo
from reference_impl.delta.client import Builder, Proposals, ReferenceClient
from reference_impl.delta.log_paths import delta_uri, parse_log_name, staged_dir
from reference_impl.delta.snapshot import LogReader
from reference_impl.faults.base import fault


@fault(
    "publish-own-over-staged-predecessor",
    "client",
    breaks=("WRT-PUBLISH-ORDER",),
    description="To publish promptly, the writer copies its commit of v to _delta_log/<v>.json right after the"
    " catalog ratifies it, when v-1 is 'durable': published, or staged in _delta_log/_staged_commits/ (a staged"
    " file is taken for a published one, as readers reach it through the catalog anyway). On top of another"
    " writer's ratified, unpublished staged commit, v lands before v-1; the next publisher fills the hole, so"
    " the final log is in order.",
)
class PublishOwnOverStagedPredecessor(ReferenceClient):
    def _commit(self, table: TableInfo, operation: str, build: Builder) -> int:
        version = super()._commit(table, operation, build)
        below = version - 1
        staged_below = any(
            f is not None and f.kind == "staged" and f.version == below
            for f in (parse_log_name(i.uri) for i in self.storage.list(staged_dir(table.location) + "/"))
        )
        if below >= 0 and (staged_below or self.storage.exists(delta_uri(table.location, below))):
            stored = [
                c for c in self.catalog.get_commits(table.table_id, version, version).commits if c.version == version
            ]
            for c in stored:
                content = self._log.commit_bytes(LogReader.catalog_ref(c))
                with contextlib.suppress(FileExistsError):
                    self.storage.put(delta_uri(table.location, version), self._published_bytes(content), if_absent=True)
        return version


@fault(
    "publish-proposal-once-version-exists",
    "client",
    breaks=("WRT-PUBLISH-IDENTICAL",),
    description="When a proposal's answer is lost, the writer asks the catalog, and as soon as the catalog's"
    " latest version reaches v it copies its own proposal to _delta_log/<v>.json (PUT-if-absent: 'the version"
    " exists, so the proposal made it'), before it checks whose commit v holds; it then rebases correctly. After"
    " a lost conflict (a rival's unpublished commit won v) the published v holds the loser's actions.",
)
class PublishProposalOnceVersionExists(ReferenceClient):
    def _before_propose(self, table: TableInfo, version: int, content: bytes) -> None:
        memo: dict[tuple[str, int], bytes] = self.__dict__.setdefault("_proposed", {})
        memo[(table.table_id, version)] = content

    def _after_lost_answer(self, table: TableInfo, version: int, mine: Proposals) -> int | None:
        memo: dict[tuple[str, int], bytes] = self.__dict__.setdefault("_proposed", {})
        content = memo.get((table.table_id, version))
        if content is not None and self.catalog.get_commits(table.table_id).latest_version >= version:
            with contextlib.suppress(FileExistsError):
                self.storage.put(delta_uri(table.location, version), content, if_absent=True)
        return super()._after_lost_answer(table, version, mine)

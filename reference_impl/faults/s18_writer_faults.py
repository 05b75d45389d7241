"""Faults for the round-9 blind misses (issue 28, session 18): writer."""

from __future__ import annotations

from reference_impl.delta.cleanup import cut_off_checkpoint, log_files
from reference_impl.delta.client import ReferenceClient
from reference_impl.delta.log_paths import log_dir, staged_dir
from reference_impl.faults.base import fault


@fault(
    "publish-crlf-as-lf",
    "client",
    breaks=("WRT-PUBLISH-BYTES",),
    description="The publisher writes every ratified commit with LF line endings: a commit another writer"
    " ratified with CRLF line endings (valid newline-delimited JSON, the CR being JSON whitespace) is"
    " published with its CRs dropped.",
)
class PublishCrlfAsLf(ReferenceClient):
    def _published_bytes(self, content: bytes) -> bytes:
        return content.replace(b"\r\n", b"\n")


@fault(
    "publish-drops-commit-info",
    "client",
    breaks=("WRT-PUBLISH-IDENTICAL",),
    description="The publisher leaves out a commit's commitInfo action (taken for bookkeeping): the published"
    " file loses the in-commit timestamp the ratified commit carries.",
)
class PublishDropsCommitInfo(ReferenceClient):
    def _published_bytes(self, content: bytes) -> bytes:
        lines = content.splitlines(keepends=True)
        return b"".join(line for line in lines if not line.lstrip().startswith(b'{"commitInfo"'))


@fault(
    "cleanup-checkpoints-below-cutoff-commit",
    "client",
    breaks=("WRT-CLEANUP-KEEPS",),
    description="Besides step 3's deletions, cleanup deletes every checkpoint older than the cut-off commit"
    " (rather than older than the cut-off checkpoint), sparing only the newest checkpoint of the log: with"
    " one checkpoint nothing more goes; with several, the cut-off checkpoint below the cut-off commit does.",
)
class CleanupCheckpointsBelowCutoffCommit(ReferenceClient):
    def _cleanup_plan(self, uris: list[str], cutoff_version: int) -> list[str]:
        doomed = super()._cleanup_plan(uris, cutoff_version)
        if cut_off_checkpoint(log_files(uris), cutoff_version) is None:  # step 2 stops cleanup
            return doomed
        checkpoints = [f for f in log_files(uris) if f.kind == "checkpoint"]
        newest = max(f.version for f in checkpoints)
        return sorted(set(doomed) | {f.uri for f in checkpoints if f.version < cutoff_version and f.version != newest})


@fault(
    "compaction-tidies-staged",
    "client",
    breaks=("WRT-MAINTENANCE-POLICY",),
    description="After writing a log compaction file (allowed by the policy), the client deletes the staged"
    " files of the published commits the compaction covers, without asking the policy about metadata"
    " cleanup, which that deletion is.",
)
class CompactionTidiesStaged(ReferenceClient):
    def compact_log(self, name: str, start_version: int, end_version: int) -> bool:
        done = super().compact_log(name, start_version, end_version)
        if done:
            location = self.catalog.resolve(name).location
            published = {f.version for f in log_files(f.uri for f in self.storage.list(log_dir(location) + "/"))}
            for f in log_files(f.uri for f in self.storage.list(staged_dir(location) + "/")):
                if f.kind == "staged" and start_version <= f.version <= end_version and f.version in published:
                    self.storage.delete(f.uri)
        return done


@fault(
    "cleanup-published-staged-by-age",
    "client",
    breaks=("WRT-CLEANUP-STAGED-ABOVE",),
    description="Cleanup deletes the staged files of published commits that are older (modification time)"
    " than the cut-off checkpoint file, whatever their version; unpublished commits' staged files it keeps."
    " A commit staged before the checkpoint and published after it, above its version, is deleted.",
)
class CleanupPublishedStagedByAge(ReferenceClient):
    def _cleanup_plan(self, uris: list[str], cutoff_version: int) -> list[str]:
        doomed = set(super()._cleanup_plan(uris, cutoff_version))
        files = log_files(uris)
        kept = max((f.version for f in files if f.kind == "checkpoint" and f.version <= cutoff_version), default=None)
        if kept is None:
            return sorted(doomed)
        cp = next(f.uri for f in files if f.kind == "checkpoint" and f.version == kept)
        location = cp.rsplit("/_delta_log/", 1)[0]
        mtimes = {i.uri: i.mtime_ms for i in self.storage.list(log_dir(location) + "/")}
        published = {f.version for f in files if f.kind == "delta"}
        doomed |= {
            f.uri
            for f in files
            if f.kind == "staged" and f.version in published and mtimes.get(f.uri, mtimes[cp] + 1) <= mtimes[cp]
        }
        return sorted(doomed)

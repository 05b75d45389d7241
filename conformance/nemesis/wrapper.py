"""A catalog that a client under test is bound to, and that misbehaves the way networks and processes do.

Unarmed, ``NemesisCatalog`` forwards every call and counts it. Armed for one operation (``commit``,
``mark_published`` or ``get_commits``), it acts once, on the next such call:

- ``lose``: forward the call (the catalog acts), then raise ``CatalogTimeout`` instead of the answer;
- ``duplicate``: deliver a proposal twice, as a network retry would, and return the second answer;
- ``crash_before``: raise ``ClientCrashed`` without forwarding (the client staged, never proposed; or,
  armed for ``mark_published``, copied what it publishes and never told the catalog);
- ``crash_after``: forward, then raise ``ClientCrashed`` (ratified, the client never heard of it);
- ``restart``: forward, restart the catalog (``restart()`` gives the catalog to use from then on),
  then raise ``CatalogTimeout``: the answer went down with the server.

Armed with ``run=n`` (``lose`` only), the loss is the first of a run of ``n`` consecutive lost answers:
the answers to the next ``n - 1`` calls of any of the three kinds (the listing a client recovers
with, its proposal again, a publication mark), whatever their kind, are lost too, as a flaky network
or a restarting server loses them. Other calls (``resolve``, the policy) pass and do not end the run.

Armed with ``before`` (a step and its description), the nemesis runs that step when the armed call
arrives, before it acts: a rival's commit that reaches the catalog first, so that the client's
proposal is answered with a conflict, which ``lose`` then loses as any other answer. Armed with
``after`` (``lose`` or ``duplicate``), it runs that step once the catalog has acted and before the
answer the client gets: another client publishing the commit the client is about to ask about, or a
rival's commit between the two deliveries of a duplicated proposal.

A client that never calls the object it was handed (an engine in another process talking to its
catalog by itself) leaves ``calls`` at 0: the checks then say the nemesis could not reach it
(NOT_APPLICABLE), never PASS."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from conformance.contract.delta import (
    Catalog,
    CatalogTimeout,
    GetCommitsResponse,
    MaintenancePolicy,
)
from conformance.nemesis.between import Between

T = TypeVar("T")
Action = Literal["lose", "duplicate", "crash_before", "crash_after", "restart"]
Op = Literal["commit", "mark_published", "get_commits", "maintenance_policy"]


class ClientCrashed(Exception):  # noqa: N818 - named for what happened, as CatalogTimeout is
    """lakecert's nemesis crashed the client at this call: the check drops the client and goes on with a
    fresh one. Not an error of the client: whatever it did up to here is what a crash leaves."""


@dataclass
class _Armed:
    op: Op
    action: Action
    before: tuple[Callable[[], object], str] | None = None  # a step run first, and what it is in words
    after: tuple[Callable[[], object], str] | None = None  # a step run once the catalog acted
    run: int = 1  # how many consecutive answers are lost (``lose``): this call's and the next run - 1


class NemesisCatalog(Between):
    """``contract.Catalog`` around ``inner`` (the recording catalog the client would otherwise get)."""

    def __init__(self, inner: Catalog, *, restart: Callable[[], Catalog] | None = None) -> None:
        super().__init__(inner)
        self._restart = restart
        self._armed: _Armed | None = None
        self._after: tuple[Callable[[], object], str] | None = None  # of the fault being fired
        self._run_left = 0  # answers still to lose in the run being fired, whatever call they answer
        self.lost = 0  # answers lost since the last ``arm``
        self.fired: list[str] = []  # what the nemesis did, in words, for why lines

    def arm(
        self,
        op: Op,
        action: Action,
        *,
        before: tuple[Callable[[], object], str] | None = None,
        after: tuple[Callable[[], object], str] | None = None,
        run: int = 1,
    ) -> None:
        if run < 1 or (run > 1 and action != "lose"):
            raise ValueError("a run of consecutive faults is of lost answers, one or more")
        if action in ("duplicate", "crash_after", "restart") and op != "commit":
            raise ValueError(f"{action} applies to commit proposals, not {op}")
        if op == "maintenance_policy" and action != "lose":
            raise ValueError("a policy lookup's answer can be lost, nothing else")
        if action == "crash_before" and op == "get_commits":
            raise ValueError("crash_before applies to proposals and publication marks, not listings")
        if action == "restart" and self._restart is None:
            raise ValueError("this nemesis has no catalog to restart")
        if after is not None and action not in ("lose", "duplicate"):
            raise ValueError("a step after the catalog acted goes with a lost answer or a second delivery only")
        self._armed = _Armed(op, action, before, after, run)
        self._run_left = 0
        self.lost = 0

    @property
    def pending(self) -> bool:
        """Whether the armed fault has not fired yet (the client never made that call)."""
        return self._armed is not None

    def disarm(self) -> None:
        """Drop an armed fault that has not fired (the client never made that call), and the rest of a
        run of lost answers (the client stopped calling before the run was over)."""
        self._armed = None
        self._run_left = 0

    def _take(self, op: Op) -> Action | None:
        if self._run_left > 0:  # inside a run of lost answers: this answer is lost too, whatever the call
            self._run_left -= 1
            return "lose"
        armed = self._armed
        if armed is None or armed.op != op:
            return None
        self._armed = None
        self._after = armed.after
        self._run_left = armed.run - 1
        if armed.before is not None:
            step, what = armed.before
            step()
            self.fired.append(what)
        return armed.action

    def _lost(self, op: str, call: Callable[[], T], action: Action | None) -> T:
        """Forward ``call``; with ``lose``, drop its answer (an error the catalog raised is lost too)."""
        if action != "lose":
            return call()
        self.lost += 1
        self.fired.append(f"the answer to the client's {op} was lost after the catalog acted on it")
        try:
            call()
        except Exception as answer:
            self._run_after()
            raise CatalogTimeout(f"lakecert's nemesis lost the answer to {op}") from answer
        self._run_after()
        raise CatalogTimeout(f"lakecert's nemesis lost the answer to {op}")

    def _run_after(self) -> None:
        """The ``after`` step of the fault being fired, while its answer is on the way (and lost)."""
        after, self._after = self._after, None
        if after is not None:
            step, what = after
            step()
            self.fired.append(what)

    # ------------------------------------------------------------------ Catalog

    def commit(
        self,
        table_id: str,
        version: int,
        *,
        staged_uri: str | None = None,
        inline_content: bytes | None = None,
        in_commit_timestamp: int | None = None,
        latest_published_version: int | None = None,
    ) -> None:
        self.calls += 1
        action = self._take("commit")

        def propose() -> None:
            self._inner.commit(
                table_id,
                version,
                staged_uri=staged_uri,
                inline_content=inline_content,
                in_commit_timestamp=in_commit_timestamp,
                latest_published_version=latest_published_version,
            )

        if action == "crash_before":
            self.fired.append(f"the client crashed after staging v{version}, before proposing it")
            raise ClientCrashed(f"lakecert's nemesis crashed the client before it proposed v{version}")
        if action == "crash_after":
            propose()
            self.fired.append(f"the client crashed after v{version} was ratified, before it heard so")
            raise ClientCrashed(f"lakecert's nemesis crashed the client after v{version} was ratified")
        if action == "duplicate":
            self.fired.append(f"the proposal of v{version} was delivered twice; the client got the second answer")
            with contextlib.suppress(Exception):  # the first answer is never seen: the client gets the second
                propose()
            self._run_after()
            return propose()
        if action == "restart":
            propose()
            assert self._restart is not None
            self._inner = self._restart()
            self.fired.append(f"the catalog restarted after ratifying v{version}; its answer was lost")
            raise CatalogTimeout(f"lakecert's nemesis restarted the catalog while it answered v{version}")
        return self._lost(f"proposal of v{version}", propose, action)

    def get_commits(
        self, table_id: str, start_version: int | None = None, end_version: int | None = None
    ) -> GetCommitsResponse:
        self.calls += 1
        return self._lost(
            "listing", lambda: self._inner.get_commits(table_id, start_version, end_version), self._take("get_commits")
        )

    def maintenance_policy(self, table_id: str) -> MaintenancePolicy:
        self.calls += 1
        # Lost only when armed for it: a run of lost answers is of proposals, listings and marks.
        armed = self._armed is not None and self._armed.op == "maintenance_policy"
        action = self._take("maintenance_policy") if armed else None
        return self._lost("maintenance policy", lambda: self._inner.maintenance_policy(table_id), action)

    def mark_published(self, table_id: str, version: int) -> None:
        self.calls += 1
        action = self._take("mark_published")
        if action == "crash_before":
            self.fired.append(f"the client crashed after copying its commits, before marking v{version} published")
            raise ClientCrashed(f"lakecert's nemesis crashed the client before it marked v{version} published")
        self._lost(f"publication mark of v{version}", lambda: self._inner.mark_published(table_id, version), action)

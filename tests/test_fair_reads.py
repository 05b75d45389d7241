"""Issue 31 row 13, at its cause: both servers admit reads through ``asgi_thread.FairReads``, which
gives a free slot to a connection answered before ahead of a burst of new connections. Driven on
one event loop with a stand-in app whose requests stay in until the test lets them out, so the order
of admission is observed, not timed (bench/hardening_load.py measures the latency it buys)."""

from __future__ import annotations

import asyncio

import pytest
from starlette.types import Message, Receive, Scope, Send

from reference_impl.asgi_thread import FairReads

Address = tuple[str, int]


class HeldApp:
    """Records each request's client as it enters, and answers once the test releases that client."""

    def __init__(self) -> None:
        self.entered: list[Address] = []
        self.release: dict[Address, asyncio.Event] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client: Address = scope["client"]
        self.entered.append(client)
        await self.release.setdefault(client, asyncio.Event()).wait()


def _scope(client: Address, method: str = "GET", body: bool = False) -> Scope:
    headers = [(b"content-length", b"2")] if body else []
    return {"type": "http", "method": method, "client": client, "headers": headers}


async def _nothing() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _ignore(message: Message) -> None:
    return None


async def _settle() -> None:
    for _ in range(20):  # lets every runnable task reach its next wait
        await asyncio.sleep(0)


def _request(gate: FairReads, client: Address, *, body: bool = False) -> asyncio.Task[None]:
    return asyncio.create_task(gate(_scope(client, body=body), _nothing, _ignore))


async def _answered_then_burst() -> tuple[HeldApp, FairReads, dict[Address, asyncio.Task[None]]]:
    """One client answered before; two slots held by new connections; three more new ones queued."""
    app = HeldApp()
    gate = FairReads(app, slots=2)
    kept = ("127.0.0.1", 1000)
    app.release[kept] = asyncio.Event()
    app.release[kept].set()
    await _request(gate, kept)  # answered: the gate now knows it
    app.entered.clear()
    app.release[kept] = asyncio.Event()
    tasks = {c: _request(gate, c) for c in [("127.0.0.1", 2000 + i) for i in range(5)]}
    await _settle()
    return app, gate, tasks


def test_a_free_slot_goes_to_an_answered_connection_before_a_queued_burst() -> None:
    async def scenario() -> list[Address]:
        app, gate, tasks = await _answered_then_burst()
        assert app.entered == [("127.0.0.1", 2000), ("127.0.0.1", 2001)], "the slots are not what they say"
        kept = ("127.0.0.1", 1000)
        tasks[kept] = _request(gate, kept)
        await _settle()
        app.release[("127.0.0.1", 2000)].set()  # one slot frees: the answered connection is next
        await _settle()
        app.release[kept].set()
        await _settle()
        for address in list(app.release):
            app.release[address].set()
        for _ in range(5):
            await _settle()
            for address in list(app.release):
                app.release[address].set()
        await asyncio.gather(*tasks.values())
        assert gate.free == 2, "a slot was lost or made up"
        return app.entered

    entered = asyncio.run(scenario())
    assert entered[2] == ("127.0.0.1", 1000), entered
    assert entered[3:] == [("127.0.0.1", 2002), ("127.0.0.1", 2003), ("127.0.0.1", 2004)], entered


def test_requests_with_a_body_are_never_queued() -> None:
    """Commits carry a body, and the explorer may hold one for long: they pass the gate untouched."""

    async def scenario() -> list[Address]:
        app, gate, tasks = await _answered_then_burst()
        writer = ("127.0.0.1", 3000)
        tasks[writer] = _request(gate, writer, body=True)
        await _settle()
        entered = list(app.entered)
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        return entered

    assert ("127.0.0.1", 3000) in asyncio.run(scenario())


def test_a_cancelled_wait_gives_up_its_place_and_loses_no_slot() -> None:
    async def scenario() -> FairReads:
        app, gate, tasks = await _answered_then_burst()
        tasks.pop(("127.0.0.1", 2002)).cancel()  # a queued request whose connection went away
        await _settle()
        for _ in range(5):
            for address in list(app.release):
                app.release[address].set()
            await _settle()
        await asyncio.gather(*tasks.values())
        assert ("127.0.0.1", 2002) not in app.entered
        return gate

    gate = asyncio.run(scenario())
    assert gate.free == 2 and not any(gate.waiting)


def test_no_slots_is_refused() -> None:
    with pytest.raises(ValueError):
        FairReads(HeldApp(), slots=0)

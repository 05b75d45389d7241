"""The holding proxy in front of an Iceberg REST catalog is the reference catalog's own hold
mechanism: the schedule tests of ``test_iceberg_rest_schedule.py`` run again here, unchanged, with
the commits held by a ``HoldingCatalogProxy`` in front of a reference catalog that holds nothing
itself. The same holds, release orders, outcomes, timeouts and history, whoever applies the commits."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from pyiceberg.exceptions import ServiceUnavailableError

from conformance.adapters.catalog_proxy import HoldingCatalogProxy, arrival_of
from reference_impl.iceberg_rest import IcebergRestServer
from reference_impl.iceberg_rest.controller import ScheduleController, ScheduleTimeout
from tests import test_iceberg_rest_schedule as schedule


class Proxied:
    """Looks like ``IcebergRestServer`` to the schedule tests; every request goes through the proxy."""

    def __init__(self, upstream: IcebergRestServer, holding: HoldingCatalogProxy) -> None:
        self.upstream, self.holding = upstream, holding

    @property
    def controller(self) -> ScheduleController:
        return self.holding.controller

    @property
    def url(self) -> str:
        return self.holding.uri

    def client_properties(self, writer: str | None = None) -> dict[str, str]:
        return {**self.upstream.client_properties(writer), "uri": self.url}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Proxied]:
    # Hold timeouts are hang guards only (a loaded machine must not expire a hold the test releases);
    # the expiry test sets its own short hold.
    with IcebergRestServer((tmp_path / "warehouse").as_uri(), hold_timeout_s=600) as upstream:
        holding = HoldingCatalogProxy(upstream.url, controller=ScheduleController(600)).start()
        try:
            yield Proxied(upstream, holding)
        finally:
            holding.stop()
            assert not any(r.held for r in upstream.controller.history()), "the upstream held nothing itself"


# The schedule tests, collected again in this module, where ``server`` is the proxied catalog.
test_held_appends_second_gets_409_and_retries = schedule.test_held_appends_second_gets_409_and_retries
test_held_deletes_second_fails_validation_after_409 = schedule.test_held_deletes_second_fails_validation_after_409
test_writer_tag_from_snapshot_summary = schedule.test_writer_tag_from_snapshot_summary
test_cancelled_hold_answers_503_and_lets_later_commits_through = (
    schedule.test_cancelled_hold_answers_503_and_lets_later_commits_through
)
test_concurrent_commits_on_one_base_exactly_one_wins = schedule.test_concurrent_commits_on_one_base_exactly_one_wins


def test_an_unreleased_hold_expires_503_and_nothing_is_forwarded(server: Proxied) -> None:
    """As in the reference catalog (without its timing bound: a loaded machine may be slow)."""
    table = schedule.seeded_table(server)  # type: ignore[arg-type]
    before = table.metadata_location
    writer = schedule.Writer(schedule.catalog(server, "w1").load_table("db.t"), schedule.append([3], "blue"))  # type: ignore[arg-type]
    hold = server.controller.hold("db", "t", writer="w1", timeout_s=0.5)
    writer.start()
    (held,) = hold.wait_held(timeout_s=60)
    with pytest.raises(ScheduleTimeout):
        held.outcome(timeout_s=60)  # longer than the hold: the hold's own timeout ends it
    writer.join(60)
    assert isinstance(writer.error, ServiceUnavailableError)  # answered 503 by the proxy
    assert schedule.catalog(server).load_table("db.t").metadata_location == before  # type: ignore[arg-type]
    commits = [e for e in server.holding.proxy.events() if e.method == "POST" and e.path.endswith("/tables/t")]
    assert commits[-1].status == 503
    assert [r.outcome.status for r in server.upstream.controller.history()][-1] == 200, "the upstream never saw it"


def test_every_request_is_forwarded_and_recorded(server: Proxied) -> None:
    schedule.seeded_table(server)  # type: ignore[arg-type]
    events = server.holding.proxy.events()
    commits = [e for e in events if e.method == "POST" and e.path.endswith("/namespaces/db/tables/t")]
    assert commits and all(e.status == 200 for e in commits)
    assert [r.outcome.status for r in server.controller.history()] == [e.status for e in commits]


def test_a_catalog_that_names_its_own_address_is_kept_behind_the_proxy(tmp_path: Path) -> None:
    """Nessie's /v1/config tells clients its own ``uri``: the proxy answers with its address instead."""
    with IcebergRestServer((tmp_path / "w").as_uri()) as upstream:
        holding = HoldingCatalogProxy(upstream.url).start()
        try:
            config = requests.get(f"{holding.uri}/v1/config", timeout=30)
            assert config.status_code == 200
            assert upstream.url not in config.text
            direct = requests.get(f"{upstream.url}/v1/config", timeout=30).json()
            assert json.loads(config.text.replace(holding.proxy.url, upstream.url)) == direct
        finally:
            holding.stop()


def test_arrival_names_table_writer_and_requirements() -> None:
    body = {
        "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 7}],
        "updates": [{"action": "a-future-action"}, {"action": "set-properties", "updates": {"k": "v"}}],
    }
    arrival = arrival_of(
        "/iceberg/v1/main/namespaces/a%1Fb/tables/t", {"x-lakecert-writer": "w1"}, json.dumps(body).encode()
    )
    assert (arrival.namespace, arrival.table, arrival.writer, arrival.expected_main) == (("a", "b"), "t", "w1", 7)
    assert len(arrival.updates) == 1, "an action pyiceberg does not model is left out, not fatal"

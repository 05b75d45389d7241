"""The executable RFC model (conformance/model/catalog_managed) on its own: each transition as the RFC
section it names allows it, so the generated histories compare targets with something right."""

from __future__ import annotations

from conformance.model.catalog_managed import CatalogModel, CatalogTable, Commit, LogEntry, TableModel, judge_log


def _ratified(upto: int) -> CatalogTable:
    t = CatalogTable()
    for v in range(1, upto + 1):
        t.propose(Commit(v, f"s/{v:020d}.u{v}.json"))
    return t


def test_ratification_is_sequential_and_once() -> None:
    t = _ratified(2)
    assert t.judge(1) == "conflict" and t.judge(2) == "conflict"
    assert t.judge(4) == "refused"
    assert t.propose(Commit(4, "x")) == "refused" and t.latest == 2
    assert t.propose(Commit(3, inline_content=b"{}\n")) == "ratified" and t.latest == 3
    t.forget(3)
    assert t.latest == 2 and 3 not in t.ratified


def test_listing_must_hold_unpublished_and_may_hold_published() -> None:
    t = _ratified(5)
    t.mark_published(3)
    assert set(t.must_list(0, None)) == {4, 5}
    assert set(t.may_list(0, None)) == {1, 2, 3, 4, 5}
    assert set(t.must_list(0, 4)) == {4}
    listed: dict[int, str | bytes | None] = {v: c.ref for v, c in t.must_list(0, None).items()}
    assert t.judge_listing(0, None, listed, 5) == []
    assert [f.kind for f in t.judge_listing(0, None, listed, 4)] == ["latest"]
    assert [f.kind for f in t.judge_listing(0, None, {5: listed[5]}, 5)] == ["missing"]
    assert [f.kind for f in t.judge_listing(5, None, listed, 5)] == ["outside"]
    assert [f.kind for f in t.judge_listing(0, None, {**listed, 6: "other"}, 5)] == ["unratified"]


def test_the_publication_mark_never_goes_back_nor_past_the_latest() -> None:
    t = _ratified(3)
    t.mark_published(2)
    t.mark_published(1)
    assert t.published == 2
    t.mark_published(9)
    assert t.published == 3


def test_tables_of_one_catalog_are_apart() -> None:
    c = CatalogModel()
    a, b = c.create("a"), c.create("b")
    a.propose(Commit(1, "x"))
    assert b.latest == 0 and b.judge(1) == "ratified"


def test_cleanup_keeps_versions_from_the_cut_off_checkpoint() -> None:
    m = TableModel()
    for i in range(1, 8):
        m.append({i: "x"}, ict=1000 + i)
    m.publish(6)
    assert m.may_checkpoint(6) and not m.may_checkpoint(7)
    assert m.cleanup(6) is None and m.oldest_readable == 0  # no checkpoint: nothing to clean
    m.checkpoint(4)
    assert m.cleanup(6) == 4
    assert list(m.readable()) == [4, 5, 6, 7]
    m.policy = frozenset({"checkpoint"})
    m.checkpoint(6)
    assert m.cleanup(7) is None and m.oldest_readable == 4  # the policy forbids cleanup


def test_time_travel_by_in_commit_timestamp() -> None:
    m = TableModel()
    m.icts[0] = 1000
    for i in range(1, 5):
        m.append({i: "x"}, ict=1000 + 10 * i)
    assert m.version_at(1020) == 2 and m.version_at(1029) == 2 and m.version_at(5000) == 4
    assert m.version_at(999) is None
    m.checkpoint(2)
    m.publish()
    m.cleanup(3)
    assert m.version_at(1020) == 2 and m.version_at(1019) is None  # before the oldest readable: not fixed


def test_the_log_keeps_what_cleanup_must_keep() -> None:
    m = TableModel()
    for i in range(1, 6):
        m.append({i: "x"})
    m.publish(3)
    m.checkpoint(2)
    m.cleanup(3)
    staged = {4: "4.json", 5: "5.json"}
    good = [LogEntry("delta", v) for v in (2, 3)] + [LogEntry("checkpoint", 2)]
    good += [LogEntry("staged", v, name=n) for v, n in staged.items()]
    assert judge_log(m, good, staged) == []
    assert [f.kind for f in judge_log(m, good[1:], staged)] == ["lost-published"]
    assert [f.kind for f in judge_log(m, good[:-1], staged)] == ["lost-staged"]
    assert [f.kind for f in judge_log(m, [*good, LogEntry("delta", 6)], staged)] == ["above-latest"]
    assert [f.kind for f in judge_log(m, [*good, LogEntry("checkpoint", 4)], staged)] == ["unpublished-maintenance"]

"""The envelope's machinery (issue 28 item 4): discovering a limit, building a commit of an exact
size, the target option ``limits`` and the reference's declared limits. The checks themselves are
judged by the self-test (reference_impl/faults/envelope_faults.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.checks.delta.builders import reseed
from conformance.checks.delta.catalog.envelope import ASCII, PADDINGS, Padding, discover, padded_commit, sized_name
from conformance.config import ConfigError, load_config
from conformance.contract.delta import CatalogLimits, InvalidRequest
from conformance.contract.target import declared_limits
from conformance.registry import build_target
from reference_impl.catalog.catalog import INLINE_BYTES, NAME_LENGTH, ReferenceCatalog
from reference_impl.delta.actions import decode_commit
from reference_impl.faults.registry import find_fault
from reference_impl.target import ReferenceTarget


def _sizes(limit: int | None) -> tuple[list[int], object]:
    tried: list[int] = []

    def accepts(size: int) -> bool:
        tried.append(size)
        return limit is None or size <= limit

    return tried, accepts


@pytest.mark.parametrize("limit", [1, 15, 16, 17, 255, 300, 1023, 1024])
def test_discovery_finds_the_limit_in_few_probes(limit: int) -> None:
    tried, accepts = _sizes(limit)
    found = discover(accepts, 16, 1024)  # type: ignore[arg-type]
    assert found == ((limit, True) if limit < 1024 else (1024, False))
    assert len(tried) <= 2 * 11  # doubling then bisection: logarithmic


def test_discovery_without_a_limit_stops_at_the_ceiling() -> None:
    tried, accepts = _sizes(None)
    assert discover(accepts, 1024, 4 * 1024 * 1024) == (4 * 1024 * 1024, False)  # type: ignore[arg-type]
    assert tried == [1024 * 2**k for k in range(13)]


def test_discovery_when_nothing_is_accepted() -> None:
    _, accepts = _sizes(0)
    assert discover(accepts, 16, 1024) == (0, True)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [200, 1024, 65537, 1024 * 1024])
def test_padded_commits_have_the_exact_size_and_are_commits(size: int) -> None:
    reseed(7)
    content = padded_commit(size, 3)
    assert len(content) == size
    assert list(decode_commit(content)[0]) == ["commitInfo"]
    with pytest.raises(ValueError):
        padded_commit(20, 3)


@pytest.mark.parametrize("padding", PADDINGS, ids=[p.what for p in PADDINGS])
@pytest.mark.parametrize("size", [1024, 1025, 65537])
def test_padded_commits_in_every_padding_have_the_exact_size(padding: Padding, size: int) -> None:
    reseed(7)
    content = padded_commit(size, 3, padding)
    assert len(content) == size
    assert list(decode_commit(content)[0]) == ["commitInfo"]
    if padding != ASCII:  # the point of the padding: bytes and characters (raw or parsed) differ
        text = json.loads(content)["commitInfo"]["lakecertPadding"]
        assert len(content.decode()) < size * 2 // 3 or len(text) < size // 2


def test_names_of_one_length_differ_in_their_last_character() -> None:
    a, b = sized_name("ekey", 300, "a"), sized_name("ekey", 300, "b")
    assert (len(a), len(b)) == (300, 300) and a[:-1] == b[:-1] and a != b


def test_the_reference_declares_and_enforces_its_limits(tmp_path: Path) -> None:
    assert declared_limits(ReferenceTarget()) == CatalogLimits(name_length=NAME_LENGTH, inline_bytes=INLINE_BYTES)
    catalog = ReferenceCatalog(tmp_path / "c.sqlite", f"file://{tmp_path}/wh")
    staged = catalog.create_staging_table()
    with pytest.raises(InvalidRequest):
        catalog.register_table("n" * (NAME_LENGTH + 1), staged.table_id)
    info = catalog.register_table("n" * NAME_LENGTH, staged.table_id)
    with pytest.raises(InvalidRequest):
        catalog.commit(info.table_id, 1, inline_content=b"x" * (INLINE_BYTES + 1))
    assert catalog.get_commits(info.table_id).latest_version == 0
    catalog.commit(info.table_id, 1, inline_content=b"x" * INLINE_BYTES)
    assert catalog.get_commits(info.table_id).commits[0].inline_content == b"x" * INLINE_BYTES


def test_a_faulty_variant_declares_its_own_limits() -> None:
    fault = find_fault("overstate-unpublished-cap")
    assert fault is not None
    assert declared_limits(ReferenceTarget(fault)).unpublished == 32


ADAPTER = "tests.test_envelope:PlainCatalogTarget"


class PlainCatalogTarget:
    """A target that declares nothing itself (only ``limits`` makes it declare)."""

    name = "plain"
    kind = "third-party"
    sides = frozenset({"catalog"})

    def __init__(self, url: str = "") -> None:
        self.url = url

    def version(self) -> str:
        return "0"

    def make_catalog(self, env: object) -> object:
        raise NotImplementedError

    def make_client(self, catalog: object, env: object) -> object:
        raise NotImplementedError

    def close(self) -> None:
        return None


def _built(options: dict[str, object]) -> object:
    env = {"LAKECERT__targets__plain__adapter": ADAPTER}
    env |= {f"LAKECERT__targets__plain__options__{k}": repr(v) for k, v in options.items()}
    return build_target("plain", load_config(None, environ=env))


def test_the_limits_option_declares_limits_for_the_target() -> None:
    target = _built({"url": "x", "limits": {"name_length": 64, "unpublished": 10}})
    assert declared_limits(target) == CatalogLimits(name_length=64, unpublished=10)  # type: ignore[arg-type]
    assert declared_limits(_built({"url": "x"})) == CatalogLimits()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "limits, where",
    [
        ({"name_lenght": 64}, "limits.name_lenght"),
        ({"unpublished": 0}, "limits.unpublished"),
        ({"inline_bytes": "1MiB"}, "limits.inline_bytes"),
        ([64], "limits"),
    ],
)
def test_the_limits_option_is_validated(limits: object, where: str) -> None:
    with pytest.raises(ConfigError, match=f"targets.plain.options.{where}"):
        _built({"limits": limits})

"""Every round-11 (writer E) faulty variant misbehaves where the correct baseline does not.

In-process and fast: ``MemoryStorage``, the durable catalog's state under ``tmp_path``; no lakecert.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.contract.target import TargetEnv
from tests.cleanroom.client import encode
from tests.cleanroom.memstore import MemoryStorage
from tests.cleanroom_r3.base import DurableCatalog, DurableTarget, ResilientClient
from tests.cleanroom_r11 import variants as v

WAREHOUSE = "mem://warehouse"


def make_env(tmp_path: Path) -> TargetEnv:
    return TargetEnv(workdir=tmp_path, warehouse_uri=WAREHOUSE, storage=MemoryStorage())


def catalog_of(target_cls: type[DurableTarget], env: TargetEnv) -> DurableCatalog:
    cat = target_cls().make_catalog(env)
    assert isinstance(cat, DurableCatalog)
    return cat


def table(cat: Any, env: TargetEnv, name: str = "t") -> str:
    ResilientClient(cat, env.storage).create_table(name)
    return str(cat.resolve(name).table_id)


def _ict_after_restart(target_cls: type[DurableTarget], tmp_path: Path) -> tuple[int | None, int | None]:
    env = make_env(tmp_path)
    target = target_cls()
    cat = catalog_of(target_cls, env)
    tid = table(cat, env)
    ict = 1_700_000_000_123
    content = encode([{"commitInfo": {"inCommitTimestamp": ict, "timestamp": ict}}])
    cat.commit(tid, 1, inline_content=content, in_commit_timestamp=ict)
    before = cat.get_commits(tid).commits[-1].in_commit_timestamp
    cat2 = target.restart_catalog(cat, env)
    after = cat2.get_commits(tid).commits[-1].in_commit_timestamp
    return before, after


def test_baseline_ict_survives_restart(tmp_path: Path) -> None:
    assert _ict_after_restart(DurableTarget, tmp_path) == (1_700_000_000_123, 1_700_000_000_123)


def test_ict_second_column_loses_millis_on_restart(tmp_path: Path) -> None:
    before, after = _ict_after_restart(v.IctSecondColumnTarget, tmp_path)
    assert before == 1_700_000_000_123
    assert after == 1_700_000_000_000


def test_registry() -> None:
    names = [x.name for x in v.VARIANTS]
    assert len(names) == len(set(names))
    assert all(x.name.startswith("cr11-cat-") and x.profile == "delta-cm-catalog" for x in v.VARIANTS)

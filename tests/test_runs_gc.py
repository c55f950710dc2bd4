"""The cyclic collector during a rule-based batch (mabpd_kit.runs.steps): what each finished item leaves
alive is frozen out of the collector's passes, and the run puts the collector back as it found it."""

from __future__ import annotations

import gc
import weakref

import pytest
from pydantic import BaseModel

from mabpd_kit import runs


class Rec(BaseModel):
    id: str
    frozen_before: int = 0
    failed: bool = False
    error: str | None = None


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


@pytest.fixture(autouse=True)
def _collector_as_python_starts_it():
    """Each test starts from CPython's own collector state, whatever earlier tests (or a library) left:
    enabled, the default thresholds, nothing frozen; and the state found is put back afterwards."""
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    gc.enable()
    gc.set_threshold(700, 10, 10)
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()


def _fail(item: runs.Item, exc: BaseException) -> Rec:
    return Rec(id=item.id, failed=True, error=str(exc))


def _items(n: int) -> list[runs.Item]:
    return [runs.Item(str(i), i, runs.digest(str(i))) for i in range(n)]


def test_a_finished_items_record_is_frozen_and_the_collector_is_restored():
    threshold = gc.get_threshold()

    async def step(item: runs.Item) -> Rec:
        return Rec(id=item.id, frozen_before=gc.get_freeze_count())

    res = runs.run(_items(5), step, record=Rec, fail=_fail)
    counts = [r.frozen_before for r in res]
    assert all(b > a for a, b in zip(counts, counts[1:]))  # each item's record joined the frozen ones
    assert gc.get_threshold() == threshold and gc.get_freeze_count() == 0


def test_a_cycle_left_by_an_item_is_freed_after_the_run():
    refs: list[weakref.ref] = []

    async def step(item: runs.Item) -> Rec:
        node = Node()
        refs.append(weakref.ref(node))
        return Rec(id=item.id)

    runs.run(_items(3), step, record=Rec, fail=_fail)
    gc.collect()
    assert len(refs) == 3 and all(r() is None for r in refs)


def test_a_caller_managing_the_collector_is_left_alone():
    gc.disable()
    try:
        async def step(item: runs.Item) -> Rec:
            return Rec(id=item.id, frozen_before=gc.get_freeze_count())

        res = runs.run(_items(3), step, record=Rec, fail=_fail)
        assert [r.frozen_before for r in res] == [0, 0, 0] and not gc.isenabled()
    finally:
        gc.enable()

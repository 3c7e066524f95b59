"""The Coalescer (``io/coalesce.py``) with a stand-in fetch: batching, isolation, settling."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest

from dynorm import Embedded, HasMany, Partition, Table
from dynorm.core.chunks import key_id
from dynorm.core.codec.converter import Item
from dynorm.core.errors import ThrottledError
from dynorm.io.coalesce import Coalescer, Found
from dynorm.mapping.model import info_of
from dynorm.mapping.readplan import normalize_options, plan_get


def key(n: int) -> Item:
    return {"pk": {"S": f"k{n}"}}


class Fetches:
    """Records each batch and answers every key but the missing ones (or fails, once)."""

    def __init__(self, *, missing: frozenset[int] = frozenset()) -> None:
        self.batches: list[tuple[dict[str, list[Item]], bool]] = []
        self.missing = {key_id(key(n)) for n in missing}
        self.fail: Exception | None = None

    async def __call__(self, keys: dict[str, list[Item]], *, consistent: bool) -> Found:
        self.batches.append((keys, consistent))
        await asyncio.sleep(0)  # an answer comes on a later turn, as over the network
        if self.fail is not None:
            raise self.fail
        return {
            (name, key_id(k)): {**k, "v": {"S": name}}
            for name, ks in keys.items()
            for k in ks
            if key_id(k) not in self.missing
        }


async def test_gets_of_one_turn_share_one_batch_and_full_batches_go_at_once() -> None:
    fetch = Fetches()
    coalescer = Coalescer(fetch, 3)
    futures = [coalescer.get("t", key(n), consistent=False) for n in range(7)]
    # Two full batches went out at once; the rest waits for the next turn.
    assert len(fetch.batches) == 0  # tasks created, not yet run
    results = await asyncio.gather(*futures)
    assert [r["pk"] for r in results if r] == [key(n)["pk"] for n in range(7)]
    assert [len(b["t"]) for b, _ in fetch.batches] == [3, 3, 1]


async def test_consistency_splits_batches_and_tables_share_them() -> None:
    fetch = Fetches()
    coalescer = Coalescer(fetch, 100)
    futures = [
        coalescer.get("a", key(1), consistent=False),
        coalescer.get("b", key(2), consistent=False),
        coalescer.get("a", key(3), consistent=True),
    ]
    await asyncio.gather(*futures)
    assert sorted((c, sorted(b)) for b, c in fetch.batches) == [
        (False, ["a", "b"]),
        (True, ["a"]),
    ]


async def test_a_duplicate_key_is_asked_once_and_answered_to_each_caller() -> None:
    fetch = Fetches()
    coalescer = Coalescer(fetch, 100)
    one, two = await asyncio.gather(
        coalescer.get("t", key(1), consistent=False), coalescer.get("t", key(1), consistent=False)
    )
    assert one == two is not None
    assert fetch.batches == [({"t": [key(1)]}, False)]


async def test_missing_keys_answer_none_and_a_failure_reaches_every_caller() -> None:
    fetch = Fetches(missing=frozenset({2}))
    coalescer = Coalescer(fetch, 100)
    found = await asyncio.gather(*(coalescer.get("t", key(n), consistent=False) for n in (1, 2)))
    assert found[0] is not None
    assert found[1] is None
    fetch.fail = ThrottledError("slow down", operation="BatchGetItem")
    failed = await asyncio.gather(
        *(coalescer.get("t", key(n), consistent=False) for n in (1, 2)), return_exceptions=True
    )
    assert all(type(e) is ThrottledError and e.__cause__ is fetch.fail for e in failed)


async def test_each_caller_of_a_failed_batch_raises_an_exception_of_its_own() -> None:
    fetch = Fetches()
    coalescer = Coalescer(fetch, 100)
    shared = ThrottledError("slow down", code="ThrottlingException", operation="BatchGetItem")
    shared.add_note("dynorm gave up after 3 attempts")
    fetch.fail = shared

    async def caller(n: int) -> BaseException:
        try:
            try:
                raise KeyError(f"handling {n}")  # each caller's own context
            except KeyError:
                await coalescer.get("t", key(n), consistent=False)
        except ThrottledError as error:
            return error
        raise AssertionError("the batch did not fail")

    first, second = await asyncio.gather(caller(1), caller(1))
    assert first is not second
    for n, error in enumerate((first, second)):
        assert isinstance(error, ThrottledError)
        assert (str(error), error.code, error.operation) == (
            "slow down",
            "ThrottlingException",
            "BatchGetItem",
        )
        assert error.__cause__ is shared  # the shared failure, with the request's traceback
        assert error.__suppress_context__
        assert isinstance(error.__context__, KeyError)
        assert error.__context__.args == ("handling 1",)
        error.add_note(f"caller {n}")
    assert first.__notes__ == ["dynorm gave up after 3 attempts", "caller 0"]
    assert second.__notes__ == ["dynorm gave up after 3 attempts", "caller 1"]
    assert shared.__notes__ == ["dynorm gave up after 3 attempts"]
    assert shared.__context__ is None  # the callers' raises did not touch it
    # Each traceback holds its own caller's frames only once.
    assert first.__traceback__ is not second.__traceback__


async def test_a_cancelled_waiter_leaves_the_batch_to_the_others() -> None:
    fetch = Fetches()
    coalescer = Coalescer(fetch, 100)
    gone = coalescer.get("t", key(1), consistent=False)
    kept = coalescer.get("t", key(2), consistent=False)
    gone.cancel()
    assert (await kept) is not None
    assert fetch.batches == [({"t": [key(2)]}, False)]  # key 1 had no caller left
    with pytest.raises(asyncio.CancelledError):
        await gone


async def test_settle_sends_what_is_pending_and_waits_for_it() -> None:
    fetch = Fetches()
    coalescer = Coalescer(fetch, 100)
    future = coalescer.get("t", key(1), consistent=True)
    await coalescer.settle()
    assert future.done()
    assert future.result() is not None
    await coalescer.settle()  # nothing pending: returns at once


coalesced = Table("coalesced", pk="pk", sk="sk")


@attrs.define
class Note:
    text: str


@coalesced.model(pk="P#{p}", sk="P#{p}")
class Parent:
    p: str
    kids = HasMany["Kid"](via=Partition())
    notes = HasMany[Note](Note, via=Embedded())


@coalesced.model(pk="P#{p}", sk="K#{k}")
class Kid:
    p: str
    k: str


@pytest.mark.parametrize(
    ("load", "consistent", "single"),
    [
        ((), False, True),
        ((), True, True),
        ((Parent.kids,), False, False),
        ((Parent.notes,), False, False),
    ],
)
def test_only_a_get_without_load_may_share_a_batch(
    load: tuple[Any, ...], consistent: bool, single: bool
) -> None:
    info = info_of(Parent)
    plan = plan_get(info, {"p": "1"}, normalize_options(info, load), "t", consistent=consistent)
    assert plan.single is single

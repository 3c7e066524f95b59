"""Batch rounds that store something never use up the attempts; rounds without progress do.

``put_all`` and ``get_many`` go through the fault proxy (``tests/faultproxy.py``) with the
default ``max_attempts`` (5); what is stored is checked item by item through a direct connection.
"""

from __future__ import annotations

import collections

import pytest

from dynorm import ThrottledError
from tests.faultproxy import FaultPlan, FaultyConnect

from .fault_models import Entry, faults

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]

#: ``connect``'s default: attempts per request, and rounds without progress per batch.
DEFAULT_ATTEMPTS = 5


def entries(box: str, count: int) -> list[Entry]:
    return [Entry(box, n, f"{box}-{n}") for n in range(count)]


async def test_put_all_completes_while_every_round_leaves_half_unprocessed(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(faults) as faulty:
        faulty.proxy.use(
            FaultPlan(seed=5, rates={"partial_batch": 1.0}, operations={"BatchWriteItem"})
        )
        wanted = entries("half", 300)
        assert await faulty.db.put_all(wanted) == 300
        stored = await faulty.direct.query(Entry, box="half", consistent=True).all()
        assert stored == wanted
        # Every batch of more than one came back about half unprocessed: 25, 13, 7, 4, 2, 1
        # writes, six rounds a batch, more than the five attempts, each storing something.
        rounds = collections.Counter(faulty.proxy.requests)["BatchWriteItem"]
        assert rounds >= 12 * 6
        assert len(faulty.proxy.injected) >= 12 * 5


async def test_get_many_completes_while_every_round_leaves_half_unprocessed(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(faults) as faulty:
        wanted = entries("read", 250)
        await faulty.direct.put_all(wanted)
        faulty.proxy.use(
            FaultPlan(seed=6, rates={"partial_batch": 1.0}, operations={"BatchGetItem"})
        )
        found = await faulty.db.get_many(Entry, [{"box": "read", "n": n} for n in range(250)])
        assert found == wanted
        # 100 keys: 100, 50, 25, 13, 7, 4, 2, 1 -- eight rounds with progress.
        assert collections.Counter(faulty.proxy.requests)["BatchGetItem"] >= 8


async def test_put_all_gives_up_after_the_attempts_without_progress(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(faults) as faulty:
        wanted = entries("stall", 20)
        # One round stores about half; then five rounds store nothing.
        faulty.proxy.inject("partial_batch", operation="BatchWriteItem")
        faulty.proxy.inject("unprocessed_batch", operation="BatchWriteItem", times=5)
        with pytest.raises(ThrottledError, match="after 5 rounds that stored none") as info:
            await faulty.db.put_all(wanted)
        assert "6 requests in all" in str(info.value)
        assert "10 of 20 in this batch are stored" in str(info.value)
        assert faulty.proxy.requests == ["BatchWriteItem"] * (1 + DEFAULT_ATTEMPTS)
        assert faulty.proxy.pending() == 0
        # Item by item: the ten the first round forwarded are stored as given, no other is.
        found = await faulty.direct.get_many(
            Entry, [{"box": "stall", "n": e.n} for e in wanted], consistent=True
        )
        stored = [f for f in found if f is not None]
        assert len(stored) == 10
        assert all(f is None or f == e for f, e in zip(found, wanted, strict=True))
        # Writing them again is safe, and completes the batch.
        assert await faulty.db.put_all(wanted) == 20
        again = await faulty.direct.query(Entry, box="stall", consistent=True).all()
        assert again == wanted


async def test_get_many_gives_up_after_the_attempts_without_progress(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(faults) as faulty:
        await faulty.direct.put_all(entries("cold", 4))
        faulty.proxy.inject("unprocessed_batch", operation="BatchGetItem", times=5)
        with pytest.raises(ThrottledError, match="after 5 rounds that read none of them"):
            await faulty.db.get_many(Entry, [{"box": "cold", "n": n} for n in range(4)])
        assert faulty.proxy.requests == ["BatchGetItem"] * DEFAULT_ATTEMPTS

"""``connect(coalesce=True)``: concurrent ``db.get`` calls share BatchGetItem requests.

The coalescing connection goes through the fault proxy (``tests/faultproxy.py``), whose
``bodies`` show what each request asked for; ``direct`` (no coalescing) writes the items and
shows what a get sent alone does.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import pytest

from dynorm import DynormError, ItemNotFoundError, Table, VersionConflictError, connect
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    Connect,
    RunningServer,
    count_requests,
    fast_path_selected,
)
from tests.faultproxy import FaultPlan, Faulty, FaultyConnect

from .tables_models import AuditEntry, Customer, audit, shop

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]

users = Table("coalesced", pk="pk", sk="sk")


@users.model(pk="ORG#{org}", sk="USER#{name}")
class User:
    org: str
    name: str
    email: str = ""


@users.model(pk="ACCOUNT#{account_id}", sk="ACCOUNT", version="version")
class Account:
    account_id: str
    balance: int = 0
    version: int = 0


def people(count: int) -> list[User]:
    return [User("o", f"u{i:04d}", f"u{i}@example.com") for i in range(count)]


def operations(faulty: Faulty) -> collections.Counter[str]:
    return collections.Counter(faulty.proxy.requests)


def batch_keys(body: dict[str, Any]) -> int:
    return sum(len(entry["Keys"]) for entry in body["RequestItems"].values())


async def test_250_concurrent_gets_are_three_batch_get_items_in_gather_order(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(users, coalesce=True) as faulty:
        stored = people(250)
        await faulty.direct.put_all(stored)
        faulty.proxy.reset()
        with count_requests(faulty.db) as log:
            got = await asyncio.gather(*(faulty.db.get(User, org="o", name=u.name) for u in stored))
        assert got == stored
        assert log.operations == ["BatchGetItem"] * 3
        assert sorted(batch_keys(b) for b in faulty.proxy.bodies) == [50, 100, 100]


async def test_consistent_and_eventual_gets_never_share_a_request(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(users, coalesce=True) as faulty:
        stored = people(40)
        await faulty.direct.put_all(stored)
        faulty.proxy.reset()
        got = await asyncio.gather(
            *(
                faulty.db.get(User, org="o", name=u.name, consistent=i % 2 == 0)
                for i, u in enumerate(stored)
            )
        )
        assert got == stored
        assert operations(faulty) == {"BatchGetItem": 2}
        flags = []
        for body in faulty.proxy.bodies:
            (entry,) = body["RequestItems"].values()
            assert len(entry["Keys"]) == 20
            flags.append(entry.get("ConsistentRead", False))
        assert sorted(flags) == [False, True]


async def test_each_missing_key_fails_only_its_own_caller(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(users, coalesce=True) as faulty:
        stored = people(10)
        await faulty.direct.put_all(stored[::2])  # u0000, u0002, ...
        got = await asyncio.gather(
            *(faulty.db.get(User, org="o", name=u.name) for u in stored), return_exceptions=True
        )
        with pytest.raises(ItemNotFoundError) as alone:
            await faulty.direct.get(User, org="o", name="u0001")
        assert operations(faulty)["BatchGetItem"] == 1
    for i, result in enumerate(got):
        if i % 2 == 0:
            assert result == stored[i]
        else:
            assert isinstance(result, ItemNotFoundError)
            # The error a get sent alone raises, for this caller's key.
            assert str(result) == str(alone.value).replace("u0001", f"u{i:04d}")


async def test_a_cancelled_caller_cancels_only_itself(faulty_connect: FaultyConnect) -> None:
    async with faulty_connect(users, coalesce=True) as faulty:
        stored = people(10)
        await faulty.direct.put_all(stored)
        faulty.proxy.reset()
        tasks = [asyncio.create_task(faulty.db.get(User, org="o", name=u.name)) for u in stored]
        # A second caller of u0003's key, which stays.
        twin = asyncio.create_task(faulty.db.get(User, org="o", name="u0003"))
        await asyncio.sleep(0)  # one loop turn: every get has joined the pending batch
        assert not any(t.done() for t in tasks)
        tasks[3].cancel()
        tasks[5].cancel()
        results = await asyncio.gather(*tasks, twin, return_exceptions=True)
        assert tasks[3].cancelled()
        assert tasks[5].cancelled()
        assert [r for i, r in enumerate(results[:-1]) if i not in (3, 5)] == [
            u for i, u in enumerate(stored) if i not in (3, 5)
        ]
        assert results[-1] == stored[3]
        # u0005, whose only caller left before the flush, was not asked for.
        (body,) = faulty.proxy.bodies
        assert batch_keys(body) == 9


async def test_a_caller_cancelled_while_its_request_is_in_flight_leaves_the_others(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(users, coalesce=True) as faulty:
        stored = people(5)
        await faulty.direct.put_all(stored)
        pause = faulty.proxy.pause(operation="BatchGetItem")
        tasks = [asyncio.create_task(faulty.db.get(User, org="o", name=u.name)) for u in stored]
        await pause.arrived.wait()  # the request is at the proxy
        tasks[0].cancel()
        pause.release()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert tasks[0].cancelled()
        assert results[1:] == stored[1:]


async def test_gets_awaited_one_at_a_time_send_a_get_item_each(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(users, coalesce=True) as faulty:
        stored = people(3)
        await faulty.direct.put_all(stored)
        with count_requests(faulty.db) as log:
            for user in stored:
                assert await faulty.db.get(User, org="o", name=user.name) == user
            with pytest.raises(ItemNotFoundError):
                await faulty.db.get(User, org="o", name="nobody")
        assert log.operations == ["GetItem"] * 4


async def test_duplicate_keys_are_read_once_into_separate_objects(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(users, coalesce=True) as faulty:
        await faulty.direct.put(Account("a1", balance=5))
        await faulty.direct.put(Account("a2"))
        faulty.proxy.reset()
        first, second, other = await asyncio.gather(
            faulty.db.get(Account, account_id="a1"),
            faulty.db.get(Account, account_id="a1"),
            faulty.db.get(Account, account_id="a2"),
        )
        (body,) = faulty.proxy.bodies
        assert batch_keys(body) == 2
        assert first == second == Account("a1", balance=5, version=1)
        assert first is not second
        assert other.account_id == "a2"
        # Each object carries the version it was read at: a put of one succeeds, and then the
        # other, now stale, is refused, exactly as after two plain gets.
        first.balance = 7
        await faulty.db.put(first)
        second.balance = 9
        with pytest.raises(VersionConflictError):
            await faulty.db.put(second)
        assert await faulty.direct.get(Account, account_id="a1", consistent=True) == Account(
            "a1", balance=7, version=2
        )


async def test_explain_shows_the_get_item_a_get_would_send_alone(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(users, coalesce=True) as faulty:
        (request,) = faulty.db.explain.get(User, org="o", name="u1")
        assert request.operation == "GetItem"


async def test_gets_with_load_are_sent_alone(faulty_connect: FaultyConnect) -> None:
    async with faulty_connect(shop, coalesce=True) as faulty:
        await faulty.direct.put(Customer("c1", "Alice"))
        await faulty.direct.put(Customer("c2", "Bob"))
        faulty.proxy.reset()
        a, b = await asyncio.gather(
            faulty.db.get(Customer, customer_id="c1", load=[Customer.orders]),
            faulty.db.get(Customer, customer_id="c2", load=[Customer.orders]),
        )
        assert (a.name, b.name) == ("Alice", "Bob")
        assert operations(faulty) == {"Query": 2}


async def test_every_caller_gets_its_item_while_batches_come_back_partial(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(users, coalesce=True) as faulty:
        stored = people(250)
        await faulty.direct.put_all(stored)
        faulty.proxy.use(
            FaultPlan(seed=8, rates={"partial_batch": 1.0}, operations={"BatchGetItem"})
        )
        got = await asyncio.gather(*(faulty.db.get(User, org="o", name=u.name) for u in stored))
        assert got == stored
        assert ("BatchGetItem", "partial_batch") in faulty.proxy.injected
        # 100 keys: 100, 50, 25, 13, 7, 4, 2, 1 -- eight rounds with progress.
        assert operations(faulty)["BatchGetItem"] >= 8


async def test_a_failed_batch_fails_every_caller_in_it(faulty_connect: FaultyConnect) -> None:
    async with faulty_connect(users, coalesce=True, max_attempts=1) as faulty:
        stored = people(5)
        await faulty.direct.put_all(stored)
        faulty.proxy.inject("error_500", operation="BatchGetItem")
        got = await asyncio.gather(
            *(faulty.db.get(User, org="o", name=u.name) for u in stored), return_exceptions=True
        )
        assert all(isinstance(r, Exception) for r in got)
        assert len({type(r) for r in got}) == 1
        # The connection goes on: the next gets succeed.
        again = await asyncio.gather(*(faulty.db.get(User, org="o", name=u.name) for u in stored))
        assert again == stored


async def test_gets_pending_when_the_connection_closes_are_answered_first(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(users) as faulty:
        stored = people(5)
        await faulty.direct.put_all(stored)
        async with connect(
            users,
            endpoint_url=faulty.proxy.url,
            region_name=TEST_REGION,
            aws_access_key_id=TEST_ACCESS_KEY_ID,
            aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
            table_name=faulty.db.table_name,
            fast_path=fast_path_selected(),
            coalesce=True,
        ) as db:
            tasks = [asyncio.create_task(db.get(User, org="o", name=u.name)) for u in stored]
            await asyncio.sleep(0)  # one loop turn: every get has joined the pending batch
        # The block has exited (the connection is closed): the batch went out before.
        assert await asyncio.gather(*tasks) == stored
        # A get after the block raises at once, as without coalescing.
        with pytest.raises(DynormError, match="connection is closed"):
            await db.get(User, org="o", name=stored[0].name)


async def test_two_tables_share_one_batch_get_item(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with dynorm_connect(shop, audit) as direct:
        customers = [Customer(f"c{i}", f"name {i}") for i in range(3)]
        entries = [AuditEntry(order_id=f"o{i}", what="placed") for i in range(3)]
        await direct.put_all([*customers, *entries])
        async with connect(
            shop,
            audit,
            endpoint_url=dynorm_server.url,
            region_name=TEST_REGION,
            aws_access_key_id=TEST_ACCESS_KEY_ID,
            aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
            table_names={shop: direct.name_of(shop), audit: direct.name_of(audit)},
            fast_path=fast_path_selected(),
            coalesce=True,
        ) as db:
            with count_requests(db) as log:
                got = await asyncio.gather(
                    *(db.get(Customer, customer_id=c.customer_id) for c in customers),
                    *(db.get(AuditEntry, order_id=e.order_id, what="placed") for e in entries),
                )
            assert got == [*customers, *entries]
            (event,) = log.events
            assert event.operation == "BatchGetItem"
            assert set(event.tables) == {db.name_of(shop), db.name_of(audit)}


async def test_without_coalesce_each_get_is_a_get_item(faulty_connect: FaultyConnect) -> None:
    async with faulty_connect(users) as faulty:
        stored = people(5)
        await faulty.direct.put_all(stored)
        with count_requests(faulty.db) as log:
            got = await asyncio.gather(*(faulty.db.get(User, org="o", name=u.name) for u in stored))
        assert got == stored
        assert log.operations == ["GetItem"] * 5

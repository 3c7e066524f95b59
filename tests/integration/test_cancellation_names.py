"""A cancelled transaction names each failed action's model, table and key.

Two models called ``Order`` in two tables of one connection: DynamoDB answers by position only;
the message and ``reasons`` say which table and key each failed action wrote.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

import dynorm
from dynorm import Attr, Table
from dynorm.testing import Connect

pytestmark = [pytest.mark.integration, pytest.mark.transactions]

eu = Table("orders-eu", pk="pk", sk="sk")
us = Table("orders-us", pk="pk", sk="sk")


def order_model(table: Table) -> Any:
    @table.model(pk="ORDER#{order_id}", sk="ORDER#{order_id}")
    @attrs.define
    class Order:
        order_id: str
        total: int = 0

    return Order


EuOrder = order_model(eu)
UsOrder = order_model(us)
KEY = {"pk": {"S": "ORDER#1"}, "sk": {"S": "ORDER#1"}}


async def test_each_failed_action_is_named_by_model_table_and_key(dynorm_connect: Connect) -> None:
    async with dynorm_connect(eu, us) as db:
        await db.put(EuOrder("1", 10))
        await db.put(UsOrder("1", 20))

        async def write() -> None:
            async with db.transaction() as tx:
                tx.put(UsOrder("2"))  # 0: fine
                tx.put(EuOrder("1"), overwrite=False)  # 1: exists
                tx.check(UsOrder("1"), Attr("total") == 99)  # 2: does not hold

        with pytest.raises(dynorm.TransactionCanceledError) as caught:
            await write()

        error = caught.value
        assert [r.index for r in error.failed] == [1, 2]
        first, second = error.failed
        assert (first.model, first.table, first.key) == ("Order", db.name_of(eu), KEY)
        assert (second.model, second.table, second.key) == ("Order", db.name_of(us), KEY)
        assert first.code == second.code == "ConditionalCheckFailed"
        assert error.reasons[0].code == "None"
        assert error.reasons[0].table == db.name_of(us)  # every action named, failed or not
        message = str(error)
        assert (
            f"action 1 (Order in table {db.name_of(eu)!r}, pk='ORDER#1', sk='ORDER#1')" in message
        )
        assert (
            f"action 2 (Order in table {db.name_of(us)!r}, pk='ORDER#1', sk='ORDER#1')" in message
        )
        assert await db.get_many(UsOrder, [{"order_id": "2"}]) == [None]  # nothing written

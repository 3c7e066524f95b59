"""A cascade on a table with a type attribute: its conditions are ones DynamoDB accepts.

A shelf and its books have key templates that cannot tell them apart (``{shelf}``, ``{title}``),
so every write checks the stored entity. The root's DeleteItem is conditioned on the item's
entity and on the cascade's mark; joined once too often, the two made
``((entity = :v OR attribute_not_exists(entity))) AND (...)``, which DynamoDB (and moto)
refuse: "The expression has redundant parentheses".
"""

from __future__ import annotations

import pytest

from dynorm import HasMany, Partition, Table
from dynorm.testing import Connect

from .raw import stored

pytestmark = pytest.mark.integration

typed = Table("cascade-typed", pk="pk", sk="sk", type_attribute="entity")


@typed.model(pk="SHELF#{shelf}", sk="{title}", entity="book")
class Book:
    shelf: str
    title: str


@typed.model(pk="SHELF#{shelf}", sk="{shelf}", entity="shelf")
class Shelf:
    shelf: str
    books = HasMany[Book](Book, via=Partition())


async def test_a_cascade_on_a_typed_table_deletes_the_tree(dynorm_connect: Connect) -> None:
    async with dynorm_connect(typed) as db:
        await db.put_all([Shelf("a"), Shelf("b"), Book("a", "x"), Book("a", "y"), Book("b", "z")])
        (condition,) = [
            r.params["ConditionExpression"]
            for r in db.explain.delete(Shelf("a"), cascade=True)
            if r.operation == "DeleteItem"
        ]
        assert "((" not in condition

        report = await db.delete(Shelf("a"), cascade=True)

        assert dict(report.deleted) == {Shelf: 1, Book: 2}
        assert [(i["pk"], i["sk"]) for i in await stored(db)] == [
            ("SHELF#b", "b"),
            ("SHELF#b", "z"),
        ]

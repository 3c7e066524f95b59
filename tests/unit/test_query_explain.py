"""``db.explain.query(...)`` shows exactly what ``db.query(...)`` sends; bad chains are refused.

Nothing is sent: the Database points at a closed port.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    Attr,
    Database,
    ExpressionError,
    HasMany,
    Partition,
    Table,
    connect,
    gt,
    lt,
)

table = Table(
    "explained",
    pk="PK",
    sk="SK",
    type_attribute="ET",
    indexes=[GSI("KEYS", pk="K1PK", sk="K1SK", projection="KEYS_ONLY")],
)


@table.model(pk="C#{cid}", sk="O#{oid}", entity="order", KEYS=("S#{status}", "O#{oid}"))
@attrs.define
class Order:
    cid: str
    oid: str
    status: str = "new"
    note: str = ""
    lines = HasMany["Line"]("Line", via=Partition())


@table.model(pk="C#{cid}", sk="{x}", entity="other")
@attrs.define
class Other:
    """Its sort key may be anything: it overlaps every other model's range in the partition."""

    cid: str
    x: str


@table.model(pk="C#{cid}", sk="O#{oid}#L#{n}", entity="line")
@attrs.define
class Line:
    cid: str
    oid: str
    n: str


@attrs.define
class Status:
    oid: str
    status: str


@pytest.fixture
async def db() -> AsyncIterator[Database]:
    async with connect(
        table,
        endpoint_url="http://127.0.0.1:1",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    ) as database:
        yield database


CASES: list[tuple[str, dict[str, Any]]] = [
    ("plain", {"cid": "1"}),
    ("gt", {"cid": "1", "oid": gt("5")}),
    ("lt", {"cid": "1", "oid": lt("5")}),
    ("index", {"index": "KEYS", "status": "new"}),
    ("load", {"cid": "1", "load": [Order.lines]}),
    ("load gt", {"cid": "1", "oid": gt("5"), "load": [Order.lines]}),
]


@pytest.mark.parametrize(("name", "call"), CASES, ids=[c[0] for c in CASES])
async def test_explain_query_is_what_the_query_sends(
    db: Database, name: str, call: dict[str, Any]
) -> None:
    assert db.explain.query(Order, **call) == db.query(Order, **call).explain()


async def test_overlapping_templates_filter_on_the_type_attribute(db: Database) -> None:
    params = db.explain.query(Order, cid="1")[0].params
    assert params["FilterExpression"] == "#n0 = :v0 OR attribute_not_exists(#n0)"
    assert params["ExpressionAttributeNames"]["#n0"] == "ET"


async def test_a_partial_index_shows_the_whole_item_read(db: Database) -> None:
    query = db.query(Order, index="KEYS", status="new")
    assert [r.operation for r in query.requests()] == ["Query", "BatchGetItem"]
    # Status is held by the index's keys: its view needs no second read.
    assert [r.operation for r in query.project(Status).requests()] == ["Query"]


async def test_a_filter_on_shared_loads_is_refused(db: Database) -> None:
    query = db.query(Order, cid="1", load=[Order.lines])
    with pytest.raises(ExpressionError, match=r"db\.load"):
        query.filter(Attr("note") == "x")
    with pytest.raises(ExpressionError, match="load="):
        query.project(Status)
    # Without children in the same Query, a filter drops parents only: allowed.
    reverse = db.query(Order, cid="1", load=[Order.lines]).reverse()
    assert "FilterExpression" in reverse.filter(Attr("note") == "x").explain()[0].params


def test_start_keys_and_projected_attributes_of_an_index() -> None:
    assert table.start_key_attributes(None) == ("PK", "SK")
    assert table.start_key_attributes("KEYS") == ("PK", "SK", "K1PK", "K1SK")
    assert table.projected_attributes("KEYS") == frozenset({"PK", "SK", "K1PK", "K1SK"})
    assert Table("t", pk="PK", indexes=[GSI("GSI", pk="G")]).projected_attributes("GSI") is None

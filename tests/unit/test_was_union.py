"""A relationship with ``was=`` read from both layouts: the pure parts, and the order of the reads.

No server: the old layout's location (``OldPartition.keys``, ``union_read``), the merge of one
window (``merge_window``: each child once, the new copy kept, nothing past the nearest horizon),
children that become embedded (``embedded_union``), the union cursor, the plans and costs that
``db.explain`` and ``dynorm design`` show, and ``read_union_page`` against a fake reader of
hand-made pages, which records that the old layout's read of a range is answered before the new
layout's read of that range is sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, cast

import attrs
import pytest

from dynorm import GSI, Embedded, HasMany, Index, Partition, Table
from dynorm.core.codec.converter import Item
from dynorm.core.cursor import CursorCodec, scope_fingerprint
from dynorm.core.errors import CursorError, DefinitionError
from dynorm.core.keys import KeyTemplate
from dynorm.core.requests import CollectionRead, Request
from dynorm.design import design
from dynorm.io.reader import Reader
from dynorm.io.union import iterate_union, read_union_page
from dynorm.mapping.oldlayout import OldPartition
from dynorm.mapping.readplan import normalize_options, plan_get
from dynorm.mapping.state import InstanceState
from dynorm.mapping.strategies import Strategy
from dynorm.mapping.union import (
    CHILD,
    Entry,
    Side,
    UnionPosition,
    embedded_union,
    merge_window,
    union_read,
)

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]
KID_KEYS: dict[str, dict[str, Any]] = {
    "partition": {"pk": "P#{pid}", "sk": "KID#{name}"},
    "partition3": {"pk": "P#{pid}#{shard}", "sk": "KID#{name}"},
    "index": {"pk": "K#{pid}#{name}", "sk": "K#{pid}#{name}", "GSI1": ("P#{pid}", "KID#{name}")},
}
STRATEGIES: dict[str, Strategy] = {
    "partition": Partition(),
    "partition3": Partition(shards=3),
    "index": Index("GSI1"),
    "embedded": Embedded(key="name"),
}


def declare(via: str, was: str | None, kid: str | None = None) -> tuple[Table, Any, Any]:
    table = Table("t", pk="pk", sk="sk", indexes=INDEXES)
    old = None if was is None else STRATEGIES[was]

    @table.model(pk="P#{pid}", sk="#P#{pid}", GSI1=("P#{pid}", "#P#{pid}"))
    class Parent:
        pid: str
        kids = HasMany["Kid"](via=STRATEGIES[via], was=old)

    @table.model(**KID_KEYS[kid or via])
    class Kid:
        pid: str
        name: str
        qty: int = 0

    table.check()
    return table, Parent, Kid


def entry(name: str, obj: object = None) -> Entry:
    sort = {"S": f"KID#{name}"}
    return Entry((sort["S"], CHILD, (name,)), sort, obj if obj is not None else name)


# -- where the old layout is ----------------------------------------------------------------------


def test_old_partition_keys_follow_the_old_shard_count() -> None:
    sharded = KeyTemplate("P#{pid}#{shard}")
    plain = KeyTemplate("P#{pid}")
    assert OldPartition(sharded, 1).keys({"pid": "a"}) == ["P#a"]
    assert OldPartition(plain, 3).keys({"pid": "a"}) == ["P#a#0", "P#a#1", "P#a#2"]
    assert OldPartition(sharded, 2).keys({"pid": "a"}) == ["P#a#0", "P#a#1"]


def test_partition_to_index_reads_the_table_partition_then_the_index() -> None:
    _, parent, _ = declare("index", "partition")
    union = union_read(parent.kids, "t", {"pid": "a"})
    (old,) = union.old_reads
    (new,) = union.new_reads
    assert (old.index, old.pk_attr, old.pk_value, old.parse) == (None, "pk", "P#a", None)
    assert (new.index, new.pk_attr, new.pk_value) == ("GSI1", "GSI1PK", "P#a")
    assert not new.consistent  # an index has no strong reads
    assert [r.operation for r in union.reads()] == ["Query", "Query"]
    assert union.reads()[0].params.get("IndexName") is None


def test_the_new_layout_on_the_table_is_read_consistently() -> None:
    _, parent, _ = declare("partition3", "partition")
    union = union_read(parent.kids, "t", {"pid": "a"})
    assert [r.pk_value for r in union.old_reads] == ["P#a"]
    assert [r.pk_value for r in union.new_reads] == ["P#a#0", "P#a#1", "P#a#2"]
    assert all(r.consistent for r in union.new_reads)
    back = union_read(declare("partition", "partition3", "partition")[1].kids, "t", {"pid": "a"})
    assert [r.pk_value for r in back.old_reads] == ["P#a#0", "P#a#1", "P#a#2"]


def test_old_embedded_children_are_read_from_the_parent_attribute() -> None:
    _, parent, _ = declare("partition", "embedded")
    union = union_read(parent.kids, "t", {"pid": "a"})
    assert union.old_reads == ()
    assert union.old_get is not None
    assert union.old_get.params["ProjectionExpression"] == "#a"
    assert union.old_get.params["ExpressionAttributeNames"] == {"#a": "kids"}
    assert [r.operation for r in union.reads()] == ["GetItem", "Query"]


# -- one window ----------------------------------------------------------------------------------


def test_a_window_returns_each_child_once_and_the_new_copy_wins() -> None:
    old = Side([entry("a", "old-a"), entry("c", "old-c")], None)
    new = Side([entry("a", "new-a"), entry("b", "new-b")], None)
    found, _, more = merge_window(new, old, None, forward=True)
    assert (found, more) == (["new-a", "new-b", "old-c"], False)


def test_a_window_stops_at_the_nearest_horizon() -> None:
    # The old layout has more after "b": nothing of the new layout past "b" is certain yet.
    old = Side([entry("a"), entry("b")], entry("b"))
    new = Side([entry("c"), entry("d")], None)
    found, end, more = merge_window(new, old, None, forward=True)
    assert (found, more) == (["a", "b"], True)
    assert end == UnionPosition({"S": "KID#b"}, ("b",))


def test_an_empty_window_ends_at_the_horizon() -> None:
    old = Side([], entry("m"))
    new = Side([entry("z")], None)
    assert merge_window(new, old, None, forward=True) == (
        [],
        UnionPosition({"S": "KID#m"}, ("m",)),
        True,
    )


def test_a_limit_cuts_the_window_and_backwards_reads_keep_their_order() -> None:
    old = Side([entry("c"), entry("a")], None)
    new = Side([entry("b")], None)
    assert merge_window(new, old, 2, forward=False)[0] == ["c", "b"]
    assert merge_window(new, old, 2, forward=False)[2] is True


@attrs.frozen
class Line:
    name: str
    qty: int = 0


def test_children_becoming_embedded_keep_the_parents_copy() -> None:
    _, parent, _ = declare("embedded", "partition", "partition")
    codec = parent.kids.embedded
    new = [Line("b", 2), Line("a", 9)]
    old = [Line("a", 0), Line("c", 1)]
    merged = embedded_union(codec, new, old)
    assert merged == [Line("a", 9), Line("b", 2), Line("c", 1)]


# -- the cursor -----------------------------------------------------------------------------------


def test_a_union_cursor_round_trips_and_is_bound_to_its_scope() -> None:
    codec = CursorCodec(b"secret" * 6)
    scope = scope_fingerprint("union", "Parent.kids", "a")
    cursor = codec.encode_union({"S": "KID#b"}, ("a", "b"), scope)
    assert codec.decode_union(cursor, scope) == ({"S": "KID#b"}, ("a", "b"))
    with pytest.raises(CursorError, match="different query"):
        codec.decode_union(cursor, scope_fingerprint("union", "Parent.kids", "b"))
    plain = codec.encode_offset(3, scope)
    with pytest.raises(CursorError, match="read from two"):
        codec.decode_union(plain, scope)


# -- plans, explain, design ----------------------------------------------------------------------


def test_a_load_plans_the_old_layout_first_and_the_new_after_it() -> None:
    table, parent, _ = declare("index", "partition")
    info = table.info(parent)
    plan = plan_get(info, {"pid": "a"}, normalize_options(info, [parent.kids]), "t")
    assert [r.operation for r in plan.requests] == ["GetItem", "Query"]
    assert plan.requests[1].params.get("IndexName") is None  # the old layout: the table
    assert [r.params.get("IndexName") for r in plan.then] == ["GSI1"]
    cost = plan.costs()["Parent.kids"]
    assert cost.startswith("1 Query on the table (the old layout, was=Partition()), then ")
    assert "1 Query on GSI1 once it is answered" in cost
    assert not plan.single


def test_a_load_without_was_plans_what_it_did() -> None:
    table, parent, _ = declare("index", None)
    info = table.info(parent)
    plan = plan_get(info, {"pid": "a"}, normalize_options(info, [parent.kids]), "t")
    assert plan.then == []
    assert plan.unions == ()


def test_design_shows_both_layouts_in_order() -> None:
    table, _, _ = declare("partition3", "partition")
    found = {p.name: p for p in design(table).patterns}["Parent.kids"]
    assert "was=Partition()" in found.strategy
    assert found.cost.endswith(", then 3 Queries on the table in parallel"), found.cost
    assert len(found.requests) == 5  # the parent's GetItem, the old Query, 3 new ones


# -- the order of the reads ----------------------------------------------------------------------


class FakeReader:
    """Answers collection reads from hand-made items, two items a page; logs every step."""

    def __init__(self, items: list[Item], page: int = 2) -> None:
        self.items = items
        self.page = page
        self.log: list[str] = []
        self.cursors = CursorCodec()

    def name_of(self, table: object) -> str:
        return "t"

    def acceptor(self, info: Any, index: str | None) -> Callable[[Item], Any]:
        tests = info.tests(index)
        return lambda raw: info.decode(raw) if tests.in_collection(raw) else None

    def adopt(self, info: Any, obj: object, item: Item) -> InstanceState:
        return InstanceState()

    async def send(self, request: Request) -> dict[str, Any]:
        raise AssertionError(request)

    def _matching(self, read: CollectionRead) -> list[Item]:
        def fits(raw: Item) -> bool:
            pk = raw.get(read.pk_attr)
            sk = raw.get(read.sk_attr or "")
            if pk is None or pk["S"] != read.pk_value or sk is None:
                return False
            return read.range is None or read.range.contains(sk["S"])

        key = read.sk_attr or ""
        found = sorted(filter(fits, self.items), key=lambda raw: raw[key]["S"])
        return found if read.forward else found[::-1]

    async def read_page(
        self,
        read: CollectionRead,
        accept: Callable[[Item], Any],
        *,
        limit: int | None,
        start: Item | None,
        **_: Any,
    ) -> tuple[list[Any], Item | None]:
        name = "new" if read.index == "GSI1" else "old"
        self.log.append(f"send {name}")
        found = self._matching(read)
        if start is not None:
            at = next(i for i, raw in enumerate(found) if read.key_of(raw) == start)
            found = found[at + 1 :]
        page, rest = found[: self.page], found[self.page :]
        self.log.append(f"answer {name}")
        accepted: list[Any] = []
        for i, raw in enumerate(page):
            obj = accept(raw)
            if obj is None:
                continue
            accepted.append(obj)
            if limit is not None and len(accepted) == limit and (rest or page[i + 1 :]):
                return accepted, read.key_of(raw)  # full, and more may follow
        return accepted, (read.key_of(page[-1]) if rest and page else None)

    def iterate(self, read: CollectionRead, accept: Any) -> AsyncIterator[Any]:
        raise AssertionError(read)


def as_reader(fake: FakeReader) -> Reader:
    """The fake as the Reader it stands for (it answers only what union reads ask)."""
    return cast("Reader", fake)


def old_item(name: str, qty: int = 0) -> Item:
    return {
        "pk": {"S": "P#a"},
        "sk": {"S": f"KID#{name}"},
        "pid": {"S": "a"},
        "name": {"S": name},
        "qty": {"N": str(qty)},
    }


def new_item(name: str, qty: int = 0) -> Item:
    return {
        "pk": {"S": f"K#a#{name}"},
        "sk": {"S": f"K#a#{name}"},
        "GSI1PK": {"S": "P#a"},
        "GSI1SK": {"S": f"KID#{name}"},
        "pid": {"S": "a"},
        "name": {"S": name},
        "qty": {"N": str(qty)},
    }


async def test_every_window_reads_the_old_layout_before_sending_the_new_read() -> None:
    _, parent, _ = declare("index", "partition")
    union = union_read(parent.kids, "t", {"pid": "a"})
    old = [old_item(n) for n in ("b", "d", "f", "g", "h")]
    new = [new_item("a", 1), new_item("d", 9), new_item("e", 1)]
    reader = FakeReader([*old, *new])
    seen: list[tuple[str, int]] = []
    after = None
    windows = 0
    while True:
        found, after, more = await read_union_page(
            as_reader(reader), union, limit=None, after=after
        )
        seen += [(k.name, k.qty) for k in found]
        windows += 1
        if not more:
            break
    assert seen == [("a", 1), ("b", 0), ("d", 9), ("e", 1), ("f", 0), ("g", 0), ("h", 0)]
    # Each window: the old read is answered before the new one is sent.
    assert reader.log == ["send old", "answer old", "send new", "answer new"] * windows
    # Pages of two items bound the windows: a window restarts at the last child returned, which
    # its pages read again (and drop), and the index's part ends before its page's last sort key
    # (which may repeat): five windows here, where 1 MB pages would take one.
    assert windows == 5


async def test_a_limited_page_reads_windows_until_it_is_full() -> None:
    _, parent, _ = declare("index", "partition")
    union = union_read(parent.kids, "t", {"pid": "a"})
    # Every old child is in the new layout too: windows give fewer children than read.
    both = ("a", "b", "c", "d")
    reader = FakeReader([*map(old_item, both), *(new_item(n, 5) for n in both)], page=10)
    found, end, more = await read_union_page(as_reader(reader), union, limit=3, after=None)
    assert [(k.name, k.qty) for k in found] == [("a", 5), ("b", 5), ("c", 5)]
    assert more
    assert end == UnionPosition({"S": "KID#c"}, ("a", "c"))
    rest, _, more = await read_union_page(as_reader(reader), union, limit=3, after=end)
    assert [(k.name, k.qty) for k in rest] == [("d", 5)]
    assert not more


def test_a_union_cursor_is_refused_by_a_read_of_one_layout() -> None:
    _, parent, _ = declare("index", None)
    read = parent.kids.children_read("t", {"pid": "a"})
    codec = CursorCodec()
    cursor = codec.encode_union({"S": "KID#b"}, ("a", "b"), "scope")
    with pytest.raises(CursorError, match="was= was removed"):
        codec.decode(cursor, read)
    with pytest.raises(CursorError, match="was= was removed"):
        codec.decode_position(cursor, [read], "scope", "Parent.kids")


async def test_a_query_load_explains_both_layouts_for_each_parent() -> None:
    from dynorm import connect  # noqa: PLC0415 - this test only

    table, parent, _ = declare("index", "partition")
    async with connect(
        table,
        endpoint_url="http://127.0.0.1:1",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        table_name="t",
    ) as db:
        query = db.query(parent, pid="a", load=[parent.kids])
        _, old, new = query.explain()
        assert (old.operation, old.params.get("IndexName")) == ("Query", None)
        assert (new.operation, new.params.get("IndexName")) == ("Query", "GSI1")
        cost = query.load_costs()["Parent.kids"]
        assert "the old layout (was=Partition()), then the new one" in cost


def _tied() -> tuple[Any, Any]:
    table = Table("t", pk="pk", sk="sk", indexes=INDEXES)

    @table.model(pk="P#{pid}", sk="#P#{pid}", GSI1=("P#{pid}", "#P#{pid}"))
    class Day:
        pid: str
        kids = HasMany["Kid"](via=Index("GSI1"), was=Partition())

    @table.model(pk="K#{pid}#{name}", sk="K#{pid}#{name}", GSI1=("P#{pid}", "DAY#{day}"))
    class Kid:
        pid: str
        name: str
        day: str = ""

    table.check()
    return Day, Kid


async def test_an_index_page_ending_inside_equal_sort_keys_misses_nothing() -> None:
    day, _ = _tied()
    union = union_read(day.kids, "t", {"pid": "a"})

    def tied(name: str) -> Item:
        return {
            "pk": {"S": f"K#a#{name}"},
            "sk": {"S": f"K#a#{name}"},
            "GSI1PK": {"S": "P#a"},
            "GSI1SK": {"S": "DAY#1"},
            "pid": {"S": "a"},
            "name": {"S": name},
            "day": {"S": "1"},
        }

    # The server's order of equal sort keys is its own (here: as stored), not the identity's.
    reader = FakeReader([tied(n) for n in ("d", "a", "c", "b", "e")], page=2)
    seen: list[str] = []
    after = None
    for _ in range(20):
        found, after, more = await read_union_page(as_reader(reader), union, limit=2, after=after)
        seen += [k.name for k in found]
        if not more:
            break
    assert seen == ["a", "b", "c", "d", "e"]


async def test_once_the_old_layout_is_read_to_its_end_the_new_one_runs_free() -> None:
    _, parent, _ = declare("index", "partition")
    union = union_read(parent.kids, "t", {"pid": "a"})
    new = [new_item(n, 1) for n in ("a", "c", "d", "e", "f", "g")]
    reader = FakeReader([old_item("b"), *new], page=2)
    seen = [(k.name, k.qty) async for k in iterate_union(as_reader(reader), union)]
    assert seen == [("a", 1), ("b", 0), ("c", 1), ("d", 1), ("e", 1), ("f", 1), ("g", 1)]
    assert reader.log.count("send old") == 1
    assert reader.log[:3] == ["send old", "answer old", "send new"]


def _holder() -> None:
    table = Table("t2", pk="pk", sk="sk")

    @table.model(pk="P#{pid}", sk="#P#{pid}")
    class Holder:
        pid: str
        lines = HasMany[Line](Line, via=Embedded(key="name"), was=Embedded(attribute="old"))

    table.check()


def test_two_embedded_layouts_are_refused_when_declared() -> None:
    with pytest.raises(DefinitionError, match="both embed the children"):
        _holder()

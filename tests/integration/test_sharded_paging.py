"""Paging a sharded collection while it is written: a cursor means what an unsharded one means.

A page ends at the last child it returned, and the next page returns every child that sorts after
it, in order, each once, whichever shard it is in and whenever it was added. Between pages the
test adds a child just after the last one returned in every shard (so into shards an earlier page
read to their end, and between the last key returned and where a shard's earlier read stopped),
adds one behind it (never returned: the page has passed it) and removes one ahead of it (never
returned). The concatenated pages are checked against a raw scan of what is stored at the end.

Every combination of 2, 7 and 16 shards, string and number sort keys, ascending and
newest_first, ``Partition(shards=N)`` and ``Index("GSI1", shards=N)``. The index collections'
sort keys repeat (three children to a value), so equal sort keys meet in one shard and across
shards.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import attrs
import msgspec
import pytest

from dynorm import GSI, CursorError, Database, HasMany, Index, Partition, Table
from dynorm.core.requests import Request
from dynorm.mapping.model import info_of
from dynorm.testing import (
    Connect,
    count_requests,
)
from tests.faultproxy import FaultyConnect

from .raw import raw_scan

pytestmark = pytest.mark.integration

text_keys = Table("paging_s", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
number_keys = Table(
    "paging_n",
    pk="pk",
    sk="sk",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")],
    key_types={"sk": "N", "GSI1SK": "N"},
)
TABLES = {"S": text_keys, "N": number_keys}


class Case(msgspec.Struct, frozen=True):
    """One combination: its parent and child models and how a child sorts."""

    kind: str  # the sort key's type, S or N
    index: bool  # Index("GSI1", shards=N), else Partition(shards=N)
    shards: int
    parent: Any
    child: Any

    @property
    def name(self) -> str:
        via = "Index" if self.index else "Partition"
        return f"{via}-{self.shards}-{self.kind}"


def _model(name: str, fields: dict[str, Any], extra: dict[str, Any] | None = None) -> type[Any]:
    namespace: dict[str, Any] = {"__module__": __name__, "__annotations__": {}}
    for field, (tp, default) in fields.items():
        namespace["__annotations__"][field] = tp
        if default is not attrs.NOTHING:
            namespace[field] = default
    namespace.update(extra or {})
    return attrs.define(type(name, (), namespace))


def _declare(kind: str, index: bool, shards: int) -> Case:
    tag = f"{'I' if index else 'P'}{kind}{shards}"
    table = TABLES[kind]
    child = f"Child{tag}"
    via: Partition | Index = Index("GSI1", shards=shards) if index else Partition(shards=shards)
    relationships: dict[str, Any] = {
        "children": HasMany(child, via=via),
        "newest": HasMany(child, via=via, newest_first=True),
    }
    parent_sk = "{version}" if kind == "N" else f"{tag}#{{pid}}"
    parent = table.model(pk=f"{tag}#{{pid}}", sk=parent_sk)(
        _model(
            f"Parent{tag}",
            {"pid": (str, attrs.NOTHING), "version": (int, 0)},
            relationships,
        )
    )
    sort = "{v}" if kind == "N" else "V#{v:06d}"
    fields = {
        "pid": (str, attrs.NOTHING),
        "v": (int, attrs.NOTHING),
        "name": (str, ""),
        "version": (int, 0),
    }
    if index:
        own_sk = "{version}" if kind == "N" else f"C{tag}#{{name}}"
        model = table.model(
            pk=f"C{tag}#{{name}}", sk=own_sk, GSI1=(f"{tag}#{{pid}}#{{shard}}", sort)
        )(_model(child, fields))
    else:
        model = table.model(pk=f"{tag}#{{pid}}#{{shard}}", sk=sort)(_model(child, fields))
    return Case(kind, index, shards, parent, model)


CASES = [
    _declare(kind, index, shards)
    for kind in ("S", "N")
    for index in (False, True)
    for shards in (2, 7, 16)
]


@pytest.fixture
async def dbs(dynorm_connect: Connect) -> AsyncIterator[dict[str, Database]]:
    async with dynorm_connect(text_keys) as text, dynorm_connect(number_keys) as number:
        yield {"S": text, "N": number}


#: Seeded children sort at multiples of this, so others fit between them.
GAP = 1000
SEEDED = 24


class Writer:
    """Writes one parent's children and knows each one's shard; names stay unique."""

    def __init__(self, db: Database, case: Case) -> None:
        self.db = db
        self.case = case
        self.info = info_of(case.child)
        self.used: set[tuple[int, str]] = set()
        self.count = 0

    def make(self, v: int) -> Any:
        self.count += 1
        # Index children: an own key apart from the sort value, which repeats.
        return self.case.child(pid="p1", v=v, name=f"n{self.count:05d}")

    def shard(self, child: Any) -> int:
        attr = "GSI1PK" if self.case.index else "pk"
        return self.info.shard_of(attr, self.info.values_of(child))

    async def add_in(self, shard: int, values: range) -> Any:
        """Add a child in ``shard`` whose sort value is the first free one of ``values``."""
        child = self.new_in(shard, values)
        await self.db.put(child)
        return child

    def new_in(self, shard: int, values: range) -> Any:
        """A child to write in ``shard``, its sort value the first free one of ``values``."""
        for v in values:
            for _ in range(8 if self.case.index else 1):
                child = self.make(v)
                if (v, child.name) in self.used or (not self.case.index and v in self.taken()):
                    continue
                if self.shard(child) == shard:
                    self.used.add((v, child.name))
                    return child
        msg = f"no free sort value in {values} for shard {shard}"
        raise AssertionError(msg)

    def taken(self) -> set[int]:
        return {v for v, _ in self.used}


def identity(child: Any) -> tuple[int, str]:
    return (child.v, child.name)


async def stored(db: Database, case: Case) -> list[tuple[int, str]]:
    """The parent's children as a raw scan finds them: (sort value, name), sorted."""
    found = []
    for item in await raw_scan(db):
        if item.get("pid") != {"S": "p1"} or "v" not in item:
            continue
        if item["pk"]["S"].startswith(("C" if case.index else "") + _tag(case) + "#"):
            found.append((int(item["v"]["N"]), item["name"]["S"]))
    return sorted(found)


def _tag(case: Case) -> str:
    return f"{'I' if case.index else 'P'}{case.kind}{case.shards}"


async def _seed(writer: Writer) -> None:
    case = writer.case
    children = []
    for i in range(SEEDED):
        # Index sort keys repeat: three children to a value.
        v = (i // 3 if case.index else i) * GAP + GAP
        child = writer.make(v)
        writer.used.add((v, child.name))
        children.append(child)
    await writer.db.put_all([case.parent(pid="p1"), *children])


async def _page_while_writing(
    writer: Writer, *, newest_first: bool, limit: int, others: bool = False
) -> tuple[list[Any], set[tuple[int, str]]]:
    """Every page of the collection, writing between pages; what came, and what must not."""
    case, db = writer.case, writer.db
    parent = await db.get(case.parent, **_parent_key(case))
    loader = parent.newest if newest_first else parent.children
    seen: list[Any] = []
    behind: set[tuple[int, str]] = set()
    cursor: str | None = None
    pages = 0
    while True:
        with count_requests(db) as log:
            page = await loader.page(limit=limit, cursor=cursor)
        # One Query per shard, sent together. Children of an index collection with equal sort
        # keys across the page end are read again by the earlier shards and dropped, which may
        # take one of them a second request; so may items of no child model (``others``),
        # which a Query's Limit counts.
        # Requests, not attempts: on a loaded machine a connection to the test server may fail
        # and be retried, which is the transport's business (tested with the fault proxy).
        sent = [e.operation for e in log.events if e.attempt == 1]
        if case.index or others:
            assert set(sent) == {"Query"}
            assert len(sent) >= case.shards
        else:
            assert sent == ["Query"] * case.shards
        assert len(page.items) <= limit
        seen += page.items
        cursor = page.cursor
        pages += 1
        if cursor is None:
            return seen, behind
        if pages > 4:
            continue  # later pages read without writes: the rest must come whole
        last = page.items[-1].v
        step = -1 if newest_first else 1
        ahead = range(last + step, last + step * (GAP // 2), step)
        added = [writer.new_in(shard, ahead) for shard in range(case.shards)]
        back = range(last - step, last - step * GAP, -step)
        passed = writer.new_in(pages % case.shards, back)
        await db.put_all([*added, passed])
        behind.add(identity(passed))
        # The nearest seeded child ahead of the new ones (a shard may have read it already):
        # removed, so never returned.
        later = [k for k in writer.used if (k[0] - last) * step >= GAP // 2]
        v, name = min(later, key=lambda k: abs(k[0] - last))
        writer.used.discard((v, name))
        await db.delete(case.child(pid="p1", v=v, name=name))


def _check(
    case: Case, seen: list[Any], expected: list[tuple[int, str]], *, newest_first: bool
) -> None:
    got = [identity(c) for c in seen]
    assert len(got) == len(set(got)), "a child came twice"
    assert set(got) == set(expected)
    values = [v for v, _ in got]
    assert values == sorted(values, reverse=newest_first), "out of order"
    if not case.index:  # sort keys are unique: the order is the whole order
        assert got == sorted(expected, reverse=newest_first)


@pytest.mark.parametrize("newest_first", [False, True], ids=["ascending", "newest_first"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
async def test_pages_return_every_later_child_once_in_order_while_written(
    dbs: dict[str, Database], case: Case, newest_first: bool
) -> None:
    db = dbs[case.kind]
    writer = Writer(db, case)
    await _seed(writer)
    seen, behind = await _page_while_writing(writer, newest_first=newest_first, limit=6)
    expected = [k for k in await stored(db, case) if k not in behind]
    _check(case, seen, expected, newest_first=newest_first)
    assert not behind & {identity(c) for c in seen}


def _parent_key(case: Case) -> dict[str, Any]:
    return {"pid": "p1", **({"version": 0} if case.kind == "N" else {})}


@pytest.mark.parametrize("newest_first", [False, True], ids=["ascending", "newest_first"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
async def test_async_for_after_a_load_goes_on_from_the_last_child_loaded(
    dbs: dict[str, Database], case: Case, newest_first: bool
) -> None:
    db = dbs[case.kind]
    writer = Writer(db, case)
    await _seed(writer)
    rel = case.parent.newest if newest_first else case.parent.children
    with count_requests(db) as log:
        parent = await db.get(case.parent, **_parent_key(case), load=[rel.limit(5)])
    # One round trip: the parent's GetItem and one Query per shard.
    assert sorted(log.operations) == ["GetItem"] + ["Query"] * case.shards
    loader = parent.newest if newest_first else parent.children
    loaded = loader.loaded
    assert len(loaded) == 5
    last = loaded[-1].v
    step = -1 if newest_first else 1
    added = [await writer.add_in(s, range(last + step, last + step * GAP, step)) for s in range(2)]
    rest = [child async for child in loader]
    expected = await stored(db, case)
    _check(case, rest, expected, newest_first=newest_first)
    assert {identity(c) for c in added} <= {identity(c) for c in rest[5:]}


@pytest.mark.parametrize("case", [c for c in CASES if c.shards == 7], ids=lambda c: c.name)
async def test_pages_without_a_limit_return_every_later_child_once(
    dbs: dict[str, Database], case: Case
) -> None:
    db = dbs[case.kind]
    writer = Writer(db, case)
    await _seed(writer)
    parent = await db.get(case.parent, **_parent_key(case))
    page = await parent.children.page()
    seen = list(page.items)
    while page.cursor is not None:
        if seen:
            last = seen[-1].v
            await writer.add_in(seen[-1].v % case.shards, range(last + 1, last + GAP))
        page = await parent.children.page(cursor=page.cursor)
        seen += page.items
    _check(case, seen, await stored(db, case), newest_first=False)


async def test_a_page_from_a_cursor_sends_every_shard_at_once(
    faulty_connect: FaultyConnect,
) -> None:
    """One round trip: every shard's Query of a page after a cursor is held at once."""
    case = next(c for c in CASES if c.name == "Partition-7-S")
    async with faulty_connect(text_keys) as faulty:
        writer = Writer(faulty.direct, case)
        await _seed(writer)
        parent = await faulty.db.get(case.parent, pid="p1")
        first = await parent.children.page(limit=3)
        proxy = faulty.proxy
        held = [proxy.pause("Query", when=_queries_shard(case, s)) for s in range(case.shards)]
        page = asyncio.ensure_future(parent.children.page(limit=3, cursor=first.cursor))
        try:
            await asyncio.wait_for(asyncio.gather(*(h.arrived.wait() for h in held)), timeout=30)
        finally:
            for h in held:
                h.release()
        second = await page
    assert [c.v for c in first.items + second.items] == [GAP * (i + 1) for i in range(6)]


def _queries_shard(case: Case, shard: int) -> Callable[[dict[str, Any]], bool]:
    def test(body: dict[str, Any]) -> bool:
        value = body.get("ExpressionAttributeValues", {}).get(":pk", {}).get("S")
        return bool(value == f"{_tag(case)}#p1#{shard}")

    return test


# -- a cursor made before the shard count changed --------------------------------------------


def _feed(shards: int) -> tuple[Table, type[Any], type[Any]]:
    """The same collection declared over ``shards`` shards (as after a redeploy)."""
    table = Table(f"recount{shards}", pk="pk", sk="sk")
    entry = table.model(pk="FEED#{fid}#{shard}", sk="E#{eid}")(
        _model("Entry", {"fid": (str, attrs.NOTHING), "eid": (str, attrs.NOTHING)})
    )
    feed = table.model(pk="FEED#{fid}", sk="FEED#{fid}")(
        _model(
            "Feed",
            {"fid": (str, attrs.NOTHING)},
            {"entries": HasMany("Entry", via=Partition(shards=shards))},
        )
    )
    return table, feed, entry


async def test_a_cursor_after_a_shard_count_change_says_so(dynorm_connect: Connect) -> None:
    before, feed_before, entry_before = _feed(8)
    after, feed_after, _ = _feed(16)
    async with dynorm_connect(before) as old, dynorm_connect(after) as new:
        await old.put_all(
            [feed_before(fid="f1"), *(entry_before(fid="f1", eid=f"e{i}") for i in range(6))]
        )
        await new.put(feed_after(fid="f1"))
        parent = await old.get(feed_before, fid="f1")
        cursor = (await parent.entries.page(limit=2)).cursor
        assert cursor is not None
        moved = await new.get(feed_after, fid="f1")
        changed = pytest.raises(CursorError, match=r"changed from 8 to 16.*cursor=None")
        with count_requests(new) as log, changed:
            await moved.entries.page(limit=2, cursor=cursor)
        assert len(log) == 0


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.shards == 7 and c.kind == "S"], ids=lambda c: c.name
)
async def test_items_of_no_child_model_in_the_range_are_passed_over(
    dbs: dict[str, Database], case: Case
) -> None:
    """Items another service wrote among the children (sort keys in their range) never come,
    never end a page, and hide no child, whichever shard they sit in."""
    db = dbs["S"]
    writer = Writer(db, case)
    await _seed(writer)
    for shard in range(case.shards):
        for v in range(GAP + 1, SEEDED * GAP, 3 * GAP + 7):
            sort = f"V#{v:06d}#note"  # between the children's sort keys, no child's form
            keys = (
                {"pk": {"S": f"NOTE{shard}-{v}"}, "sk": {"S": "x"}, "GSI1SK": {"S": sort}}
                if case.index
                else {"sk": {"S": sort}}
            )
            partition = {"GSI1PK" if case.index else "pk": {"S": f"{_tag(case)}#p1#{shard}"}}
            item = {**keys, **partition, "note": {"S": "not a child"}}
            await db.send(Request("PutItem", {"TableName": db.table_name, "Item": item}))
    seen, behind = await _page_while_writing(writer, newest_first=False, limit=3, others=True)
    expected = [k for k in await stored(db, case) if k not in behind]
    _check(case, seen, expected, newest_first=False)

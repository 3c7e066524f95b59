"""``Partition()``: children share the parent's partition (seeds 000 and 004).

Loading a parent with its children is one Query on the table; ``db.add``/``db.remove`` are one
write each; several relationships in one collection share one Query.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
import pytest

from dynorm import (
    GSI,
    CursorError,
    Database,
    DetachedError,
    HasMany,
    Index,
    ItemNotFoundError,
    KeyTemplateError,
    NotLoadedError,
    Partition,
    Table,
)
from dynorm.testing import Connect, count_requests

from .raw import raw_collection, raw_item, strings

pytestmark = pytest.mark.integration

table = Table("rel-partition", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@table.model(pk="ORG#{name}", sk="METADATA#{name}", GSI1=("ORG#{name}", "ORG#{name}"))
@attrs.define
class Org:
    name: str
    plan_type: str = "Free"
    users = HasMany["Member"]("Member", via=Partition())
    teams = HasMany["Team"]("Team", via=Partition())
    ranked = HasMany["Member"]("Member", via=Index("GSI1"))


@table.model(
    pk="ORG#{org_name}",
    sk="USER#{username}",
    # A sparse index: only ranked members are in it, ordered by rank.
    GSI1=("ORG#{org_name}", "RANKED#{rank:03d}#{username}"),
)
@attrs.define
class Member:
    org_name: str
    username: str
    rank: int | None = None


@table.model(pk="ORG#{org_name}", sk="TEAM#{team}")
@attrs.define
class Team:
    org_name: str
    team: str


@table.model(pk="ORG#{org_name}", sk="PROJECT#{project}")
@attrs.define
class Project:
    """Sorts between the org item and its teams: a shared Query reads and drops it."""

    org_name: str
    project: str


# A collection whose child sort keys start with a field: the children's read spans the whole
# partition, where the board item and stickers sit between the cards.
@table.model(pk="BOARD#{board_id}", sk="#BOARD#{board_id}")
@attrs.define
class Board:
    board_id: str
    cards = HasMany["Card"]("Card", via=Partition())


@table.model(pk="BOARD#{board_id}", sk="{lane:03d}#CARD#{card_id}")
@attrs.define
class Card:
    board_id: str
    lane: int
    card_id: str


@table.model(pk="BOARD#{board_id}", sk="{lane:03d}#STICKER#{sticker_id}")
@attrs.define
class Sticker:
    board_id: str
    lane: int
    sticker_id: str


ACME = Org(name="ACME", plan_type="Enterprise")
OTHER = Org(name="OTHER")
MEMBERS = [Member("ACME", f"U{i}") for i in range(5)]
TEAMS = [Team("ACME", "blue"), Team("ACME", "red")]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


@pytest.fixture
async def acme(db: Database) -> Database:
    """ACME with five members, two teams and a project; OTHER with one member."""
    await db.put_all(
        [ACME, OTHER, *MEMBERS, *TEAMS, Project("ACME", "apollo"), Member("OTHER", "X")]
    )
    return db


# -- loading --------------------------------------------------------------------------------------


async def test_parent_and_children_in_one_query(acme: Database) -> None:
    with count_requests(acme) as log:
        org = await acme.get(Org, name="ACME", load=[Org.users])
    assert log.operations == ["Query"]
    assert org == ACME
    assert org.users.loaded == MEMBERS
    # Only ACME's members: not OTHER's, and no teams or projects.
    assert all(type(m) is Member and m.org_name == "ACME" for m in org.users.loaded)


async def test_loaded_is_data_and_never_sends(acme: Database) -> None:
    org = await acme.get(Org, name="ACME", load=[Org.users])
    with count_requests(acme) as log:
        first = org.users.loaded
        second = org.users.loaded
    assert len(log) == 0
    assert first == second == MEMBERS


async def test_loaded_before_a_load_raises(acme: Database) -> None:
    with count_requests(acme) as log:
        org = await acme.get(Org, name="ACME")
    assert log.operations == ["GetItem"]
    with pytest.raises(NotLoadedError, match=r"Org\.users"):
        _ = org.users.loaded
    assert not org.users.is_loaded


async def test_async_for_yields_loaded_then_the_rest_each_once(acme: Database) -> None:
    org = await acme.get(Org, name="ACME", load=[Org.users.limit(2)])
    assert org.users.loaded == MEMBERS[:2]
    seen: list[Member] = []
    requests_before_each: list[int] = []
    with count_requests(acme) as log:
        async for member in org.users:
            requests_before_each.append(len(log))
            seen.append(member)
    assert seen == MEMBERS
    # The two loaded members come without a request; the rest need one Query.
    assert requests_before_each[:2] == [0, 0]
    assert log.operations == ["Query"]


async def test_async_for_without_a_load_reads_everything(acme: Database) -> None:
    org = await acme.get(Org, name="ACME")
    with count_requests(acme) as log:
        seen = [m async for m in org.users]
    assert seen == MEMBERS
    assert log.operations == ["Query"]


async def test_a_full_load_then_async_for_sends_nothing(acme: Database) -> None:
    org = await acme.get(Org, name="ACME", load=[Org.users])
    with count_requests(acme) as log:
        seen = await org.users.all()
    assert seen == MEMBERS
    assert len(log) == 0


async def test_limit_load_option_then_all_continues(db: Database) -> None:
    # The seed's layout: the org item, then its users (nothing sorts between them).
    await db.put_all([ACME, *MEMBERS])
    with count_requests(db) as log:
        org = await db.get(Org, name="ACME", load=[Org.users.limit(3)])
    assert log.operations == ["Query"]
    assert org == ACME
    assert org.users.loaded == MEMBERS[:3]
    with count_requests(db) as log:
        rest = await org.users.all()
    assert rest == MEMBERS
    assert log.operations == ["Query"]


async def test_limit_counts_children_when_other_types_sort_between(acme: Database) -> None:
    # The project and teams sort between the org item and its users: they are read, and
    # dropped, but never take a child's place.
    org = await acme.get(Org, name="ACME", load=[Org.users.limit(3)])
    assert org == ACME
    assert org.users.loaded == MEMBERS[:3]
    assert await org.users.all() == MEMBERS


async def test_limit_larger_than_the_collection_loads_everything(acme: Database) -> None:
    org = await acme.get(Org, name="ACME", load=[Org.users.limit(50)])
    assert org.users.loaded == MEMBERS
    with count_requests(acme) as log:
        assert await org.users.all() == MEMBERS
    assert len(log) == 0


async def test_page_counts_children_only(acme: Database) -> None:
    org = await acme.get(Org, name="ACME")
    pages: list[list[Member]] = []
    cursor: str | None = None
    with count_requests(acme) as log:
        while True:
            page = await org.users.page(limit=2, cursor=cursor)
            pages.append(page.items)
            cursor = page.cursor
            if cursor is None:
                break
    assert pages == [MEMBERS[0:2], MEMBERS[2:4], MEMBERS[4:5]]
    assert log.operations == ["Query"] * 3


async def test_a_cursor_of_one_parent_is_refused_by_another(acme: Database) -> None:
    await acme.put_all([Member("OTHER", f"Y{i}") for i in range(3)])
    acme_org = await acme.get(Org, name="ACME")
    other_org = await acme.get(Org, name="OTHER")
    page = await acme_org.users.page(limit=2)
    assert page.cursor is not None
    with count_requests(acme) as log, pytest.raises(CursorError):
        await other_org.users.page(limit=2, cursor=page.cursor)
    assert len(log) == 0


async def test_page_limit_counts_children_in_a_mixed_partition(db: Database) -> None:
    board = Board("b1")
    cards = [Card("b1", lane, f"c{lane}") for lane in range(7)]
    stickers = [Sticker("b1", lane, f"s{lane}") for lane in range(7)]
    await db.put_all([board, *cards, *stickers, Board("b2"), Card("b2", 0, "elsewhere")])
    stored = await raw_collection(db, "pk", "BOARD#b1")
    assert [strings(i, "sk")[0] for i in stored[:3]] == [
        "#BOARD#b1",
        "000#CARD#c0",
        "000#STICKER#s0",
    ]

    parent = await db.get(Board, board_id="b1")
    pages: list[list[Card]] = []
    cursor: str | None = None
    while True:
        page = await parent.cards.page(limit=3, cursor=cursor)
        pages.append(page.items)
        cursor = page.cursor
        if cursor is None:
            break
    # Three cards a page, never a sticker or the board in a card's place.
    assert pages == [cards[0:3], cards[3:6], cards[6:7]]

    with count_requests(db) as log:
        loaded = await db.get(Board, board_id="b1", load=[Board.cards.limit(2)])
    assert loaded == board
    assert loaded.cards.loaded == cards[:2]
    # Card sort keys start with a field, so the board's place among them is unknown: its
    # GetItem runs beside the Query, which reads two pages because stickers sit between cards.
    assert sorted(log.operations) == ["GetItem", "Query", "Query"]
    assert await loaded.cards.all() == cards


async def test_newest_first_is_not_the_default(acme: Database) -> None:
    org = await acme.get(Org, name="ACME", load=[Org.users.limit(1)])
    assert org.users.loaded == [MEMBERS[0]]


# -- several relationships in one collection -------------------------------------------------------


async def test_relationships_sharing_a_collection_cost_one_query(acme: Database) -> None:
    with count_requests(acme) as log:
        org = await acme.get(Org, name="ACME", load=[Org.users, Org.teams])
    assert log.operations == ["Query"]
    assert org == ACME
    assert org.users.loaded == MEMBERS
    assert org.teams.loaded == TEAMS
    explained = acme.explain.get(Org, name="ACME", load=[Org.users, Org.teams])
    assert [r.operation for r in explained] == ["Query"]


async def test_shared_query_then_each_relationship_iterates_alone(acme: Database) -> None:
    org = await acme.get(Org, name="ACME", load=[Org.users, Org.teams])
    with count_requests(acme) as log:
        assert await org.teams.all() == TEAMS
        assert await org.users.all() == MEMBERS
    assert len(log) == 0


async def test_a_limit_in_a_shared_query_then_each_continues(db: Database) -> None:
    await db.put_all([ACME, *MEMBERS, *TEAMS])
    with count_requests(db) as log:
        org = await db.get(Org, name="ACME", load=[Org.users.limit(2), Org.teams])
    assert log.operations == ["Query"]
    assert org.users.loaded == MEMBERS[:2]
    assert org.teams.loaded == TEAMS
    with count_requests(db) as log:
        assert await org.users.all() == MEMBERS
        assert await org.teams.all() == TEAMS
    assert log.operations == ["Query"]


async def test_an_object_built_in_code_is_detached_until_attached(acme: Database) -> None:
    org = Org(name="ACME")
    with pytest.raises(NotLoadedError):
        _ = org.users.loaded
    with pytest.raises(DetachedError, match="attach"):
        await org.users.all()
    with pytest.raises(DetachedError):
        await org.users.page(limit=1)
    acme.attach(org)
    with count_requests(acme) as log:
        assert await org.users.all() == MEMBERS
    assert log.operations == ["Query"]


async def test_a_missing_parent_is_not_found_even_with_children_stored(db: Database) -> None:
    await db.put_all(MEMBERS)  # the members, but no ACME item
    with count_requests(db) as log, pytest.raises(ItemNotFoundError, match="ACME"):
        await db.get(Org, name="ACME", load=[Org.users])
    assert log.operations == ["Query"]


async def test_relationships_in_different_collections_are_read_side_by_side(
    acme: Database,
) -> None:
    await acme.put(Member("ACME", "ranked", rank=1))
    with count_requests(acme) as log:
        org = await acme.get(Org, name="ACME", load=[Org.users, Org.ranked])
    # One Query on the table, one on GSI1; the org rides along in one of them.
    assert log.operations == ["Query", "Query"]
    assert org == ACME
    assert org.users.loaded == [*MEMBERS, Member("ACME", "ranked", rank=1)]  # "U…" < "r…"
    assert org.ranked.loaded == [Member("ACME", "ranked", rank=1)]


# -- per-call override ----------------------------------------------------------------------------


async def test_using_reads_the_relationship_through_an_index_for_one_call(db: Database) -> None:
    ranked = [Member("ACME", "zed", rank=1), Member("ACME", "amy", rank=2)]
    await db.put_all([ACME, *ranked, Member("ACME", "bob"), Member("ACME", "cat")])

    with count_requests(db) as log:
        org = await db.get(Org, name="ACME", load=[Org.users.using(Index("GSI1"))])
    # The sparse index holds only ranked members, in rank order: proof it was read.
    assert org.users.loaded == ranked
    assert log.operations == ["Query"]
    (request,) = db.explain.get(Org, name="ACME", load=[Org.users.using(Index("GSI1"))])
    assert request.params["IndexName"] == "GSI1"

    # The declaration itself is unchanged: the next load reads the partition again.
    again = await db.get(Org, name="ACME", load=[Org.users])
    assert [m.username for m in again.users.loaded] == ["amy", "bob", "cat", "zed"]


async def test_using_with_a_limit_then_iterating_continues_the_same_read(db: Database) -> None:
    # Rank order is the reverse of username order, so resuming the wrong read shows.
    ranked = [Member("ACME", name, rank=rank) for rank, name in enumerate("dcba", start=1)]
    await db.put_all([ACME, *ranked, Member("ACME", "unranked")])
    option = Org.users.using(Index("GSI1")).with_limit(2)
    org = await db.get(Org, name="ACME", load=[option])
    assert org.users.loaded == ranked[:2]
    with count_requests(db) as log:
        rest = await org.users.all()
    # The loaded two, then the rest of the same (index) read, each once.
    assert rest == ranked
    assert log.operations == ["Query"]


# -- writes ---------------------------------------------------------------------------------------


async def test_add_is_one_put(acme: Database) -> None:
    org = await acme.get(Org, name="ACME")
    new = Member("ACME", "SATYA", rank=7)
    with count_requests(acme) as log:
        stored = await acme.add(org, Org.users, new)
    assert log.operations == ["PutItem"]
    assert stored == new
    item = await raw_item(acme, {"pk": "ORG#ACME", "sk": "USER#SATYA"})
    assert item is not None
    assert strings(item, "GSI1PK", "GSI1SK") == ("ORG#ACME", "RANKED#007#SATYA")
    assert new in await org.users.all()


async def test_add_updates_loaded_children(acme: Database) -> None:
    org = await acme.get(Org, name="ACME", load=[Org.users])
    await acme.add(org, Org.users, Member("ACME", "U9"))
    assert org.users.loaded == [*MEMBERS, Member("ACME", "U9")]


async def test_add_refuses_a_child_of_another_parent_before_sending(acme: Database) -> None:
    org = await acme.get(Org, name="ACME", load=[Org.users])
    with count_requests(acme) as log, pytest.raises(KeyTemplateError, match=r"Org\.users"):
        await acme.add(org, Org.users, Member("OTHER", "intruder"))
    assert len(log) == 0
    assert await raw_item(acme, {"pk": "ORG#OTHER", "sk": "USER#intruder"}) is None
    assert org.users.loaded == MEMBERS


async def test_add_refuses_a_child_of_another_model(acme: Database) -> None:
    org = await acme.get(Org, name="ACME")
    with count_requests(acme) as log, pytest.raises(TypeError, match="Member"):
        await acme.add(org, Org.users, Team("ACME", "green"))  # type: ignore[misc]
    assert len(log) == 0


async def test_remove_is_one_delete(acme: Database) -> None:
    org = await acme.get(Org, name="ACME", load=[Org.users])
    with count_requests(acme) as log:
        await acme.remove(org, Org.users, MEMBERS[1])
    assert log.operations == ["DeleteItem"]
    assert await raw_item(acme, {"pk": "ORG#ACME", "sk": "USER#U1"}) is None
    assert org.users.loaded == [m for m in MEMBERS if m.username != "U1"]
    fresh = await acme.get(Org, name="ACME", load=[Org.users])
    assert fresh.users.loaded == [m for m in MEMBERS if m.username != "U1"]


async def test_remove_refuses_a_child_of_another_parent_before_sending(acme: Database) -> None:
    org = await acme.get(Org, name="ACME")
    with count_requests(acme) as log, pytest.raises(KeyTemplateError, match="another parent"):
        await acme.remove(org, Org.users, Member("OTHER", "X"))
    assert len(log) == 0
    assert await raw_item(acme, {"pk": "ORG#OTHER", "sk": "USER#X"}) is not None

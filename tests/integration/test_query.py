"""db.query: prefix queries on hierarchical sort keys, escaping, mixed collections, indexes."""

from __future__ import annotations

from typing import Any

import pytest

import dynorm
from dynorm import Database
from dynorm.testing import count_requests
from tests.seed_models import Org, Ticket, User

from .models import Game, Location, State, UserGameMapping
from .raw import raw_collection, strings
from .seed import BILLGATES, SATYANADELLA, TICKET_123

pytestmark = pytest.mark.integration


def loc(state: str, city: str, zip_code: str, country: str = "USA") -> Location:
    return Location(country=country, state=state, city=city, zip=zip_code)


SEATTLE_1 = loc("WA", "SEATTLE", "98101")
SEATTLE_2 = loc("WA", "SEATTLE", "98109")
SEATTLE_HEIGHTS = loc("WA", "SEATTLEHEIGHTS", "98188")
SPOKANE = loc("WA", "SPOKANE", "99201")
WAKE = loc("WAK", "WAKEFIELD", "00001")  # a state that starts like "WA"
PORTLAND = loc("OR", "PORTLAND", "97201")
TORONTO = loc("ON", "TORONTO", "M5H", country="CANADA")
WASHINGTON = State(country="USA", state="WA", capital="OLYMPIA")  # sk "WA#STATE"
USA_LOCATIONS = [PORTLAND, SEATTLE_1, SEATTLE_2, SEATTLE_HEIGHTS, SPOKANE, WAKE]  # sk order


@pytest.fixture
async def geo(geo_db: Database) -> Database:
    await geo_db.put_all([*USA_LOCATIONS, TORONTO, WASHINGTON])
    return geo_db


async def test_location_keys_are_stored_as_the_design_says(geo: Database) -> None:
    items = await raw_collection(geo, "pk", "USA")
    assert [strings(i, "sk")[0] for i in items] == [
        "OR#PORTLAND#97201",
        "WA#SEATTLE#98101",
        "WA#SEATTLE#98109",
        "WA#SEATTLEHEIGHTS#98188",
        "WA#SPOKANE#99201",
        "WA#STATE",
        "WAK#WAKEFIELD#00001",
    ]


@pytest.mark.parametrize(
    ("components", "condition", "expected"),
    [
        ({}, None, USA_LOCATIONS),
        ({"state": "WA"}, "WA#", [SEATTLE_1, SEATTLE_2, SEATTLE_HEIGHTS, SPOKANE]),
        ({"state": "WA", "city": "SEATTLE"}, "WA#SEATTLE#", [SEATTLE_1, SEATTLE_2]),
        ({"state": "WA", "city": "SEATTLE", "zip": "98109"}, "WA#SEATTLE#98109", [SEATTLE_2]),
        ({"state": "WA", "city": "SEATTLE", "zip": "00000"}, "WA#SEATTLE#00000", []),
        ({"state": "W"}, "W#", []),
    ],
)
async def test_prefix_query_at_every_depth_is_one_request(
    geo: Database,
    components: dict[str, Any],
    condition: str | None,
    expected: list[Location],
) -> None:
    query = geo.query(Location, country="USA", **components)
    params = query.explain()[0].params
    if condition is None:
        assert params["KeyConditionExpression"] == "#pk = :pk"
    else:
        assert params["ExpressionAttributeValues"][":sk"] == {"S": condition}
    with count_requests(geo) as log:
        found = await query.all()
    assert log.operations == ["Query"]
    assert found == expected
    assert all(type(x) is Location for x in found)


async def test_the_design_example_reads_begins_with_a_whole_city(geo: Database) -> None:
    (request,) = geo.explain.query(Location, country="USA", state="WA", city="SEATTLE")
    assert "begins_with(#sk, :sk)" in request.params["KeyConditionExpression"]
    assert request.params["ExpressionAttributeValues"][":sk"] == {"S": "WA#SEATTLE#"}


async def test_seattle_never_matches_seattleheights(geo: Database) -> None:
    found = await geo.query(Location, country="USA", state="WA", city="SEATTLE").all()
    assert SEATTLE_HEIGHTS not in found
    assert found == [SEATTLE_1, SEATTLE_2]
    heights = await geo.query(Location, country="USA", state="WA", city="SEATTLEHEIGHTS").all()
    assert heights == [SEATTLE_HEIGHTS]


async def test_a_mixed_collection_returns_only_the_queried_model(geo: Database) -> None:
    # "WA#STATE" starts with the "WA#" prefix, but it is a State, not a Location.
    raw = await raw_collection(geo, "pk", "USA")
    assert any(strings(i, "sk")[0] == "WA#STATE" for i in raw)
    with count_requests(geo) as log:
        locations = await geo.query(Location, country="USA", state="WA").all()
    assert log.operations == ["Query"]
    assert WASHINGTON not in locations  # type: ignore[comparison-overlap]
    assert all(type(x) is Location for x in locations)

    states = await geo.query(State, country="USA").all()
    assert states == [WASHINGTON]
    assert await geo.query(State, country="USA", state="WA").all() == [WASHINGTON]


async def test_partitions_never_mix(geo: Database) -> None:
    assert await geo.query(Location, country="CANADA").all() == [TORONTO]
    assert await geo.query(Location, country="MEXICO").all() == []


async def test_values_with_delimiter_and_escape_characters_round_trip(geo_db: Database) -> None:
    tricky = [
        loc("WA", "SEATTLE#HEIGHTS", "98188"),  # would be a 4th component without escaping
        loc("WA", "SEATTLE%23HEIGHTS", "98188"),  # what the escaped form of the above looks like
        loc("WA", "100%", "1"),
        loc("WA", "%", "#"),
        loc("WA#SEATTLE", "X", "1"),  # a state that contains the next level
        loc("WA%23SEATTLE", "Y", "2"),
        loc("WA", "SEATTLE", "98101", country="USA#WA"),  # a country that looks like a deeper key
    ]
    plain = [SEATTLE_1, loc("WA", "SEATTLE", "98101", country="USA%23WA")]
    await geo_db.put_all([*tricky, *plain])

    for x in [*tricky, *plain]:
        same = await geo_db.query(
            Location, country=x.country, state=x.state, city=x.city, zip=x.zip
        ).all()
        assert same == [x]
        assert (
            await geo_db.get(Location, country=x.country, state=x.state, city=x.city, zip=x.zip)
            == x
        )

    seattle = await geo_db.query(Location, country="USA", state="WA", city="SEATTLE").all()
    assert seattle == [SEATTLE_1]
    hashed = await geo_db.query(Location, country="USA", state="WA", city="SEATTLE#HEIGHTS").all()
    assert hashed == [tricky[0]]
    percent = await geo_db.query(
        Location, country="USA", state="WA", city="SEATTLE%23HEIGHTS"
    ).all()
    assert percent == [tricky[1]]


async def test_escaped_values_never_widen_a_prefix_or_leak_into_another_collection(
    geo_db: Database,
) -> None:
    await geo_db.put_all([SEATTLE_1, SEATTLE_2, SPOKANE, loc("WA#SEATTLE", "X", "1")])

    # state="WA#SEATTLE" must not act as state="WA", city="SEATTLE".
    found = await geo_db.query(Location, country="USA", state="WA#SEATTLE").all()
    assert found == [loc("WA#SEATTLE", "X", "1")]
    # A "%" in a value is not a wildcard and not an escape.
    assert await geo_db.query(Location, country="USA", state="WA%").all() == []
    assert await geo_db.query(Location, country="USA", state="WA", city="SEATTLE%").all() == []
    # A partition key value with the delimiter names another partition, not a deeper one.
    assert await geo_db.query(Location, country="USA#WA").all() == []
    assert await geo_db.query(Location, country="USA#WA", state="SEATTLE").all() == []


async def test_a_value_with_the_delimiter_never_joins_another_index_collection(
    db: Database,
) -> None:
    # Unescaped, both users' index partition keys would read "ORG#A#USER#B#USER#C".
    first = User(org_name="A", username="B#USER#C")
    second = User(org_name="A#USER#B", username="C")
    ticket = Ticket(ticket_id="1", org_name="A#USER#B", username="C", created=TICKET_123.created)
    await db.put_all([first, second, ticket])

    loaded = await db.get(User, org_name="A", username="B#USER#C", load=[User.tickets])
    assert loaded == first
    assert loaded.tickets.loaded == []
    other = await db.get(User, org_name="A#USER#B", username="C", load=[User.tickets])
    assert other.tickets.loaded == [ticket]

    # And in the table: an org whose name contains "#USER#" holds no other org's users.
    await db.put_all([Org(name="A"), Org(name="A#USER#B")])
    org = await db.get(Org, name="A", load=[Org.users])
    assert org.users.loaded == [first]
    assert await db.query(User, org_name="A#USER#B").all() == [second]


async def test_first(seeded: Database) -> None:
    with count_requests(seeded) as log:
        first = await seeded.query(User, org_name="MICROSOFT").first()
    assert log.operations == ["Query"]
    assert first == BILLGATES
    assert await seeded.query(User, org_name="NOPE").first() is None


async def test_reverse(seeded: Database) -> None:
    query = seeded.query(User, org_name="MICROSOFT")
    with count_requests(seeded) as log:
        backwards = await query.reverse().all()
    assert log.operations == ["Query"]
    assert backwards == [SATYANADELLA, BILLGATES]
    assert await query.reverse().first() == SATYANADELLA
    # reverse() returns a new query; the original still reads forwards.
    assert await query.all() == [BILLGATES, SATYANADELLA]
    assert await query.reverse().reverse().all() == [BILLGATES, SATYANADELLA]


async def test_first_skips_other_models_in_the_collection(geo: Database) -> None:
    # Reading backwards, the State item "WA#STATE" comes before the WA locations.
    last_wa = await geo.query(Location, country="USA", state="WA").reverse().first()
    assert last_wa == SPOKANE


async def test_query_on_an_index(seeded: Database) -> None:
    with count_requests(seeded) as log:
        tickets = await seeded.query(
            Ticket, "GSI1", org_name="MICROSOFT", username="BILLGATES"
        ).all()
    assert log.operations == ["Query"]
    assert [t.ticket_id for t in tickets] == ["123", "456"]
    # The user shares that index collection, but only tickets come back.
    assert all(type(t) is Ticket for t in tickets)
    users = await seeded.query(User, "GSI1", org_name="MICROSOFT", username="BILLGATES").all()
    assert users == [BILLGATES]


async def test_games_a_user_joined_through_the_inverted_index(games_db: Database) -> None:
    await games_db.put_all(
        [
            Game(game_id="g1", map="Green Hills"),
            Game(game_id="g2", map="Juicy Jungle"),
            Game(game_id="g3", map="Dusty Desert"),
            UserGameMapping(game_id="g1", username="alice"),
            UserGameMapping(game_id="g1", username="bob"),
            UserGameMapping(game_id="g2", username="bob"),
            UserGameMapping(game_id="g3", username="alice"),
        ]
    )
    (request,) = games_db.explain.query(UserGameMapping, index="inverted", username="alice")
    assert request.params["IndexName"] == "inverted"
    assert request.params["ExpressionAttributeNames"]["#pk"] == "sk"
    assert request.params["ExpressionAttributeValues"][":pk"] == {"S": "USER#alice"}

    with count_requests(games_db) as log:
        joined = await games_db.query(UserGameMapping, index="inverted", username="alice").all()
    assert log.operations == ["Query"]
    assert joined == [
        UserGameMapping(game_id="g1", username="alice"),
        UserGameMapping(game_id="g3", username="alice"),
    ]
    one = await games_db.query(
        UserGameMapping, index="inverted", username="bob", game_id="g2"
    ).all()
    assert one == [UserGameMapping(game_id="g2", username="bob")]

    # The other direction: a game and its players in one Query on the table.
    with count_requests(games_db) as log:
        game = await games_db.get(Game, game_id="g1", load=[Game.players])
    assert log.operations == ["Query"]
    assert game == Game(game_id="g1", map="Green Hills")
    assert [p.username for p in game.players.loaded] == ["alice", "bob"]


async def test_missing_or_unknown_components_fail_before_any_request(geo: Database) -> None:
    with count_requests(geo) as log:
        with pytest.raises(dynorm.DynormError, match="country"):
            geo.query(Location, state="WA")
        with pytest.raises(dynorm.DynormError, match="town"):
            geo.query(Location, country="USA", town="SEATTLE")  # type: ignore[call-arg]
        with pytest.raises(dynorm.DynormError, match="state"):
            geo.query(Location, country="USA", city="SEATTLE")  # a level skipped
        with pytest.raises(dynorm.DynormError, match="GSI9"):
            geo.query(Location, "GSI9", country="USA")
    assert len(log) == 0


async def test_an_inverted_index_needs_its_own_partition_component(games_db: Database) -> None:
    with count_requests(games_db) as log:
        with pytest.raises(dynorm.DynormError, match="username"):
            games_db.query(UserGameMapping, index="inverted", game_id="g1")
        with pytest.raises(dynorm.DynormError, match="app"):
            games_db.query(User, org_name="MICROSOFT")  # a model of another table
    assert len(log) == 0

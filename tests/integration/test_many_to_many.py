"""Many-to-many with an adjacency list and an inverted index (seed 002: users, games, mappings).

A ``UserGameMapping`` lives in its game's partition (``GAME#<id>`` / ``USER#<name>``); the
``inverted`` index swaps pk and sk, so the same item answers both directions: a game's players
(1 Query on the table) and a user's games (1 Query on the index).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
import pytest

from dynorm import GSI, Database, HasMany, Index, KeyTemplateError, Partition, Table
from dynorm.testing import Connect, count_requests

from .raw import raw_collection, raw_item, strings

pytestmark = pytest.mark.integration

table = Table("rel-games", pk="pk", sk="sk", indexes=[GSI("inverted", pk="sk", sk="pk")])


@table.model(pk="USER#{username}", sk="#METADATA#{username}")
@attrs.define
class Player:
    username: str
    display_name: str = ""
    # The player item is not in its games' collection (its sk is #METADATA#<name>): the
    # collection is found from the player's username.
    games = HasMany["UserGameMapping"]("UserGameMapping", via=Index("inverted"))


@table.model(pk="GAME#{game_id}", sk="#METADATA#{game_id}")
@attrs.define
class Game:
    game_id: str
    map: str
    players = HasMany["UserGameMapping"]("UserGameMapping", via=Partition())


@table.model(pk="GAME#{game_id}", sk="USER#{username}")
@attrs.define
class UserGameMapping:
    game_id: str
    username: str


GAMES = [Game("g1", "Green Grasslands"), Game("g2", "Juicy Jungle"), Game("g3", "Dirty Desert")]
PLAYERS = [Player("alice", "Alice"), Player("bob", "Bob"), Player("carol", "Carol")]
JOINED = [
    UserGameMapping("g1", "alice"),
    UserGameMapping("g1", "bob"),
    UserGameMapping("g1", "carol"),
    UserGameMapping("g2", "alice"),
    UserGameMapping("g3", "alice"),
    UserGameMapping("g3", "bob"),
]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        await database.put_all([*GAMES, *PLAYERS, *JOINED])
        yield database


def joined(*, game_id: str | None = None, username: str | None = None) -> list[UserGameMapping]:
    return [
        m
        for m in JOINED
        if (game_id is None or m.game_id == game_id)
        and (username is None or m.username == username)
    ]


async def test_stored_keys_are_the_seeds_table(db: Database) -> None:
    rows = {
        ("USER#alice", "#METADATA#alice"),
        ("GAME#g1", "#METADATA#g1"),
        ("GAME#g1", "USER#alice"),
        ("GAME#g3", "USER#bob"),
    }
    for pk, sk in rows:
        item = await raw_item(db, {"pk": pk, "sk": sk})
        assert item is not None, (pk, sk)
        assert strings(item, "pk", "sk") == (pk, sk)
    partition = await raw_collection(db, "pk", "GAME#g1")
    assert [strings(i, "sk")[0] for i in partition] == [
        "#METADATA#g1",
        "USER#alice",
        "USER#bob",
        "USER#carol",
    ]
    inverted = await raw_collection(db, "sk", "USER#alice", index="inverted")
    assert [strings(i, "pk", "sk") for i in inverted] == [
        ("GAME#g1", "USER#alice"),
        ("GAME#g2", "USER#alice"),
        ("GAME#g3", "USER#alice"),
    ]


async def test_a_game_and_its_players_in_one_query(db: Database) -> None:
    with count_requests(db) as log:
        game = await db.get(Game, game_id="g1", load=[Game.players])
    assert log.operations == ["Query"]
    assert game == GAMES[0]
    assert game.players.loaded == joined(game_id="g1")


async def test_the_games_of_a_user_in_one_query_on_the_inverted_index(db: Database) -> None:
    with count_requests(db) as log:
        games = await db.query(UserGameMapping, index="inverted", username="alice").all()
    assert log.operations == ["Query"]
    assert games == joined(username="alice")
    (request,) = db.explain.query(UserGameMapping, index="inverted", username="alice")
    assert request.params["IndexName"] == "inverted"
    assert request.params["ExpressionAttributeNames"]["#pk"] == "sk"
    assert request.params["ExpressionAttributeValues"][":pk"] == {"S": "USER#alice"}


async def test_a_players_games_relationship_reads_the_inverted_index(db: Database) -> None:
    player = await db.get(Player, username="alice")
    with count_requests(db) as log:
        page = await player.games.page()
    assert log.operations == ["Query"]
    assert page.items == joined(username="alice")
    assert page.cursor is None

    with count_requests(db) as log:
        first = await player.games.page(limit=2)
        rest = await player.games.page(limit=2, cursor=first.cursor)
    assert log.operations == ["Query", "Query"]
    assert [*first.items, *rest.items] == joined(username="alice")
    assert rest.cursor is None


async def test_a_player_with_games_is_a_getitem_beside_one_query(db: Database) -> None:
    with count_requests(db) as log:
        player = await db.get(Player, username="bob", load=[Player.games])
    # The player is not in the games' collection, so it is read on its own, concurrently.
    assert sorted(log.operations) == ["GetItem", "Query"]
    assert player == PLAYERS[1]
    assert player.games.loaded == joined(username="bob")
    assert [m.game_id async for m in player.games] == ["g1", "g3"]


async def test_add_from_the_game_side_shows_in_both_directions(db: Database) -> None:
    game = await db.get(Game, game_id="g2", load=[Game.players])
    player = await db.get(Player, username="carol")
    mapping = UserGameMapping("g2", "carol")
    with count_requests(db) as log:
        await db.add(game, Game.players, mapping)
    assert log.operations == ["PutItem"]
    item = await raw_item(db, {"pk": "GAME#g2", "sk": "USER#carol"})
    assert item is not None
    assert game.players.loaded == [UserGameMapping("g2", "alice"), mapping]
    assert await player.games.all() == [UserGameMapping("g1", "carol"), mapping]
    fresh = await db.get(Game, game_id="g2", load=[Game.players])
    assert fresh.players.loaded == [UserGameMapping("g2", "alice"), mapping]


async def test_add_from_the_player_side_shows_in_both_directions(db: Database) -> None:
    player = await db.get(Player, username="bob")
    mapping = UserGameMapping("g2", "bob")
    with count_requests(db) as log:
        await db.add(player, Player.games, mapping)
    assert log.operations == ["PutItem"]
    game = await db.get(Game, game_id="g2", load=[Game.players])
    assert mapping in game.players.loaded
    assert await player.games.all() == [JOINED[1], mapping, JOINED[5]]


async def test_remove_takes_the_mapping_out_of_both_directions(db: Database) -> None:
    game = await db.get(Game, game_id="g1", load=[Game.players])
    with count_requests(db) as log:
        await db.remove(game, Game.players, UserGameMapping("g1", "alice"))
    assert log.operations == ["DeleteItem"]
    assert await raw_item(db, {"pk": "GAME#g1", "sk": "USER#alice"}) is None
    alice_games = await db.query(UserGameMapping, index="inverted", username="alice").all()
    assert [m.game_id for m in alice_games] == ["g2", "g3"]
    fresh = await db.get(Game, game_id="g1", load=[Game.players])
    assert [m.username for m in fresh.players.loaded] == ["bob", "carol"]

    player = await db.get(Player, username="bob")
    await db.remove(player, Player.games, UserGameMapping("g3", "bob"))
    assert [m.username for m in await db.query(UserGameMapping, game_id="g3").all()] == ["alice"]


async def test_a_mapping_of_another_game_or_player_is_refused_before_sending(db: Database) -> None:
    game = await db.get(Game, game_id="g1")
    player = await db.get(Player, username="alice")
    with count_requests(db) as log:
        with pytest.raises(KeyTemplateError, match=r"Game\.players"):
            await db.add(game, Game.players, UserGameMapping("g2", "bob"))
        with pytest.raises(KeyTemplateError, match=r"Player\.games"):
            await db.add(player, Player.games, UserGameMapping("g2", "bob"))
        with pytest.raises(KeyTemplateError, match=r"Player\.games"):
            await db.remove(player, Player.games, UserGameMapping("g1", "bob"))
    assert len(log) == 0
    assert await raw_item(db, {"pk": "GAME#g2", "sk": "USER#bob"}) is None

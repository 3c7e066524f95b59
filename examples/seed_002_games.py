"""Seed 002 — many-to-many: users join games (UserGameMapping) and an inverted index.

A game and its players share the game's partition; the ``inverted`` index swaps pk and sk, so
the same key templates find every game a user joined.
"""

from __future__ import annotations

from common import Narrator, run

from dynorm import GSI, HasMany, Partition, Table

table = Table("games", pk="pk", sk="sk", indexes=[GSI("inverted", pk="sk", sk="pk")])


@table.model(pk="USER#{username}", sk="#METADATA#{username}")
class Player:
    username: str
    name: str


@table.model(pk="GAME#{game_id}", sk="#METADATA#{game_id}")
class Game:
    game_id: str
    map: str
    players = HasMany["UserGameMapping"](via=Partition())


@table.model(pk="GAME#{game_id}", sk="USER#{username}")
class UserGameMapping:
    game_id: str
    username: str


async def scenario(tour: Narrator) -> None:
    db = tour.db
    await db.put_all(
        [
            Player("alice", "Alice"),
            Player("bob", "Bob"),
            Game("g1", "Green Grasslands"),
            Game("g2", "Juicy Jungle"),
            UserGameMapping("g1", "alice"),
            UserGameMapping("g1", "bob"),
            UserGameMapping("g2", "alice"),
        ]
    )

    async def game_and_players() -> object:
        game = await db.get(Game, game_id="g1", load=[Game.players])
        return {"game": game, "players": game.players.loaded}

    await tour.step("002.1 A Game and every user who joined it (1 Query)", game_and_players)
    await tour.step(
        "002.2 Every game a user joined (1 Query on the inverted index)",
        lambda: db.query(UserGameMapping, index="inverted", username="alice").all(),
    )
    await tour.step(
        "002.3 A user's profile (GetItem, filler sort key #METADATA#<username>)",
        lambda: db.get(Player, username="alice"),
    )


if __name__ == "__main__":
    run(scenario, table)

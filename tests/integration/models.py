"""Models for the integration tests, one table per data set.

The seed tables follow ``/work/shared/DESIGN.md`` exactly (key templates, fields, strategies);
seeds 000 and 001 are in ``tests/seed_models.py``, shared with the unit tests.
``@attrs.define`` is spelled out only so that mypy sees the generated ``__init__``.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import uuid
from typing import Any, Final

import attrs

from dynorm import GSI, HasMany, Partition, Table

# -- hierarchical sort key (DESIGN.md) ----------------------------------------------------------

geo = Table("geo", pk="pk", sk="sk")


@geo.model(pk="{country}", sk="{state}#{city}#{zip}")
@attrs.define
class Location:
    country: str
    state: str
    city: str
    zip: str


@geo.model(pk="{country}", sk="{state}#STATE")
@attrs.define
class State:
    """Another entity type in a Location partition; its sort key starts with a state too."""

    country: str
    state: str
    capital: str


# -- many-to-many with an inverted index (DESIGN.md, games) -------------------------------------

games = Table("games", pk="pk", sk="sk", indexes=[GSI("inverted", pk="sk", sk="pk")])


@games.model(pk="GAME#{game_id}", sk="#METADATA#{game_id}")
@attrs.define
class Game:
    game_id: str
    map: str
    players = HasMany["UserGameMapping"]("UserGameMapping", via=Partition())


@games.model(pk="GAME#{game_id}", sk="USER#{username}")
@attrs.define
class UserGameMapping:
    game_id: str
    username: str


# -- every field type the codec supports --------------------------------------------------------

kinds = Table("kinds", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


NIL_UUID: Final = uuid.UUID(int=0)


@attrs.define
class Address:
    street: str
    number: int
    unit: str | None = None


@kinds.model(pk="THING#{thing_id}", sk="THING#{thing_id}", GSI1=("TAG#{tag}", "THING#{thing_id}"))
@attrs.define
class Thing:
    thing_id: str
    text: str = ""
    count: int = 0
    big: int = 0
    ratio: float = 0.0
    price: decimal.Decimal = decimal.Decimal(0)
    flag: bool = False
    blob: bytes = b""
    when: datetime.datetime = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
    day: datetime.date = datetime.date(2000, 1, 1)
    clock: datetime.time = datetime.time(0, 0)
    ident: uuid.UUID = NIL_UUID
    color: Color = Color.RED
    level: Level = Level.LOW
    numbers: list[int] = attrs.field(factory=list)
    pair: tuple[str, int] = ("", 0)
    names: set[str] = attrs.field(factory=set)
    scores: set[int] = attrs.field(factory=set)
    blobs: frozenset[bytes] = frozenset()
    counts: dict[str, int] = attrs.field(factory=dict)
    address: Address | None = None
    addresses: list[Address] = attrs.field(factory=list)
    anything: Any = None
    note: str | None = None
    tag: str | None = None


# -- paging: a collection where children share the partition with other entity types ------------

forum = Table("forum", pk="pk", sk="sk")


@forum.model(pk="THREAD#{thread_id}", sk="#METADATA#{thread_id}")
@attrs.define
class Thread:
    thread_id: str
    title: str = ""
    # Post sort keys start with a field, so the children's read spans the whole partition: the
    # thread item and the reactions between posts are read too and must never fill a post slot.
    posts = HasMany["Post"]("Post", via=Partition())


@forum.model(pk="THREAD#{thread_id}", sk="{seq:06d}#POST#{post_id}")
@attrs.define
class Post:
    thread_id: str
    seq: int
    post_id: str
    body: str = ""


@forum.model(pk="THREAD#{thread_id}", sk="{seq:06d}#REACTION#{reaction_id}")
@attrs.define
class Reaction:
    thread_id: str
    seq: int
    reaction_id: str
    emoji: str = "+1"


# -- a parent that sorts after its children (books) and before others (stickers) ----------------

library = Table("library", pk="pk", sk="sk")


@library.model(pk="SHELF#{shelf_id}", sk="SHELF#{shelf_id}")
@attrs.define
class Shelf:
    shelf_id: str
    # "BOOK#…" sorts before "SHELF#…": the shelf is the last item of a books read.
    books = HasMany["Book"]("Book", via=Partition())
    # "STICKER#…" sorts after "SHELF#…": the shelf is the first item of a stickers read.
    stickers = HasMany["Sticker"]("Sticker", via=Partition())


@library.model(pk="SHELF#{shelf_id}", sk="BOOK#{title}")
@attrs.define
class Book:
    shelf_id: str
    title: str
    body: str = ""


@library.model(pk="SHELF#{shelf_id}", sk="STICKER#{n:04d}")
@attrs.define
class Sticker:
    shelf_id: str
    n: int
    body: str = ""


@kinds.model(pk="BAG#{bag_id}", sk="BAG#{bag_id}")
@attrs.define
class Bag:
    """Set fields without defaults: an empty one must still read back."""

    bag_id: str
    labels: set[str]
    sizes: frozenset[int]

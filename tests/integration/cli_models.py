"""Declarations the ``dynorm`` command tests import in a subprocess, by ``MODULE:TABLE``.

``new`` is the current code (the target of ``dynorm migrate``); ``old`` declares the layout the
data had before, on the same stored table: tests write old-layout data through a Database on
``old`` and run ``dynorm migrate tests.integration.cli_models:new ...``.

- ``Shelf.jars``: ``Partition()`` before, ``Index("GSI1")`` now (the same templates, moved from
  the table key to the index key);
- ``Author.books``: ``Partition()`` before, ``Denormalized(copy={"born": "author_born"})`` now;
- ``Member``: no ``GSI2`` template before, ``GSI2=("EMAIL#{email}", ...)`` now.

``sessions`` is a table of its own whose model declares ``ttl=``.

``examples()`` gives the seed models' sample objects for ``dynorm workbench export --examples``.
"""

from __future__ import annotations

import datetime

from dynorm import GSI, Denormalized, HasMany, Index, Partition, Table
from tests.seed_models import Org, Ticket, User

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")]

new = Table("cli-migrate", pk="pk", sk="sk", indexes=INDEXES)
old = Table("cli-migrate", pk="pk", sk="sk", indexes=INDEXES)

# -- the current declarations ---------------------------------------------------------------------


@new.model(pk="S#{shelf}", sk="#SHELF#{shelf}", GSI1=("S#{shelf}", "#SHELF#{shelf}"))
class Shelf:
    shelf: str
    room: str = ""
    jars = HasMany["Jar"](via=Index("GSI1"))


@new.model(pk="J#{shelf}#{name}", sk="J#{shelf}#{name}", GSI1=("S#{shelf}", "JAR#{name}"))
class Jar:
    shelf: str
    name: str
    grams: int = 0


@new.model(pk="A#{author}", sk="#AUTHOR#{author}")
class Author:
    author: str
    born: str
    books = HasMany["Book"](via=Denormalized(copy={"born": "author_born"}))


@new.model(pk="A#{author}", sk="BOOK#{title}")
class Book:
    author: str
    title: str
    author_born: str = ""


@new.model(pk="M#{uid}", sk="M#{uid}", GSI2=("EMAIL#{email}", "M#{uid}"))
class Member:
    uid: str
    email: str | None = None


# -- the layout the data had before -------------------------------------------------------------


@old.model(pk="S#{shelf}", sk="#SHELF#{shelf}")
class OldShelf:
    shelf: str
    room: str = ""
    jars = HasMany["OldJar"](via=Partition())


@old.model(pk="S#{shelf}", sk="JAR#{name}")
class OldJar:
    shelf: str
    name: str
    grams: int = 0


@old.model(pk="A#{author}", sk="#AUTHOR#{author}")
class OldAuthor:
    author: str
    born: str
    books = HasMany["OldBook"](via=Partition())


@old.model(pk="A#{author}", sk="BOOK#{title}")
class OldBook:
    author: str
    title: str


@old.model(pk="M#{uid}", sk="M#{uid}")
class OldMember:
    uid: str
    email: str | None = None


# -- sample objects of tests.seed_models:app ------------------------------------------------------


def examples() -> list[object]:
    """An organization, two users and their tickets, for ``workbench export --examples``."""
    created = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    return [
        Org("ACME", "Pro"),
        User("ACME", "ada"),
        User("ACME", "bob", "Admin"),
        Ticket("t-1", "ACME", "ada", created),
        Ticket("t-2", "ACME", "bob", created),
    ]


# -- a table whose model declares time to live (`dynorm create-table --exists-ok`) ---------------

sessions = Table("cli-sessions", pk="pk", sk="sk")


@sessions.model(pk="SESSION#{session_id}", sk="SESSION", ttl="expires_at")
class Session:
    session_id: str
    expires_at: datetime.datetime | None = None

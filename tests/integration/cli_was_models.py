"""Declarations ``dynorm migrate`` imports in a subprocess for its ``was=`` tests.

``new`` is the current code: ``Crate.bottles`` in ``Index("GSI1")``, ``was=Partition()``;
``old`` the layout the data had before, on the same stored table.
"""

from __future__ import annotations

from dynorm import GSI, HasMany, Index, Partition, Table

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]

new = Table("cli-migrate-was", pk="pk", sk="sk", indexes=INDEXES)
old = Table("cli-migrate-was", pk="pk", sk="sk", indexes=INDEXES)


@new.model(pk="C#{crate}", sk="#CRATE#{crate}", GSI1=("C#{crate}", "#CRATE#{crate}"))
class Crate:
    crate: str
    bottles = HasMany["Bottle"](via=Index("GSI1"), was=Partition())


@new.model(pk="B#{crate}#{name}", sk="B#{crate}#{name}", GSI1=("C#{crate}", "BOTTLE#{name}"))
class Bottle:
    crate: str
    name: str


@old.model(pk="C#{crate}", sk="#CRATE#{crate}")
class OldCrate:
    crate: str
    bottles = HasMany["OldBottle"](via=Partition())


@old.model(pk="C#{crate}", sk="BOTTLE#{name}")
class OldBottle:
    crate: str
    name: str

"""Models for the fault-injection tests (``test_faultproxy.py``, ``test_faults.py``)."""

from __future__ import annotations

import attrs

from dynorm import Denormalized, Embedded, HasMany, Table

faults = Table("faults", pk="pk", sk="sk")


@faults.model(pk="BOX#{box}", sk="ITEM#{n:05d}")
@attrs.define
class Entry:
    """Many small items in a few partitions: batches and query pages."""

    box: str
    n: int
    text: str = ""


@faults.model(pk="COUNTER#{name}", sk="COUNTER#{name}")
@attrs.define
class Counter:
    """A counter that ADD increments, with a version for conditional updates."""

    name: str
    hits: int = 0
    version: int = 0
    note: str = ""


@attrs.define
class Step:
    """One entry of a journal's embedded list."""

    text: str


@faults.model(pk="JOURNAL#{name}", sk="JOURNAL#{name}")
@attrs.define
class Journal:
    """A parent whose children are an embedded list without a key (appends are not idempotent)."""

    name: str
    steps = HasMany[Step](Step, via=Embedded())


@faults.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}")
@attrs.define
class Author:
    """A parent whose books carry a copy of its pen name: a rename rewrites every copy."""

    name: str
    pen_name: str
    books = HasMany["Book"](
        "Book", via=Denormalized(copy={"pen_name": "author_pen_name"}, max_fanout=500)
    )


@faults.model(pk="AUTHOR#{author}", sk="BOOK#{n:04d}")
@attrs.define
class Book:
    """A child holding its author's pen name."""

    author: str
    n: int
    author_pen_name: str = ""

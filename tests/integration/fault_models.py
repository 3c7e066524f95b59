"""Models for the fault-injection tests (``test_faultproxy.py``, ``test_faults.py``)."""

from __future__ import annotations

import attrs

from dynorm import Embedded, HasMany, Table

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
    steps = HasMany["Journal", Step](Step, via=Embedded())

"""Every field type reads back from the server what was written: put, get, get_many, query, scan.

The types and values are those of ``tests/unit/test_field_types.py`` (Enums of bools, bytes,
tuples and mixed values, Literals of bools and bytes, frozensets, nested and recursive attrs
classes among them), one model each on one table.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from dynorm import Database
from dynorm.testing import Connect
from tests.unit.test_field_types import CASES, MODELS, _same, table

pytestmark = pytest.mark.integration


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


def _written() -> list[tuple[Any, str, Any]]:
    """(model class, key, object) for every value of every case."""
    out = []
    for tp, values in CASES:
        info = MODELS[repr(tp)]
        out += [(info.cls, f"v{i}", info.cls(key=f"v{i}", value=v)) for i, v in enumerate(values)]
    return out


async def test_every_field_type_reads_back_from_the_server(db: Database) -> None:
    written = _written()
    await db.put_all([obj for _, _, obj in written])
    await db.put(written[0][2])
    got = [await db.get(cls, key=key) for cls, key, _ in written]
    many = [(await db.get_many(cls, [{"key": key}]))[0] for cls, key, _ in written]
    for (_, _, obj), one, batch in zip(written, got, many, strict=True):
        assert _same(one, obj), f"get: {one!r} != {obj!r}"
        assert _same(batch, obj), f"get_many: {batch!r} != {obj!r}"
    for tp, values in CASES:
        cls = MODELS[repr(tp)].cls
        scanned = sorted(await db.scan(cls).all(), key=lambda o: o.key)
        assert len(scanned) == len(values)
        for i, (obj, value) in enumerate(zip(scanned, values, strict=True)):
            assert _same(obj.value, value), f"scan {tp!r}: {obj.value!r} != {value!r}"
            queried = await db.query(cls, key=f"v{i}").all()
            assert len(queried) == 1
            assert _same(queried[0].value, value), f"query {tp!r}: {queried[0].value!r}"

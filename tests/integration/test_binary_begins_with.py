"""``begins_with`` on a binary (B) sort key: the bytes a key starts with, as DynamoDB takes them.

Sent as ``begins_with(#sk, :sk)`` with a binary value; pages resume from cursors inside the
prefix. Runs on every backend (moto, botocore's path, dynalite).
"""

from __future__ import annotations

import attrs
import pytest

from dynorm import ExpressionError, Table, begins_with
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

blobs = Table("blobs", pk="pk", sk="sk", key_types={"sk": "B"})


@blobs.model(pk="DEVICE#{device}", sk="{blob}")
@attrs.define
class Frame:
    device: str
    blob: bytes
    note: str = ""


STORED = [b"\x01", b"\x01\x00", b"\x01\xff\x10", b"\x02", b"\x00\x01", b"\x01#\x80"]


async def test_begins_with_bytes_reads_the_keys_starting_with_them(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(blobs) as db:
        await db.put_all([Frame("d1", b) for b in STORED] + [Frame("d2", b"\x01\x02")])

        query = db.query(Frame, device="d1", blob=begins_with(b"\x01"))
        (request,) = query.explain()
        assert "begins_with(#sk, :sk)" in request.params["KeyConditionExpression"]
        assert request.params["ExpressionAttributeValues"][":sk"] == {"B": b"\x01"}
        with count_requests(db) as log:
            found = await query.all()
        assert log.operations == ["Query"]
        # DynamoDB orders binary keys by their bytes, unsigned.
        assert [f.blob for f in found] == [b"\x01", b"\x01\x00", b"\x01#\x80", b"\x01\xff\x10"]

        narrower = await db.query(Frame, device="d1", blob=begins_with(b"\x01\xff")).all()
        assert [f.blob for f in narrower] == [b"\x01\xff\x10"]
        assert await db.query(Frame, device="d1", blob=begins_with(b"\x03")).all() == []


async def test_pages_of_a_binary_prefix_resume_from_their_cursors(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(blobs) as db:
        await db.put_all([Frame("d1", b) for b in STORED])
        query = db.query(Frame, device="d1", blob=begins_with(b"\x01"))
        seen: list[bytes] = []
        cursor = None
        while True:
            page = await query.page(limit=2, cursor=cursor)
            seen += [f.blob for f in page.items]
            cursor = page.cursor
            if cursor is None:
                break
        assert seen == [b"\x01", b"\x01\x00", b"\x01#\x80", b"\x01\xff\x10"]


async def test_a_text_prefix_on_a_binary_key_is_refused_before_sending(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(blobs) as db:
        with count_requests(db) as log, pytest.raises(ExpressionError, match="bytes"):
            await db.query(Frame, device="d1", blob=begins_with("\x01")).all()
        assert log.operations == []

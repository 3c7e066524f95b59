"""The floor: aiohttp POSTs of orjson bodies, the least any Python client must do.

The Query floor neither signs nor builds objects: one request, one ``orjson.loads``. The write and
single-request floors sign every request with SigV4 (a hand-written signer, its key cached per
day), because no client can talk to DynamoDB without signing; the ``Unsigned…`` variants leave
the signature out to show what it costs. The write floor starts from AttributeValue dicts built
before the timed run; the ``Encoding…`` variant builds them from plain Python values in the run,
with one small generic encoder.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit

import aiohttp
import orjson

from benchmarks import data
from benchmarks.clients import ACCESS_KEY, REGION, SECRET_KEY

QUERY = {
    "TableName": data.TABLE,
    "KeyConditionExpression": "#pk = :pk AND #sk BETWEEN :lo AND :hi",
    "ExpressionAttributeNames": {"#pk": "pk", "#sk": "sk"},
    "ExpressionAttributeValues": {
        ":pk": {"S": f"order#{data.ORDER_ID}"},
        ":lo": {"S": data.ITEM_PREFIX},
        ":hi": {"S": f"order#{data.ORDER_ID}"},
    },
}
CONTENT_TYPE: Final = "application/x-amz-json-1.0"
TARGET_PREFIX: Final = "DynamoDB_20120810."
HEADERS = {"Content-Type": CONTENT_TYPE, "X-Amz-Target": TARGET_PREFIX + "Query"}
#: Items a BatchWriteItem request may carry.
BATCH_WRITE_SIZE: Final = 25


class Signer:
    """SigV4 for DynamoDB's JSON protocol: POST ``/``, four signed headers."""

    _SIGNED: Final = "content-type;host;x-amz-date;x-amz-target"

    def __init__(self, url: str, *, access_key: str, secret_key: str, region: str) -> None:
        self._host = urlsplit(url).netloc
        self._access_key = access_key
        self._secret = secret_key.encode()
        self._region = region
        self._day = ""
        self._key = b""

    def _signing_key(self, day: str) -> bytes:
        # Derived once per day: four HMACs that would otherwise be a quarter of the signing.
        if day != self._day:
            key = hmac.digest(b"AWS4" + self._secret, day.encode(), "sha256")
            for part in (self._region, "dynamodb", "aws4_request"):
                key = hmac.digest(key, part.encode(), "sha256")
            self._day, self._key = day, key
        return self._key

    def headers(self, operation: str, body: bytes) -> dict[str, str]:
        """The headers of a signed request for ``operation`` with ``body``."""
        target = TARGET_PREFIX + operation
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        day = stamp[:8]
        canonical = (
            f"POST\n/\n\ncontent-type:{CONTENT_TYPE}\nhost:{self._host}\nx-amz-date:{stamp}\n"
            f"x-amz-target:{target}\n\n{self._SIGNED}\n{hashlib.sha256(body).hexdigest()}"
        )
        scope = f"{day}/{self._region}/dynamodb/aws4_request"
        to_sign = (
            f"AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
        )
        signature = hmac.new(self._signing_key(day), to_sign.encode(), "sha256").hexdigest()
        return {
            "Content-Type": CONTENT_TYPE,
            "X-Amz-Target": target,
            "X-Amz-Date": stamp,
            "Authorization": (
                f"AWS4-HMAC-SHA256 Credential={self._access_key}/{scope}, "
                f"SignedHeaders={self._SIGNED}, Signature={signature}"
            ),
        }


class QueryClient:
    """One HTTP request and one JSON parse (unsigned: one request carries 5,001 items)."""

    async def setup(self, url: str) -> None:
        self._url = url
        self._session = aiohttp.ClientSession()
        self._body = orjson.dumps(QUERY)

    async def run_once(self) -> int:
        async with self._session.post(self._url, data=self._body, headers=HEADERS) as response:
            page = orjson.loads(await response.read())
        return len(page["Items"])

    async def teardown(self) -> None:
        await self._session.close()


class _Poster:
    """A session and a signer: ``call`` POSTs one operation and parses its answer."""

    signed: ClassVar[bool] = True

    async def setup(self, url: str) -> None:
        self._url = url
        self._session = aiohttp.ClientSession()
        self._signer = Signer(url, access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION)

    async def call(self, operation: str, request: Mapping[str, Any]) -> Any:
        body = orjson.dumps(request)
        if self.signed:
            headers = self._signer.headers(operation, body)
        else:
            headers = {"Content-Type": CONTENT_TYPE, "X-Amz-Target": TARGET_PREFIX + operation}
        async with self._session.post(self._url, data=body, headers=headers) as response:
            answer = orjson.loads(await response.read())
            if response.status != 200:
                raise RuntimeError(f"{operation} failed: {answer}")
        return answer

    async def teardown(self) -> None:
        await self._session.close()


class GetItemClient(_Poster):
    """``batch`` sequential signed GetItem POSTs, each answer parsed with orjson."""

    def __init__(self, batch: int) -> None:
        self.batch = batch

    async def run_once(self) -> int:
        request = {"TableName": data.TABLE, "Key": data.order_key()}
        for _ in range(self.batch):
            found = await self.call("GetItem", request)
            assert "Item" in found  # noqa: S101 - the server always answers with the order
        return self.batch


class UnsignedGetItemClient(GetItemClient):
    """The GetItem floor without SigV4."""

    signed = False


class PutItemClient(_Poster):
    """``batch`` sequential signed PutItem POSTs of a pre-encoded order item."""

    def __init__(self, batch: int) -> None:
        self.batch = batch

    async def run_once(self) -> int:
        request = {"TableName": data.TABLE, "Item": data.order_item(1)}
        for _ in range(self.batch):
            await self.call("PutItem", request)
        return self.batch


class UnsignedPutItemClient(PutItemClient):
    """The PutItem floor without SigV4."""

    signed = False


def chunks(items: Sequence[Any], size: int = BATCH_WRITE_SIZE) -> Iterator[Sequence[Any]]:
    """``items`` in slices of ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def encode(value: Any) -> dict[str, Any]:
    """A plain Python value as an AttributeValue: the least a generic encoder does."""
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, bool):  # before int: a bool is an int
        return {"BOOL": value}
    if isinstance(value, int | float | Decimal):
        return {"N": str(value)}
    if isinstance(value, list):
        return {"L": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"M": {k: encode(v) for k, v in value.items()}}
    raise TypeError(f"no AttributeValue for {type(value).__name__}")


class PutAllClient(_Poster):
    """Sequential signed BatchWriteItem POSTs of 25 pre-encoded items each."""

    def __init__(self, items: int) -> None:
        self.items = [data.order_item(n) for n in range(1, items + 1)]

    def encoded(self) -> Sequence[dict[str, Any]]:
        return self.items

    async def run_once(self) -> int:
        for chunk in chunks(self.encoded()):
            request = {"RequestItems": {data.TABLE: [{"PutRequest": {"Item": i}} for i in chunk]}}
            answer = await self.call("BatchWriteItem", request)
            assert not answer["UnprocessedItems"]  # noqa: S101 - the server accepts every write
        return len(self.items)


class EncodingPutAllClient(PutAllClient):
    """The write floor plus :func:`encode` of every item from plain values, in the timed run."""

    def __init__(self, items: int) -> None:
        super().__init__(items)
        self.plain = [
            {**data.order_item_keys(n), **data.order_item_fields(n)} for n in range(1, items + 1)
        ]

    def encoded(self) -> Sequence[dict[str, Any]]:
        return [{k: encode(v) for k, v in item.items()} for item in self.plain]

"""A loopback in-memory table that limits every partition key value's write rate.

A scaled-down model of DynamoDB's partition limit (about 1,000 write units a second for one
partition key value): each partition key value has a token bucket of ``--rate`` writes a second
(holding at most a tenth of a second's worth, so a burst is short). A PutItem beyond it is
answered as DynamoDB answers it, HTTP 400 ``ProvisionedThroughputExceededException``, and
stores nothing; a BatchWriteItem returns the puts beyond it as ``UnprocessedItems``. ``--rate=0``
turns the limit off.

Unlike ``benchmarks.server`` (fixed answers), it keeps what is written: GetItem reads an item
back, Query reads one partition in sort key order (``pk = :v``, optionally with
``begins_with(sk, :p)``; ``Limit``, ``ExclusiveStartKey`` and ``ScanIndexForward``), so a
sharded load's Query per shard reads that shard's children. ``DescribeTable`` answers the
benchmark table's key schema. Reads are never limited.

It runs in a process of its own (:func:`running`, see ``benchmarks.child``). Standard library
only.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import json
import re
import time
from collections.abc import Iterator
from typing import Any, Final

from benchmarks import child, data, server

_TARGET_PREFIX: Final = "DynamoDB_20120810."
_ERROR_PREFIX: Final = "com.amazonaws.dynamodb.v20120810#"
#: The bucket holds this many seconds of the rate: a short burst, then the steady rate.
BURST_SECONDS: Final = 0.1
_EQUALS = re.compile(r"(#?\w+)\s*=\s*(:\w+)")
_BEGINS = re.compile(r"begins_with\(\s*(#?\w+)\s*,\s*(:\w+)\s*\)")

Item = dict[str, Any]


def _response(body: bytes, status: str = "200 OK") -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\n"
        "Content-Type: application/x-amz-json-1.0\r\n"
        "x-amzn-RequestId: BENCHMARK0000000000000000000000000000000000000000000\r\n"
        f"Content-Length: {len(body)}\r\n"
        "\r\n"
    )
    return head.encode("ascii") + body


def _encode(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _error(code: str, message: str) -> bytes:
    return _response(
        _encode({"__type": _ERROR_PREFIX + code, "message": message}), "400 Bad Request"
    )


class _Bucket:
    """A token bucket: ``rate`` tokens a second, at most ``rate * BURST_SECONDS`` held."""

    __slots__ = ("capacity", "rate", "stamp", "tokens")

    def __init__(self, rate: float, now: float) -> None:
        self.rate = rate
        self.capacity = max(1.0, rate * BURST_SECONDS)
        self.tokens = self.capacity
        self.stamp = now

    def take(self, now: float) -> bool:
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


class Store:
    """The table: partitions of items sorted by sort key, and each partition's write bucket."""

    def __init__(self, *, rate: float) -> None:
        self.rate = rate
        self._partitions: dict[str, tuple[list[str], dict[str, Item]]] = {}
        self._buckets: dict[str, _Bucket] = {}
        self._description = _response(_encode(data.table_description()))

    def _allowed(self, pk: str) -> bool:
        if self.rate <= 0:
            return True
        now = time.monotonic()
        bucket = self._buckets.get(pk)
        if bucket is None:
            bucket = self._buckets[pk] = _Bucket(self.rate, now)
        return bucket.take(now)

    def _put(self, item: Item) -> None:
        pk, sk = item["pk"]["S"], item["sk"]["S"]
        keys, items = self._partitions.setdefault(pk, ([], {}))
        if sk not in items:
            bisect.insort(keys, sk)
        items[sk] = item

    def respond(self, target: str, body: bytes) -> bytes:
        operation = target.removeprefix(_TARGET_PREFIX)
        if operation == "DescribeTable":
            return self._description
        request = json.loads(body)
        if operation == "PutItem":
            item = request["Item"]
            if not self._allowed(item["pk"]["S"]):
                return _error(
                    "ProvisionedThroughputExceededException",
                    "The level of configured provisioned throughput for the table was exceeded.",
                )
            self._put(item)
            return _response(b"{}")
        if operation == "BatchWriteItem":
            return _response(_encode(self._batch_write(request)))
        if operation == "GetItem":
            key = request["Key"]
            found = self._partitions.get(key["pk"]["S"], ([], {}))[1].get(key["sk"]["S"])
            return _response(_encode({} if found is None else {"Item": found}))
        if operation == "Query":
            return _response(_encode(self._query(request)))
        return _error("UnknownOperationException", f"the benchmark store has no {operation}")

    def _batch_write(self, request: dict[str, Any]) -> dict[str, Any]:
        unprocessed: dict[str, list[Any]] = {}
        for name, writes in request["RequestItems"].items():
            for write in writes:
                item = write.get("PutRequest", {}).get("Item")
                if item is not None and self._allowed(item["pk"]["S"]):
                    self._put(item)
                elif item is not None:
                    unprocessed.setdefault(name, []).append(write)
        return {"UnprocessedItems": unprocessed}

    def _query(self, request: dict[str, Any]) -> dict[str, Any]:
        names = request.get("ExpressionAttributeNames", {})
        values = request.get("ExpressionAttributeValues", {})
        condition = request["KeyConditionExpression"]
        equal = {names.get(n, n): values[v]["S"] for n, v in _EQUALS.findall(condition)}
        prefix = {names.get(n, n): values[v]["S"] for n, v in _BEGINS.findall(condition)}
        keys, items = self._partitions.get(equal["pk"], ([], {}))
        chosen = [k for k in keys if k.startswith(prefix.get("sk", ""))]
        if "sk" in equal:
            chosen = [k for k in chosen if k == equal["sk"]]
        forward = request.get("ScanIndexForward", True)
        if not forward:
            chosen.reverse()
        after = request.get("ExclusiveStartKey")
        if after is not None:
            start = after["sk"]["S"]
            chosen = [k for k in chosen if (k > start if forward else k < start)]
        limit = int(request.get("Limit", len(chosen) or 1))
        page = chosen[:limit]
        answer: dict[str, Any] = {
            "Items": [items[k] for k in page],
            "Count": len(page),
            "ScannedCount": len(page),
        }
        if len(chosen) > limit:
            answer["LastEvaluatedKey"] = {"pk": {"S": equal["pk"]}, "sk": {"S": page[-1]}}
        return answer


@contextlib.contextmanager
def running(*, rate: float) -> Iterator[str]:
    """Start the store in a child process; yields its URL, stops it on exit."""
    with child.running("benchmarks.store", f"--rate={rate}") as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--rate", type=float, default=100.0, help="writes a second per partition key (0: no limit)"
    )
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    store = Store(rate=args.rate)
    asyncio.run(child.serve(lambda r, w: server.handle(store, r, w), port=args.port))


if __name__ == "__main__":
    main()

"""A loopback stand-in for DynamoDB: any POST is answered with a fixed, pre-encoded JSON body.

The answer is chosen by the ``X-Amz-Target`` header: ``Query`` gets the order's page (its items
and the order), ``GetItem`` the order, ``DescribeTable`` a key schema, ``BatchWriteItem`` an empty
``UnprocessedItems`` (every write accepted), ``BatchGetItem`` an order for each key asked for
(the order with that key's id: coalesced gets match replies to callers by key), anything else
(``PutItem``) ``{}``. In
paging mode (``children > 0``) a Query instead reads a ``children``-item collection in pages of
``page_size`` (fewer if the request's ``Limit`` asks), generated on the fly from
``ExclusiveStartKey`` so the server never holds the whole collection. Latency, when a benchmark
wants it, comes from a delaying proxy in front (``benchmarks.proxy``).

It runs in a process of its own (:func:`running`, see ``benchmarks.child``), so the benchmark
process's CPU time is the client's alone. Standard library only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from collections.abc import Iterator
from typing import Any, Final, Protocol

from benchmarks import child, data

_TARGET_PREFIX: Final = "DynamoDB_20120810."
_HEAD: Final = (
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: application/x-amz-json-1.0\r\n"
    "x-amzn-RequestId: BENCHMARK0000000000000000000000000000000000000000000\r\n"
    "Content-Length: {}\r\n"
    "\r\n"
)


def encode(value: Any) -> bytes:
    """Compact JSON, as DynamoDB sends it."""
    return json.dumps(value, separators=(",", ":")).encode()


def _response(body: bytes) -> bytes:
    return _HEAD.format(len(body)).encode("ascii") + body


class Responder:
    """Builds the bytes to answer a request with; all fixed answers are encoded up front."""

    def __init__(self, *, items: int, children: int = 0, page_size: int = 1000) -> None:
        self.items = items
        self.children = children
        self.page_size = page_size
        self._fixed = {
            "Query": _response(encode(data.query_page(items))),
            "GetItem": _response(encode({"Item": data.order(items)})),
            "DescribeTable": _response(encode(data.table_description())),
            "BatchWriteItem": _response(encode({"UnprocessedItems": {}})),
        }
        self._empty = _response(b"{}")

    def respond(self, target: str, body: bytes) -> bytes:
        operation = target.removeprefix(_TARGET_PREFIX)
        if operation == "Query" and self.children:
            return _response(encode(self._children_page(json.loads(body))))
        if operation == "BatchGetItem":
            return _response(encode(self._orders(json.loads(body))))
        return self._fixed.get(operation, self._empty)

    def _orders(self, request: dict[str, Any]) -> dict[str, Any]:
        found = {
            name: [
                data.order(self.items, key["pk"]["S"].removeprefix("order#"))
                for key in entry["Keys"]
            ]
            for name, entry in request["RequestItems"].items()
        }
        return {"Responses": found, "UnprocessedKeys": {}}

    def _children_page(self, request: dict[str, Any]) -> dict[str, Any]:
        start = 1
        after = request.get("ExclusiveStartKey")
        if after is not None:
            start = int(after["sk"]["S"].removeprefix(data.ITEM_PREFIX)) + 1
        count = min(self.page_size, int(request.get("Limit", self.page_size)))
        return data.children_page(start, count, self.children)


class Answers(Protocol):
    """What answers the requests of a loopback server (this module's Responder, the store's)."""

    def respond(self, target: str, body: bytes) -> bytes: ...


async def handle(
    responder: Answers, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Answer the requests of one client connection, in turn, until it closes."""
    # HTTP/1.1 keep-alive: requests on one connection are answered in turn, until it closes.
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            headers: dict[str, str] = {}
            for line in head.decode("latin-1").split("\r\n")[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            writer.write(responder.respond(headers.get("x-amz-target", ""), body))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass  # the client hung up
    except asyncio.CancelledError:
        # Shutting down with the connection still open. Ending the task quietly, as its
        # outermost frame, spares Python 3.11's stream callback from logging the cancellation.
        pass
    finally:
        writer.close()


@contextlib.contextmanager
def running(*, items: int, children: int = 0, page_size: int = 1000) -> Iterator[str]:
    """Start the server in a child process; yields its URL, stops it on exit."""
    arguments = (f"--items={items}", f"--children={children}", f"--page-size={page_size}")
    with child.running("benchmarks.server", *arguments) as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000, help="order items in the Query page")
    parser.add_argument("--children", type=int, default=0, help="paging mode: collection size")
    parser.add_argument("--page-size", type=int, default=1000, help="paging mode: items a page")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    responder = Responder(items=args.items, children=args.children, page_size=args.page_size)
    asyncio.run(child.serve(lambda r, w: handle(responder, r, w), port=args.port))


if __name__ == "__main__":
    main()

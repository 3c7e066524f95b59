"""A delaying loopback proxy: every request reaches the server ``delay`` seconds after it was sent.

It stands between a client and a server on 127.0.0.1 and forwards bytes both ways, holding each
chunk of a request back until ``delay`` has passed since it arrived (a timer on the proxy's event
loop, so order is kept and a request sent in several writes is late once, not once per write).
Answers go back at once. To the client that is a network with ``delay`` of round-trip time.

Run it with :func:`running`; it lives in a child process (see ``benchmarks.child``). Standard
library only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Iterator
from urllib.parse import urlsplit

from benchmarks import child

_CHUNK = 1 << 16


async def _late(source: asyncio.StreamReader, sink: asyncio.StreamWriter, delay: float) -> None:
    """Copy ``source`` to ``sink``, each chunk ``delay`` seconds after it arrived."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await queue.get()
            if not data:
                return
            await asyncio.sleep(max(0.0, due - loop.time()))
            sink.write(data)
            await sink.drain()

    delivering = asyncio.create_task(deliver())
    try:
        while data := await source.read(_CHUNK):
            queue.put_nowait((loop.time() + delay, data))
        queue.put_nowait((0.0, b""))  # end of stream, once everything before it is delivered
        await delivering
    finally:
        delivering.cancel()


async def _at_once(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    while data := await source.read(_CHUNK):
        sink.write(data)
        await sink.drain()


async def _connection(
    upstream: tuple[str, int],
    delay: float,
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
) -> None:
    try:
        server_reader, server_writer = await asyncio.open_connection(*upstream)
    except asyncio.CancelledError:  # the proxy is shutting down (see below)
        client_writer.close()
        return
    pumps = [
        asyncio.create_task(_late(client_reader, server_writer, delay)),
        asyncio.create_task(_at_once(server_reader, client_writer)),
    ]
    try:
        # Whichever side hangs up first ends the connection.
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        pass  # the proxy is shutting down; ending quietly keeps Python 3.11's streams from logging
    finally:
        for pump in pumps:
            pump.cancel()
        # Cancelled again while the pumps end (the shutdown cancels every task): end quietly too.
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*pumps, return_exceptions=True)
        server_writer.close()
        client_writer.close()


@contextlib.contextmanager
def running(upstream_url: str, *, delay: float) -> Iterator[str]:
    """Start a proxy to ``upstream_url`` in a child process; yields its URL, stops it on exit."""
    with child.running("benchmarks.proxy", f"--upstream={upstream_url}", f"--delay={delay}") as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="the server's URL (http://host:port)")
    parser.add_argument("--delay", type=float, required=True, help="seconds added to a request")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    parts = urlsplit(args.upstream)
    if parts.hostname is None or parts.port is None:
        parser.error(f"--upstream needs a host and a port, got {args.upstream!r}")
    upstream = (parts.hostname, parts.port)
    asyncio.run(child.serve(lambda r, w: _connection(upstream, args.delay, r, w), port=args.port))


if __name__ == "__main__":
    main()

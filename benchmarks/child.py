"""Benchmark helpers that run in a child process of their own (the loopback server, the proxy).

A helper listens on 127.0.0.1, prints ``READY <port>`` once it does, and serves until its
standard input closes. Running it in another process keeps its CPU time out of the benchmark
process's, so ``time.process_time()`` there measures the client alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Final

#: The line a helper prints once it listens: ``READY <port>``.
READY: Final = "READY"

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def serve(handle: Handler, *, port: int = 0) -> None:
    """Listen on 127.0.0.1, print ``READY <port>``, serve until standard input closes."""
    server = await asyncio.start_server(handle, "127.0.0.1", port)
    bound = server.sockets[0].getsockname()[1]
    print(READY, bound, flush=True)
    async with server:
        # The parent closes our stdin to stop us (and so does its death).
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.buffer.read)


@contextlib.contextmanager
def running(module: str, *arguments: str) -> Iterator[str]:
    """Start ``python -m module arguments…``; yields its URL, stops it on exit."""
    command = [sys.executable, "-m", module, *arguments]
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdin is not None  # noqa: S101 - both pipes were asked for
    assert process.stdout is not None  # noqa: S101
    try:
        line = process.stdout.readline().split()
        if len(line) != 2 or line[0] != READY:  # "READY <port>"
            raise RuntimeError(f"{module} did not start (said {line!r})")
        yield f"http://127.0.0.1:{line[1]}"
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()

"""The User-Agent header dynorm's requests carry, as an HTTP server receives it."""

from __future__ import annotations

import asyncio
import importlib.metadata
import platform
from collections.abc import AsyncIterator

import pytest

import dynorm
from dynorm import connect
from tests.seed_models import Org, app

pytestmark = pytest.mark.integration


class HeaderRecorder:
    """A minimal HTTP server: answers every request with ``{}`` and keeps its headers."""

    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                headers = {}
                for line in head.decode("latin-1").split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name:
                        headers[name.strip().lower()] = value.strip()
                await reader.readexactly(int(headers.get("content-length", "0")))
                self.headers.append(headers)
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\n"
                    b"Content-Length: 2\r\n\r\n{}"
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client hung up
        finally:
            writer.close()


@pytest.fixture
async def recorder() -> AsyncIterator[tuple[HeaderRecorder, str]]:
    recording = HeaderRecorder()
    server = await asyncio.start_server(recording.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield recording, f"http://127.0.0.1:{port}"


async def test_requests_name_dynorm_and_every_layer_below_it(
    recorder: tuple[HeaderRecorder, str],
) -> None:
    recording, url = recorder
    async with connect(
        app,
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ) as db:
        with pytest.raises(dynorm.ItemNotFoundError):
            await db.get(Org, name="NOBODY")  # the server's {} is "no such item"
        await db.query(Org, name="NOBODY").all()
    agents = [h["user-agent"] for h in recording.headers]
    assert len(agents) == 2
    assert agents[0] == agents[1]  # the same fixed string on every request
    parts = agents[0].split()
    assert parts[0].startswith("dynorm/")  # first: the client that made the request
    for package in ("dynorm", "aiobotocore", "botocore"):
        assert f"{package}/{importlib.metadata.version(package)}" in parts
    assert f"Python/{platform.python_version()}" in parts

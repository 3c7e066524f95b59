"""A FastAPI app served in process to an httpx client, for tests of dynorm in a web app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI

from dynorm import Database


class Served:
    """The app, its client, and the Database it serves from (to seed and count requests)."""

    def __init__(self, app: FastAPI, client: httpx.AsyncClient) -> None:
        self.app = app
        self.client = client

    @property
    def db(self) -> Database:
        db: Database = self.app.state.db
        return db

    async def post_text(self, path: str, text: str) -> httpx.Response:
        """POST a JSON body written by hand (numbers and escapes as the client wrote them)."""
        headers = {"content-type": "application/json"}
        return await self.client.post(path, content=text.encode(), headers=headers)


@asynccontextmanager
async def served(app: FastAPI) -> AsyncIterator[Served]:
    """``app`` started (its lifespan: the Database opened) and a client talking to it."""
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
    ):
        yield Served(app, client)

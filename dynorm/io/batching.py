"""A connection's batches: BatchGetItem and BatchWriteItem, chunked, tables sharing requests.

:class:`Batches` is the part of a :class:`~dynorm.io.database.Database` that reads items by key
and writes batches of items: it chunks keys and writes to the connection's ``batch_get_size``
and ``batch_write_size``, lets several tables share one request, and hands each chunk to the
loops of ``io/batch.py``, which retry unprocessed work. Those loops are imported on the first
batch: a process that only gets and queries never loads them
(tests/integration/test_lean_connection.py).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dynorm.core.chunks import KeyId, chunked, key_id
from dynorm.core.codec.converter import Item
from dynorm.core.requests import get_item
from dynorm.core.steps import Fetch, Step, together_fetches, together_writes
from dynorm.mapping.model import ModelTable

from .paging import Sender
from .tables import Tables

if TYPE_CHECKING:
    from .coalesce import Found

__all__ = ["Batches", "Fetched"]

#: Raw items a Together's Fetch steps read, by (table name, consistent, ``key_id``).
Fetched = dict[tuple[str, bool, KeyId], Item]


class _Drains:
    """The BatchGetItem/BatchWriteItem loops (``io/batch.py``), imported on a first batch."""

    def __init__(self) -> None:
        from .batch import (  # noqa: PLC0415 - once per connection, on its first batch
            drain_get,
            drain_get_tables,
            drain_write,
            drain_write_tables,
        )

        self.drain_get = drain_get
        self.drain_get_tables = drain_get_tables
        self.drain_write = drain_write
        self.drain_write_tables = drain_write_tables


class Batches:
    """Reads by key and batch writes of one connection, sent through ``send``.

    ``max_attempts`` bounds the rounds without progress of each batch (see ``io/batch.py``);
    ``tables`` says which table each name is and which one a call without a table means.
    """

    def __init__(
        self, send: Sender, tables: Tables, *, max_attempts: int, get_size: int, write_size: int
    ) -> None:
        self._send = send
        self._tables = tables
        self._max_attempts = max_attempts
        self._get_size = get_size
        self._write_size = write_size

    @functools.cached_property
    def _drains(self) -> _Drains:
        return _Drains()

    async def fetch(
        self,
        keys: Sequence[Item],
        *,
        consistent: bool = False,
        table: ModelTable | None = None,
    ) -> dict[Any, Item]:
        """Raw items for primary keys, by ``key_id`` (BatchGetItem, unprocessed keys retried).

        ``table``: whose keys (None: the only table's).
        """
        tables = self._tables
        connected = tables.only("fetch()") if table is None else tables.of_table(table)
        unique = list({key_id(k): k for k in keys}.values())
        chunks = list(chunked(unique, self._get_size))
        drain_get = self._drains.drain_get
        found_chunks = await asyncio.gather(
            *(
                drain_get(
                    self._send,
                    connected.name,
                    chunk,
                    consistent=consistent,
                    max_attempts=self._max_attempts,
                    sleep=asyncio.sleep,
                    parse=connected.table.parser("BatchGetItem"),
                )
                for chunk in chunks
            )
        )
        primary = connected.table.primary_attributes
        return {
            key_id({a: raw[a] for a in primary}): raw for chunk in found_chunks for raw in chunk
        }

    async def fetch_named(
        self, keys: Sequence[tuple[str, Item]], *, consistent: bool = False
    ) -> dict[tuple[str, Any], Item]:
        """Raw items by (table name, ``key_id``) for (table name, key) pairs.

        Any tables of this connection: BatchGetItem, the tables sharing requests (100 keys a
        request), each table's keys in the order first named.
        """
        names = list(dict.fromkeys(n for n, _ in keys))  # in order: the requests are as planned
        if len(names) == 1:
            (name,) = names
            table = self._tables.of_name(name).table
            one = await self.fetch([k for _, k in keys], consistent=consistent, table=table)
            return {(name, ident): raw for ident, raw in one.items()}
        steps = tuple(
            (n, Fetch(tuple(k for u, k in keys if u == n), consistent=consistent)) for n in names
        )
        fetched = await self.together(steps)
        return {(name, ident): raw for (name, _, ident), raw in fetched.items()}

    async def together(self, steps: Sequence[tuple[str, Step]]) -> Fetched:
        """The Fetch and WriteBatch steps of a Together (``core/steps.py``), sharing requests.

        Every table's writes go in BatchWriteItems of ``write_size`` writes in all, and its
        keys in BatchGetItems of ``get_size`` keys (consistent and eventually consistent reads
        apart), all at once. Returns what the Fetch steps read; the other steps are left to
        the caller. The first failure is raised once every request was answered.
        """
        fetched: Fetched = {}

        async def read(chunk: dict[str, list[Item]], *, consistent: bool) -> None:
            found = await self.get_tables(chunk, consistent=consistent)
            for (name, ident), raw in found.items():
                fetched[(name, consistent, ident)] = raw

        jobs = [self.write_tables(c) for c in together_writes(steps, self._write_size)]
        jobs += [
            read(c, consistent=consistent)
            for consistent in (True, False)
            for c in together_fetches(steps, self._get_size, consistent=consistent)
        ]
        await asyncio.gather(*jobs)
        return fetched

    async def fetch_keys(self, keys: dict[str, list[Item]], *, consistent: bool) -> Found:
        """One coalesced batch of single gets (``io/coalesce.py``): raw items by table and key.

        A batch of one key is sent as the GetItem that get would send alone, so gets awaited
        one at a time send what they send without coalescing. Otherwise one BatchGetItem
        (several tables' entries in one when the batch spans tables), unprocessed keys retried.
        """
        if len(keys) == 1:
            ((name, only),) = keys.items()
            table = self._tables.of_name(name).table
            if len(only) == 1:
                request = get_item(
                    name, only[0], consistent=consistent, parse=table.parser("GetItem")
                )
                raw = (await self._send(request)).get("Item")
                return {} if raw is None else {(name, key_id(only[0])): raw}
            # One table: fetch() reads it, its typed structures parsing the reply.
            found = await self.fetch(only, consistent=consistent, table=table)
            return {(name, ident): raw for ident, raw in found.items()}
        return await self.get_tables(keys, consistent=consistent)

    async def get_tables(self, keys: dict[str, list[Item]], *, consistent: bool) -> Found:
        """BatchGetItem of several tables' keys (unprocessed keys retried), by table and key."""
        found = await self._drains.drain_get_tables(
            self._send,
            keys,
            consistent=consistent,
            max_attempts=self._max_attempts,
            sleep=asyncio.sleep,
        )
        by_key: Found = {}
        for name, raws in found.items():
            primary = self._tables.of_name(name).table.primary_attributes
            for raw in raws:
                by_key[(name, key_id({a: raw[a] for a in primary}))] = raw
        return by_key

    async def write(self, writes: list[dict[str, Any]], table_name: str) -> None:
        """One table's batch writes (a WriteBatch step), ``write_size`` a request, concurrently."""
        drain_write = self._drains.drain_write
        await asyncio.gather(
            *(
                drain_write(
                    self._send,
                    table_name,
                    chunk,
                    max_attempts=self._max_attempts,
                    sleep=asyncio.sleep,
                )
                for chunk in chunked(writes, self._write_size)
            )
        )

    async def write_tables(self, chunk: dict[str, list[dict[str, Any]]]) -> None:
        """One BatchWriteItem's worth of several tables' writes (unprocessed writes retried)."""
        await self._drains.drain_write_tables(
            self._send, chunk, max_attempts=self._max_attempts, sleep=asyncio.sleep
        )

"""Coalesced single gets (``connect(coalesce=True)``): concurrent ``db.get`` calls share requests.

A GraphQL resolver or a fan-in endpoint awaits one ``db.get`` per object, concurrently; sent alone
that is one GetItem each. Here each such get joins the connection's pending batch and awaits its
own future. The batch goes out on the next turn of the event loop (``loop.call_soon``: every get
started in this turn has joined it by then), or at once when it holds ``size`` distinct keys, as
one BatchGetItem (several tables share it, one entry per table; consistent and eventually
consistent gets never share a request, since ConsistentRead is per table entry, not per key).

Each caller's future is its own: a caller cancelled while waiting cancels only that future, and
the request, which runs in a task of its own, goes on for the others. Nothing is decoded here:
each caller decodes its own object from the raw item (``io/loading.py`` ``found_item``), so two
gets of one key in one batch share the request but not a mutable instance. Likewise a failed
batch hands each caller an exception of its own (:func:`own_copy`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Protocol

from dynorm.core.chunks import KeyId, key_id
from dynorm.core.codec.converter import Item

__all__ = ["Coalescer", "FetchKeys", "Found", "own_copy"]

#: Raw items found, by (table name, ``key_id`` of the item's primary key).
Found = dict[tuple[str, KeyId], Item]


class FetchKeys(Protocol):
    """Reads table name -> keys (each once, at most one request's worth), raw items found."""

    def __call__(self, keys: dict[str, list[Item]], *, consistent: bool) -> Awaitable[Found]: ...


def own_copy(error: Exception) -> Exception:
    """A caller's own ``error``: the same class, message and attributes, caused by ``error``.

    Raising one exception object in several tasks makes each raise add its frames to the one
    ``__traceback__`` and set the one ``__context__``: concurrent callers' tracebacks would
    tangle. Each gets a copy instead, its ``__cause__`` the shared failure (with the request's
    traceback). The copy is made without calling ``__init__``, whose signature differs between
    error classes; its notes are a list of its own.
    """
    try:
        copy = type(error).__new__(type(error), *error.args)
    except TypeError:  # an exception class whose __new__ takes other arguments: shared as is
        return error
    copy.args = error.args
    copy.__dict__.update(error.__dict__)
    notes = getattr(error, "__notes__", None)
    if notes is not None:
        copy.__notes__ = list(notes)
    copy.__cause__ = error
    copy.__suppress_context__ = True
    return copy


class _Entry:
    """One distinct key of a pending batch, and the futures of every get that asked for it."""

    __slots__ = ("key", "waiters")

    def __init__(self, key: Item) -> None:
        self.key = key
        self.waiters: list[asyncio.Future[Item | None]] = []


class Coalescer:
    """The pending single gets of one Database, flushed as shared requests.

    ``fetch`` sends one batch (with its retries of unprocessed keys) and returns what it found;
    ``size`` is the most distinct keys one batch holds (BatchGetItem's 100, or the connection's
    ``batch_get_size``).
    """

    def __init__(self, fetch: FetchKeys, size: int) -> None:
        self._fetch = fetch
        self._size = size
        # Per consistency: the keys waiting for the next flush, in the order they were asked for.
        self._pending: dict[bool, dict[tuple[str, KeyId], _Entry]] = {False: {}, True: {}}
        self._flush_at: asyncio.Handle | None = None
        # Strong references: a running batch must not be collected while callers wait on it.
        self._running: set[asyncio.Task[None]] = set()

    def get(self, table_name: str, key: Item, *, consistent: bool) -> asyncio.Future[Item | None]:
        """The raw item with ``key`` in ``table_name`` (None if there is none), once sent."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Item | None] = loop.create_future()
        batch = self._pending[consistent]
        ident = (table_name, key_id(key))
        entry = batch.get(ident)
        if entry is None:
            entry = batch[ident] = _Entry(key)
        entry.waiters.append(future)
        if len(batch) >= self._size:
            self._start(consistent=consistent)  # a full request: nothing more could join it
        elif self._flush_at is None:
            self._flush_at = loop.call_soon(self._flush)
        return future

    def _flush(self) -> None:
        self._flush_at = None
        for consistent in (False, True):
            self._start(consistent=consistent)

    def _start(self, *, consistent: bool) -> None:
        batch, self._pending[consistent] = self._pending[consistent], {}
        # Keys whose every caller was cancelled before the flush are not read at all.
        batch = {i: e for i, e in batch.items() if not all(w.done() for w in e.waiters)}
        if not batch:
            return
        task = asyncio.get_running_loop().create_task(self._run(batch, consistent=consistent))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _run(self, batch: dict[tuple[str, KeyId], _Entry], *, consistent: bool) -> None:
        keys: dict[str, list[Item]] = {}
        for (name, _), entry in batch.items():
            keys.setdefault(name, []).append(entry.key)
        try:
            found = await self._fetch(keys, consistent=consistent)
        except asyncio.CancelledError:
            # Only when the loop itself cancels the task (shutdown): callers must not hang.
            for entry in batch.values():
                for waiter in entry.waiters:
                    waiter.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - handed to every caller, who raises it
            # The whole request failed (after the transport's retries): every caller of this
            # batch gets the error; callers of other batches are not affected.
            for entry in batch.values():
                for waiter in entry.waiters:
                    if not waiter.done():
                        waiter.set_exception(own_copy(exc))
            return
        for ident, entry in batch.items():
            raw = found.get(ident)
            for waiter in entry.waiters:
                if not waiter.done():  # a cancelled caller
                    waiter.set_result(raw)

    async def settle(self) -> None:
        """Send what is pending now and wait for every batch.

        Called before the connection closes, so no caller is left waiting on a request that can
        no longer be sent.
        """
        while True:
            if self._flush_at is not None:
                self._flush_at.cancel()
                self._flush()
            if not self._running:
                return
            # Errors are the callers' (each batch hands its own to its futures).
            await asyncio.gather(*self._running, return_exceptions=True)

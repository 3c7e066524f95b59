"""The plan runner: runs the plans of writes, step by step, sending what each step asks.

A plan (``core/steps.py``) is a generator that yields steps and receives their results; the
:class:`Runner` of a :class:`~dynorm.io.database.Database` answers each: ``Send`` one request,
``SendAll`` many (after a failure none more), ``ReadAll``/``ReadEach`` whole reads through
``io/paging.py``, ``Fetch``/``WriteBatch`` through the connection's
:class:`~dynorm.io.batching.Batches`, and ``Together`` the steps of several tables at once,
their batches sharing requests. A failure is a DynormError thrown into the plan, which decides
what it means.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Final, TypeVar

from dynorm.core.chunks import key_id
from dynorm.core.codec.converter import Item
from dynorm.core.errors import DynormError
from dynorm.core.requests import Request
from dynorm.core.steps import (
    CANCELLED,
    Fetch,
    Plan,
    ReadAll,
    ReadEach,
    Send,
    SendAll,
    Step,
    Together,
    WriteBatch,
)
from dynorm.mapping.table import Table

from .batching import Batches, Fetched
from .paging import Sender, pages
from .tables import Tables

__all__ = ["SEND_ALL_WINDOW", "Runner"]

T = TypeVar("T")

#: How many requests of one SendAll step (a fan-out of copy transactions) are in flight at once:
#: after a failure, the ones not yet sent are not sent at all.
SEND_ALL_WINDOW: Final = 16


class Runner:
    """Runs plans for one connection: each request through ``send``, batches through ``batches``.

    ``tables`` names the table of a plan's batch steps (a plan of one table's planner leaves it
    to the runner) and the tables of a Together's steps.
    """

    def __init__(self, send: Sender, tables: Tables, batches: Batches) -> None:
        self._send = send
        self._tables = tables
        self._batches = batches

    async def run(self, plan: Plan[T], table: Table | None = None) -> T:
        """Run a write plan: send each step it yields and hand it the result (or the error).

        ``table``: the table of the plan's batch steps (Fetch, WriteBatch), for a plan of one
        table's planner (None: the only table's). Steps of several tables come as
        :class:`~dynorm.core.steps.Together`, which names each step's table.
        """
        result: Any = None
        error: DynormError | None = None
        try:
            while True:
                try:
                    step = plan.send(result) if error is None else plan.throw(error)
                except StopIteration as stop:
                    value: T = stop.value
                    return value
                result, error = None, None
                try:
                    result = await self.step(step, table)
                except DynormError as exc:
                    error = exc
        finally:
            plan.close()  # cancelled, or failed outside dynorm: the plan's own cleanup runs

    async def step(self, step: Step, table: Table | None = None) -> Any:
        """Run one step of a plan and return its result (the plan's input for the next)."""
        if isinstance(step, Together):
            return await self._together(step)
        if isinstance(step, Send):
            return await self._send(step.request)
        if isinstance(step, SendAll):
            return await self._send_all(step.requests)
        if isinstance(step, ReadAll):
            return await self._read_all(step.request)
        if isinstance(step, ReadEach):
            return await self._read_each(step.requests)
        if isinstance(step, WriteBatch):
            await self._batches.write(list(step.writes), self._plan_table(table))
            return None
        if isinstance(step, Fetch):
            return await self._batches.fetch(step.keys, consistent=step.consistent, table=table)
        raise TypeError(f"unknown plan step {step!r}")  # pragma: no cover

    def _plan_table(self, table: Table | None) -> str:
        if table is None:
            return self._tables.only("run(plan) of a batch step").name
        return self._tables.name_of(table)

    async def _together(self, together: Together) -> list[Any]:
        """Run steps of several tables at once: their batches share requests (see Together)."""
        steps = together.steps
        outcomes: list[Any] = [None] * len(steps)
        fetched: Fetched = {}

        async def batches() -> None:
            fetched.update(await self._batches.together(steps))

        async def other(i: int, name: str, step: Step) -> None:
            try:
                outcomes[i] = await self.step(step, self._tables.of_name(name).table)
            except DynormError as exc:
                outcomes[i] = exc

        batched = [i for i, (_, s) in enumerate(steps) if isinstance(s, Fetch | WriteBatch)]
        error: DynormError | None = None
        try:
            await asyncio.gather(
                batches(),
                *(other(i, n, s) for i, (n, s) in enumerate(steps) if i not in batched),
            )
        except DynormError as exc:
            error = exc
        for i in batched:
            name, step = steps[i]
            if error is not None:
                outcomes[i] = error
            elif isinstance(step, Fetch):
                outcomes[i] = {
                    key_id(k): fetched[(name, step.consistent, key_id(k))]
                    for k in step.keys
                    if (name, step.consistent, key_id(k)) in fetched
                }
        return outcomes

    async def _read_all(self, request: Request) -> list[Item]:
        return [item async for page in pages(self._send, request) for item in page.get("Items", [])]

    async def _read_each(self, requests: Sequence[Request]) -> list[list[Item]]:
        """Each read whole, concurrently; a failure cancels the others (reads change nothing)."""
        window = asyncio.Semaphore(SEND_ALL_WINDOW)

        async def one(request: Request) -> list[Item]:
            async with window:
                return await self._read_all(request)

        tasks = [asyncio.ensure_future(one(r)) for r in requests]
        try:
            return list(await asyncio.gather(*tasks))
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _send_all(self, requests: Sequence[Request]) -> list[Any]:
        """Send concurrently; after the first failure nothing more is sent (see SendAll)."""
        outcomes: list[Any] = [CANCELLED] * len(requests)
        window = asyncio.Semaphore(SEND_ALL_WINDOW)
        failed = False

        async def one(i: int) -> None:
            nonlocal failed
            async with window:
                if failed:
                    return  # not sent: stays CANCELLED
                try:
                    outcomes[i] = await self._send(requests[i])
                except DynormError as exc:
                    outcomes[i] = exc
                    failed = True
                except BaseException:
                    failed = True
                    raise

        # Requests already sent are awaited rather than cancelled: a cancelled HTTP request may
        # still be applied by the server, and the plan must know what was written. A failure
        # outside dynorm's errors (a bug) is raised once every request has settled.
        for result in await asyncio.gather(
            *(one(i) for i in range(len(requests))), return_exceptions=True
        ):
            if isinstance(result, BaseException):
                raise result
        return outcomes

"""Plans that must read before they write, as generators of steps (httpx's ``auth_flow`` shape).

A plan is a generator: it yields a step (one request, several to send concurrently, a batch of
writes, keys to fetch), receives the step's result, and finally returns its own result. It never
awaits, so every decision a write makes is pure and unit-testable; the Database runs the steps.
A failure of a step is thrown into the plan at the ``yield``, so a plan can react to it (a refused
condition, say) the same way it reacts to a response.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from typing import Any, Final, TypeAlias, TypeVar

import attrs

from .codec.converter import Item
from .requests import CollectionRead, Request

__all__ = [
    "CANCELLED",
    "Fetch",
    "FromRead",
    "Plan",
    "ReadAll",
    "ReadEach",
    "Send",
    "SendAll",
    "Step",
    "Unread",
    "WriteBatch",
    "read_all",
    "request_of",
    "write_batch",
]

T = TypeVar("T")


@attrs.frozen
class Send:
    """Send one request; the plan receives the parsed response."""

    request: Request


@attrs.frozen
class SendAll:
    """Send requests concurrently; the plan receives one outcome per request, in order.

    An outcome is the response, the DynormError the request raised, or :data:`CANCELLED` for a
    request never sent: after the first failure no further request is sent, and the ones
    already in flight are awaited, so nothing keeps writing once the plan has its outcomes.
    """

    requests: tuple[Request, ...]


@attrs.frozen
class WriteBatch:
    """Write PutRequest/DeleteRequest entries with BatchWriteItem (chunked, unprocessed retried)."""

    writes: tuple[dict[str, Any], ...]


@attrs.frozen
class ReadAll:
    """Read every page of a Query or Scan; the plan receives the raw items, in order.

    The io layer's one paging loop reads the pages, so plans never page by hand.
    """

    request: Request


@attrs.frozen
class ReadEach:
    """Read every page of each of several Queries or Scans, concurrently.

    The plan receives each read's raw items, in the order of ``requests``: a level of a tree
    (one Query per parent) costs the time of its slowest read rather than of all of them.
    """

    requests: tuple[Request, ...]


@attrs.frozen
class Fetch:
    """Read items by primary key with BatchGetItem; the plan receives ``{key_id: item}``."""

    keys: tuple[Item, ...]
    consistent: bool = True


Step: TypeAlias = Send | SendAll | ReadAll | ReadEach | WriteBatch | Fetch
Plan: TypeAlias = Generator[Step, Any, T]


class Unread(dict[str, Any]):
    """What ``explain`` answers every step with: nothing is known of what the server holds.

    It is an empty response (a plan reads it as "nothing returned"); a plan that takes values
    from a read checks for it and leaves :class:`FromRead` placeholders where they would go,
    so ``explain`` shows the writes as they will be sent.
    """


@attrs.frozen
class FromRead:
    """A value a write takes from a read sent before it, as ``explain`` shows the write.

    It stands where the value goes: an attribute of a PutItem's ``Item``, an
    ``ExpressionAttributeValues`` entry, a key of a BatchWriteItem's ``DeleteRequest``.
    ``what`` says which value: ``"Author.birthdate"``, ``"the keys of the Book items read"``.
    """

    what: str

    def __repr__(self) -> str:
        return f"<{self.what}, from a read before>"


def write_batch(writes: Iterable[dict[str, Any]]) -> Plan[None]:
    """The plan of raw BatchWriteItem entries alone (``db.run`` chunks and retries them)."""
    yield WriteBatch(tuple(writes))


class _Cancelled:
    def __repr__(self) -> str:
        return "CANCELLED"


#: The outcome of a :class:`SendAll` request that was cancelled before it finished.
CANCELLED: Final = _Cancelled()


def request_of(step: Step) -> list[Request]:
    """The requests a step stands for, as ``explain`` shows them (batches as planned)."""
    if isinstance(step, Send):
        return [step.request]
    if isinstance(step, SendAll | ReadEach):
        return list(step.requests)
    if isinstance(step, ReadAll):
        return [step.request]
    return []


def read_all(
    read: CollectionRead, decode: Callable[[Item], T | None]
) -> Generator[Step, Any, list[T]]:
    """Every item of a collection read, decoded (``None`` results dropped)."""
    base = read.request()
    # Raw items, as stored: the typed page structures of the read path are for its own decoders.
    items: list[Item] = yield ReadAll(Request(base.operation, base.params))
    return [obj for obj in map(decode, items) if obj is not None]


def run_sync(plan: Plan[T], answer: Callable[[Step], Any]) -> T:
    """Drive a plan with ``answer`` giving each step's result (for tests and ``explain``)."""
    try:
        step = next(plan)
        while True:
            step = plan.send(answer(step))
    except StopIteration as stop:
        result: T = stop.value
        return result

"""Plans that must read before they write, as generators of steps (httpx's ``auth_flow`` shape).

A plan is a generator: it yields a step (one request, several to send concurrently, a batch of
writes, keys to fetch), receives the step's result, and finally returns its own result. It never
awaits, so every decision a write makes is pure and unit-testable; the Database runs the steps.
A failure of a step is thrown into the plan at the ``yield``, so a plan can react to it (a refused
condition, say) the same way it reacts to a response.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any, Final, TypeAlias, TypeVar

import msgspec

from .chunks import KeyId, chunked, key_id
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
    "Together",
    "Unread",
    "WriteBatch",
    "on_table",
    "read_each",
    "request_of",
    "together",
    "together_fetches",
    "together_writes",
    "write_batch",
]

T = TypeVar("T")


class Send(msgspec.Struct, frozen=True):
    """Send one request; the plan receives the parsed response."""

    request: Request


class SendAll(msgspec.Struct, frozen=True):
    """Send requests concurrently; the plan receives one outcome per request, in order.

    An outcome is the response, the DynormError the request raised, or :data:`CANCELLED` for a
    request never sent: after the first failure no further request is sent, and the ones
    already in flight are awaited, so nothing keeps writing once the plan has its outcomes.
    """

    requests: tuple[Request, ...]


class WriteBatch(msgspec.Struct, frozen=True):
    """Write PutRequest/DeleteRequest entries with BatchWriteItem (chunked, unprocessed retried)."""

    writes: tuple[dict[str, Any], ...]


class ReadAll(msgspec.Struct, frozen=True):
    """Read every page of a Query or Scan; the plan receives the raw items, in order.

    The io layer's one paging loop reads the pages, so plans never page by hand.
    """

    request: Request


class ReadEach(msgspec.Struct, frozen=True):
    """Read every page of each of several Queries or Scans, concurrently.

    The plan receives each read's raw items, in the order of ``requests``: a level of a tree
    (one Query per parent) costs the time of its slowest read rather than of all of them.
    """

    requests: tuple[Request, ...]


class Fetch(msgspec.Struct, frozen=True):
    """Read items by primary key with BatchGetItem; the plan receives ``{key_id: item}``."""

    keys: tuple[Item, ...]
    consistent: bool = True


class Together(msgspec.Struct, frozen=True):
    """Steps of plans of several tables, run at once; the plan receives one outcome per step.

    Each entry is (table name, step). The WriteBatch entries of every table share
    BatchWriteItem requests (BATCH_WRITE_MAX entries a request, across tables), the Fetch keys
    share BatchGetItem requests (BATCH_GET_MAX keys a request); other steps are sent as they
    are. An outcome is the step's result, or the DynormError it raised. See :func:`together`.
    """

    steps: tuple[tuple[str, Step], ...]


Step: TypeAlias = Send | SendAll | ReadAll | ReadEach | WriteBatch | Fetch | Together
Plan: TypeAlias = Generator[Step, Any, T]


class Unread(dict[str, Any]):
    """What ``explain`` answers every step with: nothing is known of what the server holds.

    It is an empty response (a plan reads it as "nothing returned"); a plan that takes values
    from a read checks for it and leaves :class:`FromRead` placeholders where they would go,
    so ``explain`` shows the writes as they will be sent.
    """


class FromRead(dict[str, str]):
    """A value a write takes from a read sent before it, as ``explain`` shows the write.

    It stands where the value goes: an attribute of a PutItem's ``Item``, an
    ``ExpressionAttributeValues`` entry, a key of a BatchWriteItem's ``DeleteRequest``.
    ``what`` says which value, and so which read it comes from: ``"Author.birthdate"`` (the
    Author read before), ``"the keys of the Book items read"``.

    It is the JSON object ``{"from_read": what}`` (a dict), so explain's requests can be
    logged with ``json.dumps(request.params)``; no stored value has that shape, as every stored
    value is typed (``{"S": ...}``, ``{"N": ...}``, ...).
    """

    __slots__ = ()

    def __init__(self, what: str) -> None:
        super().__init__(from_read=what)

    @property
    def what(self) -> str:
        """Which value, and the read it comes from."""
        return self["from_read"]

    def __repr__(self) -> str:
        return f"<{self.what}, from a read before>"

    __str__ = __repr__


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


def _raw_request(read: CollectionRead) -> Request:
    """The read's request, answered with raw items as stored.

    (The typed page structures of the read path are for its own decoders.)
    """
    base = read.request()
    return Request(base.operation, base.params)


def read_each(reads: Sequence[CollectionRead]) -> Generator[Step, Any, list[list[Item]]]:
    """Every raw item of each collection read, in the order of ``reads``.

    One step, so the reads (a sharded collection's shards, say) are sent concurrently.
    """
    if not reads:
        return []
    answers: list[list[Item]] = yield ReadEach(tuple(map(_raw_request, reads)))
    return answers


def together(plans: Sequence[tuple[str, Plan[Any]]]) -> Plan[list[Any]]:
    """Run plans of several tables side by side; returns their results, in order.

    Every plan is advanced to its first step before any step is yielded, so a plan that refuses
    its input (a check before its first request) stops all of them before anything is sent. The
    steps the plans are at are yielded as one :class:`Together`, and each outcome goes back to
    its plan (an error is thrown into it), so batches of different tables share requests.
    """
    results: list[Any] = [None] * len(plans)
    answers: list[tuple[bool, Any]] = [(False, None)] * len(plans)
    running = dict(enumerate(plans))
    try:
        while running:
            steps: list[tuple[int, str, Step]] = []
            for i, (name, plan) in list(running.items()):
                failed, value = answers[i]
                try:
                    step = plan.throw(value) if failed else plan.send(value)
                except StopIteration as stop:
                    results[i] = stop.value
                    del running[i]
                    continue
                steps.append((i, name, step))
            if not steps:
                break
            outcomes = yield Together(tuple((name, step) for _, name, step in steps))
            for (i, _, _), outcome in zip(steps, outcomes, strict=True):
                answers[i] = (isinstance(outcome, BaseException), outcome)
    finally:
        for _, plan in running.values():
            plan.close()
    return results


def together_writes(
    steps: Sequence[tuple[str, Step]], size: int
) -> list[dict[str, list[dict[str, Any]]]]:
    """The BatchWriteItem requests of a Together's WriteBatch steps, in the order given.

    Each is table name -> writes, ``size`` writes a request in all.
    """
    entries = [
        (name, write)
        for name, step in steps
        if isinstance(step, WriteBatch)
        for write in step.writes
    ]
    out: list[dict[str, list[dict[str, Any]]]] = []
    for chunk in chunked(entries, size):
        grouped: dict[str, list[dict[str, Any]]] = {}
        for name, write in chunk:
            grouped.setdefault(name, []).append(write)
        out.append(grouped)
    return out


def together_fetches(
    steps: Sequence[tuple[str, Step]], size: int, *, consistent: bool
) -> list[dict[str, list[Item]]]:
    """The BatchGetItem requests of a Together's Fetch steps that read ``consistent``.

    Each is table name -> keys, each key once, ``size`` keys a request in all.
    """
    unique: dict[tuple[str, KeyId], tuple[str, Item]] = {}
    for name, step in steps:
        if isinstance(step, Fetch) and step.consistent == consistent:
            for key in step.keys:
                unique.setdefault((name, key_id(key)), (name, key))
    out: list[dict[str, list[Item]]] = []
    for chunk in chunked(list(unique.values()), size):
        grouped: dict[str, list[Item]] = {}
        for name, key in chunk:
            grouped.setdefault(name, []).append(key)
        out.append(grouped)
    return out


def on_table(name: str, plan: Plan[T]) -> Plan[T]:
    """``plan`` with its batch steps (Fetch, WriteBatch) bound to the table named ``name``.

    A plan planned for one table leaves its batches' table to whoever runs it; inside a plan
    of several tables (a transaction across tables) each is yielded as a :class:`Together` of
    one step, which names its table. Every other step names its table in its request.
    """
    value: Any = None
    error: Exception | None = None
    try:
        while True:
            try:
                step = plan.send(value) if error is None else plan.throw(error)
            except StopIteration as stop:
                result: T = stop.value
                return result
            value, error = None, None
            if isinstance(step, Fetch | WriteBatch):
                (outcome,) = yield Together(((name, step),))
                if isinstance(outcome, Exception):
                    error = outcome
                else:
                    value = outcome
                continue
            try:
                value = yield step
            except Exception as exc:  # noqa: BLE001 - handed to the plan, as the runner does
                error = exc
    finally:
        plan.close()


def run_sync(plan: Plan[T], answer: Callable[[Step], Any]) -> T:
    """Drive a plan with ``answer`` giving each step's result (for tests and ``explain``)."""
    try:
        step = next(plan)
        while True:
            step = plan.send(answer(step))
    except StopIteration as stop:
        result: T = stop.value
        return result

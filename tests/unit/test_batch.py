"""Batch chunking and the retry loops for unprocessed work (``dynorm.io.batch``)."""

import base64
import decimal
from collections.abc import Callable
from typing import Any

import pytest

from dynorm import BATCH_GET_MAX, BATCH_WRITE_MAX, TRANSACT_MAX, LimitExceededError, ThrottledError
from dynorm.core.chunks import backoff, chunked, item_key_id, key_id
from dynorm.core.codec.converter import Item
from dynorm.core.requests import Request
from dynorm.io.batch import drain_get, drain_get_tables, drain_write, drain_write_tables


class FakeSend:
    """Records every request and answers with the next scripted response."""

    def __init__(self, respond: Callable[[int, Request], dict[str, Any]]) -> None:
        self.requests: list[Request] = []
        self._respond = respond

    async def __call__(self, request: Request) -> dict[str, Any]:
        self.requests.append(request)
        return self._respond(len(self.requests), request)


class FakeSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def key(n: int) -> Item:
    return {"pk": {"S": f"K#{n}"}, "sk": {"S": f"K#{n}"}}


def item(n: int) -> Item:
    return {**key(n), "n": {"N": str(n)}}


def put(n: int) -> dict[str, Any]:
    return {"PutRequest": {"Item": item(n)}}


# -- limits and chunks ---------------------------------------------------------------------------


def test_limits_are_dynamodbs() -> None:
    assert (BATCH_GET_MAX, BATCH_WRITE_MAX, TRANSACT_MAX) == (100, 25, 100)


def test_chunked_splits_in_order_with_a_short_last_chunk() -> None:
    assert [list(c) for c in chunked(list(range(7)), 3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [list(c) for c in chunked(list(range(50)), BATCH_WRITE_MAX)] == [
        list(range(25)),
        list(range(25, 50)),
    ]
    assert list(chunked([], 25)) == []


@pytest.mark.parametrize("size", [0, -1])
def test_chunk_size_must_be_positive(size: int) -> None:
    with pytest.raises(LimitExceededError, match=f"chunk size must be at least 1; got {size}"):
        list(chunked([1], size))


# -- backoff -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attempt", "ceiling"), [(0, 0.05), (1, 0.1), (3, 0.4), (5, 1.6), (6, 2.0), (30, 2.0)]
)
def test_backoff_draws_full_jitter_below_a_capped_ceiling(
    attempt: int, ceiling: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[tuple[float, float]] = []

    def uniform(low: float, high: float) -> float:
        drawn.append((low, high))
        return high

    monkeypatch.setattr("dynorm.core.chunks.random.uniform", uniform)
    assert backoff(attempt) == pytest.approx(ceiling)
    ((low, high),) = drawn
    assert low == 0
    assert high == pytest.approx(ceiling)


def test_backoff_stays_within_bounds() -> None:
    for attempt in range(12):
        for _ in range(50):
            assert 0 <= backoff(attempt, base=0.01, cap=0.5) <= min(0.5, 0.01 * 2**attempt)


# -- key_id --------------------------------------------------------------------------------------


def test_key_id_ignores_attribute_order() -> None:
    a = {"pk": {"S": "A"}, "sk": {"S": "B"}}
    b = {"sk": {"S": "B"}, "pk": {"S": "A"}}
    assert key_id(a) == key_id(b)
    assert hash(key_id(a)) == hash(key_id(b))


def test_key_id_tells_values_and_types_apart() -> None:
    assert key_id({"pk": {"S": "1"}}) != key_id({"pk": {"N": "1"}})
    assert key_id({"pk": {"S": "A"}, "sk": {"S": "B"}}) != key_id(
        {"pk": {"S": "B"}, "sk": {"S": "A"}}
    )
    assert len({key_id(key(n)) for n in range(10)}) == 10


def _repr_id(key: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The reference to agree with: each value's repr, numbers by value, binaries as bytes.

    DynamoDB reads ``{"N": "1.0"}`` back as ``{"N": "1"}``, and a binary as base64 text on the
    fast path: one stored key either way.
    """

    def stored(av: dict[str, Any]) -> dict[str, Any]:
        ((tag, value),) = av.items() if len(av) == 1 else (("", None),)
        if tag == "N" and isinstance(value, str):
            return {"N": decimal.Decimal(value).normalize()}
        if tag == "B" and isinstance(value, str):
            return {"B": base64.b64decode(value)}
        return av

    return tuple(sorted((name, repr(stored(av))) for name, av in key.items()))


_VALUES: list[dict[str, Any]] = [
    {"S": "1"},
    {"N": "1"},
    {"S": "1.0"},
    {"N": "1.0"},
    {"B": b"1"},
    {"B": "MQ=="},
    {"S": "MQ=="},
    {"S": ""},
    {"S": "é"},
    {"L": [{"S": "1"}]},
    {"M": {"a": {"S": "1"}}},
    {"NULL": True},
    {"S": "1", "N": "1"},
]


def test_key_id_tells_keys_apart_exactly_as_their_stored_values_do() -> None:
    keys = [{"pk": a} for a in _VALUES] + [{"pk": a, "sk": b} for a in _VALUES for b in _VALUES]
    keys += [{"sk": b, "pk": a} for a in _VALUES[:4] for b in _VALUES[:4]]
    for a in keys:
        for b in keys:
            assert (key_id(a) == key_id(b)) == (_repr_id(a) == _repr_id(b)), (a, b)
    assert len({key_id(k) for k in keys}) == len({_repr_id(k) for k in keys})


def test_item_key_id_is_the_key_id_of_the_items_key() -> None:
    for a in _VALUES:
        for b in _VALUES:
            item = {"sk": b, "name": {"S": "x"}, "pk": a}
            assert item_key_id(item, ["pk", "sk"]) == key_id({"pk": a, "sk": b})
            assert item_key_id(item, ["pk"]) == key_id({"pk": a})


# -- drain_get -----------------------------------------------------------------------------------


async def test_drain_get_in_one_round() -> None:
    send = FakeSend(lambda _, __: {"Responses": {"app": [item(1), item(2)]}, "UnprocessedKeys": {}})
    sleep = FakeSleep()
    found = await drain_get(send, "app", [key(1), key(2), key(3)], sleep=sleep)
    assert found == [item(1), item(2)]
    assert send.requests == [
        Request("BatchGetItem", {"RequestItems": {"app": {"Keys": [key(1), key(2), key(3)]}}})
    ]
    assert sleep.delays == []


async def test_drain_get_resends_exactly_the_unprocessed_keys() -> None:
    def respond(call: int, request: Request) -> dict[str, Any]:
        if call == 1:
            return {
                "Responses": {"app": [item(1)]},
                "UnprocessedKeys": {"app": {"Keys": [key(2), key(3)], "ConsistentRead": True}},
            }
        if call == 2:
            return {
                "Responses": {"app": [item(3)]},
                "UnprocessedKeys": {"app": {"Keys": [key(2)], "ConsistentRead": True}},
            }
        return {"Responses": {"app": [item(2)]}}

    send = FakeSend(respond)
    sleep = FakeSleep()
    found = await drain_get(send, "app", [key(1), key(2), key(3)], consistent=True, sleep=sleep)
    assert found == [item(1), item(3), item(2)]
    assert [r.params for r in send.requests] == [
        {"RequestItems": {"app": {"Keys": [key(1), key(2), key(3)], "ConsistentRead": True}}},
        {"RequestItems": {"app": {"Keys": [key(2), key(3)], "ConsistentRead": True}}},
        {"RequestItems": {"app": {"Keys": [key(2)], "ConsistentRead": True}}},
    ]
    assert len(sleep.delays) == 2
    assert 0 <= sleep.delays[0] <= 0.05
    assert 0 <= sleep.delays[1] <= 0.1


async def test_drain_get_sends_the_projection() -> None:
    send = FakeSend(lambda _, __: {})
    projection = {"ProjectionExpression": "#a", "ExpressionAttributeNames": {"#a": "a"}}
    assert await drain_get(send, "app", [key(1)], projection=projection, sleep=FakeSleep()) == []
    assert send.requests[0].params == {
        "RequestItems": {
            "app": {
                "Keys": [key(1)],
                "ProjectionExpression": "#a",
                "ExpressionAttributeNames": {"#a": "a"},
            }
        }
    }


async def test_drain_get_stops_on_empty_unprocessed_keys() -> None:
    send = FakeSend(
        lambda _, __: {"Responses": {"app": []}, "UnprocessedKeys": {"app": {"Keys": []}}}
    )
    assert await drain_get(send, "app", [key(1)], sleep=FakeSleep()) == []
    assert len(send.requests) == 1


async def test_drain_get_gives_up_after_max_attempts() -> None:
    def respond(call: int, request: Request) -> dict[str, Any]:
        return {"UnprocessedKeys": {"app": request.params["RequestItems"]["app"]}}

    send = FakeSend(respond)
    sleep = FakeSleep()
    with pytest.raises(
        ThrottledError, match=r"left 2 keys unprocessed after 3 rounds that read none of them"
    ) as info:
        await drain_get(send, "app", [key(1), key(2)], max_attempts=3, sleep=sleep)
    assert info.value.operation == "BatchGetItem"
    assert "raise max_attempts or the table's read capacity" in str(info.value)
    assert len(send.requests) == 3
    # A pause only between attempts: none after the last one, which is followed by the error.
    assert len(sleep.delays) == 2


# -- drain_write ---------------------------------------------------------------------------------


async def test_drain_write_resends_exactly_the_unprocessed_items() -> None:
    writes = [put(1), put(2), {"DeleteRequest": {"Key": key(3)}}]

    def respond(call: int, request: Request) -> dict[str, Any]:
        if call == 1:
            return {"UnprocessedItems": {"app": [writes[1], writes[2]]}}
        if call == 2:
            return {"UnprocessedItems": {"app": [writes[2]]}}
        return {"UnprocessedItems": {}}

    send = FakeSend(respond)
    sleep = FakeSleep()
    await drain_write(send, "app", writes, sleep=sleep)
    assert send.requests == [
        Request("BatchWriteItem", {"RequestItems": {"app": writes}}),
        Request("BatchWriteItem", {"RequestItems": {"app": [writes[1], writes[2]]}}),
        Request("BatchWriteItem", {"RequestItems": {"app": [writes[2]]}}),
    ]
    assert len(sleep.delays) == 2


async def test_drain_write_does_not_mutate_the_callers_list() -> None:
    writes = [put(1), put(2)]
    send = FakeSend(lambda call, _: {"UnprocessedItems": {"app": [put(2)]}} if call == 1 else {})
    await drain_write(send, "app", writes, sleep=FakeSleep())
    assert writes == [put(1), put(2)]
    assert send.requests[0].params["RequestItems"]["app"] == [put(1), put(2)]


async def test_drain_write_gives_up_after_max_attempts() -> None:
    def respond(call: int, request: Request) -> dict[str, Any]:
        return {"UnprocessedItems": {"app": request.params["RequestItems"]["app"][:1]}}

    send = FakeSend(respond)
    sleep = FakeSleep()
    with pytest.raises(
        ThrottledError, match=r"left 1 writes unprocessed after 4 rounds that stored none"
    ) as info:
        await drain_write(send, "app", [put(1), put(2)], max_attempts=4, sleep=sleep)
    assert info.value.operation == "BatchWriteItem"
    assert "1 of 2 in this batch are stored" in str(info.value)
    # The first round stored one write, so it does not count: 4 rounds without progress after it.
    assert [len(r.params["RequestItems"]["app"]) for r in send.requests] == [2, 1, 1, 1, 1]
    assert len(sleep.delays) == 4
    assert all(0 <= d <= min(2.0, 0.05 * 2**i) for i, d in enumerate(sleep.delays))


def _half(field: str, members: str | None) -> Callable[[int, Request], dict[str, Any]]:
    """Answers every batch of more than one with its second half unprocessed."""

    def respond(call: int, request: Request) -> dict[str, Any]:
        entry = request.params["RequestItems"]["app"]
        sent = entry if members is None else entry[members]
        if len(sent) < 2:
            return {}
        rest = sent[len(sent) // 2 :]
        return {field: {"app": rest if members is None else {**entry, members: rest}}}

    return respond


async def test_drain_write_never_gives_up_while_every_round_stores_something() -> None:
    send = FakeSend(_half("UnprocessedItems", None))
    writes = [put(n) for n in range(BATCH_WRITE_MAX)]
    await drain_write(send, "app", writes, max_attempts=2, sleep=FakeSleep())
    # 25, 13, 7, 4, 2, 1: six rounds, each storing about half; none counts against the two.
    assert [len(r.params["RequestItems"]["app"]) for r in send.requests] == [25, 13, 7, 4, 2, 1]


async def test_drain_get_never_gives_up_while_every_round_reads_something() -> None:
    send = FakeSend(_half("UnprocessedKeys", "Keys"))
    keys = [key(n) for n in range(BATCH_GET_MAX)]
    await drain_get(send, "app", keys, max_attempts=1, sleep=FakeSleep())
    sizes = [len(r.params["RequestItems"]["app"]["Keys"]) for r in send.requests]
    assert sizes == [100, 50, 25, 13, 7, 4, 2, 1]


async def test_a_batch_takes_at_most_its_size_plus_the_attempts_less_one_requests() -> None:
    # The worst case: one write stored per round, then nothing.
    def respond(call: int, request: Request) -> dict[str, Any]:
        sent = request.params["RequestItems"]["app"]
        return {"UnprocessedItems": {"app": sent[1:] if call <= 4 else sent}}

    send, sleep = FakeSend(respond), FakeSleep()
    with pytest.raises(ThrottledError):
        await drain_write(send, "app", [put(n) for n in range(5)], max_attempts=3, sleep=sleep)
    # Four rounds stored one each, then three stored nothing: 5 + 3 - 1 requests, the bound.
    assert len(send.requests) == 7 == 5 + 3 - 1


# -- several tables in one request ---------------------------------------------------------------


async def test_writes_of_two_tables_go_in_one_request_and_each_tables_rest_is_resent() -> None:
    def respond(n: int, request: Request) -> dict[str, Any]:
        if n == 1:  # the audit table's second write is left unprocessed
            return {"UnprocessedItems": {"audit": [put(2)]}}
        return {"UnprocessedItems": {}}

    send, sleep = FakeSend(respond), FakeSleep()
    await drain_write_tables(
        send, {"app": [put(1)], "audit": [put(1), put(2)]}, max_attempts=3, sleep=sleep
    )
    assert [r.params["RequestItems"] for r in send.requests] == [
        {"app": [put(1)], "audit": [put(1), put(2)]},
        {"audit": [put(2)]},
    ]
    assert len(sleep.delays) == 1


async def test_writes_of_two_tables_give_up_after_rounds_without_progress() -> None:
    send = FakeSend(lambda n, r: {"UnprocessedItems": r.params["RequestItems"]})
    with pytest.raises(ThrottledError, match="2 writes unprocessed after 3 rounds"):
        await drain_write_tables(
            send, {"app": [put(1)], "audit": [put(1)]}, max_attempts=3, sleep=FakeSleep()
        )
    assert len(send.requests) == 3


async def test_keys_of_two_tables_go_in_one_request_and_each_tables_rest_is_resent() -> None:
    def respond(n: int, request: Request) -> dict[str, Any]:
        if n == 1:
            return {
                "Responses": {"app": [item(1)], "audit": []},
                "UnprocessedKeys": {"audit": {"Keys": [key(2)], "ConsistentRead": True}},
            }
        return {"Responses": {"audit": [item(2)]}}

    send = FakeSend(respond)
    found = await drain_get_tables(
        send,
        {"app": [key(1)], "audit": [key(2)]},
        consistent=True,
        max_attempts=3,
        sleep=FakeSleep(),
    )
    assert found == {"app": [item(1)], "audit": [item(2)]}
    assert [r.params["RequestItems"] for r in send.requests] == [
        {
            "app": {"Keys": [key(1)], "ConsistentRead": True},
            "audit": {"Keys": [key(2)], "ConsistentRead": True},
        },
        {"audit": {"Keys": [key(2)], "ConsistentRead": True}},
    ]

"""Plans of several tables run side by side (``together``), their batches sharing requests."""

from __future__ import annotations

from typing import Any

import pytest

from dynorm.core.errors import ThrottledError
from dynorm.core.requests import Request
from dynorm.core.steps import (
    Fetch,
    Plan,
    Send,
    Together,
    WriteBatch,
    on_table,
    run_sync,
    together,
    together_fetches,
    together_writes,
)


def put(n: int) -> dict[str, Any]:
    return {"PutRequest": {"Item": {"pk": {"S": f"k{n}"}}}}


def key(n: int) -> dict[str, Any]:
    return {"pk": {"S": f"k{n}"}}


def writes(n: int, result: str) -> Plan[str]:
    yield WriteBatch(tuple(put(i) for i in range(n)))
    return result


def test_plans_of_two_tables_yield_one_step_and_get_their_own_outcomes() -> None:
    seen: list[Any] = []

    def answer(step: Any) -> Any:
        seen.append(step)
        return [None for _ in step.steps]

    results = run_sync(together([("a", writes(2, "A")), ("b", writes(1, "B"))]), answer)
    assert results == ["A", "B"]
    assert seen == [Together((("a", WriteBatch((put(0), put(1)))), ("b", WriteBatch((put(0),)))))]


def test_a_plan_refusing_its_input_stops_both_before_any_step() -> None:
    def refuses(objs: list[int]) -> Plan[int]:
        if objs:
            raise ValueError("bad object")
        yield WriteBatch(())  # pragma: no cover - never reached: the object is refused first
        return 0

    steps: list[Any] = []
    with pytest.raises(ValueError, match="bad object"):
        run_sync(together([("a", writes(1, "A")), ("b", refuses([1]))]), steps.append)
    assert steps == []


def test_an_error_goes_back_to_the_plan_whose_step_failed() -> None:
    def catches() -> Plan[str]:
        try:
            yield WriteBatch((put(0),))
        except ThrottledError:
            return "caught"
        return "written"

    error = ThrottledError("slow down", operation="BatchWriteItem")
    plan = together([("a", catches()), ("b", writes(1, "B"))])
    assert run_sync(plan, lambda step: [error, None]) == ["caught", "B"]


def test_batches_share_requests_across_tables_up_to_the_limit() -> None:
    steps = (
        ("a", WriteBatch(tuple(put(i) for i in range(20)))),
        ("b", WriteBatch(tuple(put(i) for i in range(10)))),
    )
    chunks = together_writes(steps, 25)
    assert [{n: len(w) for n, w in c.items()} for c in chunks] == [{"a": 20, "b": 5}, {"b": 5}]

    fetches = (
        ("a", Fetch((key(1), key(2), key(1)))),
        ("b", Fetch((key(1),))),
        ("b", Fetch((key(3),), consistent=False)),
    )
    assert together_fetches(fetches, 100, consistent=True) == [
        {"a": [key(1), key(2)], "b": [key(1)]}
    ]
    assert together_fetches(fetches, 2, consistent=True) == [
        {"a": [key(1), key(2)]},
        {"b": [key(1)]},
    ]
    assert together_fetches(fetches, 100, consistent=False) == [{"b": [key(3)]}]


def test_on_table_names_the_table_of_batch_steps_only() -> None:
    get = Request("GetItem", {"TableName": "a", "Key": key(1)})

    def plan() -> Plan[tuple[Any, Any]]:
        found = yield Fetch((key(1),))
        sent = yield Send(get)
        return found, sent

    seen: list[Any] = []

    def answer(step: Any) -> Any:
        seen.append(step)
        return [{"x": 1}] if isinstance(step, Together) else {"Item": {}}

    assert run_sync(on_table("a", plan()), answer) == ({"x": 1}, {"Item": {}})
    assert seen == [Together((("a", Fetch((key(1),))),)), Send(get)]

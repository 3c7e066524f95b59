"""The run time refuses, before sending, every update the mypy plugin rejects.

``tests/typing/rejected_updates.py`` holds the same operations as lines mypy must reject; here
each is planned without a server and must raise, so a pyright user (no plugin) or a path built
at run time gets the refusal before any request.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from dynorm import DynormError
from dynorm.mapping.model import info_of
from dynorm.mapping.writes import UpdateOps, plan_update
from tests.typing.rejected_updates import User

INFO = info_of(User)
KEY = {"uid": "1"}

ACCEPTED: list[dict[str, Any]] = [
    {"set": {"age": 3, "score": 1, "nick": None, "address.city": "Oslo"}},
    {"add": {"age": 1, "tags": {"new"}}},
    {"append": {"visits": [1]}, "remove": ["nick"]},
    {"prepend": {"visits": (0,)}, "set": {"prefs.dark": 1}},
    {"discard": {"tags": {"old"}}, "if_not_exists": {"visits[0]": 0}},
    {"set": {"kind": "b", "ratios": {"a": 1}, "prices": {1}, "amounts": [1]}},
    {"if_not_exists": {"kind": "a"}, "append": {"amounts": [2]}},
    {"add": {"prices": {2}}, "discard": {"tags": {"old"}}},
    {"discard": {"prices": {Decimal(1)}}},
    {"set": {"pair": [1, "a"], "ratios.b": 2}},
    {"set": {"office.city": "Oslo", "office.floor": 2}},
]

REJECTED: list[dict[str, Any]] = [
    {"set": {"agee": 3}},
    {"set": {"age": "3"}},
    {"set": {"uid": "other"}},
    {"set": {"version": 7}},
    {"remove": ["nik"]},
    {"add": {"nick": "x"}},
    {"add": {"tags": {1}}},
    {"append": {"tags": ["x"]}},
    {"append": {"visits": ["x"]}},
    {"discard": {"visits": {1}}},
    {"set": {"address.cty": "Oslo"}},
    {"set": {"prefs.dark": "yes"}},
    {"if_not_exists": {"age": "3"}},
    {"set": {"kind": "c"}},
    {"set": {"ratios": {"a": "x"}}},
    {"add": {"prices": {"x"}}},
    {"set": {"office.city": 5}},
    {"set": {"[0]": 3}},
]


@pytest.mark.parametrize("ops", ACCEPTED, ids=repr)
def test_what_the_plugin_accepts_is_planned(ops: dict[str, Any]) -> None:
    assert plan_update(INFO, KEY, "updates", UpdateOps(**ops)).operation == "UpdateItem"


@pytest.mark.parametrize("ops", REJECTED, ids=repr)
def test_what_the_plugin_rejects_is_refused_before_sending(ops: dict[str, Any]) -> None:
    with pytest.raises(DynormError):
        plan_update(INFO, KEY, "updates", UpdateOps(**ops))

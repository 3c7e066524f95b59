"""``mapping/cancellation.py``: a cancelled transaction's reasons named from the request sent."""

from __future__ import annotations

import attrs

from dynorm import CancellationReason, Table, TransactionCanceledError
from dynorm.core.errors import cancelled
from dynorm.core.requests import transact_write
from dynorm.mapping.cancellation import named_cancellation

shop = Table("shop", pk="pk", sk="sk", key_types={"sk": "N"})


@shop.model(pk="ORDER#{order_id}", sk="{line}")
@attrs.define
class Line:
    order_id: str
    line: int


PUT = {
    "Put": {
        "TableName": "shop-1",
        "Item": {"pk": {"S": "ORDER#7"}, "sk": {"N": "3"}, "x": {"S": "y"}},
    }
}
DELETE = {"Delete": {"TableName": "elsewhere", "Key": {"id": {"S": "a"}}}}


def cancellation(*codes: str) -> TransactionCanceledError:
    return cancelled(
        [CancellationReason(i, c, "" if c == "None" else "failed") for i, c in enumerate(codes)], ""
    )


def test_reasons_keep_their_fields_and_gain_model_table_and_key() -> None:
    request = transact_write([PUT, DELETE])
    named = named_cancellation(
        cancellation("ConditionalCheckFailed", "ConditionalCheckFailed"),
        request,
        {"shop-1": shop}.get,
    )
    put, delete = named.reasons
    assert (put.index, put.code, put.message, put.item) == (
        0,
        "ConditionalCheckFailed",
        "failed",
        None,
    )
    assert (put.model, put.table, put.key) == (
        "Line",
        "shop-1",
        {"pk": {"S": "ORDER#7"}, "sk": {"N": "3"}},
    )
    # A table the connection does not know: named by its name and the key sent.
    assert (delete.model, delete.table, delete.key) == (None, "elsewhere", {"id": {"S": "a"}})
    assert str(named) == (
        "transaction cancelled, nothing was written (action 0 (Line in table 'shop-1', "
        "pk='ORDER#7', sk=3): ConditionalCheckFailed failed; action 1 (in table 'elsewhere', "
        "id='a'): ConditionalCheckFailed failed)"
    )


def test_without_reasons_the_error_is_left_as_it_is() -> None:
    bare = cancelled([], "TransactionCanceledException")
    assert named_cancellation(bare, transact_write([PUT]), {"shop-1": shop}.get) is bare


def test_a_reason_made_by_position_alone_still_reads() -> None:
    assert CancellationReason(2, "ConditionalCheckFailed", "").describe() == (
        "action 2: ConditionalCheckFailed"
    )


def test_the_named_error_keeps_the_notes_and_cause_of_the_one_it_names() -> None:
    cause = RuntimeError("the reply")
    original = cancellation("ConditionalCheckFailed")
    original.__cause__ = cause
    original.add_note("dynorm gave up after 3 attempts")
    named = named_cancellation(original, transact_write([PUT]), {"shop-1": shop}.get)
    assert named is not original
    assert named.__cause__ is cause
    assert named.__notes__ == ["dynorm gave up after 3 attempts"]

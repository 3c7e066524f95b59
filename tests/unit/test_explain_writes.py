"""``explain`` of writes that read first, planned without a server (``mapping/explain.py``).

The reads are listed as sent and answered ``Unread``; what a write takes from them stands in
the write as a ``FromRead`` placeholder (tests/integration/test_explain_sent.py compares the
whole list with what is really sent).
"""

from __future__ import annotations

import datetime

import attrs

from dynorm import Denormalized, FromRead, HasMany, Partition, Table
from dynorm.mapping.explain import Explain
from dynorm.mapping.writeplan import WritePlanner

table = Table("explained", pk="pk", sk="sk")


@table.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}")
@attrs.define
class Author:
    name: str
    born: datetime.date
    books = HasMany["Book"]("Book", via=Denormalized(copy={"born": "author_born"}))
    notes = HasMany["Note"]("Note", via=Partition())


@table.model(pk="AUTHOR#{author}", sk="BOOK#{title}")
@attrs.define
class Book:
    author: str
    title: str
    author_born: datetime.date | None = None


@table.model(pk="AUTHOR#{author}", sk="NOTE#{n}")
@attrs.define
class Note:
    author: str
    n: int


explain = Explain(table, "explained", WritePlanner(table, "explained"), batch_get_size=2)
AUTHOR_KEY = {"pk": {"S": "AUTHOR#Le Guin"}, "sk": {"S": "AUTHOR#Le Guin"}}


def test_put_of_a_child_reads_its_parent_before_and_after() -> None:
    read, put, again = explain.put(Book("Le Guin", "Tehanu"))
    assert read.operation == "BatchGetItem"
    assert read.params["RequestItems"]["explained"] == {
        "Keys": [AUTHOR_KEY],
        "ConsistentRead": True,
    }
    assert put.operation == "PutItem"
    assert put.params["Item"]["author_born"] == FromRead("Author.born")
    assert again == read


def test_put_all_reads_parents_in_batches_of_the_get_size() -> None:
    books = [Book(f"A{i}", "T") for i in range(3)]
    requests = explain.put_all(books)
    assert [r.operation for r in requests] == [
        "BatchGetItem",
        "BatchGetItem",
        "BatchWriteItem",
        "BatchGetItem",
        "BatchGetItem",
    ]
    written = requests[2].params["RequestItems"]["explained"]
    assert [w["PutRequest"]["Item"]["author_born"] for w in written] == [
        FromRead("Author.born")
    ] * 3


def test_a_cascade_shows_the_childrens_reads_and_deletes() -> None:
    get, *reads, mark, batch, delete = explain.delete(
        Author("Le Guin", datetime.date(1929, 10, 21)), cascade=True
    )
    assert get.operation == "GetItem"
    assert get.params["ConsistentRead"] is True
    assert [r.operation for r in reads] == ["Query", "Query"]
    assert mark.operation == "UpdateItem"
    assert batch.operation == "BatchWriteItem"
    deletes = batch.params["RequestItems"]["explained"]
    assert [d["DeleteRequest"]["Key"] for d in deletes] == [
        FromRead("the keys of the Book items read"),
        FromRead("the keys of the Note items read"),
    ]
    assert delete.operation == "DeleteItem"
    assert delete.params["Key"] == AUTHOR_KEY


def test_a_write_that_reads_nothing_is_one_request() -> None:
    (put,) = explain.put(Note("Le Guin", 1))
    assert put.operation == "PutItem"
    assert not any(isinstance(v, FromRead) for v in put.params["Item"].values())

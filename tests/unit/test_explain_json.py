"""What ``explain`` and ``dynorm design`` say can be logged, and says what a load may cost.

A value a write takes from a read is the JSON object ``{"from_read": ...}``, so
``json.dumps(request.params)`` works on every request explain shows; ``Request.as_json()`` also
writes binary values (base64, as DynamoDB's JSON does). A load whose sort key range other
entities share says it can take more than one Query, the same words in explain and design
(tests/integration/test_load_crowding.py checks them against what is sent).
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import attrs

from dynorm import Denormalized, Embedded, FromRead, HasMany, Partition, Request, Table
from dynorm.design import design
from dynorm.mapping.explain import Explain
from dynorm.mapping.readplan import crowding
from dynorm.mapping.writeplan import WritePlanner

table = Table("logged", pk="pk", sk="sk")


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


@attrs.define
class Remark:
    text: str


@table.model(pk="TICKET#{tid}", sk="TICKET#{tid}")
@attrs.define
class Ticket:
    tid: str
    remarks = HasMany["Remark"](Remark, via=Embedded())


explain = Explain(table, "logged", WritePlanner(table, "logged"))


def logged(requests: list[Request]) -> Any:
    """The requests as plain json reads them back."""
    return json.loads(json.dumps([r.params for r in requests]))


def test_a_copy_taken_from_a_read_is_a_json_object_naming_it() -> None:
    _, put, _ = logged(explain.put(Book("Le Guin", "Tehanu")))
    assert put["Item"]["author_born"] == {"from_read": "Author.born"}


def test_a_cascades_placeholders_serialise() -> None:
    requests = explain.delete(Author("Le Guin", datetime.date(1929, 10, 21)), cascade=True)
    shown = logged(requests)
    batch = shown[-2]["RequestItems"]["logged"]
    assert [d["DeleteRequest"]["Key"] for d in batch] == [
        {"from_read": "the keys of the Book items read"},
        {"from_read": "the keys of the Note items read"},
    ]


def test_a_position_read_first_serialises_in_the_expression_and_values() -> None:
    requests = explain.remove(Ticket("t1"), Ticket.remarks, Remark("first"))
    assert [r.operation for r in requests] == ["GetItem", "UpdateItem"]
    assert json.dumps([r.params for r in requests])


def test_from_read_is_still_the_placeholder_it_was() -> None:
    placeholder = FromRead("Author.born")
    assert placeholder.what == "Author.born"
    assert placeholder == {"from_read": "Author.born"}
    assert repr(placeholder) == "<Author.born, from a read before>"


binary = Table("bin", pk="pk", sk="sk", key_types={"sk": "B"})


@binary.model(pk="DEVICE#{device}", sk="{blob}")
@attrs.define
class Reading:
    device: str
    blob: bytes


def test_as_json_writes_binary_values_as_base64() -> None:
    (put,) = Explain(binary, "bin", WritePlanner(binary, "bin")).put(Reading("d1", b"\xff"))
    shown = json.loads(json.dumps(put.as_json()))
    assert shown["operation"] == "PutItem"
    assert shown["params"]["Item"]["pk"] == {"S": "DEVICE#d1"}
    assert shown["params"]["Item"]["sk"] == {"B": "/w=="}


# -- what a load costs ------------------------------------------------------------------------

crowded = Table("crowded", pk="pk", sk="sk")


@crowded.model(pk="ORG#{name}", sk="METADATA#{name}")
@attrs.define
class Org:
    name: str
    users = HasMany["User"]("User", via=Partition())
    projects = HasMany["Project"]("Project", via=Partition())


@crowded.model(pk="ORG#{org}", sk="USER#{username}")
@attrs.define
class User:
    org: str
    username: str


@crowded.model(pk="ORG#{org}", sk="PROJECT#{pid}")
@attrs.define
class Project:
    org: str
    pid: str


MORE = "1 Query on the table (more with a limit, as Project items share its range)"


def test_a_range_with_other_entities_in_it_can_take_more_queries() -> None:
    # METADATA#a .. USER$ passes every PROJECT#: a limit's Limit is used up by projects.
    reads = Explain(crowded, "crowded", WritePlanner(crowded, "crowded")).get_reads(
        Org, name="a", load=[Org.users.limit(2)]
    )
    assert reads.costs() == {"Org.users": MORE}
    # METADATA#a .. PROJECT$ holds nothing but the org and its projects.
    reads = Explain(crowded, "crowded", WritePlanner(crowded, "crowded")).get_reads(
        Org, name="a", load=[Org.projects.limit(2)]
    )
    assert reads.costs() == {"Org.projects": "1 Query on the table"}


def test_design_says_the_same_as_explain() -> None:
    costs = {p.name: p.cost for p in design(crowded).patterns}
    assert costs["Org.users"] == MORE
    assert costs["Org.projects"] == "1 Query on the table"


def test_relationships_sharing_a_query_say_so() -> None:
    reads = Explain(crowded, "crowded", WritePlanner(crowded, "crowded")).get_reads(
        Org, name="a", load=[Org.users, Org.projects]
    )
    assert reads.costs() == {
        "Org.users": "1 Query on the table, the same Query as Org.projects",
        "Org.projects": "1 Query on the table, the same Query as Org.users",
    }


def test_crowding_reads_the_templates() -> None:
    (load,) = explain.get_reads(Author, name="Le Guin", load=[Author.notes]).collections
    # AUTHOR#Le Guin .. NOTE$ passes every BOOK#; the author is one a partition.
    assert crowding(table.info(Author), load.read, [Author.notes]) == ("Book",)
    (load,) = explain.get_reads(Author, name="Le Guin", load=[Author.books]).collections
    assert load.crowded_by == ()

"""A relationship that cannot work fails when its classes are declared, saying what to change.

No server: every check here runs at ``@table.model`` time (or at ``Table.check()``, which
``connect`` runs, for a target that is never declared).
"""

from __future__ import annotations

import datetime
from typing import Any, ClassVar

import attrs
import pytest

from dynorm import (
    GSI,
    BelongsTo,
    DefinitionError,
    Denormalized,
    Embedded,
    HasMany,
    Index,
    Partition,
    Table,
)
from dynorm._model import info_of


@pytest.fixture
def table() -> Table:
    return Table("defs", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


# Embedded children are plain attrs classes; the ones named by string live at module level.
@attrs.define
class Address:
    nickname: str
    street: str


@attrs.define
class NumberedAddress:
    number: int
    street: str


class PlainAddress:
    """Not an attrs class."""

    def __init__(self, nickname: str) -> None:
        self.nickname = nickname


# -- collections: the child's partition must come from the parent ----------------------------------


def test_child_partition_not_derivable_from_the_parent(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str
        users: ClassVar[HasMany[Any, Any]] = HasMany("User", via=Partition())

    with pytest.raises(DefinitionError) as caught:

        @table.model(pk="TENANT#{tenant}", sk="USER#{username}")
        class User:
            tenant: str
            username: str

    message = str(caught.value)
    assert message.startswith("Org.users via Partition():")
    assert "'TENANT#{tenant}'" in message
    assert "'ORG#{name}'" in message
    assert "make the literals match" in message
    # The failed declaration is not half-registered: it can be fixed and declared again.
    assert "User" not in table.models

    @table.model(pk="ORG#{org_name}", sk="USER#{username}")
    class FixedUser:
        org_name: str
        username: str

    assert info_of(FixedUser).name == "FixedUser"


def test_child_partition_with_a_field_the_parent_lacks(table: Table) -> None:
    # Same literal shape would align, but here the child's partition needs two fields.
    @table.model(pk="ORDER#{item_id}", sk="ITEM#{item_id}")
    class Item:
        item_id: str
        order_id: str

    with pytest.raises(DefinitionError, match=r"Order\.items via Partition\(\).*make the literals"):

        @table.model(pk="ORDER#{order_id}#{region}", sk="ORDER#{order_id}")
        class Order:
            order_id: str
            region: str
            items: ClassVar[HasMany[Any, Any]] = HasMany(Item, via=Partition())


def test_index_collection_not_derivable_from_the_parent(table: Table) -> None:
    @table.model(pk="USER#{username}", sk="USER#{username}", GSI1=("USER#{username}", "#USER"))
    class User:
        username: str
        tickets: ClassVar[HasMany[Any, Any]] = HasMany("Ticket", via=Index("GSI1"))

    with pytest.raises(DefinitionError) as caught:

        @table.model(
            pk="TICKET#{ticket_id}",
            sk="TICKET#{ticket_id}",
            GSI1=("QUEUE#{queue}", "T#{ticket_id}"),
        )
        class Ticket:
            ticket_id: str
            queue: str

    message = str(caught.value)
    assert message.startswith("User.tickets via Index('GSI1'):")
    assert "index 'GSI1'" in message
    assert "make the literals match" in message


def test_collection_without_a_sort_key_cannot_hold_children() -> None:
    table = Table("flat", pk="pk", sk="sk", indexes=[GSI("BYTAG", pk="tag")])

    @table.model(pk="TAG#{tag}", sk="TAG#{tag}")
    class Tag:
        tag: str
        posts: ClassVar[HasMany[Any, Any]] = HasMany("Post", via=Index("BYTAG"))

    with pytest.raises(DefinitionError, match=r"Tag\.posts via Index\('BYTAG'\).*no sort key"):

        @table.model(pk="POST#{post_id}", sk="POST#{post_id}", BYTAG="TAG#{tag}")
        class Post:
            post_id: str
            tag: str


# -- indexes --------------------------------------------------------------------------------------


def test_index_not_declared_on_the_table(table: Table) -> None:
    @table.model(pk="TICKET#{ticket_id}", sk="TICKET#{ticket_id}")
    class Ticket:
        ticket_id: str
        username: str

    with pytest.raises(DefinitionError) as caught:

        @table.model(pk="USER#{username}", sk="USER#{username}")
        class User:
            username: str
            tickets: ClassVar[HasMany[Any, Any]] = HasMany(Ticket, via=Index("GSI2"))

    message = str(caught.value)
    assert message.startswith("User.tickets")
    assert "index 'GSI2' is not declared on Table 'defs'; declared: GSI1" in message


def test_using_an_undeclared_index_for_one_call(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str
        users: ClassVar[HasMany[Any, Any]] = HasMany("User", via=Partition())

    @table.model(pk="ORG#{org_name}", sk="USER#{username}")
    class User:
        org_name: str
        username: str

    with pytest.raises(DefinitionError, match=r"Org\.users.*'GSI7' is not declared"):
        Org.users.using(Index("GSI7"))
    with pytest.raises(DefinitionError, match=r"Org\.users via Index\('GSI1'\): User has no key"):
        Org.users.using(Index("GSI1"))


def test_child_without_templates_for_the_index(table: Table) -> None:
    @table.model(pk="USER#{username}", sk="USER#{username}", GSI1=("USER#{username}", "#USER"))
    class User:
        username: str
        tickets: ClassVar[HasMany[Any, Any]] = HasMany("Ticket", via=Index("GSI1"))

    with pytest.raises(DefinitionError) as caught:

        @table.model(pk="TICKET#{ticket_id}", sk="TICKET#{ticket_id}")
        class Ticket:
            ticket_id: str
            username: str

    message = str(caught.value)
    assert message.startswith("User.tickets via Index('GSI1'): Ticket has no key templates")
    assert "GSI1=(pk, sk)" in message


# -- denormalized copies --------------------------------------------------------------------------


def test_copy_target_field_missing_on_the_child(table: Table) -> None:
    @table.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}")
    class Author:
        name: str
        birthdate: datetime.date
        books: ClassVar[HasMany[Any, Any]] = HasMany(
            "Book", via=Denormalized(copy={"birthdate": "author_birthdate"})
        )

    with pytest.raises(DefinitionError) as caught:

        @table.model(pk="AUTHOR#{author_name}", sk="BOOK#{title}")
        class Book:
            author_name: str
            title: str

    message = str(caught.value)
    assert message.startswith("Author.books via Denormalized(")
    assert "Book has no field 'author_birthdate'" in message
    assert "add it (with a default)" in message


def test_copy_source_field_missing_on_the_parent(table: Table) -> None:
    @table.model(pk="AUTHOR#{author_name}", sk="BOOK#{title}")
    class Book:
        author_name: str
        title: str
        author_birthdate: datetime.date | None = None

    with pytest.raises(DefinitionError, match=r"Author\.books .*Author has no field 'born'"):

        @table.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}")
        class Author:
            name: str
            books: ClassVar[HasMany[Any, Any]] = HasMany(
                Book, via=Denormalized(copy={"born": "author_birthdate"})
            )


def test_denormalized_needs_something_to_copy_and_a_collection() -> None:
    with pytest.raises(DefinitionError, match="at least one parent field"):
        Denormalized(copy={})
    with pytest.raises(DefinitionError, match=r"where=.*Partition\(\) or Index"):
        Denormalized(copy={"a": "b"}, where=Embedded())
    with pytest.raises(DefinitionError, match=r"max_fanout=\.\.\.\) must be a positive int"):
        Denormalized(copy={"a": "b"}, max_fanout=0)


# -- embedded children ----------------------------------------------------------------------------


def test_embedded_key_that_is_not_a_str_field(table: Table) -> None:
    with pytest.raises(DefinitionError) as caught:

        @table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
        class Customer:
            customer_id: str
            addresses: ClassVar[HasMany[Any, Any]] = HasMany(
                NumberedAddress, via=Embedded(key="number")
            )

    message = str(caught.value)
    assert message.startswith("Customer.addresses via Embedded(key='number')")
    assert "NumberedAddress.number must be a str field" in message


def test_embedded_key_that_is_not_a_field(table: Table) -> None:
    with pytest.raises(DefinitionError) as caught:

        @table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
        class Customer:
            customer_id: str
            addresses: ClassVar[HasMany[Any, Any]] = HasMany(Address, via=Embedded(key="label"))

    message = str(caught.value)
    assert "Address.label must be a str field" in message
    assert "fields: nickname, street" in message


def test_embedded_target_that_is_not_an_attrs_class(table: Table) -> None:
    with pytest.raises(DefinitionError) as caught:

        @table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
        class Customer:
            customer_id: str
            addresses: ClassVar[HasMany[Any, Any]] = HasMany(
                PlainAddress, via=Embedded(key="nickname")
            )

    message = str(caught.value)
    assert message.startswith("Customer.addresses via Embedded()")
    assert "must be an attrs class" in message


def test_embedded_target_named_by_string_is_found_beside_the_owner(table: Table) -> None:
    @table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
    class Customer:
        customer_id: str
        addresses: ClassVar[HasMany[Any, Any]] = HasMany(
            "Address", via=Embedded(key="nickname", max_items=20)
        )

    table.check()
    assert Customer.addresses.target_cls is Address


def test_embedded_attribute_clashing_with_a_field(table: Table) -> None:
    with pytest.raises(DefinitionError, match=r"Embedded\(attribute=\.\.\.\)"):

        @table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
        class Customer:
            customer_id: str
            street: str = ""
            addresses: ClassVar[HasMany[Any, Any]] = HasMany(
                Address, via=Embedded(key="nickname", attribute="street")
            )


def test_embedded_max_items_must_be_positive() -> None:
    with pytest.raises(DefinitionError, match=r"max_items=\.\.\.\) must be a positive int"):
        Embedded(key="nickname", max_items=0)


# -- belongs-to and unresolved targets ------------------------------------------------------------


def test_belongs_to_without_the_parents_key_fields(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str

    with pytest.raises(DefinitionError) as caught:

        @table.model(pk="USER#{username}", sk="USER#{username}")
        class User:
            username: str
            org: ClassVar[BelongsTo[Any, Any]] = BelongsTo(Org)

    message = str(caught.value)
    assert message.startswith("User.org: User has no field for Org's key name")
    assert "no HasMany on Org holds User" in message
    assert "pass key={'name': '<User field>'}" in message


def test_a_target_never_declared_fails_the_table_check(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str
        users: ClassVar[HasMany[Any, Any]] = HasMany("Usr", via=Partition())

    with pytest.raises(DefinitionError, match=r"Org\.users -> 'Usr'"):
        table.check()


def test_via_takes_a_strategy() -> None:
    with pytest.raises(DefinitionError, match=r"via= takes a strategy such as Partition\(\)"):
        HasMany("User", via="partition")  # type: ignore[arg-type]


def test_a_limited_load_option_can_also_switch_strategy(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="ORG#{name}", GSI1=("ORG#{name}", "#ORG"))
    @attrs.define
    class Org:
        name: str
        users: ClassVar[HasMany[Any, Any]] = HasMany("User", via=Partition())

    @table.model(pk="ORG#{org}", sk="USER#{username}", GSI1=("ORG#{org}", "U#{username}"))
    @attrs.define
    class User:
        org: str
        username: str

    option = Org.users.limit(2).using(Index("GSI1"))
    assert option.limit == 2
    rel = option.relationship
    assert isinstance(rel, HasMany)
    assert rel.via == Index("GSI1")
    assert rel.link == {"org": "name"}
    assert Org.users.via == Partition()  # the declaration itself is unchanged

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
from dynorm.mapping.model import info_of
from dynorm.mapping.strategies import Strategy


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
        users: ClassVar[HasMany[Any]] = HasMany("User", via=Partition())

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
            items: ClassVar[HasMany[Any]] = HasMany(Item, via=Partition())


def test_index_collection_not_derivable_from_the_parent(table: Table) -> None:
    @table.model(pk="USER#{username}", sk="USER#{username}", GSI1=("USER#{username}", "#USER"))
    class User:
        username: str
        tickets: ClassVar[HasMany[Any]] = HasMany("Ticket", via=Index("GSI1"))

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
    table = Table("flat", pk="pk", sk="sk", indexes=[GSI("BYTAG", pk="tag_key")])

    @table.model(pk="TAG#{tag}", sk="TAG#{tag}")
    class Tag:
        tag: str
        posts: ClassVar[HasMany[Any]] = HasMany("Post", via=Index("BYTAG"))

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
            tickets: ClassVar[HasMany[Any]] = HasMany(Ticket, via=Index("GSI2"))

    message = str(caught.value)
    assert message.startswith("User.tickets")
    assert "index 'GSI2' is not declared on Table 'defs'; declared: GSI1" in message


def test_using_an_undeclared_index_for_one_call(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str
        users: ClassVar[HasMany[Any]] = HasMany("User", via=Partition())

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
        tickets: ClassVar[HasMany[Any]] = HasMany("Ticket", via=Index("GSI1"))

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
        books: ClassVar[HasMany[Any]] = HasMany(
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
            books: ClassVar[HasMany[Any]] = HasMany(
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
            addresses: ClassVar[HasMany[Any]] = HasMany(NumberedAddress, via=Embedded(key="number"))

    message = str(caught.value)
    assert message.startswith("Customer.addresses via Embedded(key='number')")
    assert "NumberedAddress.number must be a str field" in message


def test_embedded_key_that_is_not_a_field(table: Table) -> None:
    with pytest.raises(DefinitionError) as caught:

        @table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
        class Customer:
            customer_id: str
            addresses: ClassVar[HasMany[Any]] = HasMany(Address, via=Embedded(key="label"))

    message = str(caught.value)
    assert "Address.label must be a str field" in message
    assert "fields: nickname, street" in message


def test_embedded_target_that_is_not_an_attrs_class(table: Table) -> None:
    with pytest.raises(DefinitionError) as caught:

        @table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
        class Customer:
            customer_id: str
            addresses: ClassVar[HasMany[Any]] = HasMany(PlainAddress, via=Embedded(key="nickname"))

    message = str(caught.value)
    assert message.startswith("Customer.addresses via Embedded()")
    assert "must be an attrs class" in message


def test_embedded_target_named_by_string_is_found_beside_the_owner(table: Table) -> None:
    @table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
    class Customer:
        customer_id: str
        addresses: ClassVar[HasMany[Any]] = HasMany(
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
            addresses: ClassVar[HasMany[Any]] = HasMany(
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
            org: ClassVar[BelongsTo[Any]] = BelongsTo(Org)

    message = str(caught.value)
    assert message.startswith("User.org: User has no field for Org's key name")
    assert "neither a HasMany on Org nor the key templates say" in message
    assert "pass key={'name': '<User field>'}" in message


def test_a_target_never_declared_fails_the_table_check(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str
        users: ClassVar[HasMany[Any]] = HasMany("Usr", via=Partition())

    with pytest.raises(DefinitionError, match=r"Org\.users -> 'Usr'"):
        table.check()


def test_via_takes_a_strategy() -> None:
    with pytest.raises(DefinitionError, match=r"via= takes a strategy such as Partition\(\)"):
        HasMany("User", via="partition")  # type: ignore[arg-type]


def test_was_takes_a_strategy() -> None:
    with pytest.raises(DefinitionError, match=r"was= takes the strategy the children were stored"):
        HasMany("User", via=Index("GSI1"), was="partition")  # type: ignore[arg-type]


def test_was_is_kept_on_the_relationship(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="ORG#{name}")
    class Org:
        name: str
        users: ClassVar[HasMany[Any]] = HasMany("User", via=Partition(shards=4), was=Partition())

    @table.model(pk="ORG#{org_name}#{shard}", sk="USER#{username}")
    class User:
        org_name: str
        username: str

    table.check()
    assert Org.users.was == Partition()
    assert Org.users.via == Partition(shards=4)


def test_was_the_declared_strategy_is_refused(table: Table) -> None:
    def declare() -> None:
        @table.model(pk="ORG#{name}", sk="ORG#{name}")
        class Org:
            name: str
            users: ClassVar[HasMany[Any]] = HasMany("User", via=Partition(), was=Partition())

        @table.model(pk="ORG#{org_name}", sk="USER#{username}")
        class User:
            org_name: str
            username: str

        table.check()

    with pytest.raises(DefinitionError, match=r"Org\.users: was=Partition\(\) is the strategy"):
        declare()


def test_a_limited_load_option_can_also_switch_strategy(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="ORG#{name}", GSI1=("ORG#{name}", "#ORG"))
    @attrs.define
    class Org:
        name: str
        users: ClassVar[HasMany[Any]] = HasMany("User", via=Partition())

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


# -- belongs-to: how the link to the parent is found --------------------------------------------


@pytest.fixture
def tracker() -> Table:
    indexes = [GSI(f"GSI{i}", pk=f"GSI{i}PK", sk=f"GSI{i}SK") for i in (1, 2, 3)]
    return Table("tracker", pk="pk", sk="sk", indexes=indexes)


def declare_user(table: Table) -> type:
    @table.model(
        pk="USER#{user_id}",
        sk="USER#{user_id}",
        GSI2=("USER#{user_id}", "#USER"),
        GSI3=("USER#{user_id}", "#USER"),
    )
    @attrs.define
    class User:
        user_id: str

    return User


def link_of(cls: type, name: str) -> dict[str, str]:
    rel = vars(cls)[name]
    assert isinstance(rel, BelongsTo)
    return rel.link


def test_belongs_to_inverts_an_index_has_many(tracker: Table) -> None:
    @tracker.model(
        pk="PROJECT#{project_id}", sk="PROJECT#{project_id}", GSI1=("P#{project_id}", "#P")
    )
    class Project:
        project_id: str
        issues: ClassVar[HasMany[Any]] = HasMany("Issue", via=Index("GSI1"))

    # The table key says nothing of the project: only the GSI1 templates link an issue to it.
    @tracker.model(pk="ISSUE#{issue_id}", sk="ISSUE#{issue_id}", GSI1=("P#{proj}", "I#{issue_id}"))
    class Issue:
        issue_id: str
        proj: str
        project: ClassVar[BelongsTo[Any]] = BelongsTo(Project)

    assert link_of(Issue, "project") == {"project_id": "proj"}


def test_the_has_many_decides_where_template_shapes_disagree(tracker: Table) -> None:
    # An issue is stored in its home project's partition and listed in another's GSI1 collection:
    # the shapes match twice, and Project.issues says which one is the link.
    @tracker.model(pk="P#{project_id}", sk="#P", GSI1=("P#{project_id}", "#P"))
    class Project:
        project_id: str
        issues: ClassVar[HasMany[Any]] = HasMany("Issue", via=Index("GSI1"))

    @tracker.model(pk="P#{home}", sk="I#{issue_id}", GSI1=("P#{listed_in}", "I#{issue_id}"))
    class Issue:
        issue_id: str
        home: str
        listed_in: str
        project: ClassVar[BelongsTo[Any]] = BelongsTo(Project)

    assert link_of(Issue, "project") == {"project_id": "listed_in"}


def test_the_has_many_may_be_declared_after_the_belongs_to(tracker: Table) -> None:
    @tracker.model(pk="P#{home}", sk="I#{issue_id}", GSI1=("P#{listed_in}", "I#{issue_id}"))
    class Issue:
        issue_id: str
        home: str
        listed_in: str
        project: ClassVar[BelongsTo[Any]] = BelongsTo("Project")

    @tracker.model(pk="P#{project_id}", sk="#P", GSI1=("P#{project_id}", "#P"))
    class Project:
        project_id: str
        issues: ClassVar[HasMany[Any]] = HasMany(Issue, via=Index("GSI1"))

    tracker.check()
    assert link_of(Issue, "project") == {"project_id": "listed_in"}
    assert vars(Project)["issues"].link == {"listed_in": "project_id"}


def test_template_shapes_disagreeing_without_a_has_many_ask_for_key(tracker: Table) -> None:
    @tracker.model(pk="P#{project_id}", sk="#P", GSI1=("P#{project_id}", "#P"))
    class Project:
        project_id: str

    with pytest.raises(DefinitionError) as caught:

        @tracker.model(pk="P#{home}", sk="I#{issue_id}", GSI1=("P#{listed_in}", "I#{issue_id}"))
        class Issue:
            issue_id: str
            home: str
            listed_in: str
            project: ClassVar[BelongsTo[Any]] = BelongsTo(Project)

    message = str(caught.value)
    assert message.startswith("Issue.project: Issue's key templates match Project's")
    assert "project_id by home or listed_in" in message
    assert "pass key={'project_id': '<Issue field>'}" in message


def test_an_index_template_shape_links_without_a_has_many(tracker: Table) -> None:
    User = declare_user(tracker)  # noqa: N806

    @tracker.model(pk="ISSUE#{issue_id}", sk="ISSUE#{issue_id}", GSI2=("USER#{owner}", "I#{n}"))
    class Issue:
        issue_id: str
        owner: str
        n: int
        user: ClassVar[BelongsTo[Any]] = BelongsTo(User)

    assert link_of(Issue, "user") == {"user_id": "owner"}


def test_a_nested_sort_key_names_the_parent(tracker: Table) -> None:
    @tracker.model(pk="ORG#{org_name}", sk="USER#{username}")
    class Member:
        org_name: str
        username: str

    @tracker.model(pk="ORG#{org}", sk="USER#{owner}#DEVICE#{serial}")
    class Device:
        org: str
        owner: str
        serial: str
        member: ClassVar[BelongsTo[Any]] = BelongsTo(Member)

    assert link_of(Device, "member") == {"org_name": "org", "username": "owner"}


def test_key_names_the_fields_of_two_links_to_one_model(tracker: Table) -> None:
    User = declare_user(tracker)  # noqa: N806

    @tracker.model(pk="ISSUE#{issue_id}", sk="ISSUE#{issue_id}")
    class Issue:
        issue_id: str
        reporter_id: str
        assignee_id: str | None = None
        reporter: ClassVar[BelongsTo[Any]] = BelongsTo(User, key={"user_id": "reporter_id"})
        assignee: ClassVar[BelongsTo[Any]] = BelongsTo(User, key={"user_id": "assignee_id"})

    assert link_of(Issue, "reporter") == {"user_id": "reporter_id"}
    assert link_of(Issue, "assignee") == {"user_id": "assignee_id"}
    unassigned = Issue("1", "alice")
    assert vars(Issue)["assignee"].parent_key(unassigned) is None
    assert vars(Issue)["reporter"].parent_key(unassigned) == {
        "pk": {"S": "USER#alice"},
        "sk": {"S": "USER#alice"},
    }


def test_key_leaves_the_other_key_fields_to_names(table: Table) -> None:
    @table.model(pk="ORG#{org_name}", sk="USER#{username}")
    class Member:
        org_name: str
        username: str

    @table.model(pk="ORG#{org_name}", sk="TICKET#{ticket_id}")
    class Ticket:
        org_name: str
        ticket_id: str
        reporter: str
        opened_by: ClassVar[BelongsTo[Any]] = BelongsTo(Member, key={"username": "reporter"})

    assert link_of(Ticket, "opened_by") == {"org_name": "org_name", "username": "reporter"}


def test_two_links_to_one_model_need_key(tracker: Table) -> None:
    User = declare_user(tracker)  # noqa: N806

    with pytest.raises(DefinitionError) as caught:

        @tracker.model(
            pk="ISSUE#{issue_id}", sk="ISSUE#{issue_id}", GSI2=("USER#{reporter_id}", "I#{n}")
        )
        class Issue:
            issue_id: str
            n: int
            reporter_id: str
            assignee_id: str
            reporter: ClassVar[BelongsTo[Any]] = BelongsTo(User)
            assignee: ClassVar[BelongsTo[Any]] = BelongsTo(User, key={"user_id": "assignee_id"})

    message = str(caught.value)
    assert message.startswith("Issue.reporter: Issue.reporter, Issue.assignee all point at User")
    assert "pass key={'user_id': '<Issue field>'} to each of them" in message


def test_two_has_many_holding_the_child_differently_are_ambiguous(tracker: Table) -> None:
    @tracker.model(
        pk="USER#{user_id}",
        sk="USER#{user_id}",
        GSI2=("USER#{user_id}", "#USER"),
        GSI3=("USER#{user_id}", "#USER"),
    )
    class User:
        user_id: str
        reported: ClassVar[HasMany[Any]] = HasMany("Issue", via=Index("GSI2"))
        assigned: ClassVar[HasMany[Any]] = HasMany("Issue", via=Index("GSI3"))

    with pytest.raises(DefinitionError) as caught:

        @tracker.model(
            pk="ISSUE#{issue_id}",
            sk="ISSUE#{issue_id}",
            GSI2=("USER#{reporter_id}", "I#{issue_id}"),
            GSI3=("USER#{assignee_id}", "I#{issue_id}"),
        )
        class Issue:
            issue_id: str
            reporter_id: str
            assignee_id: str
            user: ClassVar[BelongsTo[Any]] = BelongsTo(User)

    message = str(caught.value)
    assert message.startswith("Issue.user: User holds Issue in more than one way")
    assert "User.reported by reporter_id -> user_id" in message
    assert "User.assigned by assignee_id -> user_id" in message
    assert message.endswith("pass key={'user_id': '<Issue field>'}")


def test_has_many_that_agree_are_one_link(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str
        users: ClassVar[HasMany[Any]] = HasMany("Member", via=Partition())
        newest: ClassVar[HasMany[Any]] = HasMany("Member", newest_first=True)

    @table.model(pk="ORG#{org}", sk="MEMBER#{username}")
    class Member:
        org: str
        username: str
        org_link: ClassVar[BelongsTo[Any]] = BelongsTo(Org)

    assert link_of(Member, "org_link") == {"name": "org"}


def test_a_model_pointing_at_itself_needs_key(tracker: Table) -> None:
    with pytest.raises(DefinitionError, match=r"pass key=\{'employee_id': '<Employee field>'\}"):

        @tracker.model(pk="EMP#{employee_id}", sk="EMP#{employee_id}")
        class Employee:
            employee_id: str
            manager_id: str
            manager: ClassVar[BelongsTo[Any]] = BelongsTo("Employee")

    @tracker.model(pk="EMP#{employee_id}", sk="EMP#{employee_id}")
    class Staff:
        employee_id: str
        manager_id: str
        manager: ClassVar[BelongsTo[Any]] = BelongsTo("Staff", key={"employee_id": "manager_id"})

    assert link_of(Staff, "manager") == {"employee_id": "manager_id"}


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ({"id": "reporter_id"}, r"'id' is not a field of User"),
        ({"name": "reporter_id"}, r"'name' is not a key field of User"),
        ({"user_id": "reporter"}, r"Issue has no field 'reporter'; name one of its fields"),
    ],
)
def test_key_must_name_real_fields(tracker: Table, key: dict[str, str], expected: str) -> None:
    @tracker.model(pk="USER#{user_id}", sk="USER#{user_id}")
    class User:
        user_id: str
        name: str = ""

    with pytest.raises(DefinitionError, match=expected) as caught:

        @tracker.model(pk="ISSUE#{issue_id}", sk="ISSUE#{issue_id}")
        class Issue:
            issue_id: str
            reporter_id: str
            reporter: ClassVar[BelongsTo[Any]] = BelongsTo(User, key=key)

    assert str(caught.value).startswith("Issue.reporter: key=")
    assert "Issue" not in tracker.models


@pytest.mark.parametrize("key", [{}, {"user_id": 1}, ["user_id"]])
def test_key_is_a_mapping_of_field_names(key: Any) -> None:
    with pytest.raises(DefinitionError, match=r"key=\{'user_id': 'reporter_id'\}"):
        BelongsTo("User", key=key)


def test_across_tables_only_what_dynamodb_cannot_express_is_refused() -> None:
    orders = Table("orders", pk="pk", sk="sk")
    audit = Table("audit", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    @audit.model(pk="EVENT#{event_id}", sk="EVENT#{event_id}", GSI1=("ORDER#{order_id}", "{at}"))
    class Entry:
        event_id: str
        order_id: str
        at: str

    refusals = {
        "Partition()": ("cannot share a partition", "via=Index(name)"),
        "Embedded(key='event_id', max_items=None)": ("stored inside", "plain attrs class"),
        "Denormalized(copy={'order_id': 'order_id'})": ("stay within one table", "transaction"),
    }
    strategies: list[Strategy] = [
        Partition(),
        Embedded(key="event_id"),
        Denormalized(copy={"order_id": "order_id"}),
    ]
    for via in strategies:
        with pytest.raises(DefinitionError) as caught:

            @orders.model(pk="ORDER#{order_id}", sk="ORDER#{order_id}")
            class Refused:
                order_id: str
                entries = HasMany(Entry, via=via)

        message = str(caught.value)
        assert message.startswith(f"Refused.entries via {via.describe()}: ")
        assert "Table 'audit'" in message
        assert "Table 'orders'" in message
        for words in refusals[via.describe()]:
            assert words in message
        assert "Refused" not in orders.models  # nothing half-declared

    @orders.model(pk="ORDER#{order_id}", sk="ORDER#{order_id}")
    class Order:
        order_id: str
        entries = HasMany(Entry, via=Index("GSI1"))  # their collection in audit's index

    @audit.model(pk="NOTE#{note_id}", sk="NOTE#{note_id}")
    class Note:
        note_id: str
        order_id: str
        order = BelongsTo(Order)

    assert Order.entries.link == {"order_id": "order_id"}
    assert Order.entries.crosses_tables
    assert Order.entries.children_table is audit
    assert Note.order.link == {"order_id": "order_id"}
    assert Note.order.crosses_tables


def test_across_tables_children_are_linked_by_field_names() -> None:
    orders = Table("orders2", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
    audit = Table("audit2", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    @audit.model(pk="EVENT#{event_id}", sk="EVENT#{event_id}", GSI1=("ORDER#{ref}", "{at}"))
    class Entry:
        event_id: str
        ref: str
        at: str

    with pytest.raises(DefinitionError) as caught:
        # orders2 has a GSI1 of its own, holding Order: not the children's collection.

        @orders.model(pk="ORDER#{order_id}", sk="ORDER#{order_id}", GSI1=("ORDER#{order_id}", "X"))
        class Order:
            order_id: str
            entries = HasMany(Entry, via=Index("GSI1"))

    message = str(caught.value)
    assert "Order is not in Entry's collection in index 'GSI1' of Table 'audit2'" in message
    assert "Order has no field ref" in message


def test_a_model_of_another_table_is_named_by_its_class_or_a_name_in_scope() -> None:
    orders = Table("orders3", pk="pk", sk="sk")
    audit = Table("audit3", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    @orders.model(pk="ORDER#{order_id}", sk="ORDER#{order_id}")
    class Order:
        order_id: str
        entries = HasMany["Entry"](via=Index("GSI1"))  # declared below, on audit
        missing = BelongsTo[Any]("Nowhere")

    @audit.model(pk="EVENT#{event_id}", sk="EVENT#{event_id}", GSI1=("ORDER#{order_id}", "{at}"))
    class Entry:
        event_id: str
        order_id: str
        at: str
        order = BelongsTo(Order)

    with pytest.raises(DefinitionError) as caught:
        orders.check()
    assert "Order.missing -> 'Nowhere'" in str(caught.value)
    assert "then in the module that declares the owner" in str(caught.value)
    assert Order.entries.target_cls is Entry  # found where Order was declared
    assert Order.entries.children_table is audit
    assert Entry.order.link == {"order_id": "order_id"}


def test_the_target_comes_from_the_type_argument_in_either_form() -> None:
    # HasMany["Loan"] (the owner is bound on access), and at run time the earlier
    # HasMany["Book", "Loan"] (parent, child), which type checkers reject.
    table = Table("forms", pk="pk", sk="sk")

    @table.model(pk="BOOK#{book_id}", sk="BOOK#{book_id}")
    class Book:
        book_id: str
        loans = HasMany["Loan"](via=Partition())
        holds = HasMany["Book", "Loan"](via=Partition())  # type: ignore[misc]

    @table.model(pk="BOOK#{book_id}", sk="LOAN#{loan_id}")
    class Loan:
        book_id: str
        loan_id: str

    assert Book.loans.target_cls is Loan
    assert Book.holds.target_name == "Loan"


def test_a_model_of_this_table_declared_later_wins_over_another_tables_of_that_name() -> None:
    other = Table("other4", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
    mine = Table("mine4", pk="pk", sk="sk")

    @other.model(pk="X#{order_id}", sk="X#{order_id}", GSI1=("ORDER#{order_id}", "X"))
    class Line:
        order_id: str

    @mine.model(pk="ORDER#{order_id}", sk="ORDER#{order_id}")
    class Order:
        order_id: str
        lines = HasMany["Line"](via=Partition())  # the Line of this table, declared below

    assert Line.__name__ in other.models  # another table's Line is in scope meanwhile

    @mine.model(pk="ORDER#{order_id}", sk="LINE#{n}")
    class Line:  # type: ignore[no-redef]
        order_id: str
        n: str

    mine.check()
    assert Order.lines.target_cls is Line
    assert Order.lines.children_table is mine

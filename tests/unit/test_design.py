"""``dynorm.design``: the key table and each access pattern's requests, planned, never sent."""

from __future__ import annotations

import datetime

import attrs
import pytest

from dynorm import GSI, BelongsTo, DefinitionError, Embedded, HasMany, Index, Partition, Table
from dynorm.design import AccessPattern, design
from tests.seed_models import app

shop = Table(
    "shop",
    pk="PK",
    sk="SK",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK", projection="KEYS_ONLY")],
    type_attribute="Type",
)


@attrs.define
class Address:
    nickname: str
    city: str


@shop.model(pk="C#{customer_id}", sk="C#{customer_id}", entity="customer")
class Customer:
    customer_id: str
    region: str = "eu"
    addresses = HasMany["Address"](via=Embedded(key="nickname"))
    orders = HasMany["Order"](via=Index("GSI1"))


@shop.model(pk="O#{order_id}", sk="O#{order_id}", GSI1=("C#{customer_id}", "O#{placed}#{order_id}"))
class Order:
    order_id: str
    customer_id: str
    placed: datetime.date
    total: int = 0
    customer = BelongsTo(Customer)


@shop.model(pk="{country}", sk="{state}#{city}#{zip}")
class Store:
    country: str
    state: str
    city: str
    zip: int


def pattern(name: str, table: Table = shop) -> AccessPattern:
    found = {p.name: p for p in design(table).patterns}
    assert name in found, sorted(found)
    return found[name]


def test_the_key_table_has_one_row_per_entity_with_its_templates() -> None:
    found = design(app)

    assert found.key_attributes == ("pk", "sk", "GSI1PK", "GSI1SK")
    rows = {e.entity: e for e in found.entities}
    assert dict(rows["Org"].keys) == {"pk": "ORG#{name}", "sk": "METADATA#{name}"}
    assert dict(rows["Ticket"].keys) == {
        "pk": "TICKET#{ticket_id}",
        "sk": "TICKET#{ticket_id}",
        "GSI1PK": "ORG#{org_name}#USER#{username}",
        "GSI1SK": "TICKET#{ticket_id}",
    }
    assert rows["Ticket"].attributes == ("ticket_id", "org_name", "username", "created")


def test_embedded_children_are_rows_inside_their_parent_and_entities_use_their_name() -> None:
    rows = {e.entity: e for e in design(shop).entities}

    assert "customer" in rows  # the entity name, not the class name
    assert rows["Address"].inside == "Customer.addresses"
    assert rows["Address"].keys == {}
    assert "addresses" in rows["customer"].attributes


@pytest.mark.parametrize(
    ("name", "cost"),
    [
        ("Org.users", "1 Query on the table"),
        ("User.tickets", "1 Query on GSI1, newest first"),
        ("User.org", "1 BatchGetItem"),
        ("Org by key", "1 GetItem"),
    ],
)
def test_the_seed_patterns_cost_what_the_seeds_state(name: str, cost: str) -> None:
    assert pattern(name, app).cost == cost


def test_requests_show_the_templates_where_values_go() -> None:
    users = pattern("Org.users", app)
    tickets = pattern("User.tickets", app)

    assert users.strategy == "Partition()"
    assert users.call == "db.get(Org, name=…, load=[Org.users])"
    assert users.requests == (
        'Query on the table: pk = "ORG#{name}" AND sk BETWEEN "METADATA#{name}" AND "USER$"',
    )
    assert tickets.requests[0].startswith(
        'Query on GSI1: GSI1PK = "ORG#{org_name}#USER#{username}"'
    )
    assert tickets.requests[0].endswith(", newest first")


def test_an_embedded_relationship_costs_the_parents_get() -> None:
    found = pattern("Customer.addresses")

    assert found.cost == "the parent's GetItem"
    assert found.requests == ('GetItem: PK = "C#{customer_id}", SK = "C#{customer_id}"',)


def test_an_index_holding_items_in_part_adds_the_whole_item_reads() -> None:
    found = pattern("Customer.orders")

    by_customer = pattern("Order by customer_id (GSI1)")

    # The whole items are read after each page, with the page's keys: a round of their own.
    assert found.cost == (
        "1 GetItem + 1 Query on GSI1 (at once), then 1 BatchGetItem per page (the index holds "
        "the items in part)"
    )
    assert by_customer.cost == (
        "1 Query on GSI1, then 1 BatchGetItem per page (the index holds the items in part)"
    )
    assert by_customer.requests[1] == "BatchGetItem: the table keys of each page"


def test_non_str_key_fields_show_as_their_placeholders() -> None:
    by_placed = pattern("Order by customer_id, placed (GSI1)")
    stores = [p for p in design(shop).patterns if p.name.startswith("Store by c")]

    assert by_placed.requests[0] == (
        'Query on GSI1: GSI1PK = "C#{customer_id}" AND begins_with(GSI1SK, "O#{placed}#")'
    )
    assert [p.name for p in stores] == [
        "Store by country",
        "Store by country, state",
        "Store by country, state, city",
    ]
    assert stores[2].requests == (
        'Query on the table: PK = "{country}" AND begins_with(SK, "{state}#{city}#")',
    )
    assert pattern("Store by key").requests == (
        'GetItem: PK = "{country}", SK = "{state}#{city}#{zip}"',
    )


def test_a_parent_read_after_the_child_is_a_second_round() -> None:
    found = pattern("Order.customer")

    assert found.strategy == "BelongsTo"
    assert found.cost == "1 GetItem, then 1 BatchGetItem"


def test_markdown_has_the_key_table_and_the_patterns() -> None:
    text = design(app).markdown()

    assert "| Entity | pk | sk | GSI1PK | GSI1SK | Attributes |" in text
    assert "| Org | `ORG#{name}` | `METADATA#{name}` |  |  | name, plan_type |" in text
    assert "| User.tickets | `db.get(User, org_name=…, username=…, load=[User.tickets])` |" in text


def test_a_relationship_to_an_undeclared_model_is_reported() -> None:
    broken = Table("broken")

    @broken.model(pk="P#{p}", sk="P#{p}")
    class Parent:
        p: str
        kids: HasMany[Parent] = HasMany("Missing", via=Partition())

    with pytest.raises(DefinitionError, match=r"Parent.kids -> 'Missing'"):
        design(broken)


def test_number_and_binary_keys_show_their_fields_unquoted() -> None:
    scores = Table(
        "GameScores",
        pk="UserId",
        sk="Score",
        indexes=[GSI("ByGame", pk="GameTitle", sk="TopScore")],
        key_types={"Score": "N", "TopScore": "N"},
    )

    @scores.model(pk="{user_id}", sk="{score}", ByGame=("{game}", "{top}"))
    @attrs.define
    class Score:
        user_id: str
        score: int  # each number field has its own placeholder, so none shows as another
        game: str
        top: int
        wins: int = 0

    chunks = Table("Chunks", pk="Digest", sk="Part", key_types={"Digest": "B", "Part": "N"})

    @chunks.model(pk="{digest}", sk="{part}")
    @attrs.define
    class Chunk:
        digest: bytes
        part: int

    by_key = {p.name: p.requests for p in design(scores).patterns}["Score by key"]
    assert by_key == ('GetItem: UserId = "{user_id}", Score = {score}',)
    chunk = {p.name: p.requests for p in design(chunks).patterns}["Chunk by key"]
    assert chunk == ("GetItem: Digest = {digest}, Part = {part}",)


sharded = Table("sharded", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@sharded.model(pk="POST#{post_id}", sk="POST#{post_id}")
class Post:
    post_id: str
    likes = HasMany["Like"](via=Partition(shards=8))


@sharded.model(pk="POST#{post_id}#{shard}", sk="LIKE#{user_id}")
class Like:
    post_id: str
    user_id: str


def test_a_sharded_collection_costs_one_query_per_shard_in_parallel() -> None:
    found = pattern("Post.likes", sharded)

    assert found.strategy == "Partition(shards=8)"
    assert found.cost == "1 GetItem + 8 Queries on the table in parallel (at once)"
    assert found.requests[1:] == tuple(
        f'Query on the table: pk = "POST#{{post_id}}#{shard}" AND begins_with(sk, "LIKE#")'
        for shard in range(8)
    )


middle = Table("middle", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@middle.model(pk="POLL#{poll_id}", sk="POLL#{poll_id}", GSI1=("POLL#{poll_id}", "POLL"))
class Poll:
    poll_id: str
    votes = HasMany["Vote"](via=Index("GSI1", shards=3))


@middle.model(pk="VOTE#{poll_id}#{user_id}", sk="V", GSI1=("POLL#{shard}#{poll_id}", "V#{user_id}"))
class Vote:
    poll_id: str
    user_id: str


def test_a_sharded_child_by_key_shows_shard_and_the_shard_count_not_a_sample_shard() -> None:
    like = pattern("Like by key", sharded)

    assert like.cost == "1 GetItem"
    assert like.requests == (
        (
            'GetItem: pk = "POST#{post_id}#{shard}", sk = "LIKE#{user_id}" '
            "({shard}: one of 8, from post_id, user_id)"
        ),
    )
    assert pattern("Post by key", sharded).requests == (
        'GetItem: pk = "POST#{post_id}", sk = "POST#{post_id}"',
    )
    # A shard only in an index key: the get by key does not involve it.
    assert pattern("Vote by key", middle).requests == (
        'GetItem: pk = "VOTE#{poll_id}#{user_id}", sk = "V"',
    )
    votes = pattern("Poll.votes", middle)
    assert votes.requests[1:] == tuple(
        f'Query on GSI1: GSI1PK = "POLL#{shard}#{{poll_id}}" AND begins_with(GSI1SK, "V#")'
        for shard in range(3)
    )

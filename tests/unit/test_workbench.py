"""NoSQL Workbench data models: export of dynorm tables, reading files, errors. No server."""

from __future__ import annotations

import collections.abc
import copy
import datetime
import decimal
import enum
import importlib.util
import json
import sys
import typing
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import attrs
import pytest

from dynorm import GSI, LSI, DynormError, Table, field
from dynorm.workbench import (
    Attribute,
    Facet,
    WorkbenchError,
    WorkbenchIndex,
    dump_model,
    export_model,
    load_model,
    read_model,
    stored_type,
    table_from_model,
)
from tests.seed_models import Org, Ticket, User, app

WHEN = datetime.datetime(2026, 1, 5, 9, 30)
EXAMPLES = Path(__file__).parents[2] / "examples"


def seed_objects() -> list[object]:
    created = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    return [
        Org("ACME", "Pro"),
        User("ACME", "ada"),
        User("ACME", "bob", "Admin"),
        Ticket("t-1", "ACME", "ada", created),
    ]


def table_of(data: dict[str, Any]) -> dict[str, Any]:
    (table,) = data["DataModel"]
    result: dict[str, Any] = table
    return result


def facet_of(data: dict[str, Any], name: str) -> dict[str, Any]:
    (facet,) = [f for f in table_of(data)["TableFacets"] if f["FacetName"] == name]
    result: dict[str, Any] = facet
    return result


# -- export of the seed table --------------------------------------------------------------------


def test_the_seed_table_exports_as_a_workbench_3_model() -> None:
    data = export_model(app, items=seed_objects(), when=WHEN, author="dynorm")
    assert list(data) == ["ModelName", "ModelMetadata", "DataModel"]
    assert data["ModelName"] == "app"
    assert data["ModelMetadata"] == {
        "Author": "dynorm",
        "DateCreated": "Jan 5, 2026, 09:30 AM",
        "DateLastModified": "Jan 5, 2026, 09:30 AM",
        "Description": "",
        "AWSService": "Amazon DynamoDB",
        "Version": "3.0",
    }
    table = table_of(data)
    assert list(table) == [
        "TableName",
        "KeyAttributes",
        "NonKeyAttributes",
        "TableFacets",
        "GlobalSecondaryIndexes",
        "TableData",
        "DataAccess",
        "BillingMode",
    ]
    assert table["TableName"] == "app"
    assert table["KeyAttributes"] == {
        "PartitionKey": {"AttributeName": "pk", "AttributeType": "S"},
        "SortKey": {"AttributeName": "sk", "AttributeType": "S"},
    }
    assert table["NonKeyAttributes"] == [
        {"AttributeName": name, "AttributeType": "S"}
        for name in (
            "name",
            "plan_type",
            "org_name",
            "username",
            "user_type",
            "GSI1PK",
            "GSI1SK",
            "ticket_id",
            "created",
        )
    ]
    assert table["GlobalSecondaryIndexes"] == [
        {
            "IndexName": "GSI1",
            "KeyAttributes": {
                "PartitionKey": {"AttributeName": "GSI1PK", "AttributeType": "S"},
                "SortKey": {"AttributeName": "GSI1SK", "AttributeType": "S"},
            },
            "Projection": {"ProjectionType": "ALL"},
        }
    ]
    assert table["TableData"] == []  # every item is one model's: in its facet
    assert table["DataAccess"] == {"MySql": {}}
    assert table["BillingMode"] == "PAY_PER_REQUEST"


def test_each_model_is_a_facet_with_its_templates_attributes_and_items() -> None:
    data = export_model(app, items=seed_objects(), when=WHEN)
    assert [f["FacetName"] for f in table_of(data)["TableFacets"]] == ["Org", "User", "Ticket"]
    org = facet_of(data, "Org")
    assert list(org) == [
        "FacetName",
        "KeyAttributeAlias",
        "TableData",
        "NonKeyAttributes",
        "DataAccess",
    ]
    assert org["KeyAttributeAlias"] == {
        "PartitionKeyAlias": "ORG#{name}",
        "SortKeyAlias": "METADATA#{name}",
    }
    assert org["NonKeyAttributes"] == ["name", "plan_type"]
    assert org["TableData"] == [
        {
            "pk": {"S": "ORG#ACME"},
            "sk": {"S": "METADATA#ACME"},
            "name": {"S": "ACME"},
            "plan_type": {"S": "Pro"},
        }
    ]
    user = facet_of(data, "User")
    assert user["KeyAttributeAlias"] == {
        "PartitionKeyAlias": "ORG#{org_name}",
        "SortKeyAlias": "USER#{username}",
    }
    assert user["NonKeyAttributes"] == ["org_name", "username", "user_type", "GSI1PK", "GSI1SK"]
    # Sorted by key; key attributes first, then the others by name; index keys filled.
    assert [list(i) for i in user["TableData"]] == [
        ["pk", "sk", "GSI1PK", "GSI1SK", "org_name", "user_type", "username"]
    ] * 2
    assert [i["sk"]["S"] for i in user["TableData"]] == ["USER#ada", "USER#bob"]
    assert user["TableData"][1]["GSI1PK"] == {"S": "ORG#ACME#USER#bob"}
    ticket = facet_of(data, "Ticket")
    assert ticket["TableData"][0]["created"] == {"S": "2026-01-01T00:00:00+00:00"}


def test_an_export_is_json_and_reads_back() -> None:
    data = export_model(app, items=seed_objects(), when=WHEN)
    text = dump_model(data)
    assert text.startswith('{\n  "ModelName": "app",\n')
    model = read_model(json.loads(text))
    table = model.table()
    assert (table.name, table.pk, table.sk) == ("app", Attribute("pk", "S"), Attribute("sk", "S"))
    assert table.indexes == (
        WorkbenchIndex("GSI1", Attribute("GSI1PK", "S"), Attribute("GSI1SK", "S"), "ALL"),
    )
    assert [f.name for f in table.facets] == ["Org", "User", "Ticket"]
    assert len(table.items) == 4
    assert table.billing_mode == "PAY_PER_REQUEST"


def test_the_output_is_the_same_whatever_the_order_of_the_items() -> None:
    objs = seed_objects()
    first = export_model(app, items=objs, when=WHEN)
    objs.reverse()
    objs[1:3] = objs[2:0:-1]
    assert dump_model(export_model(app, items=objs, when=WHEN)) == dump_model(first)


def test_name_and_table_name_are_the_files_own() -> None:
    data = export_model(app, name="Tickets", table_name="tickets-prod", when=WHEN)
    assert data["ModelName"] == "Tickets"
    assert table_of(data)["TableName"] == "tickets-prod"
    assert all(f["TableData"] == [] for f in table_of(data)["TableFacets"])


# -- raw items -----------------------------------------------------------------------------------


def test_raw_items_go_to_their_models_facet_and_strays_to_the_table() -> None:
    org: dict[str, Any] = {"pk": {"S": "ORG#Z"}, "sk": {"S": "METADATA#Z"}, "name": {"S": "Z"}}
    stray: dict[str, Any] = {
        "pk": {"S": "CONFIG"},
        "sk": {"S": "v1"},
        "blob": {"B": b"\x00\xff"},
        "n": {"N": "7"},
    }
    data = export_model(app, raw_items=[stray, org], when=WHEN)
    assert facet_of(data, "Org")["TableData"] == [org]
    assert table_of(data)["TableData"] == [
        {"pk": {"S": "CONFIG"}, "sk": {"S": "v1"}, "blob": {"B": "AP8="}, "n": {"N": "7"}}
    ]
    # Attributes only items hold are declared too, typed as the items hold them.
    declared = {a["AttributeName"]: a["AttributeType"] for a in table_of(data)["NonKeyAttributes"]}
    assert (declared["blob"], declared["n"]) == ("B", "N")


def test_raw_binaries_as_bytes_or_base64_text_export_alike() -> None:
    as_bytes: dict[str, Any] = {
        "pk": {"S": "X"},
        "sk": {"S": "Y"},
        "bs": {"BS": [b"\x02", b"\x01"]},
    }
    as_text: dict[str, Any] = {"pk": {"S": "X"}, "sk": {"S": "Y"}, "bs": {"BS": ["Ag==", "AQ=="]}}
    first = export_model(app, raw_items=[as_bytes], when=WHEN)
    assert first == export_model(app, raw_items=[as_text], when=WHEN)
    assert table_of(first)["TableData"][0]["bs"] == {"BS": ["AQ==", "Ag=="]}


def test_objects_win_over_raw_items_with_their_key() -> None:
    raw = {"pk": {"S": "ORG#ACME"}, "sk": {"S": "METADATA#ACME"}, "name": {"S": "old"}}
    data = export_model(app, items=[Org("ACME")], raw_items=[raw], when=WHEN)
    assert facet_of(data, "Org")["TableData"][0]["name"] == {"S": "ACME"}


# -- attribute types -----------------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@attrs.define
class Point:
    x: int
    y: int


@pytest.mark.parametrize(
    ("tp", "expected"),
    [
        (str, "S"),
        (int, "N"),
        (float, "N"),
        (decimal.Decimal, "N"),
        (bool, "BOOL"),
        (bytes, "B"),
        (uuid.UUID, "S"),
        (datetime.datetime, "S"),
        (datetime.date, "S"),
        (datetime.time, "S"),
        (int | None, "N"),
        (type(None), "NULL"),
        (Color, "S"),
        (Level, "N"),
        (Literal["a", "b"], "S"),
        (Point, "M"),
        (dict[str, int], "M"),
        (list[str], "L"),
        (tuple[int, str], "L"),
        (set[str], "SS"),
        (frozenset[int], "NS"),
        (set[bytes], "BS"),
        (set[decimal.Decimal] | None, "NS"),
        (Any, None),
    ],
)
def test_stored_type(tp: object, expected: str | None) -> None:
    assert stored_type(tp) == expected


@pytest.mark.parametrize(
    ("tp", "expected"),
    [
        (typing.MutableMapping[str, int], "M"),
        (typing.Mapping[str, int], "M"),
        (typing.Dict[str, int], "M"),  # noqa: UP006 - the typing alias is the point
        (collections.abc.MutableMapping[str, int], "M"),
        (collections.abc.Set[str], "SS"),
        (collections.abc.MutableSet[str], "SS"),
        (typing.AbstractSet[int], "NS"),
        (typing.MutableSet[bytes], "BS"),
        (typing.FrozenSet[str], "SS"),  # noqa: UP006
        (typing.MutableSequence[int], "L"),
        (typing.Sequence[str], "L"),
        (typing.List[int], "L"),  # noqa: UP006
        (Literal[1, 2], "N"),
        (Literal[b"x"], "B"),
        (Literal["a", 1], None),  # values of two types: the type does not tell
    ],
)
def test_stored_type_of_typing_aliases_and_abstract_collections(
    tp: object, expected: str | None
) -> None:
    assert stored_type(tp) == expected


def test_abstract_collection_fields_export_with_their_stored_types_without_items() -> None:
    abstract = Table("abstract")

    @abstract.model(pk="A#{id}", sk="A")
    @attrs.define
    class Abstract:
        id: str
        counts: typing.MutableMapping[str, int] = attrs.Factory(dict)
        tags: collections.abc.Set[str] = frozenset()
        codes: typing.AbstractSet[int] = frozenset()
        choice: Literal["a", "b"] = "a"
        level: Literal[1, 2] = 1

    declared = {
        a["AttributeName"]: a["AttributeType"]
        for a in table_of(export_model(abstract, when=WHEN))["NonKeyAttributes"]
    }
    assert declared == {
        "id": "S",
        "counts": "M",
        "tags": "SS",
        "codes": "NS",
        "choice": "S",
        "level": "N",
    }


def test_every_field_is_declared_with_its_stored_type() -> None:
    kinds = Table("kinds", type_attribute="kind", indexes=[GSI("byColor", pk="color")])

    @kinds.model(pk="K#{id}", sk="K", byColor="{color_name}", ttl="expires")
    @attrs.define
    class Kind:
        id: str
        color_name: str
        count: int
        price: decimal.Decimal
        flag: bool
        raw: bytes
        tags: set[str]
        scores: list[int]
        where: Point
        extra: dict[str, str]
        anything: Any
        expires: datetime.datetime | None = None
        label: str = field(name="Label", default="")
        shade: Color = Color.RED

    @kinds.model(pk="K#{id}", sk="CHILD#{child}", entity="child")
    @attrs.define
    class Child:
        id: str
        child: str
        parts: list[Point] = attrs.Factory(list)

    del Child
    sample = Kind(
        "1",
        "red",
        2,
        decimal.Decimal("1.5"),
        True,  # noqa: FBT003 - a field value
        b"x",
        {"a"},
        [1],
        Point(1, 2),
        {},
        7,
    )
    data = export_model(kinds, items=[sample], when=WHEN)
    declared = {a["AttributeName"]: a["AttributeType"] for a in table_of(data)["NonKeyAttributes"]}
    assert declared == {
        "id": "S",
        "color_name": "S",
        "count": "N",
        "price": "N",
        "flag": "BOOL",
        "raw": "B",
        "tags": "SS",
        "scores": "L",
        "where": "M",
        "extra": "M",
        "anything": "N",  # Any: as the sample item holds it
        "expires": "N",  # a time to live: epoch seconds
        "Label": "S",  # the stored name
        "shade": "S",
        "color": "S",  # the index key
        "kind": "S",  # the type attribute
        "child": "S",
        "parts": "L",
    }
    assert [f["FacetName"] for f in table_of(data)["TableFacets"]] == ["Kind", "child"]
    kind = facet_of(data, "Kind")
    assert kind["NonKeyAttributes"][-1] == "kind"
    assert kind["TableData"][0]["kind"] == {"S": "Kind"}
    assert kind["TableData"][0]["raw"] == {"B": "eA=="}
    assert "SortKeyAlias" in kind["KeyAttributeAlias"]
    # The index key attribute is a field of the model here (its template is "{color_name}"
    # on another attribute): declared as the index's key, a string.
    assert table_of(data)["GlobalSecondaryIndexes"][0]["KeyAttributes"] == {
        "PartitionKey": {"AttributeName": "color", "AttributeType": "S"}
    }


def test_embedded_children_stored_in_a_map_are_declared_as_one() -> None:
    module = load_example("seed_003_strategies")
    data = export_model(module.table, when=WHEN)
    assert facet_of(data, "Customer")["NonKeyAttributes"] == ["customer_id", "name", "addresses"]
    declared = {a["AttributeName"]: a["AttributeType"] for a in table_of(data)["NonKeyAttributes"]}
    assert declared["addresses"] == "M"
    assert declared["author_birthdate"] == "S"


def test_local_indexes_are_left_out_and_named_in_the_description() -> None:
    table = Table(
        "lsi", indexes=[LSI("byDate", sk="date"), GSI("GSI1", pk="g1pk", projection=["a", "b"])]
    )

    @table.model(pk="A#{a}", sk="B#{b}", byDate="D#{b}", GSI1="G#{a}")
    @attrs.define
    class Row:
        a: str
        b: str

    del Row
    data = export_model(table, description="Rows.", when=WHEN)
    assert data["ModelMetadata"]["Description"] == (
        "Rows.\n\nLocal secondary indexes (NoSQL Workbench models have none): "
        "byDate (sort key 'date')."
    )
    gsis = table_of(data)["GlobalSecondaryIndexes"]
    assert [g["IndexName"] for g in gsis] == ["GSI1"]
    assert gsis[0]["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b"]}
    assert gsis[0]["KeyAttributes"] == {
        "PartitionKey": {"AttributeName": "g1pk", "AttributeType": "S"}
    }


def test_a_table_without_sort_key_has_no_sort_key_alias() -> None:
    table = Table("flat", pk="id", sk=None)

    @table.model(pk="{name}")
    @attrs.define
    class Thing:
        name: str

    del Thing
    data = export_model(table, when=WHEN)
    assert table_of(data)["KeyAttributes"] == {
        "PartitionKey": {"AttributeName": "id", "AttributeType": "S"}
    }
    assert facet_of(data, "Thing")["KeyAttributeAlias"] == {"PartitionKeyAlias": "{name}"}
    assert read_model(data).table().sk is None


def test_versioned_and_stamped_models_export_their_items_as_a_put_stores_them() -> None:
    docs = Table("docs")

    @docs.model(
        pk="D#{id}", sk="D", version="rev", ttl="expires", created="made", updated="changed"
    )
    @attrs.define
    class Doc:
        id: str
        rev: int = 0
        expires: datetime.datetime | None = None
        made: datetime.datetime | None = None
        changed: datetime.datetime | None = None

    expires = datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)
    made = datetime.datetime(2025, 6, 1, tzinfo=datetime.UTC)
    before = datetime.datetime.now(datetime.UTC)
    data = export_model(docs, items=[Doc("a", expires=expires), Doc("b", rev=4, made=made)])
    after = datetime.datetime.now(datetime.UTC)
    items = {i["id"]["S"]: i for i in facet_of(data, "Doc")["TableData"]}
    assert items["a"]["rev"] == {"N": "1"}  # the next version, as a put stores it
    assert items["b"]["rev"] == {"N": "5"}
    assert items["a"]["expires"] == {"N": str(int(expires.timestamp()))}  # ttl: epoch seconds
    assert items["b"]["made"] == {"S": made.isoformat()}  # kept
    for item in items.values():
        for attr in ("changed", *(["made"] if item is items["a"] else [])):
            stamp = datetime.datetime.fromisoformat(item[attr]["S"])
            assert before <= stamp <= after
    declared = {a["AttributeName"]: a["AttributeType"] for a in table_of(data)["NonKeyAttributes"]}
    assert declared == {
        "id": "S",
        "rev": "N",
        "expires": "N",
        "made": "S",
        "changed": "S",
    }


def test_an_object_of_another_table_is_refused() -> None:
    other = Table("other")

    @other.model(pk="X#{x}", sk="X")
    @attrs.define
    class Stray:
        x: str

    with pytest.raises(DynormError, match="belongs to Table 'other'"):
        export_model(app, items=[Stray("1")])


# -- the example seed tables ---------------------------------------------------------------------


def load_example(name: str) -> ModuleType:
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))  # the examples import their `common` module
    found = sys.modules.get(f"workbench_{name}")
    if found is not None:
        return found
    spec = importlib.util.spec_from_file_location(f"workbench_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("example", "facets", "indexes"),
    [
        ("seed_000_organizations", ["Org", "User"], []),
        ("seed_001_tickets", ["Org", "User", "Ticket"], ["GSI1"]),
        ("seed_002_games", ["Player", "Game", "UserGameMapping"], ["inverted"]),
        ("seed_003_strategies", ["Customer", "Author", "Book", "Location"], ["GSI1"]),
        ("seed_004_orders", ["Order", "OrderItem"], []),
    ],
)
def test_the_example_tables_export(example: str, facets: list[str], indexes: list[str]) -> None:
    table: Table = load_example(example).table
    data = export_model(table, when=WHEN)
    exported = table_of(data)
    assert exported["TableName"] == table.name
    assert [f["FacetName"] for f in exported["TableFacets"]] == facets
    assert [g["IndexName"] for g in exported["GlobalSecondaryIndexes"]] == indexes
    for facet, info in zip(exported["TableFacets"], table.models.values(), strict=True):
        pk, sk = info.key_templates(None)
        assert facet["KeyAttributeAlias"] == {
            "PartitionKeyAlias": pk.source,
            "SortKeyAlias": sk.source if sk else None,
        }
    declared = [a["AttributeName"] for a in exported["NonKeyAttributes"]]
    assert len(declared) == len(set(declared))
    assert not {"pk", "sk"} & set(declared)
    model = read_model(data)
    rebuilt = table_from_model(model)
    assert (rebuilt.pk, rebuilt.sk) == (table.pk, table.sk)
    assert rebuilt.indexes == table.indexes


def test_the_orders_example_stores_decimals_as_numbers() -> None:
    module = load_example("seed_004_orders")
    item = module.OrderItem("xyz", "i-1", "p-1", 2, decimal.Decimal("9.99"))
    data = export_model(module.table, items=[item], when=WHEN)
    row = facet_of(data, "OrderItem")["TableData"][0]
    assert (row["quantity"], row["price"]) == ({"N": "2"}, {"N": "9.99"})


# -- reading files -------------------------------------------------------------------------------

#: A model as NoSQL Workbench 3.0 writes one (written for these tests, in its shape): no facets,
#: items in the table's own data, INCLUDE projections, a number attribute, provisioned billing.
CATALOG: dict[str, Any] = {
    "ModelName": "catalog",
    "ModelMetadata": {
        "Author": "someone",
        "DateCreated": "Mar 3, 2024, 10:00 AM",
        "DateLastModified": "Mar 3, 2024, 11:15 AM",
        "Description": "products by brand",
        "AWSService": "Amazon DynamoDB",
        "Version": "3.0",
    },
    "DataModel": [
        {
            "TableName": "Catalog",
            "KeyAttributes": {
                "PartitionKey": {"AttributeName": "PK", "AttributeType": "S"},
                "SortKey": {"AttributeName": "SK", "AttributeType": "S"},
            },
            "NonKeyAttributes": [
                {"AttributeName": "kind", "AttributeType": "S"},
                {"AttributeName": "stock", "AttributeType": "N"},
                {"AttributeName": "byBrand", "AttributeType": "S"},
            ],
            "GlobalSecondaryIndexes": [
                {
                    "IndexName": "brand-index",
                    "KeyAttributes": {
                        "PartitionKey": {"AttributeName": "byBrand", "AttributeType": "S"}
                    },
                    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["stock"]},
                }
            ],
            "TableData": [
                {
                    "PK": {"S": "BRAND#1"},
                    "SK": {"S": "META"},
                    "kind": {"S": "BRAND"},
                },
                {
                    "PK": {"S": "PRODUCT#7"},
                    "SK": {"S": "META"},
                    "kind": {"S": "PRODUCT"},
                    "stock": {"N": "70"},
                    "byBrand": {"S": "BRAND#1"},
                },
            ],
            "DataAccess": {"MySql": {}},
            "BillingMode": "PROVISIONED",
            "ProvisionedCapacitySettings": {
                "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
            },
        }
    ],
}


def test_a_workbench_file_reads_into_typed_values(tmp_path: Path) -> None:
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(CATALOG), encoding="utf-8")
    model = load_model(path)
    assert (model.name, model.author, model.description, model.version) == (
        "catalog",
        "someone",
        "products by brand",
        "3.0",
    )
    table = model.table("Catalog")
    assert table.attributes == (
        Attribute("kind", "S"),
        Attribute("stock", "N"),
        Attribute("byBrand", "S"),
    )
    assert table.indexes == (
        WorkbenchIndex("brand-index", Attribute("byBrand", "S"), None, ("stock",)),
    )
    assert table.facets == ()
    assert [table.key_of(i) for i in table.items] == [
        {"PK": {"S": "BRAND#1"}, "SK": {"S": "META"}},
        {"PK": {"S": "PRODUCT#7"}, "SK": {"S": "META"}},
    ]
    assert table.billing_mode == "PROVISIONED"
    rebuilt = table_from_model(model)
    assert (rebuilt.name, rebuilt.pk, rebuilt.sk) == ("Catalog", "PK", "SK")
    assert rebuilt.indexes == {
        "brand-index": GSI("brand-index", pk="byBrand", sk=None, projection=("stock",))
    }


def test_facet_items_join_the_tables_once_per_key() -> None:
    data = copy.deepcopy(CATALOG)
    table = data["DataModel"][0]
    product = table["TableData"][1]
    table["TableFacets"] = [
        {
            "FacetName": "Product",
            "KeyAttributeAlias": {"PartitionKeyAlias": "PRODUCT#id", "SortKeyAlias": "META"},
            "TableData": [product, {"PK": {"S": "PRODUCT#8"}, "SK": {"S": "META"}}],
            "NonKeyAttributes": ["kind", "stock"],
            "DataAccess": {"MySql": {}},
        }
    ]
    read = read_model(data).table()
    assert read.facets == (
        Facet(
            "Product",
            "PRODUCT#id",
            "META",
            ("kind", "stock"),
            (product, {"PK": {"S": "PRODUCT#8"}, "SK": {"S": "META"}}),
        ),
    )
    assert [i["PK"]["S"] for i in read.items] == ["BRAND#1", "PRODUCT#7", "PRODUCT#8"]


def test_numbers_given_as_json_numbers_are_read_as_text() -> None:
    data = copy.deepcopy(CATALOG)
    data["DataModel"][0]["TableData"][1]["stock"] = {"N": 70}
    assert read_model(data).table().items[1]["stock"] == {"N": "70"}


def test_a_model_with_several_tables_needs_a_name() -> None:
    data = copy.deepcopy(CATALOG)
    second = copy.deepcopy(data["DataModel"][0])
    second["TableName"] = "Other"
    data["DataModel"].append(second)
    model = read_model(data)
    with pytest.raises(WorkbenchError, match=r"has 2 tables \('Catalog', 'Other'\); name"):
        model.table()
    assert model.table("Other").name == "Other"
    with pytest.raises(WorkbenchError, match="has no table 'Nope'"):
        model.table("Nope")
    assert table_from_model(model, source="Other").name == "Other"


def _nested(inner: dict[str, Any], levels: int) -> dict[str, Any]:
    """``inner`` inside ``levels`` maps, as DynamoDB JSON."""
    for _ in range(levels):
        inner = {"M": {"a": inner}}
    return inner


def _plain_nested(levels: int) -> dict[str, Any]:
    """``levels`` maps inside each other, as plain JSON (``{"a": {"a": ... 1}}``)."""
    inner: Any = 1
    for _ in range(levels):
        inner = {"a": inner}
    result: dict[str, Any] = inner
    return result


def _broken(path: str, value: object = KeyError) -> dict[str, Any]:
    """CATALOG with the value at ``path`` (dots; ints index lists) replaced or removed."""
    data = copy.deepcopy(CATALOG)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    target: Any = data
    for step in parents:
        target = target[step]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_broken("ModelName"), "^ModelName is missing$"),
        (_broken("DataModel"), "^DataModel is missing$"),
        (_broken("DataModel", []), "^DataModel holds no table$"),
        (_broken("DataModel", {}), "^DataModel must be a list; got dict$"),
        (_broken("ModelMetadata.AWSService", "Amazon Keyspaces"), "only 'Amazon DynamoDB'"),
        (_broken("DataModel.0.TableName", ""), r"^DataModel\[0\].TableName must be a non-empty"),
        (
            _broken("DataModel.0.KeyAttributes.PartitionKey"),
            r"^DataModel\[0\]\.KeyAttributes\.PartitionKey is missing$",
        ),
        (
            _broken("DataModel.0.KeyAttributes.SortKey.AttributeType", "M"),
            r"^DataModel\[0\]\.KeyAttributes\.SortKey\.AttributeType must be one of S, N, B; got",
        ),
        (
            _broken("DataModel.0.NonKeyAttributes.1.AttributeType", "INT"),
            r"NonKeyAttributes\[1\]\.AttributeType must be one of S, N, B, BOOL",
        ),
        (
            _broken("DataModel.0.GlobalSecondaryIndexes.0.Projection.ProjectionType", "SOME"),
            r"Projection\.ProjectionType must be one of ALL, KEYS_ONLY, INCLUDE",
        ),
        (
            _broken("DataModel.0.GlobalSecondaryIndexes.0.Projection.NonKeyAttributes"),
            r"GlobalSecondaryIndexes\[0\]\.Projection\.NonKeyAttributes is missing",
        ),
        (
            _broken("DataModel.0.GlobalSecondaryIndexes.0.KeyAttributes.PartitionKey", None),
            r"GlobalSecondaryIndexes\[0\]\.KeyAttributes\.PartitionKey must be an object",
        ),
        (
            _broken("DataModel.0.TableData.0.SK"),
            r"^DataModel\[0\]\.TableData\[0\] lacks the key attribute 'SK'$",
        ),
        (
            _broken("DataModel.0.TableData.0.PK", {"N": "1"}),
            r"TableData\[0\]\.PK is a key attribute of type S; got N",
        ),
        (
            _broken("DataModel.0.TableData.1.byBrand", {"N": "1"}),
            r"TableData\[1\]\.byBrand is a key attribute of type S; got N",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"N": "seventy"}),
            r"TableData\[1\]\.stock: 'seventy' is not a number",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"X": "1"}),
            r"TableData\[1\]\.stock: unknown type 'X'",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", "70"),
            r"TableData\[1\]\.stock must be one DynamoDB JSON value",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"SS": []}),
            r"TableData\[1\]\.stock: DynamoDB has no empty sets",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"B": "not base64!"}),
            r"TableData\[1\]\.stock: 'not base64!' is not base64 text",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"M": {"a": {"L": [{"BOOL": "yes"}]}}}),
            r"TableData\[1\]\.stock\.a\[0\]: BOOL holds true or false",
        ),
        (_broken("DataModel.0.TableData.1.stock", {"N": "71"}), None),
        # Values DynamoDB refuses, so an import would stop half-way through the items.
        (
            _broken("DataModel.0.TableData.1.stock", {"N": "NaN"}),
            r"TableData\[1\]\.stock: DynamoDB numbers cannot be Decimal\('NaN'\)",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"N": "Infinity"}),
            r"TableData\[1\]\.stock: DynamoDB numbers cannot be Decimal\('Infinity'\)",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"N": "1e200"}),
            r"TableData\[1\]\.stock: 1E\+200 is outside DynamoDB's number range",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"N": "1" * 42}),
            r"TableData\[1\]\.stock: 1+ has 42 significant digits",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"NS": ["1", "1e-200"]}),
            r"TableData\[1\]\.stock\[1\]: 1E-200 is outside DynamoDB's number range",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"N": "1_000"}),
            r"TableData\[1\]\.stock: '1_000' is not a number DynamoDB reads",
        ),
        (_broken("DataModel.0.TableData.1.stock", {"N": "-1.5E+3"}), None),
        (
            _broken("DataModel.0.TableData.1.SK", {"S": ""}),
            r"TableData\[1\]\.SK: a key attribute \(of the table or an index\) cannot be empty",
        ),
        (
            _broken("DataModel.0.TableData.1.PK", {"S": ""}),
            r"TableData\[1\]\.PK: a key attribute \(of the table or an index\) cannot be empty",
        ),
        (
            _broken("DataModel.0.TableData.1.byBrand", {"S": ""}),
            r"TableData\[1\]\.byBrand: a key attribute .* cannot be empty",
        ),
        (_broken("DataModel.0.TableData.1.kind", {"S": ""}), None),  # not a key: may be empty
        (
            _broken("DataModel.0.TableData.1.SK", {"S": "é" * 513}),
            r"TableData\[1\]\.SK: the key value is 1026 bytes, over DynamoDB's sort key limit",
        ),
        (_broken("DataModel.0.TableData.1.SK", {"S": "é" * 512}), None),
        (
            _broken("DataModel.0.TableData.1.byBrand", {"S": "x" * 2049}),
            r"TableData\[1\]\.byBrand: the key value is 2049 bytes, over DynamoDB's partition",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"SS": ["a", "b", "a"]}),
            (
                r"TableData\[1\]\.stock\[2\]: 'a' is the same value as \[0\] \('a'\); "
                "DynamoDB refuses a set holding one value twice"
            ),
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"NS": ["1", "1.0"]}),
            r"TableData\[1\]\.stock\[1\]: '1\.0' is the same value as \[0\] \('1'\)",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"NS": ["100", "1E2"]}),
            r"TableData\[1\]\.stock\[1\]: '1E2' is the same value as \[0\]",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"BS": ["AQ==", "AQ=="]}),
            r"TableData\[1\]\.stock\[1\]: 'AQ==' is the same value as \[0\]",
        ),
        (_broken("DataModel.0.TableData.1.stock", {"NS": ["1", "10", "0.1"]}), None),
        (
            _broken("DataModel.0.TableData.1.", {"S": "x"}),
            r"^DataModel\[0\]\.TableData\[1\] has an attribute named ''",
        ),
        # Attribute names: 64 KB for any name, 255 bytes for key and projected attributes.
        (
            _broken("DataModel.0.TableData.1." + "n" * 65536, {"S": "x"}),
            (
                r"^DataModel\[0\]\.TableData\[1\]: the attribute name 'n+\.\.\.n+' is "
                r"65536 bytes, over DynamoDB's limit of 65535 bytes for an attribute name "
                r"\(MAX_ATTRIBUTE_NAME_BYTES\); shorten it$"
            ),
        ),
        (_broken("DataModel.0.TableData.1." + "n" * 65535, {"S": "x"}), None),
        (
            _broken("DataModel.0.TableData.1.stock", {"M": {"é" * 32768: {"S": "x"}}}),
            r"^DataModel\[0\]\.TableData\[1\]\.stock: the attribute name .* is 65536 bytes",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"M": {"é" * 32768: 1}}),  # plain JSON
            r"^DataModel\[0\]\.TableData\[1\]\.stock: the attribute name .* is 65536 bytes",
        ),
        (
            _broken("DataModel.0.NonKeyAttributes.0.AttributeName", "k" * 65536),
            r"^DataModel\[0\]\.NonKeyAttributes\[0\]: the attribute name .* 65536 bytes",
        ),
        (
            _broken("DataModel.0.KeyAttributes.SortKey.AttributeName", "s" * 256),
            (
                r"^DataModel\[0\]\.KeyAttributes\.SortKey\.AttributeName: the attribute name "
                r".* is 256 bytes, over DynamoDB's limit of 255 bytes for a key attribute's name "
                r"\(MAX_KEY_NAME_BYTES\)"
            ),
        ),
        (
            _broken(
                "DataModel.0.GlobalSecondaryIndexes.0.KeyAttributes.PartitionKey.AttributeName",
                "b" * 256,
            ),
            r"GlobalSecondaryIndexes\[0\]\.KeyAttributes\.PartitionKey\.AttributeName: .* 256",
        ),
        (
            _broken(
                "DataModel.0.GlobalSecondaryIndexes.0.Projection.NonKeyAttributes", ["p" * 256]
            ),
            r"Projection\.NonKeyAttributes\[0\]: the attribute name .* is 256 bytes",
        ),
        # Maps and lists nest at most 32 deep, written either way.
        (_broken("DataModel.0.TableData.1.stock", _nested({"S": "x"}, 32)), None),
        (
            _broken("DataModel.0.TableData.1.stock", _nested({"S": "x"}, 33)),
            r"stock(\.a)+: the value nests more than 32 maps and lists \(MAX_DEPTH\)",
        ),
        (
            _broken("DataModel.0.TableData.1.stock", {"M": _plain_nested(33)}),
            r"stock(\.a)+: the value nests more than 32 maps and lists",
        ),
        (_broken("DataModel.0.TableData.1.stock", {"M": _plain_nested(32)}), None),
    ],
)
def test_bad_files_say_what_is_wrong_and_where(data: dict[str, Any], message: str | None) -> None:
    if message is None:
        read_model(data)  # the control: a change that keeps the file valid
        return
    with pytest.raises(WorkbenchError, match=message):
        read_model(data)


def test_two_different_items_with_one_key_are_refused() -> None:
    data = copy.deepcopy(CATALOG)
    data["DataModel"][0]["TableData"].append(
        {"PK": {"S": "BRAND#1"}, "SK": {"S": "META"}, "kind": {"S": "OTHER"}}
    )
    with pytest.raises(WorkbenchError) as info:
        read_model(data)
    assert str(info.value) == (
        "DataModel[0].TableData[2] and DataModel[0].TableData[0] hold different items with one "
        "key (PK={'S': 'BRAND#1'}, SK={'S': 'META'}); keep one"
    )


def test_number_keys_are_one_key_whatever_their_spelling() -> None:
    data = copy.deepcopy(CATALOG)
    table = data["DataModel"][0]
    table["KeyAttributes"]["SortKey"]["AttributeType"] = "N"
    table["TableData"] = [
        {"PK": {"S": "P"}, "SK": {"N": "1"}, "kind": {"S": "one"}},
        {"PK": {"S": "P"}, "SK": {"N": "1.0"}, "kind": {"S": "uno"}},
    ]
    with pytest.raises(WorkbenchError, match=r"TableData\[1\] and .*TableData\[0\] hold different"):
        read_model(data)
    table["TableData"][1] = {"PK": {"S": "P"}, "SK": {"N": "10E-1"}, "kind": {"S": "one"}}
    with pytest.raises(WorkbenchError, match="hold different items with one key"):
        read_model(data)  # one key spelt two ways: which text to keep is the file's choice
    # Numbers that differ only in their 38th digit are two keys (no rounding to 28 digits).
    table["TableData"][0]["SK"] = {"N": "1" + "0" * 37}
    table["TableData"][1]["SK"] = {"N": "1" + "0" * 36 + "1"}
    assert len(read_model(data).table().items) == 2


def test_an_index_declared_twice_is_refused() -> None:
    data = copy.deepcopy(CATALOG)
    indexes = data["DataModel"][0]["GlobalSecondaryIndexes"]
    indexes.append(copy.deepcopy(indexes[0]))
    with pytest.raises(WorkbenchError, match=r"\[1\]: index 'brand-index' is declared twice"):
        read_model(data)


def test_a_key_attribute_typed_two_ways_is_refused() -> None:
    data = copy.deepcopy(CATALOG)
    index = data["DataModel"][0]["GlobalSecondaryIndexes"][0]
    index["KeyAttributes"]["SortKey"] = {"AttributeName": "SK", "AttributeType": "N"}
    with pytest.raises(WorkbenchError, match="'SK' is typed N here and S elsewhere"):
        read_model(data)


def test_a_file_that_is_not_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(WorkbenchError, match=r"broken\.json: not JSON"):
        load_model(path)
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(WorkbenchError, match=r"broken\.json: ModelName is missing$"):
        load_model(path)


def test_a_file_that_cannot_be_read_as_text_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes('{"ModelName": "caf\u00e9"}'.encode("latin-1"))
    with pytest.raises(WorkbenchError, match=r"latin1\.json: not UTF-8 text \(byte 0xe9 at offset"):
        load_model(path)
    path.write_bytes(b"\xff\xfe{\x00}\x00")  # UTF-16
    with pytest.raises(
        WorkbenchError, match=r"latin1\.json: not UTF-8 text \(byte 0xff at offset 0"
    ):
        load_model(path)
    with pytest.raises(WorkbenchError, match=r"missing\.json: cannot be read \(No such file"):
        load_model(tmp_path / "missing.json")
    with pytest.raises(WorkbenchError, match=rf"{tmp_path.name}: cannot be read"):
        load_model(tmp_path)  # a directory
    path.write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(WorkbenchError, match=r"latin1\.json: not JSON"):
        load_model(path)


def test_index_names_dynamodb_refuses_are_refused_by_table_from_model() -> None:
    data = _broken("DataModel.0.GlobalSecondaryIndexes.0.IndexName", "ix")
    with pytest.raises(WorkbenchError, match="table 'Catalog': index name 'ix'"):
        table_from_model(read_model(data))


@pytest.mark.parametrize("version", ["1.0", "2.0", "3.0", "4.1"])
def test_every_format_version_is_read(version: str) -> None:
    data = copy.deepcopy(CATALOG)
    data["ModelMetadata"]["Version"] = version
    model = read_model(data)
    assert model.version == version
    assert len(model.table().items) == 2


def test_values_inside_maps_and_lists_written_as_plain_json_are_read() -> None:
    data = copy.deepcopy(CATALOG)
    product = data["DataModel"][0]["TableData"][1]
    # What NoSQL Workbench exports: the values inside "M" (and "L") as plain JSON.
    product["features"] = {
        "M": {
            "is_enabled": True,
            "version": "v0.1 beta",
            "weight": 1.25,
            "count": 3,
            "nothing": None,
            "cameras": {"front": {"foo": "bar"}},
            "sizes": [1, "two", False, {"x": 1}],
            "M": {"HP": {"N": "50"}},  # a name that is a type letter is a name, here
        }
    }
    product["tags"] = {"L": ["a", 2]}
    product["typed"] = {"M": {"a": {"S": "x"}, "b": {"L": [{"N": "1"}]}}}  # DynamoDB JSON
    product["empty"] = {"M": {}}
    item = read_model(data).table().items[1]
    assert item["features"] == {
        "M": {
            "is_enabled": {"BOOL": True},
            "version": {"S": "v0.1 beta"},
            "weight": {"N": "1.25"},
            "count": {"N": "3"},
            "nothing": {"NULL": True},
            "cameras": {"M": {"front": {"M": {"foo": {"S": "bar"}}}}},
            "sizes": {"L": [{"N": "1"}, {"S": "two"}, {"BOOL": False}, {"M": {"x": {"N": "1"}}}]},
            "M": {"M": {"HP": {"M": {"N": {"S": "50"}}}}},
        }
    }
    assert item["tags"] == {"L": [{"S": "a"}, {"N": "2"}]}
    assert item["typed"] == {"M": {"a": {"S": "x"}, "b": {"L": [{"N": "1"}]}}}
    assert item["empty"] == {"M": {}}
    assert read_model(data).table().items == read_model(data).table().items  # stable


def test_plain_json_numbers_are_held_to_dynamodb_limits() -> None:
    data = copy.deepcopy(CATALOG)
    data["DataModel"][0]["TableData"][1]["features"] = {"M": {"big": 1e200}}
    with pytest.raises(WorkbenchError, match=r"features\.big: 1E\+200 is outside DynamoDB's"):
        read_model(data)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "model.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_name_given_twice_in_one_object_is_refused_with_its_path(tmp_path: Path) -> None:
    text = json.dumps(CATALOG, indent=2)
    twice = text.replace(
        '"kind": {\n            "S": "PRODUCT"\n          },',
        ('"kind": {"S": "PRODUCT"}, "kind": {"S": "BRAND"},'),
    )
    assert twice != text
    with pytest.raises(WorkbenchError) as info:
        load_model(_write(tmp_path, twice))
    assert str(info.value) == (
        f"{tmp_path / 'model.json'}: DataModel[0].TableData[1].kind is given twice in one "
        "object; JSON readers keep one of the two values, so say which one you mean and remove "
        "the other"
    )
    top = '{"ModelName": "a", "ModelName": "b", "DataModel": []}'
    with pytest.raises(WorkbenchError, match=r"model\.json: ModelName is given twice"):
        load_model(_write(tmp_path, top))
    inner = text.replace('"S": "PRODUCT"', '"S": "PRODUCT", "S": "BRAND"')
    with pytest.raises(WorkbenchError, match=r"DataModel\[0\]\.TableData\[1\]\.kind\.S is given"):
        load_model(_write(tmp_path, inner))
    assert load_model(_write(tmp_path, text)).table().items == read_model(CATALOG).table().items


@pytest.mark.parametrize(
    ("number", "message"),
    [
        ("1" * 5000, "has 5000 significant digits; DynamoDB numbers hold at most 38"),
        ("-" + "9" * 4301, "has 4301 significant digits"),
        ("1" + "0" * 200, "is outside DynamoDB's number range"),
        ("1e999999", r"1E\+999999 is outside DynamoDB's number range"),
        ("1.5e-999", r"1\.5E-999 is outside DynamoDB's number range"),
        ("0." + "0" * 5000 + "1", "is outside DynamoDB's number range"),
    ],
)
def test_huge_json_numbers_are_refused_as_dynamodb_limits(
    tmp_path: Path, number: str, message: str
) -> None:
    text = json.dumps(CATALOG).replace('{"N": "70"}', f'{{"N": {number}}}')
    assert number in text
    with pytest.raises(WorkbenchError, match=rf"TableData\[1\]\.stock: .*{message}"):
        load_model(_write(tmp_path, text))
    plain = json.dumps(CATALOG).replace('{"N": "70"}', f'{{"M": {{"n": {number}}}}}')
    with pytest.raises(WorkbenchError, match=rf"TableData\[1\]\.stock\.n: .*{message}"):
        load_model(_write(tmp_path, plain))


def test_json_numbers_are_read_exactly(tmp_path: Path) -> None:
    exact = "1234567890123456789012345678901234567.8"  # 38 digits: a float would round it
    text = json.dumps(CATALOG).replace('{"N": "70"}', f'{{"N": {exact}}}')
    assert load_model(_write(tmp_path, text)).table().items[1]["stock"] == {"N": exact}


def test_huge_python_ints_are_refused_as_dynamodb_limits() -> None:
    data = copy.deepcopy(CATALOG)
    data["DataModel"][0]["TableData"][1]["stock"] = {"N": 10**5000}
    with pytest.raises(WorkbenchError, match=r"stock: an int of \d+ bits is outside DynamoDB's"):
        read_model(data)
    data["DataModel"][0]["TableData"][1]["stock"] = {"M": {"n": -(10**5000)}}
    with pytest.raises(WorkbenchError, match=r"stock\.n: an int of \d+ bits is outside"):
        read_model(data)
    data["DataModel"][0]["TableData"][1]["stock"] = {"N": 10**40 + 1}
    with pytest.raises(WorkbenchError, match=r"stock: 1000+1 has 41 significant digits"):
        read_model(data)

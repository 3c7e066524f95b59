"""The web boundary (docs/web.md): what a FastAPI body validates is what DynamoDB stores.

An app built as docs/web.md builds one (models as request bodies and response models, one
connection, ``install_exception_handlers(app)``), served in process through httpx against the
test server. A body DynamoDB would refuse is a 422 naming the field and nothing is stored; a
JSON number for a Decimal is stored exactly or refused; a class that holds itself serves and
has a schema; bytes are base64; dynorm's errors are answered with their HTTP status. With the
route class docs/web.md shows, every JSON number is read and stored exactly.
"""

from __future__ import annotations

import decimal
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Annotated, Any

import attrs
import httpx
import pytest
from fastapi import Body, FastAPI

from dynorm import Database, ItemNotFoundError, Table
from dynorm.testing import Connect
from dynorm.web import ExactJSONRoute, install_exception_handlers
from tests.faultproxy import FaultyConnect

from .served import Served
from .served import served as serving

pytestmark = pytest.mark.integration

table = Table("web-boundary", pk="pk", sk="sk")


@table.model(pk="THING#{name}", sk="THING#{name}")
class Thing:
    name: str
    text: str = ""
    price: decimal.Decimal = decimal.Decimal(0)
    tags: frozenset[str] = frozenset()
    blob: bytes = b""
    extra: Any = None


@attrs.define
class Outline:
    title: str
    children: list[Outline] = attrs.Factory(list)


@table.model(pk="DOC#{name}", sk="DOC#{name}")
class Doc:
    name: str
    outline: Outline | None = None


@table.model(pk="NODE#{name}", sk="NODE#{name}")
class Node:
    name: str
    kids: list[Node] = attrs.Factory(list)


def no_spaces(nick: str) -> None:
    if " " in nick:
        raise ValueError(f"a nick has no spaces; {nick!r} has")


@table.model(pk="SIGNUP#{name}", sk="SIGNUP#{name}")
class Signup:
    """Validated by its own attrs validators: built-in ones, and one of its own."""

    name: str
    email: str = attrs.field(default="", validator=attrs.validators.matches_re(r"(|.+@.+)"))
    age: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    nick: str = attrs.field(default="", validator=lambda _, __, nick: no_spaces(nick))


def create_app(open_database: Any) -> FastAPI:
    """The app, as docs/web.md writes one (the connection opened by ``open_database``)."""

    from contextlib import asynccontextmanager  # noqa: PLC0415 - kept with its only use

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_database() as db:
            app.state.db = db
            yield

    app = FastAPI(lifespan=lifespan)
    install_exception_handlers(app)

    @app.post("/things", response_model=Thing, status_code=201)
    async def create_thing(thing: Annotated[Thing, Body()]) -> Thing:
        await app.state.db.put(thing, overwrite=False)
        return thing

    @app.get("/things/{name}", response_model=Thing)
    async def get_thing(name: str) -> Thing:
        found: Thing = await app.state.db.get(Thing, name=name)
        return found

    @app.post("/signups", response_model=Signup, status_code=201)
    async def create_signup(signup: Annotated[Signup, Body()]) -> Signup:
        await app.state.db.put(signup)
        return signup

    @app.post("/docs", response_model=Doc, status_code=201)
    async def create_doc(doc: Annotated[Doc, Body()]) -> Doc:
        await app.state.db.put(doc)
        return doc

    @app.post("/nodes", response_model=Node, status_code=201)
    async def create_node(node: Annotated[Node, Body()]) -> Node:
        await app.state.db.put(node)
        return node

    return app


async def serve(open_database: Any) -> AsyncIterator[Served]:
    async with serving(create_app(open_database)) as each:
        yield each


@pytest.fixture
async def served(dynorm_connect: Connect) -> AsyncIterator[Served]:
    def open_database() -> AbstractAsyncContextManager[Database]:
        return dynorm_connect(table)

    async for each in serve(open_database):
        yield each


def _nested(levels: int) -> object:
    value: object = 1
    for _ in range(levels):
        value = [value]
    return value


#: (JSON body as sent, the field the 422 names, what its message says).
REFUSED = [
    pytest.param('{"name": "a", "text": "%s"}' % ("x" * 410_000), "text", "Thing: the item is"),
    pytest.param('{"name": "a", "price": "%s"}' % ("1" * 39), "price", "39 significant digits"),
    pytest.param('{"name": "a", "price": "1E+500"}', "price", "outside DynamoDB's number"),
    pytest.param('{"name": "a", "text": "\\ud800"}', "text", "lone surrogate"),
    pytest.param('{"name": "a", "price": 1e400}', "price", "not a finite decimal"),
    pytest.param('{"name": "a", "price": "Infinity"}', "price", "not a finite decimal"),
    pytest.param('{"name": "%s"}' % ("k" * 3000), "name", "partition key limit"),
    pytest.param('{"name": "\\ud800"}', "name", "lone surrogate"),
    pytest.param('{"name": "a", "extra": ' + str(_nested(40)) + "}", "extra", "MAX_DEPTH"),
    pytest.param('{"name": "a", "extra": 1e400}', "extra", "DynamoDB numbers cannot be inf"),
]


REFUSED_IDS = [
    "410 KB",
    "39 digits",
    "1E+500",
    "lone surrogate",
    "1e400",
    "Infinity",
    "3000-char key",
    "surrogate in key",
    "too deep",
    "inf in Any",
]


@pytest.mark.parametrize(("body", "field", "says"), REFUSED, ids=REFUSED_IDS)
async def test_a_body_dynamodb_would_refuse_is_a_422_naming_the_field(
    served: Served, body: str, field: str, says: str
) -> None:
    response = await served.post_text("/things", body)

    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", field]
    assert says in error["msg"]
    assert len(response.content) < 5000  # a 410 KB input is not echoed back whole
    assert [thing async for thing in served.db.scan(Thing)] == []  # nothing was stored


@pytest.mark.parametrize(
    ("body", "refused"),
    [
        pytest.param({"name": "a", "age": -1}, {"age": "'age' must be >= 0: -1"}, id="ge"),
        pytest.param({"name": "a", "email": "nope"}, {"email": "'email' must match"}, id="re"),
        pytest.param({"name": "a", "nick": "a b"}, {"nick": "a nick has no spaces"}, id="own"),
        pytest.param(
            {"name": "a", "age": -1, "nick": "a b"},
            {"age": ">= 0", "nick": "no spaces"},
            id="two",
        ),
    ],
)
async def test_a_value_the_class_validators_refuse_is_a_422_at_its_field(
    served: Served, body: dict[str, Any], refused: dict[str, str]
) -> None:
    response = await served.client.post("/signups", json=body)

    assert response.status_code == 422, response.text
    errors = response.json()["detail"]
    assert [error["loc"] for error in errors] == [["body", field] for field in refused]
    for error, says in zip(errors, refused.values(), strict=True):
        assert says in error["msg"]
        assert "Attribute(" not in error["msg"]  # attrs' own arguments are not shown
    assert [signup async for signup in served.db.scan(Signup)] == []


async def test_an_oversized_item_names_the_model_and_its_size(served: Served) -> None:
    # Two fields of 205 KB: neither is over the limit alone, the item is.
    half = "y" * 205_000
    response = await served.client.post("/things", json={"name": "a", "text": half, "extra": half})

    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["msg"].startswith("Thing: the item is 410")
    assert "bytes, over DynamoDB's item limit of 409600 bytes" in error["msg"]
    assert error["loc"][0] == "body"


async def test_a_key_too_long_in_the_url_is_a_422_not_a_500(served: Served) -> None:
    response = await served.client.get("/things/" + "k" * 3000)

    assert response.status_code == 422, response.text
    assert "partition key limit" in response.json()["detail"]


async def test_a_json_number_for_a_decimal_is_stored_exactly_or_refused(served: Served) -> None:
    long = await served.post_text(
        "/things", '{"name": "long", "price": 12345678901234567890.123456789}'
    )
    short = await served.post_text("/things", '{"name": "short", "price": 9.95}')
    big_int = await served.post_text("/things", '{"name": "int", "price": 12345678901234567890123}')
    text = await served.post_text(
        "/things", '{"name": "text", "price": "12345678901234567890.123456789"}'
    )

    assert long.status_code == 422, long.text
    (error,) = long.json()["detail"]
    assert error["loc"] == ["body", "price"]
    assert "send the decimal as a string" in error["msg"]
    with pytest.raises(ItemNotFoundError):
        await served.db.get(Thing, name="long")
    for response in (short, big_int, text):
        assert response.status_code == 201, response.text
    assert (await served.db.get(Thing, name="short")).price == decimal.Decimal("9.95")
    assert (await served.db.get(Thing, name="int")).price == decimal.Decimal(
        "12345678901234567890123"
    )
    stored = await served.db.get(Thing, name="text")
    assert stored.price == decimal.Decimal("12345678901234567890.123456789")
    assert (await served.client.get("/things/text")).json()["price"] == (
        "12345678901234567890.123456789"
    )


async def test_an_empty_set_is_stored_and_reads_back_empty(served: Served) -> None:
    response = await served.client.post("/things", json={"name": "e", "tags": []})

    assert response.status_code == 201, response.text
    assert (await served.db.get(Thing, name="e")).tags == frozenset()


async def test_bytes_are_base64_in_the_schema_and_round_trip(served: Served) -> None:
    response = await served.client.post("/things", json={"name": "b", "blob": "AAH/"})

    assert response.status_code == 201, response.text
    assert (await served.db.get(Thing, name="b")).blob == b"\x00\x01\xff"
    assert (await served.client.get("/things/b")).json()["blob"] == "AAH/"
    schemas = (await served.client.get("/openapi.json")).json()["components"]["schemas"]
    thing = next(v for k, v in schemas.items() if k.startswith("Thing"))
    blob = thing["properties"]["blob"]
    assert (blob["type"], blob["contentEncoding"], blob["format"]) == ("string", "base64", "base64")


async def test_a_class_that_holds_itself_serves_and_has_a_schema(served: Served) -> None:
    outline = {"title": "a", "children": [{"title": "b", "children": [{"title": "c"}]}]}
    doc = await served.client.post("/docs", json={"name": "d", "outline": outline})
    node = await served.client.post("/nodes", json={"name": "n", "kids": [{"name": "m"}]})
    schema = await served.client.get("/openapi.json")

    assert doc.status_code == 201, doc.text
    stored = await served.db.get(Doc, name="d")
    assert stored.outline == Outline("a", [Outline("b", [Outline("c")])])
    assert node.status_code == 201, node.text
    assert (await served.db.get(Node, name="n")).kids == [Node("m")]
    assert schema.status_code == 200, schema.text
    schemas = schema.json()["components"]["schemas"]
    names = [k for k in schemas if k.startswith("Outline")]  # one for requests, one for answers
    assert names
    for name in names:
        assert schemas[name]["properties"]["children"]["items"] == {
            "$ref": f"#/components/schemas/{name}"
        }


async def test_a_duplicate_is_a_409(served: Served) -> None:
    first = await served.client.post("/things", json={"name": "dup"})
    again = await served.client.post("/things", json={"name": "dup"})

    assert first.status_code == 201, first.text
    assert again.status_code == 409, again.text
    assert "dup" in again.json()["detail"] or again.json()["detail"]


async def test_throttling_is_a_503_with_retry_after(faulty_connect: FaultyConnect) -> None:
    async with faulty_connect(table, max_attempts=1) as faulty:

        def open_database() -> AbstractAsyncContextManager[Database]:
            from contextlib import nullcontext  # noqa: PLC0415 - kept with its only use

            return nullcontext(faulty.db)

        statuses = []
        async for served in serve(open_database):
            faulty.proxy.inject("throttle", operation="GetItem", times=1)
            statuses.append(await served.client.get("/things/a"))
    (response,) = statuses

    assert response.status_code == 503, response.text
    assert response.headers["Retry-After"] == "1"
    assert faulty.proxy.injected[0].fault == "throttle"


async def test_with_the_exact_route_every_json_number_is_stored_as_sent(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(table) as db:
        app = FastAPI()
        app.router.route_class = ExactJSONRoute
        install_exception_handlers(app)

        @app.post("/things", response_model=Thing, status_code=201)
        async def create_thing(thing: Annotated[Thing, Body()]) -> Thing:
            await db.put(thing)
            return thing

        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            served = Served(app, client)
            sent = {
                "long": "12345678901234567890.123456789",
                "near": "0.10000000000000001",  # json.loads would read 0.1
                "exp": "1.5E+100",
            }
            for name, number in sent.items():
                body = f'{{"name": "{name}", "price": {number}, "extra": {number}}}'
                response = await served.post_text("/things", body)
                assert response.status_code == 201, response.text
            too_big = await served.post_text("/things", '{"name": "big", "price": 1e400}')

        for name, number in sent.items():
            stored = await db.get(Thing, name=name)
            assert stored.price == decimal.Decimal(number)
            assert stored.extra == decimal.Decimal(number)
    assert too_big.status_code == 422
    assert too_big.json()["detail"][0]["loc"] == ["body", "price"]

"""examples/web_app.py, served in process through httpx against the test server.

Each test runs the app's lifespan with its connection pointed at a fresh table
(``create_app(open_database)``), and talks to it over ASGI as a client would.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from dynorm import Database, ItemNotFoundError
from dynorm.testing import Connect, count_requests

from .cli import ROOT, Cli
from .served import Served
from .served import served as serving

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from web_app import Invoice, Org, Ticket, User, create_app, table

pytestmark = pytest.mark.integration


@pytest.fixture
async def served(dynorm_connect: Connect) -> AsyncIterator[Served]:
    def open_database() -> AbstractAsyncContextManager[Database]:
        return dynorm_connect(table)

    async with serving(create_app(open_database)) as each:
        yield each


async def seed(db: Database, users: int = 0) -> None:
    await db.put_all(
        [
            Org("MICROSOFT", "Enterprise"),
            *(User("MICROSOFT", f"U{i:02d}") for i in range(users)),
            Org("AMAZON"),
            User("AMAZON", "JEFF", "Admin"),
        ]
    )


async def test_the_list_pages_through_every_user_with_the_cursor_in_the_query_string(
    served: Served,
) -> None:
    await seed(served.db, users=7)
    seen: list[str] = []
    params: dict[str, Any] = {"limit": 3}
    pages = 0
    while True:
        response = await served.client.get("/orgs/MICROSOFT/users", params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        assert set(body) == {"items", "cursor"}
        seen += [u["username"] for u in body["items"]]
        pages += 1
        if body["cursor"] is None:
            break
        params["cursor"] = body["cursor"]
        assert pages < 5
    assert pages == 3
    assert seen == [f"U{i:02d}" for i in range(7)]
    assert body["items"][0] == {"org_name": "MICROSOFT", "username": "U06", "user_type": "Member"}


async def test_the_detail_brings_its_children_in_one_request(served: Served) -> None:
    await seed(served.db, users=2)
    with count_requests(served.db) as log:
        response = await served.client.get("/orgs/MICROSOFT")
    assert response.status_code == 200, response.text
    assert log.operations == ["Query"]
    assert response.json() == {
        "name": "MICROSOFT",
        "plan_type": "Enterprise",
        "users": [
            {"org_name": "MICROSOFT", "username": "U00", "user_type": "Member"},
            {"org_name": "MICROSOFT", "username": "U01", "user_type": "Member"},
        ],
    }


async def test_a_user_comes_with_the_newest_tickets_as_iso_datetimes(served: Served) -> None:
    await seed(served.db)
    created = [datetime.datetime(2024, 9, d, 22, 31, 54, tzinfo=datetime.UTC) for d in (1, 2)]
    await served.db.put_all([Ticket(str(i), "AMAZON", "JEFF", at) for i, at in enumerate(created)])

    response = await served.client.get("/orgs/AMAZON/users/JEFF")

    assert response.status_code == 200, response.text
    assert response.json()["tickets"] == [
        {
            "ticket_id": "1",
            "org_name": "AMAZON",
            "username": "JEFF",
            "created": "2024-09-02T22:31:54+00:00",
        },
        {
            "ticket_id": "0",
            "org_name": "AMAZON",
            "username": "JEFF",
            "created": "2024-09-01T22:31:54+00:00",
        },
    ]


async def test_a_missing_item_is_a_404(served: Served) -> None:
    await seed(served.db)
    for path in ("/orgs/NOPE", "/orgs/AMAZON/users/NOPE"):
        response = await served.client.get(path)
        assert response.status_code == 404, path
        assert "NOPE" in response.json()["detail"]


async def test_a_key_too_long_for_dynamodb_in_the_url_is_a_422(served: Served) -> None:
    with count_requests(served.db) as log:
        response = await served.client.get("/orgs/" + "N" * 3000)
    assert response.status_code == 422, response.text
    assert "partition key limit" in response.json()["detail"]
    assert log.operations == []  # refused before sending


@pytest.mark.parametrize("edit", ["garbage", "flip"])
async def test_a_tampered_cursor_is_a_400(served: Served, edit: str) -> None:
    await seed(served.db, users=3)
    first = await served.client.get("/orgs/MICROSOFT/users", params={"limit": 1})
    cursor = first.json()["cursor"]
    assert cursor is not None
    if edit == "garbage":
        tampered = "not-a-cursor!"
    else:  # a well-formed cursor that points into another organization's users
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        tampered = base64.urlsafe_b64encode(text.replace("MICROSOFT", "AMAZON").encode()).decode()

    response = await served.client.get(
        "/orgs/MICROSOFT/users", params={"limit": 1, "cursor": tampered}
    )

    assert response.status_code == 400, response.text
    assert "cursor" in response.json()["detail"]


async def test_a_model_is_a_request_body(served: Served) -> None:
    response = await served.client.post("/orgs", json={"name": "NEW", "plan_type": "Pro"})
    assert response.status_code == 201, response.text
    assert response.json() == {"name": "NEW", "plan_type": "Pro"}
    assert await served.db.get(Org, name="NEW") == Org("NEW", "Pro")

    again = await served.client.post("/orgs", json={"name": "NEW"})
    assert again.status_code == 409

    added = await served.client.post(
        "/orgs/NEW/users", json={"org_name": "NEW", "username": "ADA", "user_type": "Admin"}
    )
    assert added.status_code == 201, added.text
    assert await served.db.get(User, org_name="NEW", username="ADA") == User("NEW", "ADA", "Admin")


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"plan_type": "Pro"}, ["body", "name"]),
        ({"name": 7}, ["body", "name"]),
        ({"name": "X", "plan": "Pro"}, ["body", "plan"]),
        ({"name": "X", "users": [{"org_name": "X"}]}, ["body", "users", 0, "username"]),
        ([1, 2], ["body"]),
    ],
)
async def test_an_invalid_body_is_a_422_naming_the_field(
    served: Served, body: object, loc: list[object]
) -> None:
    response = await served.client.post("/orgs", json=body)
    assert response.status_code == 422, response.text
    errors = response.json()["detail"]
    assert [e["loc"] for e in errors] == [loc]
    assert errors[0]["msg"]
    with pytest.raises(ItemNotFoundError):
        await served.db.get(Org, name="X")


async def test_the_openapi_schema_types_each_field(served: Served) -> None:
    response = await served.client.get("/openapi.json")
    assert response.status_code == 200
    schema = response.json()
    schemas = schema["components"]["schemas"]
    org = next(v for k, v in schemas.items() if k.startswith("Org"))
    assert org["properties"]["name"]["type"] == "string"
    assert org["properties"]["plan_type"] == {
        "default": "Free",
        "title": "Plan Type",
        "type": "string",
    }
    assert org["properties"]["users"]["type"] == "array"
    assert org["properties"]["users"]["items"]["$ref"].split("/")[-1].startswith("User")
    assert "users" not in org.get("required", [])
    assert org["required"] == ["name"]
    ticket = next(v for k, v in schemas.items() if k.startswith("Ticket"))
    assert ticket["properties"]["created"] == {
        "format": "date-time",
        "title": "Created",
        "type": "string",
    }
    page = schema["paths"]["/orgs/{name}/users"]["get"]["responses"]["200"]["content"]
    page_schema = page["application/json"]["schema"]
    if "$ref" in page_schema:
        page_schema = schemas[page_schema["$ref"].split("/")[-1]]
    assert set(page_schema["properties"]) == {"items", "cursor"}
    body = schema["paths"]["/orgs"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["$ref"].split("/")[-1].startswith("Org")


#: JSON numbers json.loads would read otherwise: 0.1, 1.2345678901234567e+19, and a float.
EXACT = ["0.10000000000000001", "12345678901234567890.123456789", "1.5E+100"]


@pytest.mark.parametrize("number", EXACT)
async def test_a_json_number_for_a_decimal_is_stored_with_its_digits(
    served: Served, number: str
) -> None:
    body = f'{{"invoice_id": "i1", "org_name": "NEW", "amount": {number}}}'
    response = await served.post_text("/invoices", body)

    assert response.status_code == 201, response.text
    assert response.json()["amount"] == str(decimal.Decimal(number))
    stored = await served.db.get(Invoice, invoice_id="i1")
    # The same number (Decimal equality is exact): how it is written back is the server's choice
    # (dynalite answers 1.5E+100 with its hundred digits), as it is DynamoDB's.
    assert stored.amount == decimal.Decimal(number)
    assert (await served.client.get("/invoices/i1")).json()["amount"] == str(stored.amount)


@pytest.mark.parametrize(
    ("sent", "hours"), [("2.5", 2.5), ("3", 3.0), ("0.1", 0.1), ("1e2", 100.0)]
)
async def test_a_float_field_still_takes_json_numbers(
    served: Served, sent: str, hours: float
) -> None:
    body = f'{{"invoice_id": "i2", "org_name": "NEW", "amount": "9.95", "hours": {sent}}}'
    response = await served.post_text("/invoices", body)

    assert response.status_code == 201, response.text
    assert response.json()["hours"] == hours
    stored = await served.db.get(Invoice, invoice_id="i2")
    assert (type(stored.hours), stored.hours) == (float, hours)
    assert stored.amount == decimal.Decimal("9.95")


async def test_a_number_outside_dynamodbs_range_is_a_422_at_its_field(served: Served) -> None:
    body = '{"invoice_id": "i3", "org_name": "NEW", "amount": 1e400}'
    response = await served.post_text("/invoices", body)

    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "amount"]
    assert "1E+400 is outside DynamoDB's number range" in error["msg"]
    with pytest.raises(ItemNotFoundError):
        await served.db.get(Invoice, invoice_id="i3")


def test_the_example_runs_its_demo_on_the_configured_endpoint(cli: Cli) -> None:
    done = subprocess.run(
        [sys.executable, "examples/web_app.py"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=cli.environment(ROOT),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    statuses = [line.split(" -> ")[1] for line in done.stdout.splitlines() if " -> " in line]
    assert statuses == ["201", "409", "201", "201", "200", "200", "404", "400"]

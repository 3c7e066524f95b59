"""A FastAPI app on the seed models: organizations, their users, and each user's tickets.

The models are seed 001's (``seed_001_tickets.py``), used as they are, and an ``Invoice`` of the
app's own (an amount of money and the hours it bills): dynorm models are pydantic types
(``dynorm[pydantic]``), so they serve as response models and request bodies, and
``/openapi.json`` describes each field. What it shows (docs/web.md explains each part):

- one connection for the app's life, opened and closed by the lifespan;
- ``GET /orgs/{name}/users?limit=&cursor=``: a page of users, and the cursor of the next page in
  the query string;
- ``GET /orgs/{name}`` and ``GET /orgs/{name}/users/{username}``: a detail with its children
  read by ``load=`` in the same request (the org's first users, the user's newest tickets);
- ``POST /orgs`` and ``POST /orgs/{name}/users``: a model as the request body (422 when invalid,
  or when it holds a value DynamoDB would refuse);
- dynorm's errors answered by ``install_exception_handlers(app)``: ``ItemNotFoundError`` with 404,
  ``ConditionFailedError`` (an org that exists) with 409, ``CursorError`` with 400, a value
  DynamoDB would refuse (a key from the URL that is too long) with 422, throttling with 503;
- ``POST /invoices``: every JSON number of a body read exactly (``ExactJSONRoute``), so an
  amount sent as ``0.10000000000000001`` is stored with those digits, not as the float ``0.1``.

Serve it with any ASGI server (``uvicorn web_app:app`` from this folder, with
``DYNORM_ENDPOINT_URL`` pointing at DynamoDB Local or unset for AWS). ``python
examples/web_app.py`` runs it in process against dynorm's embedded server and prints a few
requests and their answers.
"""

from __future__ import annotations

import asyncio
import decimal
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Annotated, cast

from fastapi import Body, Depends, FastAPI, HTTPException, Query, Request

sys.path.insert(0, str(Path(__file__).parent))

from seed_001_tickets import Org, Ticket, User, table

from dynorm import Database, Page, connect
from dynorm.web import ExactJSONRoute, install_exception_handlers

__all__ = ["Invoice", "Org", "Ticket", "User", "app", "create_app", "table"]


@table.model(pk="INVOICE#{invoice_id}", sk="INVOICE#{invoice_id}")
class Invoice:
    """An organization's invoice: money as an exact ``Decimal``, the hours it bills as a float."""

    invoice_id: str
    org_name: str
    amount: decimal.Decimal
    hours: float = 0.0


#: Opens the app's one Database; the lifespan enters it at startup and leaves it at shutdown.
OpenDatabase = Callable[[], AbstractAsyncContextManager[Database]]

#: How many children a detail shows (the rest are a list endpoint's pages).
DETAIL_CHILDREN = 10


async def database(request: Request) -> Database:
    """The app's Database (a dependency: ``db: Db`` in an endpoint's parameters).

    ``async``, though it awaits nothing: FastAPI runs a plain ``def`` dependency in a worker
    thread, a hop per request (and on AWS Lambda, the first one's imports cost the cold
    invocation about 60 ms).
    """
    return cast("Database", request.app.state.db)


Db = Annotated[Database, Depends(database)]


def connect_from_environment() -> AbstractAsyncContextManager[Database]:
    """The connection of a deployed app: the AWS configuration, and DYNORM_ENDPOINT_URL if set."""
    return connect(table, endpoint_url=os.environ.get("DYNORM_ENDPOINT_URL"))


def create_app(open_database: OpenDatabase = connect_from_environment) -> FastAPI:
    """The app, with its connection opened by ``open_database`` (tests pass their own).

    The lifespan opens it with ``app.state.open_database``, which a deployment may replace
    before the app starts: examples/lambda_app.py serves this module's ``app`` with a connection
    kept across Lambda invocations, rather than building a second app.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        opener: OpenDatabase = app.state.open_database
        async with opener() as db:
            app.state.db = db
            yield

    app = FastAPI(title="dynorm organizations", lifespan=lifespan)
    app.state.open_database = open_database
    app.router.route_class = ExactJSONRoute  # JSON numbers read exactly, not through float
    install_exception_handlers(app)  # not found: 404, exists: 409, refused value: 422, ...

    @app.get("/orgs/{name}", response_model=Org)
    async def get_org(name: str, db: Db) -> Org:
        """The organization and its first users (one Query)."""
        return await db.get(Org, name=name, load=[Org.users.limit(DETAIL_CHILDREN)])

    @app.get("/orgs/{name}/users", response_model=Page[User])
    async def list_users(
        name: str,
        db: Db,
        limit: Annotated[int, Query(ge=1, le=100)] = 20,
        cursor: str | None = None,
    ) -> Page[User]:
        """One page of the organization's users; pass the page's cursor to get the next."""
        return await db.query(User, org_name=name).page(limit=limit, cursor=cursor)

    @app.get("/orgs/{name}/users/{username}", response_model=User)
    async def get_user(name: str, username: str, db: Db) -> User:
        """The user and their newest tickets (one Query on GSI1)."""
        return await db.get(
            User,
            org_name=name,
            username=username,
            load=[User.tickets.limit(DETAIL_CHILDREN)],
        )

    @app.post("/orgs", response_model=Org, status_code=201)
    async def create_org(org: Annotated[Org, Body()], db: Db) -> Org:
        """Store a new organization; 409 if one has that name (ConditionFailedError)."""
        await db.put(org, overwrite=False)
        return org

    @app.post("/orgs/{name}/users", response_model=User, status_code=201)
    async def create_user(name: str, user: Annotated[User, Body()], db: Db) -> User:
        """Add a user to an existing organization (404 if there is none)."""
        if user.org_name != name:
            raise HTTPException(422, f"the user's org_name is {user.org_name!r}, not {name!r}")
        org = await db.get(Org, name=name)
        await db.add(org, Org.users, user)
        return user

    @app.post("/invoices", response_model=Invoice, status_code=201)
    async def create_invoice(invoice: Annotated[Invoice, Body()], db: Db) -> Invoice:
        """Store a new invoice; 409 if one has that id."""
        await db.put(invoice, overwrite=False)
        return invoice

    @app.get("/invoices/{invoice_id}", response_model=Invoice)
    async def get_invoice(invoice_id: str, db: Db) -> Invoice:
        """The invoice (its amount a string of its exact digits)."""
        return await db.get(Invoice, invoice_id=invoice_id)

    return app


#: For ``uvicorn web_app:app``.
app = create_app()


async def _demo() -> None:
    import httpx  # noqa: PLC0415 - only for the demo
    from common import demo_server, open_database  # noqa: PLC0415 - needs the test server

    with demo_server() as server:

        def open_demo_database() -> AbstractAsyncContextManager[Database]:
            return open_database(table, server)

        demo = create_app(open_demo_database)
        transport = httpx.ASGITransport(app=demo)
        async with (
            demo.router.lifespan_context(demo),
            httpx.AsyncClient(transport=transport, base_url="http://demo") as client,
        ):
            calls = [
                ("POST", "/orgs", {"name": "MICROSOFT", "plan_type": "Enterprise"}),
                ("POST", "/orgs", {"name": "MICROSOFT"}),
                ("POST", "/orgs/MICROSOFT/users", {"org_name": "MICROSOFT", "username": "SATYA"}),
                ("POST", "/orgs/MICROSOFT/users", {"org_name": "MICROSOFT", "username": "BILL"}),
                ("GET", "/orgs/MICROSOFT", None),
                ("GET", "/orgs/MICROSOFT/users?limit=1", None),
                ("GET", "/orgs/NOPE", None),
                ("GET", "/orgs/MICROSOFT/users?cursor=edited", None),
            ]
            for method, path, body in calls:
                response = await client.request(method, path, json=body)
                print(f"{method} {path} -> {response.status_code}\n  {response.text}")


if __name__ == "__main__":
    asyncio.run(_demo())

"""dynorm.web.install_exception_handlers: each dynorm error answered with its HTTP status.

Through httpx's ASGI transport, as docs/web.md tests an app (starlette's TestClient warns).
"""

from __future__ import annotations

import decimal
import subprocess
import sys

import httpx
import pytest
from fastapi import FastAPI

import dynorm
import dynorm.tools.web
import dynorm.web
from dynorm.tools.web_route import ExactJSONRequest, parse_exact
from dynorm.web import STATUS_OF, ExactJSONRoute, install_exception_handlers

RAISED: list[tuple[Exception, int]] = [
    (dynorm.ItemNotFoundError("Org: no item at name='NOPE'"), 404),
    (dynorm.ConditionFailedError("exists"), 409),
    (dynorm.VersionConflictError("changed"), 409),
    (dynorm.TransactionCanceledError("cancelled"), 409),
    (dynorm.CodecError("Org.name: lone surrogate"), 422),
    (dynorm.LimitExceededError("Org: key attribute 'pk' would be 3002 bytes"), 422),
    (dynorm.KeyTemplateError("Org.name is None"), 422),
    (dynorm.CursorError("edited"), 400),
    (dynorm.ThrottledError("throttled"), 503),
    (dynorm.TransportError("unreachable"), 503),
]


async def _get(error: Exception, **options: int) -> httpx.Response:
    """The answer of an app whose one endpoint raises ``error``."""
    app = FastAPI()
    install_exception_handlers(app, **options)

    @app.get("/")
    async def fail() -> None:
        raise error

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        return await client.get("/")


@pytest.mark.parametrize(("error", "status"), RAISED, ids=[type(e).__name__ for e, _ in RAISED])
async def test_each_error_is_answered_with_its_status_and_message(
    error: Exception, status: int
) -> None:
    response = await _get(error)
    assert response.status_code == status
    assert response.json() == {"detail": str(error)}
    assert ("Retry-After" in response.headers) == (status == 503)


async def test_a_503_says_when_to_retry() -> None:
    response = await _get(dynorm.ThrottledError("throttled"), retry_after=5)
    assert response.headers["Retry-After"] == "5"
    with pytest.raises(ValueError, match="retry_after"):
        install_exception_handlers(FastAPI(), retry_after=-1)


async def test_a_transaction_cancelled_by_throttling_is_a_503() -> None:
    def cancelled(*codes: str) -> dynorm.TransactionCanceledError:
        reasons = [dynorm.CancellationReason(i, code, "") for i, code in enumerate(codes)]
        return dynorm.TransactionCanceledError("cancelled", reasons=reasons)

    busy = await _get(cancelled("None", "ThrottlingError"))
    conflict = await _get(cancelled("ConditionalCheckFailed", "ThrottlingError"))
    assert (busy.status_code, busy.headers["Retry-After"]) == (503, "1")
    assert conflict.status_code == 409


async def test_invalid_data_lists_its_problems_as_fastapi_does() -> None:
    error = dynorm.InvalidDataError("Org", [(("users", 0, "username"), "missing")])
    response = await _get(error)
    assert response.status_code == 422
    assert response.json() == {
        "detail": [{"loc": ["users", 0, "username"], "msg": "missing", "type": "dynorm_invalid"}]
    }


async def test_other_errors_stay_the_apps() -> None:
    assert (await _get(dynorm.TableNotFoundError("no table"))).status_code == 500
    assert dynorm.TableNotFoundError not in STATUS_OF


def test_importing_dynorm_web_imports_no_web_framework() -> None:
    code = (
        "import sys, dynorm.web; "
        "print(sorted(m for m in sys.modules if m.startswith(('fastapi', 'starlette'))))"
    )
    ran = subprocess.run(  # noqa: S603 - this interpreter, fixed code
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert ran.stdout.strip() == "[]"


def test_dynorm_web_names_every_tool_name_and_the_route() -> None:
    assert set(dynorm.web.__all__) == {*dynorm.tools.web.__all__, "ExactJSONRoute"}
    for name in dynorm.web.__all__:
        assert getattr(dynorm.web, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = dynorm.web.Nope  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]


#: JSON numbers whose float has other digits (or none): each must arrive as written.
EXACT = ["0.10000000000000001", "12345678901234567890.123456789", "1.5E+100", "1e400", "-0.0"]


@pytest.mark.parametrize("number", EXACT)
async def test_the_exact_route_reads_a_json_number_with_its_digits(number: str) -> None:
    body = f'{{"price": {number}, "nested": [{number}], "count": 12345678901234567890}}'.encode()
    sent = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, object]:
        return sent.pop()

    request = ExactJSONRequest({"type": "http", "method": "POST", "headers": []}, receive)
    value = await request.json()

    assert value == parse_exact(body)
    assert str(value["price"]) == str(decimal.Decimal(number))  # the digits, not a float's
    assert value["nested"] == [decimal.Decimal(number)]
    assert value["count"] == 12345678901234567890  # integers stay int
    assert await request.json() is value  # parsed once


def test_the_exact_route_is_a_fastapi_route_class() -> None:
    from fastapi.routing import APIRoute  # noqa: PLC0415 - beside the check that needs it

    assert issubclass(ExactJSONRoute, APIRoute)

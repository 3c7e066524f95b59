"""``ExactJSONRoute``: a FastAPI route class that reads every JSON number of a body exactly.

FastAPI parses a request body with ``json.loads``, which reads a number with a fraction or an
exponent as a float before any validation runs: ``0.10000000000000001`` arrives as ``0.1``, and
no field can tell it was sent longer. This route class parses the body with
``parse_float=Decimal`` instead, so a ``Decimal`` field gets the digits sent; ``from_jsonable``
takes a ``Decimal`` for a ``float``, ``int`` (when whole) or ``Any`` field too.

This module imports FastAPI: ``dynorm.web`` (and ``dynorm.tools.web``) import it on the first
use of ``ExactJSONRoute``, so that ``import dynorm.web`` imports no web framework.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

__all__ = ["ExactJSONRequest", "ExactJSONRoute"]


def parse_exact(body: bytes) -> Any:
    """A JSON body's value, each number with a fraction or an exponent a ``Decimal``."""
    return json.loads(body, parse_float=decimal.Decimal)


class ExactJSONRequest(Request):
    """A request whose ``json()`` reads numbers with a fraction or exponent as ``Decimal``."""

    async def json(self) -> Any:
        # Starlette's own cache attribute: a second call returns the first parse.
        if not hasattr(self, "_json"):
            self._json = parse_exact(await self.body())
        return self._json


class ExactJSONRoute(APIRoute):
    """A route whose JSON body is parsed exactly (``app.router.route_class = ExactJSONRoute``).

    FastAPI's documented way to change how a route reads its request: the handler is FastAPI's
    own, handed an :class:`ExactJSONRequest` over the same ASGI scope and receive channel.
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def exact(request: Request) -> Response:
            return await handler(ExactJSONRequest(request.scope, request.receive))

        return exact

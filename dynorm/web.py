"""dynorm in a web app: dynorm's errors as HTTP answers, and JSON numbers read exactly.

``install_exception_handlers(app)`` answers dynorm's errors with their HTTP status;
``ExactJSONRoute`` is a FastAPI route class that reads every JSON number of a request body
exactly. The implementations live in ``dynorm/tools/web.py`` and ``dynorm/tools/web_route.py``;
this module is their public name. ``import dynorm.web`` imports no web framework: Starlette is
imported when ``install_exception_handlers`` is called, FastAPI when ``ExactJSONRoute`` is first
used (this module's ``__getattr__`` imports it then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .tools.web import STATUS_OF, install_exception_handlers

if TYPE_CHECKING:
    from .tools.web_route import ExactJSONRoute

# The tool modules' public names (tests/unit/test_web.py checks that none is missing).
__all__ = ["STATUS_OF", "ExactJSONRoute", "install_exception_handlers"]


if not TYPE_CHECKING:  # type checkers see the import above, so a misspelt name stays an error

    def __getattr__(name: str) -> Any:
        """``ExactJSONRoute`` on first use (it imports FastAPI; ``import dynorm.web`` must not)."""
        if name == "ExactJSONRoute":
            from .tools.web_route import ExactJSONRoute  # noqa: PLC0415 - imports FastAPI

            globals()[name] = ExactJSONRoute  # later uses find it without this call
            return ExactJSONRoute
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""dynorm in a web app: ``install_exception_handlers(app)`` answers dynorm's errors with HTTP.

The implementation lives in ``dynorm/tools/web.py``; this module is its public name. Neither
imports FastAPI or Starlette until the function is called.
"""

# Every public name of the tool, and no other: its __all__ is this module's.
from .tools.web import *  # noqa: F403
from .tools.web import __all__ as __all__  # noqa: PLC0414 - the re-export of its names

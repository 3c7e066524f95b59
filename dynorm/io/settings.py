"""connect()'s settings checked before anything is sent: the attempt timeout, the credentials.

A setting that cannot work is refused with a :class:`~dynorm.ConfigurationError` that names
it (the connect() argument, or the environment variable it came from), rather than surfacing
as a ValueError deep in an HTTP client after a connection was opened.
"""

from __future__ import annotations

import math
from typing import Final

from dynorm.core.errors import ConfigurationError

__all__ = ["DEFAULT_ATTEMPT_TIMEOUT", "attempt_timeout_of", "check_credentials"]

#: The whole exchange of one attempt (connect, send, the whole reply) when connect() sets no
#: ``attempt_timeout``: far above any healthy DynamoDB reply (a 16 MB BatchGetItem page takes
#: seconds on a slow link), yet a server trickling a reply cannot hold a request for ever.
#: Never below connect_timeout + read_timeout, so raising those alone is honoured.
DEFAULT_ATTEMPT_TIMEOUT: Final = 120.0


def attempt_timeout_of(
    attempt_timeout: float | None, connect_timeout: float, read_timeout: float
) -> float:
    """The seconds one attempt may take in all: ``attempt_timeout``, or the default."""
    if attempt_timeout is None:
        return max(DEFAULT_ATTEMPT_TIMEOUT, connect_timeout + read_timeout)
    given: object = attempt_timeout  # from users: a bool, a string, nan ... are refused
    if (
        isinstance(given, bool)
        or not isinstance(given, int | float)
        or not math.isfinite(given)
        or given <= 0
    ):
        raise ConfigurationError(
            f"attempt_timeout={attempt_timeout!r} cannot work: give connect(attempt_timeout=...) "
            "the seconds one attempt may take in all, a positive number (default: "
            f"{DEFAULT_ATTEMPT_TIMEOUT:g}, or connect_timeout + read_timeout if more)"
        )
    return float(attempt_timeout)


def check_credentials(
    access_key: str, token: str | None, *, key_setting: str, session_setting: str
) -> None:
    """Refuses an access key id or a session token that an HTTP header cannot carry.

    Both are sent in headers (Authorization, X-Amz-Security-Token): a line break would inject
    a header of its own, and a character outside Latin-1 cannot be sent at all. ``*_setting``
    names the setting each came from, for the message.
    """
    from .http import header_value_problem  # noqa: PLC0415 - stdlib only, loaded with a request

    for value, where, what in (
        (access_key, key_setting, "access key id"),
        (token, session_setting, "session token"),
    ):
        problem = None if value is None else header_value_problem(value)
        if problem is not None:
            raise ConfigurationError(
                f"the AWS {what} from {where} has {problem}, which an HTTP header cannot "
                f"carry; nothing was sent. Give the {what} exactly as AWS issued it (a copy "
                "and paste can bring a line break or a typographic character along)"
            )

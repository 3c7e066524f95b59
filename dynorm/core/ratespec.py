"""``connect(rate_limit=...)`` written as text, for the command line's ``--rate-limit``.

``adaptive``; ``read=R,write=W`` (either alone: the other kind is not limited); or one number,
the same for reads and writes. Numbers are capacity units a second, as ``RateLimit`` takes them.
"""

from __future__ import annotations

import math
import re
from typing import Final, Literal

from .errors import LimitExceededError
from .throughput import RateLimit

__all__ = ["RATE_LIMIT_FORMS", "parse_rate_limit"]

#: What ``--rate-limit`` accepts, for messages and help.
RATE_LIMIT_FORMS: Final = "'adaptive', 'read=R,write=W' (either alone) or one number N for both"

#: Longest text looked at: a hostile value is refused without being echoed whole.
_SHOWN: Final = 40


#: A number as written in ASCII (not "1_000", not other scripts' digits, which float() takes).
_NUMBER: Final = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _shown(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else f"{text[:_SHOWN]}…")


def _units(name: str, text: str, whole: str) -> float:
    written = text.strip()
    value = float(written) if _NUMBER.fullmatch(written) else math.nan
    if not (value > 0 and math.isfinite(value)):
        raise LimitExceededError(
            f"{_shown(whole)}: {name} must be a positive number of capacity units "
            f"a second; got {_shown(text.strip())}. Give {RATE_LIMIT_FORMS}"
        )
    return value


def parse_rate_limit(text: str) -> RateLimit | Literal["adaptive"]:
    """The ``rate_limit=`` that ``text`` names; LimitExceededError saying what to write."""
    spec = text.strip()
    if spec.lower() == "adaptive":
        return "adaptive"
    if "=" not in spec:
        units = _units("the rate", spec, text)
        return RateLimit(read=units, write=units)
    given: dict[str, float] = {}
    for part in spec.split(","):
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        if not sep or name not in ("read", "write") or name in given:
            why = "is given twice" if name in given else "is not read=R or write=W"
            raise LimitExceededError(
                f"{_shown(text)}: {_shown(part.strip())} {why}. Give {RATE_LIMIT_FORMS}"
            )
        given[name] = _units(name, value, text)
    return RateLimit(read=given.get("read"), write=given.get("write"))

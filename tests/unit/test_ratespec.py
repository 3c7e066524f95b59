"""parse_rate_limit: ``--rate-limit`` text to ``connect(rate_limit=...)``."""

from __future__ import annotations

import pytest

from dynorm import RateLimit
from dynorm.core.errors import LimitExceededError
from dynorm.core.ratespec import parse_rate_limit


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("adaptive", "adaptive"),
        (" Adaptive ", "adaptive"),
        ("100", RateLimit(read=100, write=100)),
        ("2.5", RateLimit(read=2.5, write=2.5)),
        ("read=10", RateLimit(read=10)),
        ("write=1e3", RateLimit(write=1000)),
        ("read=10, write=20", RateLimit(read=10, write=20)),
        ("WRITE=20,read=.5", RateLimit(read=0.5, write=20)),
    ],
)
def test_the_forms_connect_takes(text: str, limit: RateLimit | str) -> None:
    assert parse_rate_limit(text) == limit


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "the rate must be a positive number"),
        ("nan", "the rate must be a positive number"),
        ("0", "the rate must be a positive number"),
        ("-5", "the rate must be a positive number"),
        ("1e999", "the rate must be a positive number"),
        ("\uff11\uff10", "the rate must be a positive number"),
        ("1_000", "the rate must be a positive number"),
        ("read=", "read must be a positive number"),
        ("read=1,read=2", "'read=2' is given twice"),
        ("burst=3", "'burst=3' is not read=R or write=W"),
        ("read=1,", "'' is not read=R or write=W"),
    ],
)
def test_what_is_no_rate_says_what_to_write(text: str, why: str) -> None:
    with pytest.raises(LimitExceededError) as raised:
        parse_rate_limit(text)
    assert why in str(raised.value)
    assert "Give 'adaptive', 'read=R,write=W' (either alone) or one number N" in str(raised.value)

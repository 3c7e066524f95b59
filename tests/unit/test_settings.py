"""connect()'s settings checked before anything is sent (dynorm.io.settings)."""

from __future__ import annotations

import math

import pytest

import dynorm
from dynorm.io.settings import DEFAULT_ATTEMPT_TIMEOUT, attempt_timeout_of, check_credentials


def test_the_attempt_timeout_is_given_or_the_default_or_connect_plus_read() -> None:
    assert attempt_timeout_of(0.5, 5, 30) == 0.5  # given: even below the others
    assert attempt_timeout_of(None, 5, 30) == DEFAULT_ATTEMPT_TIMEOUT
    assert attempt_timeout_of(None, 10, 300) == 310  # a raised read timeout is honoured


@pytest.mark.parametrize("bad", [0, -1, math.inf, math.nan, True, "5"])
def test_an_attempt_timeout_that_cannot_work_is_refused(bad: object) -> None:
    with pytest.raises(dynorm.ConfigurationError, match=r"give connect\(attempt_timeout=\.\.\.\)"):
        attempt_timeout_of(bad, 5, 30)  # type: ignore[arg-type]


def test_credentials_fit_for_headers_pass() -> None:
    check_credentials("AKIDEXAMPLE", None, key_setting="k", session_setting="s")
    check_credentials("AKIDEXAMPLE", "IQoJb3JpZ2luX2Vj+/=", key_setting="k", session_setting="s")


@pytest.mark.parametrize(
    ("key", "session", "said"),
    [
        (
            "AKID",
            "tok\r\nX-Injected: yes",
            (
                "the AWS session token from connect(aws_session_token=...) has a line break "
                "(CR or LF), which an HTTP header cannot carry; nothing was sent"
            ),
        ),
        (
            "AKID",
            "tok\u20ac",
            (
                "the AWS session token from connect(aws_session_token=...) has the character "
                "'\u20ac', outside Latin-1"
            ),
        ),
        (
            "AKID\n",
            None,
            "the AWS access key id from connect(aws_access_key_id=...) has a line break",
        ),
    ],
)
def test_credentials_a_header_cannot_carry_are_refused_naming_the_setting(
    key: str, session: str | None, said: str
) -> None:
    with pytest.raises(dynorm.ConfigurationError) as caught:
        check_credentials(
            key,
            session,
            key_setting="connect(aws_access_key_id=...)",
            session_setting="connect(aws_session_token=...)",
        )
    assert str(caught.value).startswith(said)
    assert "exactly as AWS issued it" in str(caught.value)
    assert isinstance(caught.value, ValueError)

"""Refusing values: errors that say which field, where inside it, what type and what value.

The unstructure hooks accept only values that read back as their type, and raise a CodecError
otherwise. They do not know which model or field they serve (cattrs shares them), so the
wrappers around a model's encoder and its field encoders name those (``_named``,
``_describe``), and containers add the path inside a field (``.home.number``, ``[3]``) — all
on the way out of a failure, never on the way through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from dynorm.core.errors import CodecError
from dynorm.core.limits import MAX_DEPTH

from . import AttributeValue
from .typeforms import type_text


class _RefusedError(CodecError):
    """A refused value and where it sits inside its field, filled in on the way out."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text
        self.path: list[str] = []
        self.declared: str | None = None

    def __str__(self) -> str:
        # Seen as is only where no model wrapper names the field (an embedded child, say).
        where = "".join(self.path).lstrip(".")
        return f"{where} ({self.declared}): {self.text}" if where else self.text


def _at(exc: CodecError, step: str, declared: object) -> _RefusedError:
    """``exc`` as refused at ``step`` (``.name`` or ``[i]``) of a value typed ``declared``."""
    located = exc if isinstance(exc, _RefusedError) else _RefusedError(str(exc))
    located.path.insert(0, step)
    if located.declared is None:
        located.declared = type_text(declared)
    return located


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:48]}...{text[-8:]}"


def _mismatch(value: object, expected: str, hint: str = "") -> _RefusedError:
    if value is None:
        return _RefusedError(f"None is not {expected}; declare the field `X | None` to allow None")
    return _RefusedError(f"{_show(value)} is {_a(type(value).__name__)}, not {expected}{hint}")


#: Exceptions a hook may raise on a value it cannot encode (a user's hook may raise any of them).
_HOOK_ERRORS: Final = (CodecError, TypeError, ValueError, AttributeError, RecursionError)


def _named(
    hook: Callable[[Any], AttributeValue], where: str, declared: object
) -> Callable[[Any], AttributeValue]:
    """``hook``, with its errors naming ``where`` (``Issue.priority``) and the declared type."""

    def encode(value: Any) -> AttributeValue:
        try:
            return hook(value)
        except _HOOK_ERRORS as exc:
            raise _describe(exc, where, declared, value) from (
                None if isinstance(exc, CodecError) else exc
            )

    return encode


def _describe(exc: BaseException, where: str, declared: object, value: object) -> CodecError:
    if isinstance(exc, _RefusedError):
        where += "".join(exc.path)
        declared = exc.declared or type_text(declared)
        text = exc.text
    elif isinstance(exc, CodecError):
        text = str(exc)
    elif isinstance(exc, RecursionError):
        text = (
            f"the value nests too deeply to encode; DynamoDB allows {MAX_DEPTH} levels of maps "
            "and lists (MAX_DEPTH)"
        )
    else:
        text = f"cannot encode {_show(value)}: {type(exc).__name__}: {exc}"
    declared = declared if isinstance(declared, str) else type_text(declared)
    return CodecError(f"{where} ({declared}): {text}")

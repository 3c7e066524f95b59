"""Which fields a class's own validators refuse, for errors placed at each field.

An attrs class (or model) built from JSON (``from_jsonable``, a FastAPI body) may refuse its
values in ``__init__``: an ``attrs.validators`` validator or a ``@field.validator`` raises
ValueError or TypeError, which names no field. To report each refusal at its field (FastAPI:
``loc ["body", "title"]``, not ``["body"]``), the validators are run again one field at a time
on an instance that ``__init__`` never ran on; what none of them refuses (``__attrs_post_init__``,
say) stays a refusal of the whole object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["Refusal", "refusals"]

#: Where in the object (a field's name; empty: the object as a whole), and what was said.
Refusal = tuple[tuple[str | int, ...], str]


def refusals(cls: type, values: Mapping[str, Any], exc: Exception) -> list[Refusal]:
    """Each field whose validator refuses its value in ``values`` (``__init__``'s arguments).

    ``exc`` is what ``cls(**values)`` raised; when no single field's validator refuses, it is
    the one refusal, of the whole object.
    """
    named = _named_attribute(exc)
    if named is not None:  # attrs' own validators pass the field along: no need to run again
        return [((named,), _said(exc))]
    fields = [f for f in attrs.fields(cls) if f.init]
    shell = _shell(cls, fields, values)
    found: list[Refusal] = []
    for field in fields:
        if field.validator is None or not hasattr(shell, field.name):
            continue
        try:
            field.validator(shell, field, getattr(shell, field.name))
        except (TypeError, ValueError) as refused:
            found.append(((field.name,), _said(refused)))
        except Exception:  # noqa: BLE001, S112 - a validator that needs a whole instance
            continue
    return found or [((), f"{cls.__name__} refused the values: {_said(exc)}")]


def _shell(cls: type, fields: list[attrs.Attribute[Any]], values: Mapping[str, Any]) -> object:
    """An instance holding ``values`` (converted) and plain defaults, ``__init__`` not run."""
    shell: object = object.__new__(cls)
    for field in fields:
        alias = field.alias or field.name
        default: Any = field.default
        if alias in values:
            try:
                value = _converted(field, values[alias])
            except Exception:  # noqa: BLE001, S112 - its refusal is the whole object's
                continue
        elif isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            if default.takes_self:
                continue
            value = default.factory()
        elif default is not attrs.NOTHING:
            value = default
        else:
            continue
        object.__setattr__(shell, field.name, value)
    return shell


def _converted(field: attrs.Attribute[Any], value: Any) -> Any:
    """``value`` as ``__init__`` would set it: through the field's converter, if it has one."""
    converter: Any = field.converter
    if converter is None:
        return value
    if isinstance(converter, attrs.Converter):
        if converter.takes_self or converter.takes_field:  # type: ignore[attr-defined]
            raise ValueError("a converter that needs the instance")  # the field is not checked
        return converter.converter(value)  # type: ignore[attr-defined]
    return converter(value)


def _named_attribute(exc: Exception) -> str | None:
    """The field attrs' built-in validators name in the error's arguments (``instance_of``)."""
    for arg in exc.args[1:]:
        if isinstance(arg, attrs.Attribute):
            return arg.name
    return None


def _said(exc: Exception) -> str:
    """The message alone: attrs' validators add the field, the wanted and the given value."""
    first = exc.args[0] if exc.args else ""
    return first if isinstance(first, str) and len(exc.args) > 1 else str(exc)

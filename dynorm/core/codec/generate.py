"""What dynorm's code generators share: names, one namespace, compiling with a readable filename.

dynorm writes Python source for its hot paths: the decoders (``decoders``), the encoders
(``encoders``) and wire decoding's converters (``dynorm.wire.structs``). Each generated
function refers to the objects it needs (hooks, classes, defaults) by names bound in its
namespace, never by reflection per item, and is compiled here under a filename that says what
it is for (``<dynorm decoder app.models.User #3>``), kept in ``linecache`` so that a traceback
through it shows its lines. As cattrs does for its own generated functions (``cattrs.gen._lc``).
"""

from __future__ import annotations

import itertools
import linecache
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import attrs

__all__ = ["FieldValue", "Namespace", "instance_call"]

#: Numbers the generated files: a class's functions may be generated more than once (one per
#: read scope, or again after a hook is registered), each under a filename of its own.
_files = itertools.count()


class Namespace:
    """The globals of generated functions, and names that never collide in them."""

    def __init__(self, helpers: Mapping[str, object]) -> None:
        #: Name -> object, for the source to refer to; ``helpers`` are the fixed names its
        #: expression templates use (``__Decimal``, ``__NULL``).
        self.namespace: dict[str, Any] = dict(helpers)
        self._ids = itertools.count()

    def bind(self, prefix: str, value: object) -> str:
        """A fresh global name (``__hook3``) bound to ``value``."""
        name = f"__{prefix}{next(self._ids)}"
        self.namespace[name] = value
        return name

    def local(self, prefix: str) -> str:
        """A fresh local variable name (``e4``): comprehensions nest without shadowing."""
        return f"{prefix}{next(self._ids)}"

    def define(self, name: str, source: str, *, what: str, owner: type) -> Any:
        """Compile ``source``, which defines the function ``name``, into the namespace.

        The function stays in the namespace (others compiled into it may call it by name), and
        is returned. ``what`` and ``owner`` name the file: ``<dynorm {what} {owner} #{n}>``.
        """
        filename = f"<dynorm {what} {owner.__module__}.{owner.__qualname__} #{next(_files)}>"
        # mtime None: linecache.checkcache() keeps the entry, as it has no file to compare.
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        exec(compile(source, filename, "exec"), self.namespace)  # noqa: S102 - our own source
        return self.namespace[name]


class FieldValue(NamedTuple):
    """One field's argument in the source building an instance (see ``instance_call``)."""

    field: attrs.Attribute[Any]
    #: Source of its value, read from what the item holds.
    present: str
    #: Source that is true when the item holds the field; None when every item does.
    found: str | None
    #: The collection a missing field reads back as (a set: empty sets are not stored).
    empty: type | None = None


def instance_call(names: Namespace, cls_name: str, values: Sequence[FieldValue]) -> str:
    """Source of ``cls(...)`` from the fields' values; a field the item lacks takes its default.

    Arguments are positional unless a field is keyword-only or needs the half-built instance
    for its default (``Factory(takes_self=True)``): that one is left to attrs when missing.
    """
    positional = not any(v.field.kw_only for v in values)
    args = []
    for f, present, found, empty in values:
        value = present
        if found is None:
            pass  # in every item
        elif empty is not None:
            value = f"({present} if {found} else {names.bind('empty', empty)}())"
        elif f.default is not attrs.NOTHING:
            default: Any = f.default
            if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
                if default.takes_self:
                    args.append(f"**({{{f.alias!r}: {present}}} if {found} else {{}})")
                    positional = False
                    continue
                missing = f"{names.bind('factory', default.factory)}()"
            else:
                missing = names.bind("default", default)
            value = f"({present} if {found} else {missing})"
        args.append(value if positional else f"{f.alias}={value}")
    return f"{cls_name}({', '.join(args)})"

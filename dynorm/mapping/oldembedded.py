"""The attributes still holding a relationship's children in an old ``Embedded`` layout.

A parent whose relationship declares ``was=Embedded(...)`` keeps, until the migration ends,
the children not yet moved in an attribute of its own item. No object carries that attribute
(a union read decodes it into the new layout's children), so every write of the parent must
leave it as stored: ``put`` (and a transaction's put) is sent as the UpdateItem that keeps
embedded children (``plan_put_keeping``), and so is each such parent of a ``put_all``
(:mod:`.keepput`), as for ``via=Embedded`` children an object does not hold.
"""

from __future__ import annotations

import weakref
from typing import Any

from dynorm.core.errors import DefinitionError

from .embedded import EmbeddedCodec
from .model import ModelInfo
from .relations import HasManyRelation, relationships_of

__all__ = ["old_embedded_of"]

#: Each was= relationship's old attribute codec (None: its old layout is not embedded). Built
#: once: building a codec compiles it.
_OLD: weakref.WeakKeyDictionary[HasManyRelation[Any], EmbeddedCodec | None] = (
    weakref.WeakKeyDictionary()
)


def old_embedded_of(info: ModelInfo[Any]) -> tuple[EmbeddedCodec, ...]:
    """The codecs of the old embedded attributes ``info``'s items may hold (``was=``)."""
    found: list[EmbeddedCodec] = []
    for rel in relationships_of(info).values():
        if not isinstance(rel, HasManyRelation) or rel.was is None:
            continue
        if rel not in _OLD:
            try:
                _OLD[rel] = rel.was.embedded_codec(rel)
            except DefinitionError:
                continue  # not resolved yet (its target undeclared): asked again once it is
        codec = _OLD[rel]
        if codec is not None:
            found.append(codec)
    return tuple(found)

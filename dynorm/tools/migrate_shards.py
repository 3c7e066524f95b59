"""Where a move finds its old children when the number of shards changes (see ``Move``).

The current declaration says the children's partition key template now; the source strategy
says over how many shards they were spread. From an unsharded layout to a sharded one, the old
key is the declared template without its ``{shard}`` segment. From a sharded layout back to an
unsharded one, the old template is the declared one with a segment holding the shard inserted
somewhere: not necessarily last (``"POST#{shard}#{post_id}"``), so each position is tried, and a
reading counts only when the child it decodes to has, under the old number of shards, the shard
that segment holds, and when the declared template gives back the same key. From one number of
shards to another, the template is the declared one (each child's shard is recomputed).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from dynorm.core.codec.converter import AttributeValue
from dynorm.core.keys import KeyTemplate, shard_number, typed_key_text
from dynorm.mapping.model import ModelInfo

__all__ = ["OldPartition", "Reading"]

#: A segment that can hold a shard: its digits, with any literal text around them ("S3", "03").
_SHARD_SEGMENT = re.compile(r"\D*(\d+)\D*")


@attrs.frozen
class Reading:
    """One way to read an old partition key: the key in the declared template's shape.

    ``shard``: the shard the old key held, when the reading must be confirmed by the child's
    own shard under the old number of shards (None: nothing to confirm).
    """

    key: AttributeValue
    shard: int | None = None


@attrs.frozen
class OldPartition:
    """The old layout's partition key of a collection, against the ``declared`` template."""

    declared: KeyTemplate
    #: over how many shards the old layout spread the children
    old_shards: int

    @property
    def changes_shape(self) -> bool:
        """Whether old keys differ in shape from the declared template (sharded or not)."""
        return (self.old_shards > 1) != self.declared.sharded

    def readings(self, text: str, parsers: Mapping[str, Callable[[str], object]]) -> list[Reading]:
        """The ways the stored partition key ``text`` reads as an old-layout key (none: not one).

        ``parsers``: the child's key field parsers (field -> text -> value).
        """
        declared = self.declared
        if not self.changes_shape:
            return [Reading({"S": text})] if declared.matches(text) else []
        if declared.sharded:
            old = declared.without_shard()
            texts = old.parse(text)
            if texts is None:
                return []
            values = {f: parsers[f](t) for f, t in texts.items()}
            # Any shard: encoding the decoded child computes its own.
            return [Reading({"S": declared.format(values, 0)})]
        return self._unsharded_readings(text)

    def _unsharded_readings(self, text: str) -> list[Reading]:
        """Back from shards: ``text`` with one segment holding a shard taken out, each way."""
        delimiter = self.declared.delimiter
        parts = text.split(delimiter)
        found: list[Reading] = []
        for at, part in enumerate(parts):
            digits = _SHARD_SEGMENT.fullmatch(part)
            if digits is None:
                continue
            rest = delimiter.join(parts[:at] + parts[at + 1 :])
            if self.declared.matches(rest):
                found.append(Reading({"S": rest}, int(digits.group(1))))
        return found

    def confirms(self, child: ModelInfo[Any], reading: Reading, obj: object, key: object) -> bool:
        """Whether ``reading`` is how the old layout stored ``obj`` (its new key: ``key``).

        Nothing to confirm, or: the declared template gives back the key read, and the shard
        the old key held is ``obj``'s shard under the old number of shards.
        """
        if reading.shard is None:
            return True
        if key != reading.key:
            return False
        values = child.values_of(obj)
        texts = [typed_key_text(values[f]) for f in child.identity_fields()]
        return shard_number(texts, self.old_shards) == reading.shard

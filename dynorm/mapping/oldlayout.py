"""Where a relationship's children were stored before ``via`` (``was=``, ``migrate(from_=)``).

The current declaration says the children's key templates now; the old strategy says where
those templates put them before. Both the migrations (``dynorm/tools/migrate_kinds.py``) and the
union reads of a relationship declared with ``was=`` (``dynorm/mapping/union.py``) read the old
layout through this module, so they find the same old items and read them the same way:

- :class:`ItemMove`: Partition <-> Index (and a change of the number of shards): the same
  templates, moved between the table key and an index key. An old item becomes the new one by
  replacing its key attributes (``moved_item``).
- :class:`OldPartition`: the old partition key when the number of shards changes. From an
  unsharded layout to a sharded one, the old key is the declared template without its
  ``{shard}`` segment. From a sharded layout back to an unsharded one, the old template is the
  declared one with a segment holding the shard inserted somewhere. The reads and writes of a
  relationship declaring ``was=`` query each old shard's partition, so they need the position:
  they take it to be last (``"POST#{post_id}#{shard}"``, the form dynorm's own messages
  propose), and so does the live migration (from ``was=``), so it never moves a child the
  readers did not see; an old child whose shard segment is elsewhere (``"POST#{shard}#{post_id}"``)
  is *stranded*: the live migration skips and lists it, ``migration_status`` counts it. A
  migration from ``from_=`` without ``was=`` (the application's writers stopped) tries each
  position: a reading counts only when the child it decodes to has, under the old number of
  shards, the shard that segment holds, and when the declared template gives back the same
  key. From one number of shards to another, the template is the declared one (each child's
  shard is recomputed).
- :class:`EmbeddedItems`: children embedded in the parent item, as the items they become.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from dynorm.core.chunks import KeyId, key_id
from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import CodecError
from dynorm.core.keys import KeyTemplate, key_text, shard_number, typed_key_text
from dynorm.wire.retry import same_value

from .model import ModelInfo

if TYPE_CHECKING:
    from .embedded import EmbeddedCodec
    from .relations import HasManyRelation
    from .strategies import Strategy

__all__ = ["EmbeddedItems", "ItemMove", "OldPartition", "Reading"]

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
    #: back from shards: the old shard segment may be at any position (False: last only, as
    #: the reads of ``was=`` query it)
    anywhere: bool = True

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
            if not self.anywhere and at != len(parts) - 1:
                continue  # as the reads see the old layout (see ``keys``)
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

    def keys(self, values: Mapping[str, object]) -> list[str]:
        """The old layout's partition keys of the collection ``values`` (the link) name.

        One a shard of the old layout. Back from shards the position of the old ``{shard}``
        segment is not known from the declared template: it is taken to be last (the form
        dynorm's own messages propose, ``"POST#{post_id}#{shard}"``).
        """
        declared = self.declared
        if self.old_shards == 1:
            return [declared.without_shard().format(values)]
        template = declared
        if not declared.sharded:
            template = KeyTemplate(
                declared.source + declared.delimiter + "{shard}", declared.delimiter
            )
        return [template.format(values, shard) for shard in range(self.old_shards)]


def _text(item: Mapping[str, AttributeValue], attr: str | None) -> str | None:
    return None if attr is None else key_text(item.get(attr))


def _primary(info: ModelInfo[Any], item: Mapping[str, AttributeValue]) -> Item:
    return {a: item[a] for a in info.table.primary_attributes}


class ItemMove:
    """Children between two item collections (Partition <-> Index): same templates, moved.

    A plain class, not attrs: a field typed HasMany reads through the descriptor protocol.
    """

    def __init__(
        self, rel: HasManyRelation[Any], source: Strategy, *, anywhere: bool = False
    ) -> None:
        # anywhere: back from shards, the old shard segment is looked for at any position (a
        # migration with the writers stopped); else last only, as the reads of was= do.
        child = rel.target_info
        table = child.table
        src_pk, src_sk = table.key_attributes(source.index)
        dst_pk, dst_sk = table.key_attributes(rel.via.index)
        assert src_sk is not None  # noqa: S101 - checked by migrate() and by was=
        assert dst_sk is not None  # noqa: S101 - checked by migrate() and by was=
        self.rel, self.source, self.child = rel, source, child
        self.src, self.dst = (src_pk, src_sk), (dst_pk, dst_sk)
        #: the attributes a move rewrites: every key attribute that is no field's own
        self.key_attributes = frozenset(table.attribute_names()) - set(
            child.codec.attributes.values()
        )
        #: the children's partition key as the old layout stored it (see OldPartition)
        self.old_pk = OldPartition(
            child.key_templates(rel.via.index)[0], source.shards, anywhere=anywhere
        )
        #: the key attributes a child keeps through the move: with the index unchanged (the
        #: shard count changes), its table key, which the decode may need
        self.kept_keys = (
            table.primary_attributes
            if source.index == rel.via.index and rel.via.index is not None
            else ()
        )

    def is_current(self, raw: Item) -> bool:
        """Whether ``raw`` is stored as the current code stores it (table and new keys)."""
        child = self.child
        if not child.tests(None).keys(raw):
            return False
        encoded = child.encode(child.decode(raw))
        return all(
            (a in raw) == (a in encoded) and (a not in raw or same_value(raw[a], encoded[a]))
            for a in dict.fromkeys([*child.table.primary_attributes, *self.dst])
        )

    def stranded(self, raw: Item) -> bool:
        """Whether ``raw`` is an old child the reads of ``was=`` do not see (``moved_item`` None).

        Back from shards, its old shard segment is not last (see the module's docstring).
        """
        old_pk = self.old_pk
        if old_pk.anywhere or not old_pk.changes_shape or old_pk.declared.sharded:
            return False
        try:
            return ItemMove(self.rel, self.source, anywhere=True).moved_item(raw) is not None
        except CodecError:
            return True  # it reads as an old child, two ways

    def moved_item(self, raw: Item) -> Item | None:
        """The item an old-layout child becomes (None: not an old-layout child).

        The stored item with its key attributes replaced by those the current templates give:
        attributes the model does not declare, timestamps and versions stay as stored.
        CodecError when it does not decode, or when its old key reads as two children.
        """
        child, table = self.child, self.child.table
        (src_pk, src_sk), (dst_pk, dst_sk) = self.src, self.dst
        found = table.model_of(raw)
        if found is not None and found is not child:
            return None  # another model's item
        if self.is_current(raw):
            return None
        sk_t = child.key_templates(self.rel.via.index)[1]
        pk_text, sk_text = _text(raw, src_pk), _text(raw, src_sk)
        if pk_text is None or sk_text is None or sk_t is None or not sk_t.matches(sk_text):
            return None
        kept = {k: v for k, v in raw.items() if k not in self.key_attributes}
        base = {**kept, **{a: raw[a] for a in self.kept_keys if a in raw}, dst_sk: raw[src_sk]}
        made: dict[KeyId, Item] = {}
        for reading in self.old_pk.readings(pk_text, child.key_parsers):
            obj = child.decode({**base, dst_pk: reading.key})
            encoded = child.encode(obj)
            if self.old_pk.confirms(child, reading, obj, encoded.get(dst_pk)):
                new = {**kept, **{k: v for k, v in encoded.items() if k in self.key_attributes}}
                made[key_id(_primary(child, new) | {dst_pk: new[dst_pk]})] = new
        if len(made) > 1:
            raise CodecError(
                f"its partition key {pk_text!r} reads as {len(made)} different "
                f"{child.name} children of {self.source.describe()}: which of its parts is the "
                "shard cannot be told; move it by hand"
            )
        return next(iter(made.values()), None)


class EmbeddedItems:
    """Children embedded in the parent item (``codec``), as the items they become."""

    def __init__(self, rel: HasManyRelation[Any], codec: EmbeddedCodec) -> None:
        self.rel, self.codec = rel, codec
        child = rel.target_info
        table = child.table
        names = child.codec.attributes
        keys = {*table.attribute_names(), *filter(None, [table.type_attribute])}
        #: what the current declaration gives a child item, whatever its map entry holds: its
        #: key attributes (and type attribute), its link fields and its copies
        self.strategy_attributes = frozenset(
            (keys - set(names.values()))
            | {names[f] for f in rel.link}
            | {names[f] for f in rel.copies.values()}
        )
        #: what the encoded child gives an entry stored at an older schema version: its
        #: declared fields too (upgraded: the entry's own hold the old shape) and the version;
        #: only the attributes the model does not declare are kept as stored
        versions = child.versions
        self.upgraded = (
            self.strategy_attributes
            | set(names.values())
            | ({versions.attribute} if versions is not None else set())
        )

    def children_of(self, parent_values: Mapping[str, object], raw: Item) -> list[Item]:
        """The items the embedded children become.

        Each map entry (or list member) as stored, with the key attributes, link fields and
        copies the current declaration gives it. Every attribute of the entry is kept, declared
        or not; CodecError when one does not decode as the child. An entry stored at an older
        schema version of the child becomes the upgraded child: its declared fields as encoded
        now (with the current version), its undeclared attributes as stored.
        """
        child = self.rel.target_info
        link = self.rel.link_values(parent_values)
        encode = child.codec.encode_path
        injected = {child.codec.attributes[f]: encode(f)(v) for f, v in link.items()}
        stored = raw.get(self.codec.attribute)
        if stored is None:
            return []
        if "M" in stored:
            entries = [stored["M"][k] for k in sorted(stored["M"])]
        elif "L" in stored:
            entries = list(stored["L"])
        else:
            return []
        via = self.rel.via
        made: list[Item] = []
        for entry in entries:
            fields: Item = dict(entry.get("M", {}))
            obj = child.decode({**fields, **injected})
            encoded = child.encode(via.prepare_child(self.rel, parent_values, obj))
            covered = self.upgraded if self._older(fields) else self.strategy_attributes
            made.append(
                {
                    **encoded,
                    **{k: v for k, v in fields.items() if k not in covered},
                    **{k: v for k, v in encoded.items() if k in covered},
                }
            )
        return made

    def _older(self, fields: Item) -> bool:
        """Whether a map entry is stored at an older schema version than the child's."""
        versions = self.rel.target_info.versions
        return versions is not None and versions.version_of(fields) != versions.current

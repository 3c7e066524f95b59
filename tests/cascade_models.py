"""A marketplace tree for cascading deletes: sellers, listings, reviews, buyers' favourites.

A seller has many listings (Partition); a listing has many reviews (Partition, in the listing's
own collection) and many favourites, found through GSI1 (the many-to-many adjacency of the seed
models: a favourite is an item of its buyer's partition, linked to its listing by an index). A
listing also keeps its photos Embedded. Shared by the unit tests (plans fed fake replies) and the
integration tests (the same models against a server).
"""

from __future__ import annotations

import attrs

from dynorm import GSI, Embedded, HasMany, Index, Partition, Table

market = Table("market", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@attrs.define
class Photo:
    url: str


@market.model(pk="SELLER#{seller_id}", sk="SELLER#{seller_id}")
@attrs.define
class Seller:
    seller_id: str
    name: str = ""
    listings = HasMany["Listing"]("Listing", via=Partition())


@market.model(
    pk="SELLER#{seller_id}",
    sk="LISTING#{listing_id}",
    GSI1=("LISTING#{listing_id}", "LISTING#{listing_id}"),
)
@attrs.define
class Listing:
    seller_id: str
    listing_id: str
    title: str = ""
    reviews = HasMany["Review"]("Review", via=Partition())
    favourites = HasMany["Favourite"]("Favourite", via=Index("GSI1"))
    photos = HasMany[Photo](Photo, via=Embedded())


@market.model(pk="LISTING#{listing_id}", sk="REVIEW#{review_id}")
@attrs.define
class Review:
    listing_id: str
    review_id: str
    stars: int = 5


@market.model(pk="BUYER#{buyer_id}", sk="BUYER#{buyer_id}")
@attrs.define
class Buyer:
    buyer_id: str
    favourites = HasMany["Favourite"]("Favourite", via=Partition())


@market.model(
    pk="BUYER#{buyer_id}",
    sk="FAV#{listing_id}",
    GSI1=("LISTING#{listing_id}", "FAV#{buyer_id}"),
)
@attrs.define
class Favourite:
    buyer_id: str
    listing_id: str


# -- a versioned root: its version is checked before anything under it is deleted ---------------


@market.model(pk="SHOP#{shop_id}", sk="SHOP#{shop_id}", version="version")
@attrs.define
class Shop:
    shop_id: str
    name: str = ""
    version: int = 0
    shelves = HasMany["Shelf"]("Shelf", via=Partition())


@market.model(pk="SHOP#{shop_id}", sk="SHELF#{n}")
@attrs.define
class Shelf:
    shop_id: str
    n: int


# -- a cycle: people follow people (both ways through one index) --------------------------------

social = Table("social", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@social.model(
    pk="PERSON#{name}",
    sk="PERSON#{name}",
    GSI1=("GROUP#{group}", "PERSON#{name}"),
)
@attrs.define
class Person:
    name: str
    group: str
    #: Everyone in the group whose name is this person's: the person itself among them.
    friends = HasMany["Person"]("Person", via=Index("GSI1"))
    group_of = HasMany["Group"]("Group", via=Partition())


@social.model(pk="PERSON#{name}", sk="GROUP#{group}", GSI1=("GROUP#{group}", "GROUP#{group}"))
@attrs.define
class Group:
    name: str
    group: str
    members = HasMany["Person"]("Person", via=Index("GSI1"))

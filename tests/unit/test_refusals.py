"""``from_jsonable``: what a class's own validators refuse is a problem at the refused field."""

from __future__ import annotations

import attrs
import pytest

from dynorm import InvalidDataError, from_jsonable


def after_start(span: Span, attribute: attrs.Attribute[int], end: int) -> None:
    if end < span.start:  # reads another field: the check runs with every field set
        raise ValueError(f"end {end} is before start {span.start}")


@attrs.define
class Span:
    start: int = attrs.field(validator=attrs.validators.instance_of(int))
    end: int = attrs.field(default=0, validator=after_start)


@attrs.define
class Event:
    name: str
    span: Span | None = None
    tags: list[str] = attrs.Factory(list)

    def __attrs_post_init__(self) -> None:
        if self.name == "forbidden":
            raise ValueError("this name is reserved")


def problems(data: object) -> list[tuple[tuple[str | int, ...], str]]:
    with pytest.raises(InvalidDataError) as caught:
        from_jsonable(Event, data)
    return list(caught.value.problems)


def test_a_field_validator_refusal_is_at_its_field_even_nested() -> None:
    assert problems({"name": "e", "span": {"start": 5, "end": 2}}) == [
        (("span", "end"), "end 2 is before start 5")
    ]


def test_a_refusal_no_field_validator_makes_is_the_whole_objects() -> None:
    assert problems({"name": "forbidden"}) == [
        ((), "Event refused the values: this name is reserved")
    ]


def test_valid_values_still_build_the_object() -> None:
    event = from_jsonable(Event, {"name": "e", "span": {"start": 1, "end": 2}})
    assert event.span == Span(start=1, end=2)

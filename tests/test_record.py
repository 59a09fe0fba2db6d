"""``@record``: the start-up path's value classes behave as the dataclasses they replace."""

from __future__ import annotations

import pytest

from harn_mcp_mock._record import FrozenInstanceError, field, record


@record
class Point:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)


@record(frozen=True)
class Key:
    name: str
    n: int = 1


def test_fields_take_positional_keyword_and_default_values() -> None:
    assert (Point(1).x, Point(1).y, Point(1, 2).y, Point(x=3, y=4).x) == (1, 0, 2, 3)


def test_a_default_factory_builds_a_new_value_per_instance() -> None:
    a, b = Point(1), Point(1)
    a.tags.append("t")
    assert b.tags == [] and a.tags == ["t"]


def test_records_compare_by_value_and_print_their_fields() -> None:
    assert Point(1, 2) == Point(1, 2) != Point(1, 3)
    assert Point(1, 2) != Key("a")  # type: ignore[comparison-overlap]
    assert repr(Point(1, 2)) == "Point(x=1, y=2, tags=[])"


def test_records_are_slotted() -> None:
    assert getattr(Point, "__slots__", None) == ("x", "y", "tags")
    with pytest.raises(AttributeError):
        Point(1).z = 2  # type: ignore[attr-defined]


def test_a_frozen_record_refuses_changes_and_hashes_by_value() -> None:
    key = Key("a")
    with pytest.raises(FrozenInstanceError):
        key.name = "b"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del key.n
    assert hash(Key("a")) == hash(Key("a", 1)) and {Key("a"), Key("a")} == {Key("a")}


def test_a_mutable_record_is_not_hashable() -> None:
    with pytest.raises(TypeError):
        hash(Point(1))

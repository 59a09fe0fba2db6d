"""The world predicate language: pointers, every predicate, composition, numbers by value,
missing paths, the resolver, and the validation the spec loader relies on."""

from __future__ import annotations

from typing import Any

import pytest

from harn_mcp_mock.world.predicates import (
    MISSING,
    PredicateError,
    get_path,
    holds,
    items_of,
    json_equal,
    predicate_paths,
    split_pointer,
    subset_match,
    validate_predicate,
)

STATE: dict[str, Any] = {
    "users": {
        "u1": {"name": "Ada", "team": {"name": "core", "size": 3}},
        "u2": {"name": "Bob", "team": None},
    },
    "tickets": {
        "T-1": {"title": "Login fails", "status": "open", "assignee": None, "priority": 2, "urgent": True},
        "T-2": {"id": "custom", "title": "Slow page", "status": "closed", "assignee": "u1", "priority": 25.0},
    },
    "tags": ["bug", "ui"],
    "log": [{"tool": "close", "ok": True}, {"tool": "assign", "ok": False}],
    "a/b": {"m~n": 1},
    "empty": {},
    "count": 0,
}


# --- pointers ---------------------------------------------------------------------------------


def test_a_pointer_splits_into_unescaped_segments() -> None:
    assert split_pointer("") == []
    assert split_pointer("/") == [""]
    assert split_pointer("/tickets/T-1/status") == ["tickets", "T-1", "status"]
    assert split_pointer("/a~1b/m~0n") == ["a/b", "m~n"]
    assert split_pointer("/~01") == ["~1"]  # ~0 is undone after ~1, so "~01" is "~1", not "/"


@pytest.mark.parametrize("bad", ["tickets", "/a~2", "/a~"])
def test_a_malformed_pointer_is_refused(bad: str) -> None:
    with pytest.raises(PredicateError):
        split_pointer(bad)


def test_get_path_walks_objects_and_arrays_by_decimal_index() -> None:
    assert get_path(STATE, "/users/u1/team/size") == 3
    assert get_path(STATE, "/tags/1") == "ui"
    assert get_path(STATE, "/log/0/tool") == "close"
    assert get_path(STATE, "/a~1b/m~0n") == 1
    assert get_path(STATE, "") is STATE


@pytest.mark.parametrize(
    "path",
    ["/nope", "/tags/2", "/tags/-", "/tags/01", "/tags/x", "/count/deeper", "/users/u2/team/name", "bad"],
)
def test_get_path_says_missing_for_a_path_into_nothing(path: str) -> None:
    assert get_path(STATE, path) is MISSING


def test_null_is_a_value_not_a_missing_path() -> None:
    assert get_path(STATE, "/tickets/T-1/assignee") is None
    assert holds({"exists": "/tickets/T-1/assignee"}, STATE)


# --- values -----------------------------------------------------------------------------------


def test_numbers_are_equal_by_value_but_a_boolean_is_not_a_number() -> None:
    assert json_equal(25, 25.0)
    assert json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not json_equal(True, 1)
    assert not json_equal(0, False)
    assert not json_equal([1], [True])
    assert not json_equal({"a": 1}, {"a": 1, "b": None})
    assert not json_equal("1", 1)
    assert not json_equal(None, {})


def test_items_of_an_object_carry_their_key_as_id_unless_they_have_one() -> None:
    assert items_of(STATE["tickets"])[0]["id"] == "T-1"
    assert items_of(STATE["tickets"])[1]["id"] == "custom"
    assert items_of(STATE["tags"]) == ["bug", "ui"]
    assert items_of("text") == []
    assert items_of(None) == []
    assert "id" not in STATE["tickets"]["T-1"]  # the state is not touched


def test_subset_match_compares_nested_objects_as_subsets_and_the_rest_exactly() -> None:
    item = {"name": "Ada", "team": {"name": "core", "size": 3}, "tags": ["a", "b"]}
    assert subset_match(item, {"team": {"size": 3.0}})
    assert subset_match(item, {})
    assert not subset_match(item, {"team": {"size": 4}})
    assert not subset_match(item, {"tags": ["a"]})  # arrays are compared whole
    assert not subset_match(item, {"missing": None})
    assert subset_match("bug", "bug")
    assert not subset_match("bug", {"name": "bug"})


# --- every predicate --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("predicate", "expected"),
    [
        ({"exists": "/tickets/T-1"}, True),
        ({"exists": "/tickets/T-9"}, False),
        ({"missing": "/tickets/T-9"}, True),
        ({"missing": "/tickets/T-1/status"}, False),
        ({"path": "/tickets/T-1/status", "equals": "open"}, True),
        ({"path": "/tickets/T-2/priority", "equals": 25}, True),
        ({"path": "/tickets/T-1/urgent", "equals": 1}, False),
        ({"path": "/users/u1/team", "equals": {"size": 3, "name": "core"}}, True),
        ({"path": "/tickets/T-9/status", "equals": None}, False),
        ({"path": "/tickets/T-1/status", "not_equals": "closed"}, True),
        ({"path": "/tickets/T-1/status", "not_equals": "open"}, False),
        ({"path": "/tickets/T-9/status", "not_equals": "open"}, True),
        ({"path": "/tickets/T-1/status", "in": ["open", "pending"]}, True),
        ({"path": "/tickets/T-2/priority", "in": [1, 25]}, True),
        ({"path": "/tickets/T-1/status", "in": ["closed"]}, False),
        ({"path": "/tickets/T-9/status", "in": [None]}, False),
        ({"path": "/tickets/T-1/priority", "gte": 2}, True),
        ({"path": "/tickets/T-1/priority", "gt": 2}, False),
        ({"path": "/tickets/T-1/priority", "lte": 2.0}, True),
        ({"path": "/tickets/T-1/priority", "lt": 2}, False),
        ({"path": "/tickets/T-2/priority", "gt": 24.5}, True),
        ({"path": "/tickets/T-1/status", "gt": 0}, False),
        ({"path": "/tickets/T-1/urgent", "gte": 0}, False),
        ({"path": "/tickets/T-9/priority", "lt": 100}, False),
        ({"path": "/tickets", "any": {"status": "closed", "assignee": "u1"}}, True),
        ({"path": "/tickets", "any": {"id": "T-1", "status": "open"}}, True),
        ({"path": "/tickets", "any": {"id": "custom"}}, True),
        ({"path": "/tickets", "any": {"id": "T-2"}}, False),
        ({"path": "/tickets", "any": {"priority": 25}}, True),
        ({"path": "/users", "any": {"team": {"name": "core"}}}, True),
        ({"path": "/tags", "any": "ui"}, True),
        ({"path": "/log", "any": {"ok": 1}}, False),
        ({"path": "/nothing", "any": {}}, False),
        ({"path": "/tickets", "none": {"status": "pending"}}, True),
        ({"path": "/tickets", "none": {"status": "open"}}, False),
        ({"path": "/nothing", "none": {"status": "open"}}, True),
        ({"path": "/tickets", "count": 2}, True),
        ({"path": "/tags", "count": 2}, True),
        ({"path": "/empty", "count": 0}, True),
        ({"path": "/tickets", "count": 1, "where": {"status": "open"}}, True),
        ({"path": "/tickets", "count": 1, "where": {"id": "T-1"}}, True),
        ({"path": "/log", "count": 1, "where": {"ok": False}}, True),
        ({"path": "/nothing", "count": 0}, False),
        ({"path": "/count", "count": 0}, False),
    ],
)
def test_each_predicate_holds_exactly_when_the_table_says(predicate: dict[str, Any], expected: bool) -> None:
    validate_predicate(predicate, "p")
    assert holds(predicate, STATE) is expected


def test_composition_combines_predicates() -> None:
    yes = {"exists": "/tickets/T-1"}
    no = {"exists": "/tickets/T-9"}
    assert holds({"all": [yes, yes]}, STATE)
    assert not holds({"all": [yes, no]}, STATE)
    assert holds({"any_of": [no, yes]}, STATE)
    assert not holds({"any_of": [no, no]}, STATE)
    assert holds({"not": no}, STATE)
    assert holds({"all": [{"not": {"all": [yes, no]}}, {"any_of": [{"not": yes}, yes]}]}, STATE)


def test_a_predicate_of_no_known_form_is_an_error_when_evaluated() -> None:
    with pytest.raises(PredicateError):
        holds({"exist": "/x"}, STATE)
    with pytest.raises(PredicateError):
        holds({"path": "/x", "equal": 1}, STATE)


def test_the_resolver_is_applied_to_every_path_and_operand() -> None:
    args = {"{args.id}": "T-1", "{args.status}": "open", "{args.limit}": 2, "{args.who}": {"assignee": None}}
    seen: list[Any] = []

    def resolve(value: Any) -> Any:
        seen.append(value)
        if isinstance(value, str):
            for ref, concrete in args.items():
                if value == ref:
                    return concrete
                value = value.replace(ref, str(concrete))
        return value

    assert holds({"path": "/tickets/{args.id}/status", "equals": "{args.status}"}, STATE, resolve)
    assert holds({"exists": "/tickets/{args.id}"}, STATE, resolve)
    assert holds({"path": "/tickets/{args.id}/priority", "lte": "{args.limit}"}, STATE, resolve)
    assert holds({"path": "/tickets", "any": "{args.who}"}, STATE, resolve)
    assert holds({"not": {"missing": "/tickets/{args.id}"}}, STATE, resolve)
    assert "{args.status}" in seen and "/tickets/{args.id}/priority" in seen and "{args.who}" in seen


def test_a_resolved_path_that_is_not_a_pointer_addresses_nothing() -> None:
    assert not holds({"exists": "{args.path}"}, STATE, lambda v: None if v == "{args.path}" else v)
    assert holds({"missing": "/x"}, STATE, lambda v: 12)


def test_predicate_paths_lists_every_path_once_through_composition() -> None:
    predicate = {
        "all": [
            {"path": "/tickets/T-1/status", "equals": "closed"},
            {"not": {"exists": "/tickets/T-9"}},
            {"any_of": [{"missing": "/tickets/T-1/lock"}, {"path": "/tickets/T-1/status", "in": ["a"]}]},
        ]
    }
    assert predicate_paths(predicate) == ["/tickets/T-1/status", "/tickets/T-9", "/tickets/T-1/lock"]
    assert predicate_paths({"exists": "/t/{id}"}, lambda v: v.replace("{id}", "T-3")) == ["/t/T-3"]


# --- validation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "predicate",
    [
        {"exists": "/a"},
        {"missing": ""},
        {"path": "/a", "equals": None, "error": "no {args.id}"},
        {"path": "/a", "in": "{args.allowed}"},
        {"path": "/a", "gte": "{args.min}"},
        {"path": "/a", "count": 0, "where": {"status": "{args.status}"}},
        {"path": "/a", "any": {"x": [1]}, "description": "why"},
        {"all": [{"exists": "/a"}, {"not": {"exists": "/b"}}]},
    ],
)
def test_well_formed_predicates_pass_validation(predicate: dict[str, Any]) -> None:
    validate_predicate(predicate, "tasks[0].goal[0]")


@pytest.mark.parametrize(
    ("predicate", "where", "message"),
    [
        ("closed", "g", "must be an object"),
        ({}, "g", "needs one of"),
        ({"exists": "/a", "missing": "/b"}, "g", "has both 'exists' and 'missing'"),
        ({"exists": "a"}, "g.exists", "start with '/'"),
        ({"exists": 3}, "g.exists", "JSON pointer string"),
        ({"path": "/a~2", "equals": 1}, "g.path", "followed by 0 or 1"),
        ({"path": "/a"}, "g", "needs one of equals"),
        ({"path": "/a", "equals": 1, "gt": 0}, "g", "has both 'equals' and 'gt'"),
        ({"path": "/a", "gte": "ten"}, "g.gte", "expected a number"),
        ({"path": "/a", "lt": True}, "g.lt", "expected a number"),
        ({"path": "/a", "in": 3}, "g.in", "expected a list"),
        ({"path": "/a", "count": -1}, "g.count", "non-negative integer"),
        ({"path": "/a", "count": 1, "where": [1]}, "g.where", "object of field values"),
        ({"path": "/a", "equals": 1, "where": {}}, "g.where", "only with count"),
        ({"path": "/a", "equals": 1, "eror": "x"}, "g.eror", "unknown field"),
        ({"path": "/a", "equals": 1, "error": 5}, "g.error", "expected a string"),
        ({"all": []}, "g.all", "non-empty list"),
        ({"any_of": {"exists": "/a"}}, "g.any_of", "non-empty list"),
        ({"all": [{"exists": "/a"}, {"path": "/b", "gte": "x"}]}, "g.all[1].gte", "expected a number"),
        ({"not": {"not": {"exists": "b"}}}, "g.not.not.exists", "start with '/'"),
    ],
)
def test_a_malformed_predicate_is_refused_naming_the_field(predicate: Any, where: str, message: str) -> None:
    with pytest.raises(PredicateError) as caught:
        validate_predicate(predicate, "g")
    assert caught.value.where == where
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, ValueError)

"""Scoring one run (path diffs, globs, required / allowed / collateral, forbidden) and exact pass^k."""

from __future__ import annotations

import copy
import itertools
import json
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harn_mcp_mock.scoring import Differ, aggregate, diff_paths, glob_match, pass_hat_k, score_run
from harn_mcp_mock.world.predicates import json_equal

INITIAL: dict[str, Any] = {
    "users": {"u1": {"name": "Ada"}, "u2": {"name": "Bob"}},
    "tickets": {
        "T-1": {"title": "Login fails", "status": "open", "assignee": None, "updated_at": None, "tags": []},
        "T-2": {
            "title": "Slow page",
            "status": "open",
            "assignee": "u2",
            "updated_at": None,
            "tags": ["perf"],
        },
    },
    "audit": {"log": []},
}

TASK: dict[str, Any] = {
    "id": "close-login-bug",
    "goal": [
        {"path": "/tickets/T-1/status", "equals": "closed"},
        {"path": "/tickets/T-1/assignee", "equals": "u1"},
    ],
    "may_change": ["/tickets/T-1/updated_at", "/audit/**"],
    "forbidden": [{"missing": "/tickets/T-1"}],
}


_DELETE = object()


def state(**changes: Any) -> dict[str, Any]:
    """INITIAL with edits given as dotted paths (``**{"tickets.T-1.status": "closed"}``); the
    value ``_DELETE`` removes the key."""
    out = copy.deepcopy(INITIAL)
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = out
        for part in parents:
            node = node[part]
        if value is _DELETE:
            del node[last]
        else:
            node[last] = value
    return out


def done(**more: Any) -> dict[str, Any]:
    return state(**{"tickets.T-1.status": "closed", "tickets.T-1.assignee": "u1", **more})


# --- diff_paths -------------------------------------------------------------------------------


def test_identical_states_have_no_changed_path() -> None:
    assert diff_paths(INITIAL, copy.deepcopy(INITIAL)) == []


def test_a_changed_leaf_is_reported_once_as_changed() -> None:
    assert diff_paths(INITIAL, state(**{"tickets.T-1.status": "closed"})) == [
        ("/tickets/T-1/status", "changed")
    ]


def test_numbers_compare_by_value_and_a_boolean_is_not_a_number() -> None:
    before = {"n": 25, "f": 1.0, "b": True, "z": 0, "list": [1, 0]}
    assert diff_paths(before, {"n": 25.0, "f": 1, "b": True, "z": 0.0, "list": [1.0, 0]}) == []
    after = {"n": 25, "f": True, "b": 1, "z": False, "list": [True, 0]}
    assert diff_paths(before, after) == [
        ("/b", "changed"),
        ("/f", "changed"),
        ("/list/0", "changed"),
        ("/z", "changed"),
    ]


def test_added_and_removed_subtrees_are_reported_leaf_by_leaf() -> None:
    after = state(**{"tickets.T-3": {"title": "New", "meta": {"by": "u1"}, "tags": []}, "users.u2": _DELETE})
    assert diff_paths(INITIAL, after) == [
        ("/tickets/T-3/meta/by", "added"),
        ("/tickets/T-3/tags", "added"),
        ("/tickets/T-3/title", "added"),
        ("/users/u2/name", "removed"),
    ]


def test_an_emptied_container_shows_its_removed_leaves_and_an_added_empty_one_shows_itself() -> None:
    assert diff_paths({"a": {"x": 1}}, {"a": {}}) == [("/a/x", "removed")]
    assert diff_paths({}, {"a": {}}) == [("/a", "added")]
    assert diff_paths({"a": []}, {}) == [("/a", "removed")]


def test_a_value_that_changes_type_is_one_changed_entry_at_its_path() -> None:
    assert diff_paths({"a": None}, {"a": {"by": "u1"}}) == [("/a", "changed")]
    assert diff_paths({"a": [1]}, {"a": {"0": 1}}) == [("/a", "changed")]
    assert diff_paths({"a": 1}, {"a": "1"}) == [("/a", "changed")]


def test_arrays_compare_by_index() -> None:
    assert diff_paths({"l": ["a", "b", "c"]}, {"l": ["b", "c"]}) == [
        ("/l/0", "changed"),
        ("/l/1", "changed"),
        ("/l/2", "removed"),
    ]
    assert diff_paths({"l": [{"x": 1}]}, {"l": [{"x": 1}, {"x": 2, "y": 3}]}) == [
        ("/l/1/x", "added"),
        ("/l/1/y", "added"),
    ]


def test_pointers_are_escaped_and_sorted_with_indexes_in_numeric_order() -> None:
    before: dict[str, Any] = {"a/b": {"m~n": 1}, "l": list(range(12))}
    after: dict[str, Any] = {"a/b": {"m~n": 2}, "l": [*range(12), 12]}
    after["l"][2] = -1
    after["l"][10] = -1
    assert diff_paths(before, after) == [
        ("/a~1b/m~0n", "changed"),
        ("/l/2", "changed"),
        ("/l/10", "changed"),
        ("/l/12", "added"),
    ]


def test_key_order_does_not_make_a_change() -> None:
    before = {"t": {"a": 1, "b": {"x": True, "y": [1, 2]}}, "u": 1}
    after = {"u": 1, "t": {"b": {"y": [1, 2], "x": True}, "a": 1}}
    assert diff_paths(before, after) == []


def test_a_root_that_is_not_a_container_is_compared_whole() -> None:
    assert diff_paths(1, 1.0) == []
    assert diff_paths("a", "b") == [("", "changed")]
    assert diff_paths({"a": 1}, [1]) == [("", "changed")]


def test_one_differ_scores_many_states_without_keeping_them() -> None:
    differ = Differ(INITIAL)
    assert differ.diff(done()) == [("/tickets/T-1/assignee", "changed"), ("/tickets/T-1/status", "changed")]
    assert differ.diff(INITIAL) == []
    assert differ.diff_values(state(**{"users.u3": {"name": "Cy"}})) == [("/users/u3/name", "added", "Cy")]


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.5, -1.0]),
    st.sampled_from(["", "a", "b", "a/b", "~"]),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.sampled_from(["a", "b", "c", "a/b", "~x"]), children, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values, json_values)
def test_a_diff_is_empty_exactly_when_the_states_are_equal_json(before: Any, after: Any) -> None:
    assert (diff_paths(before, after) == []) == json_equal(before, after)
    assert diff_paths(before, json.loads(json.dumps(before))) == []


# --- glob_match -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pointer", "pattern", "expected"),
    [
        ("/tickets/T-1/updated_at", "/tickets/T-1/updated_at", True),
        ("/tickets/T-1/updated_at", "/tickets/T-2/updated_at", False),
        ("/tickets/T-1/updated_at", "/tickets/*/updated_at", True),
        ("/tickets/T-1/meta/updated_at", "/tickets/*/updated_at", False),
        ("/audit", "/audit/**", True),
        ("/audit/log/3/at", "/audit/**", True),
        ("/auditor/x", "/audit/**", False),
        ("/a/b/c/d", "/a/**/d", True),
        ("/a/d", "/a/**/d", True),
        ("/a/b/c", "/a/**/d", False),
        ("/x/y/z", "/**", True),
        ("/audit/log-7", "/audit/log-*", True),
        ("/audit/log-7/x", "/audit/log-*", False),
        ("/audit/catalog-7", "/audit/log-*", False),
        ("/a.b/c", "/a.b/*", True),
        ("/axb/c", "/a.b/*", False),
        ("/files/a~1b", "/files/a~1b", True),
        ("/files/a~1b", "/files/*", True),
        ("/files/a/b", "/files/*", False),
        ("/tickets/T-1", "/tickets/*/status", False),
    ],
)
def test_may_change_globs_match_segments(pointer: str, pattern: str, expected: bool) -> None:
    assert glob_match(pointer, pattern) is expected


# --- score_run --------------------------------------------------------------------------------


def test_a_run_that_does_the_task_and_nothing_else_passes() -> None:
    score = score_run(TASK, INITIAL, done(**{"tickets.T-1.updated_at": "2026-01-01T00:00:00Z"}))
    assert score.passed
    assert score.goal_match and score.failed_goals == []
    assert score.required == ["/tickets/T-1/assignee", "/tickets/T-1/status"]
    assert score.allowed == ["/tickets/T-1/updated_at"]
    assert score.collateral == [] and score.forbidden_hit == []


def test_a_run_that_misses_part_of_the_goal_lists_the_failed_predicates() -> None:
    score = score_run(TASK, INITIAL, state(**{"tickets.T-1.status": "closed"}))
    assert not score.goal_match and not score.passed
    assert score.failed_goals == [{"goal": 1, "predicate": TASK["goal"][1]}]


def test_changes_outside_the_goal_and_may_change_are_collateral() -> None:
    final = done(**{"tickets.T-2.status": "closed", "users.u3": {"name": "Cy"}})
    score = score_run(TASK, INITIAL, final)
    assert score.goal_match and not score.passed
    assert score.collateral == ["/tickets/T-2/status", "/users/u3/name"]


def test_a_goal_path_covers_changes_below_it() -> None:
    task = {"id": "t", "goal": [{"path": "/tickets/T-1", "any": {"x": 1}}, {"exists": "/tickets/T-3"}]}
    final = state(**{"tickets.T-1.tags": ["a"], "tickets.T-3": {"title": "New", "meta": {"by": "u1"}}})
    score = score_run(task, INITIAL, final)
    assert score.required == ["/tickets/T-1/tags/0", "/tickets/T-3/meta/by", "/tickets/T-3/title"]
    assert score.collateral == []


def test_a_goal_path_does_not_cover_its_siblings_or_its_parent_fields() -> None:
    task = {"id": "t", "goal": [{"path": "/tickets/T-3/title", "equals": "New"}]}
    final = state(**{"tickets.T-3": {"title": "New", "status": "open"}})
    score = score_run(task, INITIAL, final)
    assert score.required == ["/tickets/T-3/title"]
    assert score.collateral == ["/tickets/T-3/status"]


def test_a_value_that_changed_type_is_required_when_the_goal_speaks_of_what_is_below_it() -> None:
    task = {"id": "t", "goal": [{"path": "/tickets/T-1/assignee/id", "equals": "u1"}]}
    score = score_run(task, INITIAL, state(**{"tickets.T-1.assignee": {"id": "u1"}}))
    assert score.changed == [("/tickets/T-1/assignee", "changed")]
    assert score.required == ["/tickets/T-1/assignee"] and score.passed


def test_a_goal_that_speaks_of_a_missing_path_makes_the_removal_required() -> None:
    task = {"id": "t", "goal": [{"not": {"exists": "/tickets/T-2"}}], "may_change": []}
    score = score_run(task, INITIAL, state(**{"tickets.T-2": _DELETE}))
    assert score.passed
    assert "/tickets/T-2/title" in score.required and score.collateral == []


def test_required_wins_over_allowed_and_globs_allow_whole_subtrees() -> None:
    task = {
        "id": "t",
        "goal": [{"path": "/audit/log", "count": 1}],
        "may_change": ["/audit/**", "/users/*/name"],
    }
    final = state(**{"audit.log": [{"tool": "x"}], "users.u1.name": "Ada L.", "users.u2.role": "admin"})
    score = score_run(task, INITIAL, final)
    assert score.required == ["/audit/log/0/tool"]
    assert score.allowed == ["/users/u1/name"]
    assert score.collateral == ["/users/u2/role"]


def test_a_read_only_task_fails_on_any_change() -> None:
    task = {"id": "look", "goal": [], "may_change": []}
    assert score_run(task, INITIAL, INITIAL).passed
    score = score_run(task, INITIAL, state(**{"users.u1.name": "Eve"}))
    assert not score.passed and score.collateral == ["/users/u1/name"]


def test_a_forbidden_state_in_the_final_state_fails_the_run() -> None:
    task = {
        **TASK,
        "forbidden": [{"path": "/tickets/T-2/status", "equals": "closed"}, {"missing": "/users/u1"}],
    }
    final = done(**{"tickets.T-2.status": "closed"})
    score = score_run({**task, "may_change": ["/**"]}, INITIAL, final)
    assert score.goal_match and score.collateral == []
    assert score.forbidden_hit == [{"forbidden": 0, "predicate": task["forbidden"][0]}]
    assert not score.passed


def test_forbidden_hits_tracked_during_the_run_are_used_instead_of_the_final_state() -> None:
    hits = [{"call": 2, "forbidden": 0, "predicate": TASK["forbidden"][0]}]
    score = score_run(TASK, INITIAL, done(), forbidden_hits=hits)
    assert score.forbidden_hit == hits and not score.passed
    assert score_run(TASK, INITIAL, state(**{"tickets.T-1": _DELETE}), forbidden_hits=[]).forbidden_hit == []


def test_the_score_serializes_with_stable_keys() -> None:
    score = score_run(TASK, INITIAL, done(**{"users.u1.name": "Eve"}))
    data = score.to_dict()
    assert list(data) == [
        "task",
        "goal_match",
        "failed_goals",
        "changed",
        "required",
        "allowed",
        "collateral",
        "forbidden_hit",
        "passed",
    ]
    assert data["changed"][0] == {"path": "/tickets/T-1/assignee", "kind": "changed"}
    assert json.loads(json.dumps(data)) == data


def test_a_task_with_a_malformed_goal_or_glob_is_refused() -> None:
    with pytest.raises(ValueError, match=r"task 't': goal\[0\]\.gte: expected a number"):
        score_run({"id": "t", "goal": [{"path": "/a", "gte": "x"}]}, {}, {})
    with pytest.raises(ValueError, match=r"may_change\[0\]"):
        score_run({"id": "t", "goal": [], "may_change": ["audit/**"]}, {}, {})


# --- pass^k -----------------------------------------------------------------------------------


def test_pass_hat_k_for_two_successes_in_four_trials_is_the_worked_example() -> None:
    assert [pass_hat_k(4, 2, k) for k in range(1, 5)] == [Fraction(1, 2), Fraction(1, 6), 0, 0]


def test_three_tasks_with_four_two_and_zero_successes_average_as_tau_bench_does() -> None:
    result = aggregate({"a": (4, 4), "b": (2, 4), "c": (0, 4)})
    assert result["pass_rate"] == Fraction(1, 2)
    assert result["pass_power_k"] == {
        1: Fraction(1, 2),
        2: Fraction(7, 18),
        3: Fraction(1, 3),
        4: Fraction(1, 3),
    }


def test_k_above_n_is_refused() -> None:
    with pytest.raises(ValueError, match="k=5 > n=4"):
        pass_hat_k(4, 2, 5)
    with pytest.raises(ValueError, match=r"k=4 > n=3 \(task 'b' has 3 trials\)"):
        aggregate({"a": (2, 4), "b": (1, 3)}, max_k=4)


def test_aggregate_stops_k_at_the_smallest_n() -> None:
    result = aggregate({"a": (5, 5), "b": (1, 2)})
    assert list(result["pass_power_k"]) == [1, 2]
    assert result["pass_rate"] == Fraction(3, 4)
    assert result["pass_power_k"][2] == Fraction(1, 2)


@pytest.mark.parametrize(("n", "c", "k"), [(0, 0, 1), (3, 4, 1), (3, -1, 1), (3, 1, 0), (3, True, 1)])
def test_impossible_counts_are_refused(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def test_aggregate_refuses_nothing_to_aggregate() -> None:
    with pytest.raises(ValueError):
        aggregate({})
    with pytest.raises(ValueError):
        aggregate({"a": (0, 0)})


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 7).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_hat_k_is_the_chance_that_k_draws_without_replacement_all_succeed(
    nck: tuple[int, int, int],
) -> None:
    n, c, k = nck
    trials = [True] * c + [False] * (n - c)
    draws = list(itertools.combinations(range(n), k))
    all_good = sum(1 for draw in draws if all(trials[i] for i in draw))
    assert pass_hat_k(n, c, k) == Fraction(all_good, len(draws))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.integers(1, 9).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))), min_size=1, max_size=5
    )
)
def test_aggregate_is_the_mean_of_per_task_pass_hat_k(counts: list[tuple[int, int]]) -> None:
    per_task = {f"t{i}": cn for i, cn in enumerate(counts)}
    result = aggregate(per_task)
    min_n = min(n for _c, n in counts)
    assert list(result["pass_power_k"]) == list(range(1, min_n + 1))
    for k, value in result["pass_power_k"].items():
        assert value == sum(pass_hat_k(n, c, k) for c, n in counts) / len(counts)
    assert result["pass_rate"] == result["pass_power_k"][1]

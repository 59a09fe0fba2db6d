"""The two diff engines claim the same leaf rules: scoring's ``diff_paths`` (one baseline against
thousands of final states) and the world engine's per-call ``changed_paths`` (copy-on-write,
O(what changed)). A property test holds them to it."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harn_mcp_mock.scoring.diff import diff_paths
from harn_mcp_mock.world.state import changed_paths

KEYS = st.sampled_from(["a", "b", "c/d", "e~f", "", "0"])
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, 1.0, 2.5])
    | st.sampled_from(["", "x", "y"])
)
JSON = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(JSON, JSON)
def test_both_engines_report_the_same_changed_leaves(before: Any, after: Any) -> None:
    scored = sorted({path for path, _kind in diff_paths(before, after)})
    # a fresh copy: the per-call engine skips shared subtrees by identity, which must not matter
    assert changed_paths(copy.deepcopy(before), after) == scored


@settings(max_examples=200, derandomize=True, deadline=None)
@given(JSON)
def test_neither_engine_sees_a_change_between_a_value_and_its_copy(value: Any) -> None:
    assert diff_paths(value, copy.deepcopy(value)) == []
    assert changed_paths(value, copy.deepcopy(value)) == []

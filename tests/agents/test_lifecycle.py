"""The Task lifecycle is exactly the spec's transition table, and terminal stays terminal."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harn_mcp_mock.agents.envelopes import ProtocolError
from harn_mcp_mock.agents.lifecycle import (
    TASK_EVENT_STATES,
    TERMINAL_STATES,
    TRANSITIONS,
    TaskState,
    apply_event,
    can_transition,
    is_terminal,
    status_class,
    transition,
)
from tests.agents.protocol_data import deterministic, spec_section

STATES = [s.value for s in TaskState]


def spec_transition_table() -> dict[str, set[str]]:
    text = spec_section(
        "Allowed transitions:", "SUBMITTED means the Harness accepted the Task durably. WORKING means an"
    )
    table: dict[str, set[str]] = {}
    for line in text.splitlines():
        match = re.fullmatch(r"\|?\s*`?([A-Z_]+)`?\s*\|\s*(.+?)\s*\|", line.strip())
        if match and match.group(1) != "From":
            targets = match.group(2)
            table[match.group(1)] = set() if targets == "terminal" else set(re.findall(r"[A-Z_]+", targets))
    return table


def test_the_transition_table_matches_the_spec_text() -> None:
    table = spec_transition_table()
    assert len(table) == 7
    assert {str(k): {str(v) for v in vs} for k, vs in TRANSITIONS.items()} == table


def test_the_task_states_are_the_seven_the_spec_lists_in_order() -> None:
    listed = spec_section(
        "Task states are uppercase on the Harn Agents Protocol wire:", "Allowed transitions:"
    )
    assert (
        re.findall(r"(?:SUBMITTED|WORKING|INPUT_REQUIRED|AUTH_REQUIRED|COMPLETED|FAILED|CANCELED)", listed)
        == STATES
    )


@pytest.mark.parametrize("current", STATES)
@pytest.mark.parametrize("target", STATES)
def test_can_transition_allows_exactly_the_table(current: str, target: str) -> None:
    assert can_transition(current, target) == (TaskState(target) in TRANSITIONS[TaskState(current)])


def test_a_canceled_task_never_becomes_completed() -> None:
    with pytest.raises(ProtocolError) as caught:
        transition("CANCELED", "COMPLETED")
    assert caught.value.envelope.code == "invalid_state_transition"
    assert caught.value.envelope.http_status == 400
    assert caught.value.envelope.details == {"from": "CANCELED", "to": "COMPLETED"}


def test_a_cancel_that_arrives_after_completion_is_refused_not_recorded() -> None:
    state = apply_event(None, "task.submitted")
    for event in ("task.started", "task.completed"):
        state = apply_event(state, event)
    with pytest.raises(ProtocolError, match="terminal"):
        apply_event(state, "task.canceled")


def test_events_drive_the_state_and_other_events_leave_it_alone() -> None:
    state = apply_event(None, "task.submitted")
    state = apply_event(state, "task.started")
    state = apply_event(state, "agent.message")
    state = apply_event(state, "task.status_changed", {"status": "INPUT_REQUIRED"})
    assert state is TaskState.INPUT_REQUIRED
    with pytest.raises(ProtocolError):
        apply_event(None, "task.started")


def test_an_unknown_status_is_indeterminate_never_success_and_allows_no_transition() -> None:
    assert status_class("PAUSED") == "indeterminate"
    assert not is_terminal("PAUSED")
    assert not can_transition("PAUSED", "WORKING")
    assert not can_transition("WORKING", "PAUSED")
    assert [status_class(s) for s in STATES] == ["active"] * 4 + ["succeeded", "failed", "canceled"]


def test_every_state_but_submitted_has_an_event_that_enters_it() -> None:
    assert set(TASK_EVENT_STATES.values()) == set(TaskState)


@deterministic
@given(st.lists(st.sampled_from([*STATES, "PAUSED"]), max_size=40))
def test_random_transition_sequences_stay_inside_the_table_and_terminal_stays_terminal(
    targets: list[str],
) -> None:
    state = TaskState.SUBMITTED
    reached = {state}
    for target in targets:
        before = state
        if can_transition(state, target):
            state = transition(state, target)
        else:
            with pytest.raises(ProtocolError):
                transition(state, target)
        assert state in TRANSITIONS
        assert state == before or state in TRANSITIONS[before]
        if before in TERMINAL_STATES:
            assert state == before
        reached.add(state)
    assert reached <= set(TRANSITIONS)


@deterministic
@given(st.lists(st.sampled_from([*TASK_EVENT_STATES, "task.status_changed", "agent.message"]), max_size=40))
def test_random_event_streams_never_leave_a_terminal_state(events: list[str]) -> None:
    state: TaskState | None = apply_event(None, "task.submitted")
    terminal_at: TaskState | None = None
    for event in events:
        payload = {"status": "COMPLETED"} if event == "task.status_changed" else None
        try:
            state = apply_event(state, event, payload)
        except ProtocolError as err:
            assert err.envelope.code == "invalid_state_transition"
        if terminal_at is not None:
            assert state == terminal_at
        elif state in TERMINAL_STATES:
            terminal_at = state

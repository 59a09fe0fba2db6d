"""The Task lifecycle state machine (spec section "Task lifecycle").

The transition table is the spec's, verbatim. Terminal states have no way out, so a Task the
server recorded as ``CANCELED`` can never become ``COMPLETED`` afterwards, and a cancel that
arrives after completion is refused rather than rewriting history.

A status this version does not define (``TaskStatus("PAUSED").known is False``) is
*indeterminate*: no transition out of or into it is allowed, and :func:`status_class` never
reports it as success.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Literal

from harn_mcp_mock.agents.envelopes import ErrorEnvelope, ProtocolError

__all__ = [
    "TASK_EVENT_STATES",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "TaskState",
    "apply_event",
    "can_transition",
    "is_terminal",
    "status_class",
    "transition",
]


class TaskState(StrEnum):
    SUBMITTED = "SUBMITTED"
    WORKING = "WORKING"
    INPUT_REQUIRED = "INPUT_REQUIRED"
    AUTH_REQUIRED = "AUTH_REQUIRED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELED = "CANCELED"


S = TaskState

#: Allowed transitions, From -> To, as the spec's table lists them.
TRANSITIONS: Mapping[TaskState, frozenset[TaskState]] = MappingProxyType(
    {
        S.SUBMITTED: frozenset({S.WORKING, S.CANCELED, S.FAILED}),
        S.WORKING: frozenset({S.INPUT_REQUIRED, S.AUTH_REQUIRED, S.COMPLETED, S.FAILED, S.CANCELED}),
        S.INPUT_REQUIRED: frozenset({S.WORKING, S.FAILED, S.CANCELED}),
        S.AUTH_REQUIRED: frozenset({S.WORKING, S.FAILED, S.CANCELED}),
        S.COMPLETED: frozenset(),
        S.FAILED: frozenset(),
        S.CANCELED: frozenset(),
    }
)

TERMINAL_STATES: frozenset[TaskState] = frozenset(s for s, to in TRANSITIONS.items() if not to)

#: The Task event that announces entering each state. ``task.status_changed`` carries the
#: new state in ``payload["status"]`` instead.
TASK_EVENT_STATES: Mapping[str, TaskState] = MappingProxyType(
    {
        "task.submitted": S.SUBMITTED,
        "task.started": S.WORKING,
        "task.input_required": S.INPUT_REQUIRED,
        "task.auth_required": S.AUTH_REQUIRED,
        "task.completed": S.COMPLETED,
        "task.failed": S.FAILED,
        "task.canceled": S.CANCELED,
    }
)


def _state(value: str) -> TaskState | None:
    try:
        return TaskState(str(value))
    except ValueError:
        return None


def is_terminal(status: str) -> bool:
    """True for COMPLETED, FAILED and CANCELED (an unknown status is not known to be terminal)."""
    return _state(status) in TERMINAL_STATES


def can_transition(current: str, target: str) -> bool:
    """Whether the table allows ``current -> target``. Unknown states allow nothing."""
    a, b = _state(current), _state(target)
    return a is not None and b is not None and b in TRANSITIONS[a]


def transition(current: str, target: str) -> TaskState:
    """The new state, or :class:`ProtocolError` with code ``invalid_state_transition``."""
    if not can_transition(current, target):
        why = "is terminal" if is_terminal(current) else "does not allow it"
        if _state(current) is None or _state(target) is None:
            why = "involves a state protocol v1 does not define"
        raise ProtocolError(
            ErrorEnvelope.of(
                "invalid_state_transition",
                f"task cannot move from {current} to {target}: {why}",
                param="status",
                details={"from": str(current), "to": str(target)},
            )
        )
    return TaskState(str(target))


def apply_event(
    current: str | None, event: str, payload: Mapping[str, Any] | None = None
) -> TaskState | None:
    """Fold one Event into a Task's state.

    ``task.submitted`` starts a Task (``current`` is None); the other ``task.*`` lifecycle
    events move it with :func:`transition`; any other event leaves the state unchanged.
    """
    if event == "task.status_changed":
        target = (payload or {}).get("status")
        if not isinstance(target, str):
            raise ProtocolError.invalid("task.status_changed needs payload.status", param="payload.status")
    elif event in TASK_EVENT_STATES:
        target = TASK_EVENT_STATES[event]
    else:
        return _state(current) if current is not None else None
    if current is None:
        if target != S.SUBMITTED:
            raise ProtocolError(
                ErrorEnvelope.of(
                    "invalid_state_transition",
                    f"a task starts SUBMITTED, not {target}",
                    param="status",
                    details={"from": None, "to": str(target)},
                )
            )
        return S.SUBMITTED
    return transition(current, target)


def status_class(status: str) -> Literal["active", "succeeded", "failed", "canceled", "indeterminate"]:
    """How a client should treat a Task status; unknown values are ``indeterminate``."""
    state = _state(status)
    if state is None:
        return "indeterminate"
    if state is S.COMPLETED:
        return "succeeded"
    if state is S.FAILED:
        return "failed"
    if state is S.CANCELED:
        return "canceled"
    return "active"

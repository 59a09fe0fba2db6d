"""The event taxonomy (spec section "Event taxonomy")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

__all__ = ["EVENT_GROUPS", "EVENT_KINDS", "classify_event", "is_valid_event_name"]

#: Core event kinds by group, in the spec's order.
EVENT_GROUPS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "user": ("user.message", "user.input_submitted", "user.tool_confirmation", "user.cancel_requested"),
        "agent": (
            "agent.message", "agent.reasoning_summary", "agent.tool_use", "agent.tool_result",
            "agent.mcp_tool_use", "agent.handoff", "agent.memory_read", "agent.memory_write",
        ),
        "task": (
            "task.submitted", "task.started", "task.input_required", "task.auth_required",
            "task.completed", "task.failed", "task.canceled", "task.status_changed",
        ),
        "session": (
            "session.created", "session.closed", "session.message_appended", "session.compacted",
            "session.truncated", "session.thread_forked", "session.thread_merged", "session.replayed",
        ),
        "branch": ("branch.created", "branch.updated", "branch.merged", "branch.abandoned"),
        "artifact": ("artifact.created", "artifact.updated", "artifact.linked", "artifact.redacted"),
        "span": ("span.started", "span.updated", "span.completed", "span.failed"),
        "tool": (
            "tool.requested", "tool.approval_required", "tool.approved", "tool.denied",
            "tool.completed", "tool.failed",
        ),
        "connector": (
            "connector.delivery_received", "connector.delivery_deduped", "connector.normalized",
            "connector.task_submitted", "connector.failed",
        ),
        "receipt": ("receipt.issued", "receipt.verified", "receipt.verification_failed"),
        "replay": ("replay.started", "replay.event_replayed", "replay.completed", "replay.failed"),
    }
)  # fmt: skip

EVENT_KINDS: frozenset[str] = frozenset(k for kinds in EVENT_GROUPS.values() for k in kinds)

_CORE_SHAPE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
_VENDOR_SHAPE = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$")


def is_valid_event_name(name: str) -> bool:
    """Lower-snake or dotted; vendor names may also use hyphens (reverse-DNS labels)."""
    return bool(_CORE_SHAPE.match(name) or _VENDOR_SHAPE.match(name))


def classify_event(name: str) -> Literal["core", "vendor", "unknown", "invalid"]:
    """``core`` for a spec event; ``vendor`` for ``vendor.*`` or a reverse-DNS name outside the
    core groups (three or more labels); ``unknown`` for any other well-formed name (a newer
    core event, say), which a client should ignore safely; ``invalid`` otherwise."""
    if name in EVENT_KINDS:
        return "core"
    if not is_valid_event_name(name):
        return "invalid"
    head = name.split(".", 1)[0]
    if head == "vendor" or (head not in EVENT_GROUPS and name.count(".") >= 2):
        return "vendor"
    return "unknown"

"""Open enums: a known value set plus the raw value of anything newer.

The spec says clients keep an unknown enum value "for display" and never treat it as success.
A :class:`RawEnum` is a ``str`` (so it compares, hashes and serialises as the raw wire value)
whose class lists the values protocol v1 defines; ``.known`` says whether this one is among them.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "ArtifactKind",
    "AutonomyTier",
    "BranchKind",
    "ConnectorStatus",
    "MemoryScope",
    "MessageRole",
    "OutcomeStatus",
    "PartType",
    "QuotaScope",
    "RawEnum",
    "ReceiptPolicy",
    "SessionState",
    "TaskStatus",
    "Visibility",
]


class RawEnum(str):
    """A wire enum value; ``known`` is False for values this version does not define."""

    __slots__ = ()
    VALUES: ClassVar[tuple[str, ...]] = ()

    @property
    def known(self) -> bool:
        return str(self) in self.VALUES

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r}{'' if self.known else ', known=False'})"


class AutonomyTier(RawEnum):
    __slots__ = ()
    VALUES = ("shadow", "suggest", "act_with_approval", "act_auto")


class ReceiptPolicy(RawEnum):
    __slots__ = ()
    VALUES = ("required", "optional", "disabled")


class SessionState(RawEnum):
    __slots__ = ()
    VALUES = ("ACTIVE", "IDLE", "PAUSED", "CLOSED", "FAILED")


class TaskStatus(RawEnum):
    __slots__ = ()
    VALUES = ("SUBMITTED", "WORKING", "INPUT_REQUIRED", "AUTH_REQUIRED", "COMPLETED", "FAILED", "CANCELED")


class BranchKind(RawEnum):
    __slots__ = ()
    VALUES = ("workspace", "session", "task", "sandbox")


class MessageRole(RawEnum):
    __slots__ = ()
    VALUES = ("user", "assistant", "system", "tool", "agent")


class Visibility(RawEnum):
    __slots__ = ()
    VALUES = ("public", "internal", "receipt_only")


class PartType(RawEnum):
    __slots__ = ()
    VALUES = ("text", "json", "tool_call", "tool_result", "artifact_ref", "file_ref", "image_ref")


class ArtifactKind(RawEnum):
    __slots__ = ()
    VALUES = ("file", "patch", "image", "log", "diff", "receipt", "snapshot", "dataset", "other")


class MemoryScope(RawEnum):
    __slots__ = ()
    VALUES = ("persona", "session", "workspace", "tenant")


class ConnectorStatus(RawEnum):
    __slots__ = ()
    VALUES = ("ACTIVE", "PAUSED", "FAILED", "DISABLED")


class OutcomeStatus(RawEnum):
    __slots__ = ()
    VALUES = ("SUCCEEDED", "FAILED", "CANCELED")


class QuotaScope(RawEnum):
    __slots__ = ()
    VALUES = ("persona", "workspace", "tenant", "organization")

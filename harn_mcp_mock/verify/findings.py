"""The finding model shared by every verify rule and report format.

Rule ids are stable once shipped (docs/drift-rules.md, generated from ``verify/rules.py``):
T* tool level, I* inputSchema, O* outputSchema, A* annotations, B* behaviour, R* resources and
resource templates, P* prompts, C* server capabilities.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any


class Severity(IntEnum):
    """oasdiff's three levels; ordered so that ``sev >= threshold`` reads naturally."""

    INFO = 1
    WARN = 2
    ERR = 3

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            from harn_mcp_mock.errors import UsageError

            raise UsageError(f"unknown severity {text!r}: use ERR, WARN or INFO", where="--fail-on") from None


@dataclass(slots=True)
class Finding:
    rule: str
    """Stable rule id, e.g. ``I1``."""
    severity: Severity
    tool: str | None
    """Tool (or resource/prompt name) the finding is about; None for server-level findings."""
    pointer: str
    """JSON pointer inside the thing compared (``/inputSchema/properties/city``), or ``""``."""
    message: str
    """One line for a human."""
    old: Any = None
    new: Any = None
    kind: str = "tool"
    """What ``tool`` names: ``tool``, ``resource``, ``resource_template``, ``prompt``, ``server``."""
    evidence: list[str] = field(default_factory=list)
    """Why a WARN was promoted (e.g. recorded arguments that violate a new bound)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity.name,
            "kind": self.kind,
            "tool": self.tool,
            "pointer": self.pointer,
            "message": self.message,
            "old": self.old,
            "new": self.new,
            "evidence": self.evidence,
        }


RULE_TITLES: dict[str, str] = {
    "T1": "tool removed",
    "T2": "tool renamed",
    "T3": "tool added",
    "T4": "tool description changed",
    "T5": "tool title changed",
    "T6": "tools capability changed",
    "I1": "new required input property",
    "I2": "new optional input property",
    "I3": "input property removed",
    "I4": "input property became required",
    "I5": "input property became optional",
    "I6": "input type changed or narrowed",
    "I7": "input type widened",
    "I8": "input no longer nullable",
    "I9": "input enum narrowed or const added/changed",
    "I10": "input enum widened or const removed",
    "I11": "input bound tightened",
    "I12": "input bound loosened or removed",
    "I13": "input bound newly set",
    "I14": "input pattern added or changed",
    "I15": "input format added or changed",
    "I16": "input additionalProperties closed",
    "I17": "input anyOf/oneOf branch removed or allOf member added",
    "I18": "input default changed or removed",
    "I19": "input description changed",
    "O1": "outputSchema removed",
    "O2": "outputSchema added",
    "O3": "required output property removed or made optional",
    "O4": "optional output property removed",
    "O5": "output property added",
    "O6": "output type widened, nullable or changed",
    "O7": "output type narrowed",
    "O8": "output enum value added",
    "O9": "output enum value removed",
    "O10": "output bound loosened or unset",
    "O11": "output oneOf branch added or const removed/changed",
    "A1": "readOnlyHint true -> false",
    "A2": "destructiveHint false -> true",
    "A3": "idempotentHint true -> false",
    "A4": "openWorldHint false -> true",
    "A5": "safety claim strengthened, verify",
    "B1": "structuredContent missing",
    "B2": "structuredContent violates outputSchema",
    "B3": "JSON text mirror of structuredContent dropped",
    "B4": "success became an error, or error code changed",
    "B5": "previous error now succeeds",
    "B6": "error message changed",
    "B7": "read-only result changed",
    "B8": "latency regression",
    "R1": "resource or resource template removed",
    "R2": "resource or resource template added",
    "R3": "resource or template changed (mimeType, uriTemplate, annotations)",
    "P1": "prompt removed",
    "P2": "prompt added",
    "P3": "prompt argument added as required, or made required",
    "P4": "prompt argument removed",
    "P5": "prompt argument added as optional, or made optional",
    "C1": "server capability removed",
    "C2": "server capability added or listChanged flipped",
}

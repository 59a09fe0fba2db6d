"""The finding every checker reports (verify's drift rules, lint's rules) and the rule that
made it: one model, so every output format (:mod:`harn_mcp_mock.findings.writers`) reads them
the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

__all__ = ["Finding", "Rule", "Severity"]


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


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule's stable id, its title, and what the formats say about it."""

    id: str
    title: str
    severity: Severity = Severity.WARN
    owasp: str = ""
    """The OWASP MCP Top 10 (2025) entry it maps to, or ``""``."""
    help: str = ""


@dataclass(slots=True)
class Finding:
    rule: str
    """Stable rule id, e.g. ``I1`` or ``P1``."""
    severity: Severity
    tool: str | None
    """Tool (or resource/prompt name) the finding is about; None when it is about no one item."""
    pointer: str
    """JSON pointer: inside the thing compared (verify: ``/inputSchema/properties/city``) or
    inside the file (lint: ``/messages/3/message/result/tools/0/description``); or ``""``."""
    message: str
    """One line for a human."""
    old: Any = None
    new: Any = None
    kind: str = "tool"
    """What ``tool`` names: ``tool``, ``resource``, ``resource_template``, ``prompt``, ``server``;
    lint's findings are about a ``cassette``."""
    evidence: list[str] = field(default_factory=list)
    """Why a WARN was promoted (e.g. recorded arguments that violate a new bound)."""
    file: str | None = None
    """The file the finding is in (a cassette, a CAS blob of one, a world spec), when known."""
    line: int | None = None
    """1-based line of the offending value in ``file`` (None: not located)."""
    column: int | None = None
    """1-based column (Unicode code points) of the offending value in ``file``."""

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

    def location(self) -> dict[str, Any]:
        """``{"file": ..., "line": ..., "column": ...}`` (the known parts)."""
        return {
            key: value
            for key, value in (("file", self.file), ("line", self.line), ("column", self.column))
            if value is not None
        }

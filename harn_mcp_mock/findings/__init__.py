"""Findings: the one model every checker reports (verify's drift rules, lint's rules), where
each finding is in its file (:mod:`.locate`), and the output formats' shared writers."""

from __future__ import annotations

from harn_mcp_mock._lazy import lazy_exports

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from harn_mcp_mock.findings.locate import CassetteLocator, JsonText, Position
    from harn_mcp_mock.findings.model import Finding, Rule, Severity

_HOME = {
    "CassetteLocator": "locate",
    "Finding": "model",
    "JsonText": "locate",
    "Position": "locate",
    "Rule": "model",
    "Severity": "model",
}

__getattr__ = lazy_exports(__name__, _HOME)

__all__ = ["CassetteLocator", "Finding", "JsonText", "Position", "Rule", "Severity"]

"""Deterministic faults: one vocabulary of kinds and rules for worlds and cassette replays.

:mod:`.kinds` registers the kinds, :mod:`.rules` reads and checks rules, :mod:`.schedule`
decides when a rule fires (by call ordinal, period, state predicate, or a keyed BLAKE3 hash:
never ``random``), and :mod:`.overlay` fires rules on a replayed cassette (``replay --faults``).
docs/faults.md is the reference.
"""

from __future__ import annotations

from harn_mcp_mock._lazy import lazy_exports

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)

if TYPE_CHECKING:
    from harn_mcp_mock.faults.kinds import KINDS, TRANSPORT_KINDS, Answer, FaultKind, fault_kind
    from harn_mcp_mock.faults.overlay import FaultOverlay, fault_plan
    from harn_mcp_mock.faults.rules import FaultRule, load_rules, parse_rules
    from harn_mcp_mock.faults.schedule import decide, fires, keyed_unit

_HOME = {
    "KINDS": "kinds",
    "TRANSPORT_KINDS": "kinds",
    "Answer": "kinds",
    "FaultKind": "kinds",
    "fault_kind": "kinds",
    "FaultOverlay": "overlay",
    "fault_plan": "overlay",
    "FaultRule": "rules",
    "load_rules": "rules",
    "parse_rules": "rules",
    "decide": "schedule",
    "fires": "schedule",
    "keyed_unit": "schedule",
}

__getattr__ = lazy_exports(__name__, _HOME)

__all__ = [
    "KINDS",
    "TRANSPORT_KINDS",
    "Answer",
    "FaultKind",
    "FaultOverlay",
    "FaultRule",
    "decide",
    "fault_kind",
    "fault_plan",
    "fires",
    "keyed_unit",
    "load_rules",
    "parse_rules",
]

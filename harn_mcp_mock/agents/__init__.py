"""Harn Agents Protocol v1, the library layer: resources, lifecycle, events, errors, receipts.

See ``docs/protocol.md``. The server and the conformance checker build on this package.
"""

from __future__ import annotations

from harn_mcp_mock.agents.envelopes import ErrorEnvelope, ProtocolError
from harn_mcp_mock.agents.jcs import jcs_bytes
from harn_mcp_mock.agents.lifecycle import TaskState, can_transition, transition
from harn_mcp_mock.agents.receipts import receipt_hash, redact, seal, verify_chain

PROTOCOL_VERSION = "agents-protocol-2026-04-25"
VERSION_HEADER = "Harn-Agents-Protocol-Version"

__all__ = [
    "PROTOCOL_VERSION",
    "VERSION_HEADER",
    "ErrorEnvelope",
    "ProtocolError",
    "TaskState",
    "can_transition",
    "jcs_bytes",
    "receipt_hash",
    "redact",
    "seal",
    "transition",
    "verify_chain",
]

"""JSON-RPC error codes: the one list (JSON-RPC 2.0's own, then the ones harn-mcp-mock uses).

docs/replay.md and docs/worlds.md give the error shapes; tests pin these values, which clients
match on.
"""

from __future__ import annotations

__all__ = [
    "CASSETTE_MISS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "RATE_LIMITED",
    "RECORDED_UNANSWERED",
    "TIMED_OUT",
]

# JSON-RPC 2.0
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# Server-defined (-32000 to -32099)
RATE_LIMITED = -32000
"""A world fault: the call was rate limited (``error.data.retry_after_ms``)."""
TIMED_OUT = -32001
"""A world fault: the call timed out on the virtual clock."""
CASSETTE_MISS = -32050
"""Replay: the cassette holds no interaction for this request."""
RECORDED_UNANSWERED = -32051
"""Replay: the request was recorded, but the server never answered it."""

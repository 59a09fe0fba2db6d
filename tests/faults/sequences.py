"""What the fault tests share: the rate-limit / tool-error / disconnect sequence and how an SDK
session sees it, call by call."""

from __future__ import annotations

from typing import Any

from mcp import ClientSession
from mcp.shared.exceptions import MCPError

ARGS = {"source_timezone": "Europe/Paris", "time": "09:30", "target_timezone": "Asia/Tokyo"}

SECOND_THIRD_FIFTH: list[dict[str, Any]] = [
    {"id": "rl", "tool": "convert_time", "kind": "rate_limit", "on_calls": [2]},
    {"id": "te", "tool": "convert_time", "kind": "tool_error", "on_calls": [3], "message": "upstream down"},
    {"id": "bye", "tool": "convert_time", "kind": "disconnect", "on_calls": [5]},
]
"""A rate limit on the 2nd call, a tool error on the 3rd, the connection closing on the 5th."""

SEEN = [
    "ok",
    "error -32000: rate limited: retry after 1 s",
    "tool error",
    "ok",
    "error -32000: Connection closed",
]
"""What :func:`seen_calls` reports for :data:`SECOND_THIRD_FIFTH`."""


async def seen_calls(session: ClientSession, calls: int) -> list[str]:
    """``calls`` convert_time calls, as the client saw each (until the connection closed)."""
    seen: list[str] = []
    for _ in range(calls):
        try:
            result = await session.call_tool("convert_time", ARGS)
        except MCPError as exc:
            seen.append(f"error {exc.error.code}: {exc.error.message}")
            if exc.error.message == "Connection closed":
                break
        else:
            seen.append("tool error" if result.is_error else "ok")
    return seen

"""The data of a cassette page (``show --format html``): the session as a timeline, each message
with its direction, method, latency and size, redaction placeholders marked by the page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from harn_mcp_mock.cassette.model import Cassette

__all__ = ["TEXT_LIMIT", "cassette_report_data"]

TEXT_LIMIT = 4000
"""Characters of a message shown on the page before it is cut (sizes are always the full size)."""


def _answer_to(reply_to: Any) -> int | None:
    if isinstance(reply_to, list):
        return next((r for r in reply_to if isinstance(r, int)), None)
    return reply_to if isinstance(reply_to, int) else None


def cassette_report_data(cassette: Cassette, summary: dict[str, Any]) -> dict[str, Any]:
    from harn_mcp_mock.redact import PLACEHOLDER_RE

    messages = []
    redacted_values = 0
    for msg in cassette.messages:
        if msg.invalid is not None:
            text = msg.raw or ""
        else:
            text = orjson.dumps(msg.message).decode()
        found = len(PLACEHOLDER_RE.findall(text))
        redacted_values += found
        items = msg.message if isinstance(msg.message, list) else [msg.message]
        latency = msg.latency_ms if isinstance(msg.latency_ms, int | float) else None
        messages.append(
            {
                "seq": msg.seq,
                "direction": msg.direction,
                "method": msg.method or ("(not JSON-RPC)" if msg.invalid is not None else None),
                "reply_to": _answer_to(msg.reply_to),
                "latency_ms": latency,
                "bytes": len(text.encode()),
                "error": any(isinstance(i, dict) and "error" in i for i in items),
                "redacted": found > 0,
                "text": text
                if len(text) <= TEXT_LIMIT
                else f"{text[:TEXT_LIMIT]}… (+{len(text) - TEXT_LIMIT} chars)",
            }
        )
    server = summary.get("server") or {}
    return {
        "kind": "cassette",
        "title": f"harn mcp mock show: {cassette.path.name if cassette.path else 'cassette'}",
        "cassette": {
            "path": summary.get("path"),
            "server": f"{server.get('name', '?')} {server.get('version', '')}".strip(),
            "messages": messages,
            "redactions": redacted_values,
        },
    }

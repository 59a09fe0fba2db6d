"""The cassette's ``server`` summary: what the handshake answer said about the server.

The recorder writes it in the trailer from the handshake it saw (``initialize``, or the
2026-07-28 era's ``server/discover``): the answer's ``protocolVersion``/``supportedVersions``,
``serverInfo``, ``capabilities`` and ``instructions``, and each handshake ``attempts`` (an error
answer is an attempt too). A recording killed before its trailer has none: a recovered one gets
it again from its messages (:func:`server_from_messages`).
"""

from __future__ import annotations

from collections.abc import Iterable

from harn_mcp_mock import deepjson

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

    from harn_mcp_mock.cassette.model import Message

HANDSHAKE_METHODS = ("initialize", "server/discover")


def server_summary(method: str, response: dict[str, Any]) -> dict[str, Any] | None:
    """The ``server`` summary from a successful handshake answer (None otherwise)."""
    result = response.get("result")
    if not isinstance(result, dict):
        return None
    server: dict[str, Any] = {"handshake": method}
    for key in ("protocolVersion", "supportedVersions", "serverInfo", "capabilities", "instructions"):
        if key in result:
            server[key] = result[key]
    meta = result.get("_meta")
    if "serverInfo" not in server and isinstance(meta, dict):
        # 2026-07-28: a discover result names the server in its _meta
        info = meta.get("io.modelcontextprotocol/serverInfo")
        if isinstance(info, dict):
            server["serverInfo"] = info
    return server


def server_from_messages(messages: Iterable[Message]) -> dict[str, Any] | None:
    """The ``server`` summary the recorder would have written for ``messages``: the last
    successful handshake answer's, with every handshake attempt in order; None when the client
    asked for no handshake that was answered."""
    asked: dict[bytes, str] = {}
    attempts: list[dict[str, Any]] = []
    server: dict[str, Any] | None = None
    for msg in messages:
        items = msg.message if isinstance(msg.message, list) else [msg.message]
        for item in items:
            if msg.invalid is not None or not isinstance(item, dict) or "id" not in item:
                continue
            key = deepjson.dumps(item["id"])
            if msg.direction == "client":
                if item.get("method") in HANDSHAKE_METHODS:
                    asked[key] = item["method"]
                continue
            method = asked.pop(key, None) if "method" not in item else None
            if method is None:
                continue
            error = item.get("error")
            if isinstance(error, dict):
                attempts.append({"method": method, "error": error.get("code")})
                continue
            summary = server_summary(method, item)
            if summary is not None:
                attempts.append({"method": method})
                server = summary
    if not attempts:
        return None
    return {**(server or {}), "attempts": attempts}

"""What a server offered in a recorded session: tools, resources, templates, prompts, capabilities,
and its answers to client requests (the calls verify replays and compares).

When a session listed something more than once (pagination, or again after ``list_changed``),
pages of one listing are joined and a later listing replaces an earlier one, so an item removed
mid-session counts as removed. A listing whose last recorded page still had a ``nextCursor``
was cut short (:attr:`Surface.cut_short`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harn_mcp_mock.cassette.model import Cassette

LISTS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}
KEYS = {"tools": "name", "resources": "uri", "resourceTemplates": "uriTemplate", "prompts": "name"}


@dataclass(slots=True)
class Exchange:
    """One client request and what the server answered, with the recorded latency."""

    seq: int
    request: dict[str, Any]
    response: dict[str, Any] | None
    latency_ms: float | None

    @property
    def method(self) -> str:
        return str(self.request.get("method"))

    @property
    def params(self) -> dict[str, Any]:
        params = self.request.get("params")
        return params if isinstance(params, dict) else {}


@dataclass(slots=True)
class Surface:
    items: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """``tools`` / ``resources`` / ``resourceTemplates`` / ``prompts`` -> key -> definition."""
    listed: set[str] = field(default_factory=set)
    """Which of those the session listed at all (an unlisted kind is not compared)."""
    capabilities: dict[str, Any] | None = None
    server: dict[str, Any] = field(default_factory=dict)
    """The cassette's ``server`` (``protocolVersion``, ``serverInfo``, ``instructions``, ...)."""
    exchanges: list[Exchange] = field(default_factory=list)
    cut_short: dict[str, str] = field(default_factory=dict)
    """List method (``resources/list``) -> the ``nextCursor`` its last recorded page ended with:
    the session did not read that list to the end."""
    notified: set[str] = field(default_factory=set)
    """Methods of the notifications the server sent (``notifications/tools/list_changed``...)."""

    def tools(self) -> dict[str, dict[str, Any]]:
        return self.items.get("tools", {})


def has_pages(cassette: Cassette) -> bool:
    """Whether any answer in ``cassette`` carries a ``nextCursor`` (a cheap test before
    :func:`surface_of` looks for a list that was cut short)."""
    for msg in cassette.messages:
        result = msg.message.get("result") if isinstance(msg.message, dict) else None
        if isinstance(result, dict) and result.get("nextCursor"):
            return True
    return False


def surface_of(cassette: Cassette) -> Surface:
    surface = Surface()
    caps = cassette.server.get("capabilities")
    surface.capabilities = caps if isinstance(caps, dict) else None
    surface.server = cassette.server
    answers = cassette.responses_by_request()
    pages: dict[str, dict[str, dict[str, Any]]] = {}
    for msg in cassette.messages:
        if msg.direction == "server" and msg.kind == "notification" and msg.method is not None:
            surface.notified.add(msg.method)
        if msg.direction != "client" or msg.kind != "request" or not isinstance(msg.message, dict):
            continue
        reply = answers.get(msg.seq)
        response = reply.message if reply is not None and isinstance(reply.message, dict) else None
        latency = (
            reply.latency_ms if reply is not None and isinstance(reply.latency_ms, int | float) else None
        )
        exchange = Exchange(msg.seq, msg.message, response, float(latency) if latency is not None else None)
        surface.exchanges.append(exchange)
        kind = LISTS.get(exchange.method)
        result = (response or {}).get("result")
        if kind is None or not isinstance(result, dict) or not isinstance(result.get(kind), list):
            continue
        key = KEYS[kind]
        first_page = not exchange.params.get("cursor")
        if first_page:
            pages[kind] = {}
        page = pages.setdefault(kind, {})
        for item in result[kind]:
            if isinstance(item, dict) and isinstance(item.get(key), str):
                page[item[key]] = item
        surface.items[kind] = dict(page)
        surface.listed.add(kind)
        cursor = result.get("nextCursor")
        if isinstance(cursor, str) and cursor:
            surface.cut_short[exchange.method] = cursor
        else:
            surface.cut_short.pop(exchange.method, None)
    return surface

"""The client side of a live MCP server: one :class:`Upstream` interface, one module per
transport (``stdio``: a child process; ``http``: a Streamable HTTP endpoint), and
:func:`open_upstream`, the one place that picks the transport."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from harn_mcp_mock._lazy import lazy_exports
from harn_mcp_mock.upstream.base import ExitInfo, Reply, Upstream, answered_ids, request_ids

if TYPE_CHECKING:
    from harn_mcp_mock.upstream.http import HttpForwarder, HttpUpstream, SseSplitter
    from harn_mcp_mock.upstream.lines import LineUpstream
    from harn_mcp_mock.upstream.stdio import StdioUpstream

_HOME = {
    "HttpForwarder": "http",
    "HttpUpstream": "http",
    "LineUpstream": "lines",
    "SseSplitter": "http",
    "StdioUpstream": "stdio",
}

__getattr__ = lazy_exports(__name__, _HOME)


def open_upstream(
    target: Sequence[str] | str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    display: str | None = None,
    version: str | None = None,
    redact_headers: Callable[[dict[str, str]], dict[str, Any]] | None = None,
    on_event: Callable[[str], None] | None = None,
) -> Upstream:
    """A live server: an ``http(s)://`` URL is a Streamable HTTP endpoint, a command (a list)
    a stdio process started now (``display``: its redacted text, for error messages)."""
    if isinstance(target, str):
        from harn_mcp_mock.upstream.http import HttpUpstream

        return HttpUpstream(
            target,
            headers=headers,
            timeout=timeout,
            version=version,
            redact_headers=redact_headers,
            on_event=on_event,
        )
    from harn_mcp_mock.upstream.stdio import StdioUpstream

    return StdioUpstream.spawn(target, display=display)


__all__ = [
    "ExitInfo",
    "HttpForwarder",
    "HttpUpstream",
    "LineUpstream",
    "Reply",
    "SseSplitter",
    "StdioUpstream",
    "Upstream",
    "answered_ids",
    "open_upstream",
    "request_ids",
]

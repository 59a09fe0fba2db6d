"""The Upstream interface: a live MCP server seen from the client side.

It mirrors the server-side seam (:class:`~harn_mcp_mock.replay.engine.ReplayEngine` and the
world engine answer ``receive(message) -> list[Out]`` whatever serves them): whoever drives a
live server (``verify`` against a live server, ``new_episodes``, the recorders) talks to an
:class:`Upstream`, and each transport is one module behind it (``stdio.py``: a child process;
``http.py``: a Streamable HTTP endpoint), as httpx keeps one transport per file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol, TypedDict

import orjson

from harn_mcp_mock.jsonrpc.frames import Frame, batch_items

Reply = tuple[bytes, int | None]
"""An answer to send back to the server: its JSON bytes and the seq the recorder gave it."""


class ExitInfo(TypedDict):
    """How the session with the live server ended (a cassette's ``exit`` record)."""

    code: int | None
    signal: str | None
    reason: str


class Upstream(Protocol):
    """A live MCP server, one message at a time.

    ``body`` is one JSON-RPC message (or batch) as compact JSON bytes without a newline.
    ``seq`` is the recorded sequence number of that client message, for transports that keep
    per-exchange notes (HTTP keeps status and headers in the cassette's ``http`` list).
    """

    def exchange(
        self, body: bytes, expect: set[bytes], timeout: float, *, seq: int | None = None
    ) -> Iterator[Frame]:
        """Send ``body``; yield every server message until each id in ``expect`` (the ids as
        JSON bytes) is answered. The caller may :meth:`send` while iterating (answers to the
        server's own requests). Raises :class:`~harn_mcp_mock.errors.UpstreamTimeout` when the
        server stays silent for ``timeout`` s, :class:`~harn_mcp_mock.errors.ServerError`
        when it is gone."""
        ...

    def send(self, body: bytes, *, seq: int | None = None) -> None:
        """Send ``body`` without waiting for anything (a notification, an answer)."""
        ...

    def listen(self, on_frame: Callable[[Frame], list[Reply]]) -> None:
        """Start receiving what the server sends outside any exchange (HTTP's standalone GET
        stream); ``on_frame`` returns the answers to send back. A no-op where there is no such
        channel."""
        ...

    def close(self, grace: float, on_frame: Callable[[Frame], object] | None = None) -> ExitInfo:
        """End the session (stdin closed / ``DELETE``), within ``grace`` s; what the server still
        sends goes to ``on_frame``."""
        ...


def answered_ids(frame: Frame) -> set[bytes]:
    """The ids (as JSON bytes) that ``frame`` answers: one per response or error in it."""
    return {orjson.dumps(item.id) for item in batch_items(frame) if item.kind in ("response", "error")}


def request_ids(frame: Frame) -> set[bytes]:
    """The ids (as JSON bytes) of the requests in ``frame``, which the server will answer."""
    return {orjson.dumps(item.id) for item in batch_items(frame) if item.kind == "request"}

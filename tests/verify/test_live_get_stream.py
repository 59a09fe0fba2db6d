"""`verify --url` opens the standalone GET stream: what the server sends only there is recorded too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from harn_mcp_mock.cassette.model import Cassette, Message, load_cassette, save_cassette
from harn_mcp_mock.http.server import Receive, Scope, Send, read_body
from harn_mcp_mock.verify.live import rerun_live_http
from tests.http.conftest import serve_app

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"roots": {}},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
INIT_RESULT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "g", "version": "1"},
}
CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
ROOTS = {"jsonrpc": "2.0", "id": "r1", "method": "roots/list"}
ROOTS_ANSWER = {"jsonrpc": "2.0", "id": "r1", "result": {"roots": [{"uri": "file:///w", "name": "w"}]}}


def baseline(tmp_path: Path) -> Path:
    """initialize, initialized, the server's roots/list (answered), tools/list."""
    messages = [
        Message(0, "client", INIT),
        Message(1, "server", {"jsonrpc": "2.0", "id": 1, "result": INIT_RESULT}, reply_to=0, latency_ms=1.0),
        Message(2, "client", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Message(3, "server", ROOTS),
        Message(4, "client", ROOTS_ANSWER, reply_to=3, latency_ms=1.0),
        Message(5, "client", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        Message(
            6, "server", {"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}, reply_to=5, latency_ms=1.0
        ),
    ]
    return save_cassette(Cassette(messages, {"transport": "http"}), tmp_path / "base.cassette.json")


class GetStreamServer:
    """Answers POSTs as JSON; its GET stream sends a notification and a roots/list request, and
    ends once the session is deleted. ``get_status`` other than 200 refuses the GET."""

    def __init__(self, get_status: int = 200) -> None:
        self.get_status = get_status
        self.posted: list[Any] = []
        self.deleted: anyio.Event | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if self.deleted is None:
            self.deleted = anyio.Event()
        method = scope["method"]
        if method == "GET":
            if self.get_status != 200:
                await self._plain(send, self.get_status, [(b"allow", b"POST, DELETE")])
                return
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            for event in (CHANGED, ROOTS):
                data = b"event: message\ndata: " + orjson.dumps(event) + b"\n\n"
                await send({"type": "http.response.body", "body": data, "more_body": True})
            await self.deleted.wait()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        if method == "DELETE":
            self.deleted.set()
            await self._plain(send, 200)
            return
        message = orjson.loads(await read_body(receive))
        self.posted.append(message)
        if "method" not in message or "id" not in message:
            await self._plain(send, 202)
            return
        result = INIT_RESULT if message["method"] == "initialize" else {"tools": []}
        body = orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"g1")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    async def _plain(send: Send, status: int, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-length", b"0"), *(headers or [])],
            }
        )
        await send({"type": "http.response.body", "body": b""})


def test_the_get_stream_is_recorded_and_its_requests_answered(tmp_path: Path) -> None:
    server = GetStreamServer()
    candidate = tmp_path / "cand.cassette.json"
    with serve_app(server) as url:
        rerun_live_http(load_cassette(baseline(tmp_path)), url, candidate, timeout=20)
    recorded = load_cassette(candidate)
    from_server = [m.message.get("method") for m in recorded.messages if m.direction == "server"]
    assert "notifications/tools/list_changed" in from_server and "roots/list" in from_server
    # The server's roots/list was answered from the baseline, by a POST.
    assert ROOTS_ANSWER in server.posted
    answer = next(m for m in recorded.messages if m.direction == "client" and m.message.get("id") == "r1")
    asked = next(m for m in recorded.messages if m.direction == "server" and m.message.get("id") == "r1")
    assert answer.reply_to == asked.seq
    statuses = [(e["method"], e["status"]) for e in recorded.meta["http"]]
    assert ("GET", 200) in statuses and ("DELETE", 200) in statuses
    # The GET was opened once the session was set up (after initialized), not before.
    assert [m.get("method") for m in server.posted[:2]] == ["initialize", "notifications/initialized"]


@pytest.mark.parametrize("status", [405, 404])
def test_a_server_without_a_get_stream_is_fine(tmp_path: Path, status: int) -> None:
    server = GetStreamServer(get_status=status)
    candidate = tmp_path / "cand.cassette.json"
    with serve_app(server) as url:
        rerun_live_http(load_cassette(baseline(tmp_path)), url, candidate, timeout=20)
    recorded = load_cassette(candidate)
    assert [m.message.get("method") for m in recorded.messages if m.direction == "server"] == [None, None]
    statuses = [(e["method"], e["status"]) for e in recorded.meta["http"]]
    assert ("GET", status) in statuses

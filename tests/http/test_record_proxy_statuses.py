"""``record --url --emit-tape``: a request the upstream answers with an HTTP error and no JSON-RPC
answer of its own (:mod:`harn_mcp_mock.http.record_proxy`) is on the tape with its
``http_status``, not as a request never answered.

The upstream here refuses ``server/discover`` as server-everything does (HTTP 400, a JSON-RPC
error with a null id, since a handshake-era server has no session for it); a 2026-07-28 client
(the SDK's ``mcp.Client`` in ``auto`` mode) then falls back to ``initialize``.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import anyio
import mcp
import orjson
from mcp.server.mcpserver import MCPServer

from harn_mcp_mock.tape import load_tape
from tests.serving import server_in_thread, url_process

REFUSAL = orjson.dumps(
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad Request: No valid session ID"}}
)


def refusing_discover(inner: Any) -> Any:
    """``inner``, except that a POSTed ``server/discover`` gets HTTP 400 and :data:`REFUSAL`."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await inner(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        if orjson.loads(body).get("method") == "server/discover":
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(REFUSAL)).encode()),
            ]
            await send({"type": "http.response.start", "status": 400, "headers": headers})
            await send({"type": "http.response.body", "body": REFUSAL})
            return
        sent = False

        async def replay_body() -> Any:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await inner(scope, replay_body, send)

    return app


def upstream_app() -> Any:
    server = MCPServer("upstream")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return refusing_discover(server.streamable_http_app())


async def test_a_request_refused_with_an_http_status_is_on_the_tape_with_it(tmp_path: Path) -> None:
    cassette, tape = tmp_path / "up.cassette.json", tmp_path / "up.tape"
    with server_in_thread(upstream_app(), lifespan="on") as upstream:
        args = ["record", "--cassette", str(cassette), "--url", upstream, "--emit-tape", str(tape)]
        with url_process(args) as (proc, url):
            with anyio.fail_after(30):
                async with mcp.Client(url, mode="auto") as client:
                    assert client.protocol_version == "2025-11-25"  # the probe was refused
                    added = await client.call_tool("add", {"a": 2, "b": 3})
            assert not added.is_error
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0, proc.stderr.read() if proc.stderr else ""

    records = [r.fields for r in load_tape(tape).records if r.kind == "mcp_json_rpc"]
    [probe] = [f for f in records if f["method"] == "server/discover"]
    assert probe["http_status"] == 400 and "unanswered" not in probe, probe
    sent = [f["method"] for f in records if not f.get("notification")]
    assert sent[:2] == ["server/discover", "initialize"] and "tools/call" in sent, sent

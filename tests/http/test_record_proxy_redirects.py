"""Redirects through the recording proxy: a Location on the upstream's origin keeps the client on the proxy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
import orjson
import pytest

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.http.replay_server import redirect_paths
from harn_mcp_mock.http.server import Receive, Scope, Send, read_body
from harn_mcp_mock.replay.engine import ReplayEngine
from harn_mcp_mock.replay.session import open_engine
from harn_mcp_mock.upstream.http import upstream_relative

from .conftest import serve_app, serve_engines
from .test_record_proxy_streams import proxy
from .test_replay_server import ACCEPT, INIT

ELSEWHERE = "http://elsewhere.example/mcp"
INIT_RESULT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "moved", "version": "1"},
}


def moving_upstream(kind: str) -> Any:
    """An MCP endpoint that moved from /mcp to /v2/mcp: /mcp answers 307 with a ``kind`` Location."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = await read_body(receive)
        if scope["path"] == "/mcp":
            host = dict(scope["headers"])[b"host"].decode()
            location = {"relative": "/v2/mcp", "absolute": f"http://{host}/v2/mcp", "elsewhere": ELSEWHERE}
            headers = [(b"location", location[kind].encode()), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 307, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        message = orjson.loads(body)
        if "id" not in message:
            await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        result = INIT_RESULT if message["method"] == "initialize" else {"tools": []}
        answer = orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"s1")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})

    return app


@pytest.mark.parametrize("kind", ["relative", "absolute"])
async def test_a_redirect_on_the_upstream_is_followed_through_the_proxy_and_replayed(
    tmp_path: Path, kind: str
) -> None:
    cassette = tmp_path / "moved.cassette.json"
    tools_list = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    with serve_app(moving_upstream(kind)) as upstream, proxy(cassette, upstream) as (url, _server, _result):
        origin = url.removesuffix("/mcp")
        with anyio.fail_after(20):
            async with httpx2.AsyncClient(follow_redirects=True) as http:
                opened = await http.post(url, json=INIT, headers=ACCEPT)
                assert [r.status_code for r in opened.history] == [307]
                assert opened.history[0].headers["location"] == f"{origin}/v2/mcp"  # still the proxy
                assert str(opened.url) == f"{origin}/v2/mcp"
                assert opened.json()["result"]["serverInfo"]["name"] == "moved"
                headers = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"]}
                listed = await http.post(str(opened.url), json=tools_list, headers=headers)
                assert listed.json()["result"] == {"tools": []}
                # Only the paths the upstream redirected to are served, besides the proxy's own.
                assert (
                    await http.post(f"{origin}/other", json=tools_list, headers=headers)
                ).status_code == 404
    recorded = load_cassette(cassette)
    entries = recorded.meta["http"]
    assert [(e["method"], e["status"]) for e in entries] == [("POST", 307), ("POST", 200), ("POST", 200)]
    assert entries[0]["headers"] == {"location": "/v2/mcp"}  # origin-relative: no host in it
    # The answer pairs with the initialize that was answered (the second), not the redirected one.
    replies = {m.seq: m.reply_to for m in recorded.messages if m.direction == "server"}
    assert [entries[1]["seq"]] == [r for r in replies.values() if r in (0, 1)]

    # Replayed, the redirect sends the client to the same path on the replay server.
    engine = open_engine(cassette)
    assert redirect_paths(engine) == ["/v2/mcp"]
    with serve_engines(lambda: open_engine(cassette), also=redirect_paths(engine)) as (replay, _endpoint):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient(follow_redirects=True) as http:
                again = await http.post(replay, json=INIT, headers=ACCEPT)
                assert [r.status_code for r in again.history] == [307]
                assert str(again.url) == replay.removesuffix("/mcp") + "/v2/mcp"
                assert again.json()["result"]["serverInfo"]["name"] == "moved"


async def test_a_redirect_elsewhere_is_passed_on_unchanged(tmp_path: Path) -> None:
    cassette = tmp_path / "away.cassette.json"
    with serve_app(moving_upstream("elsewhere")) as upstream, proxy(cassette, upstream) as (url, _s, _r):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient() as http:
                moved = await http.post(url, json=INIT, headers=ACCEPT)
    assert moved.status_code == 307
    assert moved.headers["location"] == ELSEWHERE
    assert load_cassette(cassette).meta["http"][0]["headers"] == {"location": ELSEWHERE}


def test_upstream_relative() -> None:
    up = "http://127.0.0.1:8000/mcp"
    assert upstream_relative("/v2/mcp?x=1", up, up) == "/v2/mcp?x=1"
    assert upstream_relative("next", up, up) == "/next"
    assert upstream_relative("http://127.0.0.1:8000/mcp/", up, up) == "/mcp/"
    assert upstream_relative("HTTP://127.0.0.1:8000/a", up, up) == "/a"
    assert upstream_relative("http://127.0.0.1:8001/a", up, up) is None
    assert upstream_relative("https://127.0.0.1:8000/a", up, up) is None
    assert (
        upstream_relative("https://example.com/a", "https://example.com/mcp", "https://example.com:443/mcp")
        == "/a"
    )
    assert redirect_paths(ReplayEngine(load_cassette_like([]))) == []


def load_cassette_like(entries: list[Any]) -> Any:
    from harn_mcp_mock.cassette.model import Cassette

    return Cassette([], {"http": entries})

"""The recording proxy's SSE relays end with the client, and with the proxy (found by the conformance job)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.http.record_proxy import record_http
from harn_mcp_mock.http.server import HttpServer, Receive, Scope, Send
from harn_mcp_mock.options import RecordOptions

from .conftest import serve_app

EVENT = b'id: 1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}\n\n'
GET = {"accept": "text/event-stream", "mcp-session-id": "s1"}


def endless_stream(left: threading.Event) -> Any:
    """An upstream whose every answer is an SSE stream: one event, then open until the client leaves."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": EVENT, "more_body": True})
        while (await receive())["type"] != "http.disconnect":
            pass
        left.set()

    return app


@contextmanager
def proxy(
    cassette: Path, upstream: str, events: list[str] | None = None
) -> Iterator[tuple[str, HttpServer, list[Any]]]:
    """The recording proxy in a thread: (url, its server, [(cassette, proxy)] once stopped)."""
    servers: list[HttpServer] = []
    urls: list[str] = []
    result: list[Any] = []
    ready = threading.Event()

    def run() -> None:
        result.append(
            record_http(
                cassette,
                upstream,
                RecordOptions(allow_empty=True),  # these sessions are GET streams only: no client message
                on_ready=lambda url: (urls.append(url), ready.set()),
                on_server=servers.append,
                on_event=None if events is None else events.append,
            )
        )

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield urls[0], servers[0], result
    finally:
        servers[0].stop()
        thread.join(10)
        assert not thread.is_alive()


async def _first_event(response: Any) -> bytes:
    text = b""
    async for chunk in response.aiter_raw():
        text += chunk
        if b"\n\n" in text:
            break
    return text


async def test_a_client_leaving_a_stream_closes_the_upstream_stream(tmp_path: Path) -> None:
    left = threading.Event()
    with (
        serve_app(endless_stream(left)) as upstream,
        proxy(tmp_path / "c.cassette.json", upstream) as (
            url,
            _server,
            _result,
        ),
    ):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient() as http:
                async with http.stream("GET", url, headers=GET) as response:
                    assert response.status_code == 200
                    assert await _first_event(response) == EVENT
                # The client is gone: the proxy notices and lets go of the upstream stream.
            assert await anyio.to_thread.run_sync(left.wait, 15)


async def test_stopping_the_proxy_ends_open_streams_cleanly(tmp_path: Path) -> None:
    left = threading.Event()
    cassette = tmp_path / "c.cassette.json"
    with serve_app(endless_stream(left)) as upstream, proxy(cassette, upstream) as (url, server, result):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient() as http:
                async with http.stream("GET", url, headers=GET) as response:
                    lines = response.aiter_raw()
                    first = await lines.__anext__()
                    server.stop()
                    # The proxy ends the response properly (no cut-off chunked body) ...
                    rest = b"".join([chunk async for chunk in lines])
            assert (first + rest) == EVENT
            # ... lets go of the upstream, and writes the cassette with the event in it.
            assert await anyio.to_thread.run_sync(left.wait, 15)
    assert result, "record_http did not return"
    messages = load_cassette(cassette).messages
    assert [m.message.get("method") for m in messages if m.direction == "server"] == ["notifications/message"]


def broken_stream() -> Any:
    """An upstream whose SSE stream breaks off after one event (no proper end of the body)."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": EVENT, "more_body": True})
        raise RuntimeError("the upstream fell over")  # uvicorn then drops the connection

    return app


async def test_an_upstream_stream_that_breaks_off_ends_the_clients_stream(tmp_path: Path) -> None:
    events: list[str] = []
    cassette = tmp_path / "c.cassette.json"
    with serve_app(broken_stream()) as upstream, proxy(cassette, upstream, events) as (url, _server, _r):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient() as http:
                async with http.stream("GET", url, headers=GET) as response:
                    body = b"".join([chunk async for chunk in response.aiter_raw()])  # ends cleanly
    assert body == EVENT
    assert any("broke off" in e for e in events), events

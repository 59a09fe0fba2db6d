"""A notification that came on the recorded server's GET stream (sent outside any request)
replays on the replay's GET stream, at its recorded point, not on a request's stream.
Real peers: the stateful SDK server recorded through ``record --url`` (own processes)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import orjson
import pytest

from harn_mcp_mock.cassette.model import load_cassette
from tests.serving import url_process

from .conftest import ACCEPT, INIT, serve_cassette
from .test_replay_server_sessions import WAIT, counter_server, stop

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("http/test_replay_server_get_stream")

TOUCH = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "touch", "arguments": {}}}
CHANGED = "notifications/resources/list_changed"


def _messages(body: bytes) -> list[Any]:
    """The JSON-RPC messages of a JSON or SSE body."""
    if body.lstrip().startswith((b"{", b"[")):
        return [orjson.loads(body)]
    lines = body.replace(b"\r\n", b"\n").split(b"\n")
    return [orjson.loads(line[5:]) for line in lines if line.startswith(b"data:") and line[5:].strip()]


async def _next_message(lines: AsyncIterator[str]) -> Any:
    async for line in lines:
        if line.startswith("data:") and line[5:].strip():
            return orjson.loads(line[5:])
    raise AssertionError("the GET stream ended without a message")


async def touch_with_a_get_stream(url: str) -> tuple[list[Any], Any]:
    """initialize, open the GET stream, call ``touch``: (the call's messages, the GET's first)."""
    with anyio.fail_after(WAIT):
        async with httpx2.AsyncClient() as http:
            opened = await http.post(url, json=INIT, headers=ACCEPT)
            headers = {
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18",
            }
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await http.post(url, json=initialized, headers={**headers, **ACCEPT})).status_code == 202
            get_headers = {**headers, "accept": "text/event-stream"}
            async with http.stream("GET", url, headers=get_headers) as get_stream:
                assert get_stream.status_code == 200  # the stream is open: touch's notification goes there
                called = await http.post(url, json=TOUCH, headers={**headers, **ACCEPT})
                on_get = await _next_message(get_stream.aiter_lines())
            await http.delete(url, headers=headers)
    return _messages(called.content), on_get


@pytest.fixture(scope="module")
def touched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cassette = tmp_path_factory.mktemp("get-stream") / "touch.cassette.json"

    async def record() -> None:
        with counter_server() as upstream:
            with url_process(["record", "--cassette", str(cassette), "--url", upstream]) as (proc, url):
                called, on_get = await touch_with_a_get_stream(url)
                stop(proc)
        assert [m.get("method") for m in called] == [None]  # the answer only
        assert on_get["method"] == CHANGED

    anyio.run(record)
    return cassette


def test_record_url_notes_what_came_on_the_get_stream(touched: Path) -> None:
    loaded = load_cassette(touched)
    (changed,) = [m.seq for m in loaded.messages if m.method == CHANGED]
    gets = [e for e in loaded.meta["http"] if e["method"] == "GET"]
    assert [e.get("events") for e in gets] == [[changed]]


async def test_replay_sends_it_on_the_get_stream(touched: Path) -> None:
    with serve_cassette(touched) as (url, engines):
        called, on_get = await touch_with_a_get_stream(url)
    # Without the fix the notification rode the tools/call stream and the GET stream stayed quiet.
    assert [m.get("method") for m in called] == [None]
    assert called[0]["result"]["content"][0]["text"] == "touched"
    assert on_get["method"] == CHANGED
    report = [e for e in engines if e.report.hits][-1].finish()
    assert report.clean, report.to_dict()


def test_a_message_recorded_after_the_answer_is_not_lost(tmp_path: Path) -> None:
    """Recorded over stdio: the answer to ``touch``, then a list_changed. The request's SSE stream
    ends with the answer; the list_changed used to be dropped, it now goes on the GET stream."""
    from harn_mcp_mock.cassette.model import Cassette, Message, save_cassette

    result = {"content": [{"type": "text", "text": "touched"}], "isError": False}
    init_result = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"},
    }
    messages = [
        Message(0, "client", INIT),
        Message(1, "server", {"jsonrpc": "2.0", "id": 1, "result": init_result}, reply_to=0),
        Message(2, "client", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Message(3, "client", TOUCH),
        Message(4, "server", {"jsonrpc": "2.0", "id": 2, "result": result}, reply_to=3),
        Message(5, "server", {"jsonrpc": "2.0", "method": CHANGED}),
    ]
    cassette = save_cassette(Cassette(messages, {"transport": "stdio"}), tmp_path / "after.cassette.json")
    with serve_cassette(cassette, sse="always") as (url, _engines):
        called, on_get = anyio.run(touch_with_a_get_stream, url)
    assert [m.get("method") for m in called] == [None]
    assert on_get["method"] == CHANGED

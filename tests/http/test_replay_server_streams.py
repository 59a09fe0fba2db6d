"""Replay over HTTP: SSE priming events (SEP-1699) and answering in the recorded style (SSE vs JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp
import pytest

from harn_mcp_mock.cassette.model import Cassette, load_cassette
from harn_mcp_mock.http.replay_server import recorded_sse
from harn_mcp_mock.replay.engine import ReplayEngine

from .conftest import serve_engines
from .test_replay_server import ACCEPT, INIT, _scripted

CALL = {"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": {"name": "scan", "arguments": {}}}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _init(version: str) -> dict[str, Any]:
    return {**INIT, "params": {**INIT["params"], "protocolVersion": version}}


def _blocks(text: str) -> list[dict[str, str]]:
    """Each SSE event of ``text`` as its fields (``data`` may be empty)."""
    out: list[dict[str, str]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = {}
        for line in block.split("\n"):
            name, sep, value = line.partition(":")
            if sep:
                fields[name] = value.removeprefix(" ")
        if fields:
            out.append(fields)
    return out


async def _first_block(response: Any) -> dict[str, str]:
    """Read ``response`` (a stream) up to its first complete SSE event."""
    text = ""
    async for chunk in response.aiter_text():
        text += chunk
        if "\n\n" in text:
            break
    return _blocks(text.split("\n\n", 1)[0] + "\n\n")[0]


async def test_a_stream_for_a_2025_11_25_client_starts_with_a_priming_event(notes_cassette: Path) -> None:
    def factory() -> ReplayEngine:
        return ReplayEngine(_scripted(notes_cassette))

    with serve_engines(factory) as (url, _endpoint):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient() as http:
                opened = await http.post(url, json=_init("2025-11-25"), headers=ACCEPT)
                assert opened.json()["result"]["protocolVersion"] == "2025-11-25"
                sid = opened.headers["mcp-session-id"]
                headers = {**ACCEPT, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
                async with http.stream("POST", url, json=CALL, headers=headers) as response:
                    assert response.headers["content-type"] == "text/event-stream"
                    priming = await _first_block(response)  # then the client drops the stream
                assert priming["data"] == "" and priming["id"].endswith("-0")
                assert set(priming) == {"id", "data"}
                # Resuming from the priming event's id replays the stream from its start.
                get = {**headers, "accept": "text/event-stream", "last-event-id": priming["id"]}
                async with http.stream("GET", url, headers=get) as resumed:
                    assert resumed.status_code == 200
                    again = await _first_block(resumed)
                assert '"notifications/message"' in again["data"]
                assert again["id"] == priming["id"].replace("-0", "-1")


@pytest.mark.parametrize("version", ["2025-06-18", None])
async def test_older_clients_get_no_priming_event(notes_cassette: Path, version: str | None) -> None:
    """Their SDKs would try to parse the empty data as JSON (the SDK servers hold it back too)."""

    def factory() -> ReplayEngine:
        return ReplayEngine(_scripted(notes_cassette))

    with serve_engines(factory) as (url, _endpoint):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient() as http:
                sid = (await http.post(url, json=_init("2025-11-25"), headers=ACCEPT)).headers[
                    "mcp-session-id"
                ]
                headers = {**ACCEPT, "mcp-session-id": sid}
                if version is not None:
                    headers["mcp-protocol-version"] = version
                async with http.stream("POST", url, json=CALL, headers=headers) as response:
                    first = await _first_block(response)
                assert '"notifications/message"' in first["data"]


async def test_the_sdk_client_takes_priming_events(notes_cassette: Path) -> None:
    def factory() -> ReplayEngine:
        return ReplayEngine(_scripted(notes_cassette))

    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async def list_roots(context: Any) -> Any:
        from mcp_types import ListRootsResult

        return ListRootsResult(roots=[])

    with serve_engines(factory, sse="always") as (url, _endpoint):
        with anyio.fail_after(20):
            async with mcp.Client(
                url, mode="legacy", logging_callback=on_log, list_roots_callback=list_roots
            ) as client:
                assert client.session.protocol_version >= "2025-11-25"  # so every stream is primed
                result = await client.session.call_tool("scan", {})
                listed = await client.session.list_tools()
    assert "1 root" in str(result.content)
    assert logs == ["scanning"]
    assert "list_notes" in {t.name for t in listed.tools}


def _with_http(cassette: Cassette, content_type: str | None) -> Cassette:
    """``cassette`` as if recorded over HTTP, every POST answered with ``content_type``."""
    entries: list[dict[str, Any]] = []
    if content_type is not None:
        for msg in cassette.messages:
            if msg.direction == "client" and isinstance(msg.message, dict) and "method" in msg.message:
                answered = "id" in msg.message
                entries.append(
                    {
                        "seq": msg.seq,
                        "method": "POST",
                        "status": 200 if answered else 202,
                        "content_type": content_type if answered else None,
                        "headers": {},
                    }
                )
    meta = {**cassette.meta, "transport": "http"}
    if entries:
        meta["http"] = entries
    return Cassette(list(cassette.messages), meta, path=None)


@pytest.mark.parametrize(
    ("recorded", "expected"),
    [
        ("text/event-stream", "text/event-stream"),
        ("application/json", "application/json"),
        (None, "application/json"),
    ],
)
async def test_lone_responses_come_back_in_the_recorded_style(
    notes_cassette: Path, recorded: str | None, expected: str
) -> None:
    cassette = _with_http(load_cassette(notes_cassette), recorded)

    with serve_engines(lambda: ReplayEngine(cassette)) as (url, _endpoint):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient() as http:
                opened = await http.post(url, json=INIT, headers=ACCEPT)
                assert opened.headers["content-type"] == expected
                headers = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"]}
                listed = await http.post(url, json=LIST, headers=headers)
                assert listed.headers["content-type"] == expected
                assert '"list_notes"' in listed.text
                json_only = await http.post(url, json=LIST, headers={**headers, "accept": "application/json"})
                assert json_only.headers["content-type"] == "application/json"  # what the client takes


def test_recorded_sse_needs_one_style_throughout() -> None:
    def post(content_type: str | None, status: int = 200) -> dict[str, Any]:
        return {"method": "POST", "status": status, "content_type": content_type}

    sse, json = "text/event-stream", "application/json"
    assert recorded_sse([post(sse), post(None, 202), {"method": "GET", "status": 200, "content_type": json}])
    assert recorded_sse([post(json), post(json)]) is False
    assert recorded_sse([post(json), post(sse)]) is None
    assert recorded_sse([post(sse, 401), post(json)]) is False  # faults do not count
    assert recorded_sse([post(sse), post(json, 202)]) is True  # nor a 202 (the Python SDK types it JSON)
    assert recorded_sse(None) is None and recorded_sse([]) is None

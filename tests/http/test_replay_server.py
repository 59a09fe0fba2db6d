"""Replay over Streamable HTTP: a cassette recorded over stdio, served to the official SDK client."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp
import orjson
import pytest
from mcp.shared.exceptions import MCPError

from harn_mcp_mock.api import replay_session
from harn_mcp_mock.cassette.model import Cassette, Message, load_cassette
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.http.guard import is_loopback
from harn_mcp_mock.http.replay_server import build_app
from harn_mcp_mock.http.server import HttpServer
from harn_mcp_mock.replay.engine import ReplayEngine

from .conftest import ACCEPT, INIT, serve_cassette, serve_engines


def _dump(result: Any) -> Any:
    return result.model_dump(mode="json", exclude_none=True)


async def _calls(session: Any) -> list[Any]:
    tools = await session.list_tools()
    return [
        sorted(t.name for t in tools.tools),
        _dump(await session.call_tool("list_notes", {})),
        _dump(await session.call_tool("read_note", {"name": "welcome"})),
        _dump(await session.call_tool("write_note", {"name": "todo", "text": "buy milk"})),
    ]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_sdk_client_gets_the_recorded_tool_results_over_http(notes_cassette: Path, mode: str) -> None:
    async with replay_session(notes_cassette) as session:
        expected = await _calls(session)
    with serve_cassette(notes_cassette) as (url, engines):
        with anyio.fail_after(20):
            async with mcp.Client(url, mode=mode) as client:  # type: ignore[arg-type]
                got = await _calls(client.session)
    assert got == expected
    assert "welcome" in str(got[1])
    session_engines = [e for e in engines if e.report.hits]
    report = session_engines[-1].finish()
    assert report.misses == []
    assert report.unused == []


async def test_a_miss_is_the_cassette_miss_error(notes_cassette: Path) -> None:
    with serve_cassette(notes_cassette) as (url, _engines):
        with anyio.fail_after(20):
            async with mcp.Client(url, mode="legacy") as client:
                with pytest.raises(MCPError) as caught:
                    await client.session.call_tool("read_note", {"name": "nope"})
    assert caught.value.error.code == -32050
    assert "no recorded interaction matches" in caught.value.error.message


async def test_session_ids_are_issued_fresh_and_enforced(notes_cassette: Path) -> None:
    tools_list = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    with serve_cassette(notes_cassette) as (url, engines):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient() as http:
                first = await http.post(url, json=INIT, headers=ACCEPT)
                second = await http.post(url, json=INIT, headers=ACCEPT)
                assert first.status_code == second.status_code == 200
                sid = first.headers["mcp-session-id"]
                assert len(sid) == 32 and sid != second.headers["mcp-session-id"]
                assert first.json()["result"]["serverInfo"]["name"] == "notes"
                assert len(engines) == 2  # one fresh engine per session

                missing = await http.post(url, json=tools_list, headers=ACCEPT)
                assert missing.status_code == 400
                unknown = await http.post(url, json=tools_list, headers={**ACCEPT, "mcp-session-id": "nope"})
                assert unknown.status_code == 404

                with_id = {**ACCEPT, "mcp-session-id": sid}
                note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                assert (await http.post(url, json=note, headers=with_id)).status_code == 202
                listed = await http.post(url, json=tools_list, headers=with_id)
                assert listed.status_code == 200
                assert listed.headers["content-type"] == "application/json"
                assert listed.headers["mcp-session-id"] == sid
                assert {t["name"] for t in listed.json()["result"]["tools"]} >= {"list_notes"}

                assert (await http.delete(url, headers=with_id)).status_code == 200
                assert (await http.post(url, json=tools_list, headers=with_id)).status_code == 404
                assert (await http.delete(url, headers=with_id)).status_code == 404

                bad = await http.post(url, content=b"{not json", headers=with_id)
                assert bad.status_code == 400
                assert bad.json()["error"]["code"] == -32700
                assert (await http.put(url, content=b"", headers=with_id)).status_code == 405
                refused = await http.post(url, json=INIT, headers={"accept": "text/html"})
                assert refused.status_code == 406


def _scripted(notes: Path) -> Cassette:
    """The notes cassette plus one tools/call that logs, asks the client for roots, then answers."""
    base = load_cassette(notes)
    seq = max(m.seq for m in base.messages) + 1
    call = {"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": {"name": "scan", "arguments": {}}}
    log = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "scanning"},
    }
    roots = {"jsonrpc": "2.0", "id": 0, "method": "roots/list"}
    answer = {"jsonrpc": "2.0", "id": 0, "result": {"roots": [{"uri": "file:///tmp/", "name": "tmp"}]}}
    done = {"jsonrpc": "2.0", "id": 77, "result": {"content": [{"type": "text", "text": "1 root"}]}}
    extra = [
        Message(seq, "client", call),
        Message(seq + 1, "server", log),
        Message(seq + 2, "server", roots),
        Message(seq + 3, "client", answer, reply_to=seq + 2),
        Message(seq + 4, "server", done, reply_to=seq, latency_ms=30.0),
    ]
    return Cassette([*base.messages, *extra], dict(base.meta), path=None)


async def test_notifications_and_server_requests_go_out_on_the_post_sse_stream(notes_cassette: Path) -> None:
    engines: list[ReplayEngine] = []

    def factory() -> ReplayEngine:
        engine = ReplayEngine(_scripted(notes_cassette), latency_scale=1.0)
        engines.append(engine)
        return engine

    logs: list[Any] = []
    asked: list[bool] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async def list_roots(context: Any) -> Any:
        from mcp_types import ListRootsResult, Root

        asked.append(True)
        return ListRootsResult(roots=[Root(uri="file:///tmp/", name="tmp")])  # type: ignore[arg-type]

    with serve_engines(factory) as (url, _endpoint):
        with anyio.fail_after(20):
            async with mcp.Client(
                url, mode="legacy", logging_callback=on_log, list_roots_callback=list_roots
            ) as client:
                result = await client.session.call_tool("scan", {})
    assert _dump(result)["content"][0]["text"] == "1 root"
    assert logs == ["scanning"]
    assert asked == [True]
    report = engines[-1].finish()
    assert report.misses == []
    assert report.answer_mismatches == []


async def test_raw_sse_stream_and_json_only_client(notes_cassette: Path) -> None:
    def factory() -> ReplayEngine:
        return ReplayEngine(_scripted(notes_cassette))

    call = {"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": {"name": "scan", "arguments": {}}}
    with serve_engines(factory) as (url, _endpoint):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient() as http:
                sid = (await http.post(url, json=INIT, headers=ACCEPT)).headers["mcp-session-id"]
                headers = {**ACCEPT, "mcp-session-id": sid}
                events: list[str] = []
                async with http.stream("POST", url, json=call, headers=headers) as response:
                    assert response.headers["content-type"] == "text/event-stream"
                    async for line in response.aiter_lines():
                        if line.startswith("data: "):
                            events.append(line)
                            if '"roots/list"' in line:
                                answer = {"jsonrpc": "2.0", "id": 0, "result": {"roots": []}}
                                posted = await http.post(url, json=answer, headers=headers)
                                assert posted.status_code == 202
                assert [("notifications/message" in e, "roots/list" in e, '"c1"' in e) for e in events] == [
                    (True, False, False),
                    (False, True, False),
                    (False, False, True),
                ]
                # A JSON-only client without a GET stream cannot be asked for roots: a clear error.
                json_only = {**headers, "accept": "application/json"}
                plain = await http.post(url, json={**call, "id": "c2"}, headers=json_only)
                assert plain.status_code == 200
                assert plain.headers["content-type"] == "application/json"
                assert plain.json()["id"] == "c2"
                assert "server-to-client roots/list" in plain.json()["error"]["message"]
                # With the GET stream open, the log and the roots/list request go there instead.
                async with http.stream(
                    "GET", url, headers={**headers, "accept": "text/event-stream"}
                ) as stream:
                    assert stream.status_code == 200
                    lines = stream.aiter_lines()
                    async with anyio.create_task_group() as tg:
                        replies: list[Any] = []

                        async def post_call() -> None:
                            replies.append(await http.post(url, json={**call, "id": "c3"}, headers=json_only))

                        tg.start_soon(post_call)
                        seen: list[str] = []
                        async for line in lines:
                            if line.startswith("data: "):
                                seen.append(line)
                                if '"roots/list"' in line:
                                    asked_id = orjson.loads(line.removeprefix("data: "))["id"]
                                    answer = {"jsonrpc": "2.0", "id": asked_id, "result": {"roots": []}}
                                    assert (
                                        await http.post(url, json=answer, headers=headers)
                                    ).status_code == 202
                                    break
                    assert replies[0].json()["id"] == "c3"
                    assert "1 root" in replies[0].text
                    assert "notifications/message" in seen[0]
                    second = await http.get(url, headers={**headers, "accept": "text/event-stream"})
                    assert second.status_code == 409


async def test_sse_always_streams_even_a_lone_response(notes_cassette: Path) -> None:
    with serve_cassette(notes_cassette, sse="always") as (url, _engines):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient() as http:
                response = await http.post(url, json=INIT, headers=ACCEPT)
                assert response.headers["content-type"] == "text/event-stream"
                assert '"serverInfo"' in response.text
            async with mcp.Client(url, mode="legacy") as client:
                assert "welcome" in str(_dump(await client.session.call_tool("list_notes", {})))


def test_non_loopback_hosts_are_refused_unless_allowed() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.com")
    app, _endpoint = build_app(lambda: ReplayEngine(Cassette([])))
    with pytest.raises(UsageError, match="loopback"):
        HttpServer(app, host="0.0.0.0")
    server = HttpServer(app, host="0.0.0.0", allow_remote=True)
    assert server.url.startswith("http://0.0.0.0:")
    server.socket.close()


async def test_run_replay_http_merges_the_sessions_reports(notes_cassette: Path, tmp_path: Path) -> None:
    import threading

    from harn_mcp_mock.http.run import run_replay_http

    servers: list[HttpServer] = []
    urls: list[str] = []
    reports: list[Any] = []
    ready = threading.Event()
    report_file = tmp_path / "report.json"

    def run() -> None:
        reports.append(
            run_replay_http(
                notes_cassette,
                report_path=report_file,
                on_ready=lambda url: (urls.append(url), ready.set()),
                on_server=servers.append,
            )
        )

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        with anyio.fail_after(20):
            async with mcp.Client(urls[0], mode="auto") as client:  # discover (session-less), then a session
                await _calls(client.session)
    finally:
        servers[0].stop()
        thread.join(10)
    report = reports[0]
    assert report.misses == [] and report.unused == [] and report.clean
    assert report.hits >= 5
    assert orjson.loads(report_file.read_bytes())["ok"] is True


def _events(text: str) -> list[tuple[str, Any]]:
    """(id, data) of each SSE event in ``text``."""
    out: list[tuple[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.split("\n") if ": " in line)
        if "data" in fields:
            out.append((fields.get("id", ""), orjson.loads(fields["data"])))
    return out


async def _read_events(lines: Any, until: Callable[[Any], bool]) -> list[tuple[str, Any]]:
    """Read SSE events from ``lines`` (one ``aiter_lines()``) until one satisfies ``until`` (or the end)."""
    events: list[tuple[str, Any]] = []
    event_id = ""
    async for line in lines:
        if line.startswith("id: "):
            event_id = line.removeprefix("id: ")
        elif line.startswith("data: "):
            events.append((event_id, orjson.loads(line.removeprefix("data: "))))
            if until(events[-1][1]):
                break
    return events


async def test_last_event_id_resumes_a_dropped_post_stream(notes_cassette: Path) -> None:
    def factory() -> ReplayEngine:
        return ReplayEngine(_scripted(notes_cassette))

    call = {"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": {"name": "scan", "arguments": {}}}
    with serve_engines(factory) as (url, _endpoint):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient() as http:
                sid = (await http.post(url, json=INIT, headers=ACCEPT)).headers["mcp-session-id"]
                headers = {**ACCEPT, "mcp-session-id": sid}
                get = {**headers, "accept": "text/event-stream"}
                async with http.stream("POST", url, json=call, headers=headers) as response:
                    first = await _read_events(
                        response.aiter_lines(), lambda _m: True
                    )  # then the client drops it
                assert first[0][1]["method"] == "notifications/message"
                cursor = first[0][0]
                assert cursor.endswith("-1")
                # Resume after the log: the roots/list request again, and, once answered, the result.
                async with http.stream("GET", url, headers={**get, "last-event-id": cursor}) as resumed:
                    assert resumed.status_code == 200
                    assert resumed.headers["mcp-session-id"] == sid
                    lines = resumed.aiter_lines()
                    asked = await _read_events(lines, lambda m: m.get("method") == "roots/list")
                    assert [e[0] for e in asked] == [cursor.replace("-1", "-2")]
                    answer = {"jsonrpc": "2.0", "id": asked[0][1]["id"], "result": {"roots": []}}
                    assert (await http.post(url, json=answer, headers=headers)).status_code == 202
                    rest = await _read_events(lines, lambda _m: False)
                assert [(m.get("id"), "1 root" in str(m)) for _i, m in rest] == [("c1", True)]

                # Delivered to its end: nothing to resume. Unknown or malformed: the same clear 400.
                for bad in (cursor, "99-1", "garbage", cursor.replace("-1", "-9")):
                    refused = await http.get(url, headers={**get, "last-event-id": bad})
                    assert refused.status_code == 400, bad
                    assert "Last-Event-ID" in refused.json()["error"]["message"]


async def test_last_event_id_resumes_the_get_stream(notes_cassette: Path) -> None:
    def factory() -> ReplayEngine:
        return ReplayEngine(_scripted(notes_cassette))

    call = {"jsonrpc": "2.0", "id": "c3", "method": "tools/call", "params": {"name": "scan", "arguments": {}}}
    with serve_engines(factory) as (url, _endpoint):
        with anyio.fail_after(20):
            async with httpx2.AsyncClient() as http:
                sid = (await http.post(url, json=INIT, headers=ACCEPT)).headers["mcp-session-id"]
                headers = {**ACCEPT, "mcp-session-id": sid}
                get = {**headers, "accept": "text/event-stream"}
                json_only = {**headers, "accept": "application/json"}
                replies: list[Any] = []
                async with anyio.create_task_group() as tg:
                    async with http.stream("GET", url, headers=get) as stream:

                        async def post_call() -> None:
                            replies.append(await http.post(url, json=call, headers=json_only))

                        tg.start_soon(post_call)
                        first = await _read_events(
                            stream.aiter_lines(), lambda _m: True
                        )  # the log; then drop
                    assert first[0][1]["method"] == "notifications/message"
                    async with http.stream(
                        "GET", url, headers={**get, "last-event-id": first[0][0]}
                    ) as again:
                        asked = await _read_events(
                            again.aiter_lines(), lambda m: m.get("method") == "roots/list"
                        )
                        answer = {"jsonrpc": "2.0", "id": asked[-1][1]["id"], "result": {"roots": []}}
                        assert (await http.post(url, json=answer, headers=headers)).status_code == 202
                        assert len(asked) == 1
                assert replies[0].json()["id"] == "c3" and "1 root" in replies[0].text


def test_responses_are_not_held_back_by_nagle() -> None:
    """The listening socket says TCP, so asyncio sets TCP_NODELAY on each accepted connection: no
    ~40 ms delayed-ACK stall between a response's headers and body (bench_http.py measures the
    latency; a test only checks the cause, never the clock)."""
    import socket

    server = HttpServer(object())
    try:
        assert server.socket.proto == socket.IPPROTO_TCP
    finally:
        server.socket.close()

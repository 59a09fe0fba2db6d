"""Record a real SDK Streamable HTTP server through the proxy, then replay over stdio and HTTP."""

from __future__ import annotations

import random
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp
import orjson
import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.mcpserver import Context, MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.http.record_proxy import record_http
from harn_mcp_mock.http.server import HttpServer
from harn_mcp_mock.options import LiveTarget, RecordOptions
from harn_mcp_mock.upstream.http import SseSplitter, parse_header_option
from tests.serving import server_in_thread

from .conftest import serve_cassette

TOKEN = "sk-live-0123456789abcdefSECRET"


def bearer_guarded(inner: ASGIApp) -> ASGIApp:
    """``inner`` behind a bearer check: 401 unless ``Authorization: Bearer TOKEN``."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {TOKEN}".encode():
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        await inner(scope, receive, send)

    return guarded


def upstream_app() -> Any:
    server = MCPServer("upstream")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    async def shout(text: str, ctx: Context) -> str:
        """Log, then shout."""
        await ctx.info(f"shouting {text}")
        return text.upper()

    return bearer_guarded(server.streamable_http_app())


@contextmanager
def serve_upstream() -> Iterator[str]:
    with serve_app_lifespan(upstream_app()) as url:
        yield url


def serve_app_lifespan(app: Any) -> AbstractContextManager[str]:
    """Run ``app`` with its lifespan (the MCP SDK's session manager) in a thread; yields the URL."""
    return server_in_thread(app, lifespan="on")


@contextmanager
def recording(
    cassette: Path, upstream: str, headers: list[str], events: list[str] | None = None
) -> Iterator[tuple[str, list[Any]]]:
    """The recording proxy in a thread; on exit it stops, and the result holds (cassette, proxy)."""
    servers: list[HttpServer] = []
    urls: list[str] = []
    result: list[Any] = []
    ready = threading.Event()

    def run() -> None:
        result.append(
            record_http(
                cassette,
                LiveTarget(url=upstream, headers=headers),
                RecordOptions(),
                on_ready=lambda url: (urls.append(url), ready.set()),
                on_server=servers.append,
                on_event=events.append if events is not None else None,
            )
        )

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield urls[0], result
    finally:
        servers[0].stop()
        thread.join(10)
        assert not thread.is_alive()


async def _session(client: mcp.Client) -> list[Any]:
    tools = await client.session.list_tools()
    added = await client.session.call_tool("add", {"a": 2, "b": 3})
    shouted = await client.session.call_tool("shout", {"text": "hi"})
    return [
        sorted(t.name for t in tools.tools),
        added.model_dump(mode="json", exclude_none=True),
        shouted.model_dump(mode="json", exclude_none=True),
    ]


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # ctx.info (logging)
async def test_record_an_sdk_http_server_then_replay_over_stdio_and_http(tmp_path: Path) -> None:
    cassette = tmp_path / "up.cassette.json"
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    with (
        serve_upstream() as upstream,
        recording(cassette, upstream, [f"Authorization:Bearer {TOKEN}"]) as (
            url,
            result,
        ),
    ):
        with anyio.fail_after(30):
            async with mcp.Client(url, mode="legacy", logging_callback=on_log) as client:
                live = await _session(client)
    recorded, proxy = result[0]
    assert live[0] == ["add", "shout"]
    assert "5" in str(live[1]) and "HI" in str(live[2])
    assert logs == ["shouting hi"]

    text = cassette.read_text()
    assert TOKEN not in text
    assert recorded.meta["transport"] == "http"
    methods = [m.method for m in recorded.messages if m.method]
    assert methods[:2] == ["initialize", "notifications/initialized"]
    assert "notifications/message" in methods  # the log arrived on the POST's SSE stream
    assert {"tools/list", "tools/call"} <= set(methods)
    statuses = [(e["method"], e.get("status")) for e in proxy.exchanges]
    assert ("DELETE", 200) in statuses and ("POST", 202) in statuses
    assert all(TOKEN not in str(e) for e in proxy.exchanges)
    assert any(
        e["request_headers"].get("authorization", "") == "Bearer [REDACTED:1]" for e in proxy.exchanges
    )

    # Over stdio: the CLI's replay of the HTTP cassette.
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "harn_mcp_mock", "replay", "--cassette", str(cassette)]
    )
    replay_logs: list[Any] = []

    async def on_replay_log(params: Any) -> None:
        replay_logs.append(params.data)

    with anyio.fail_after(30):
        async with mcp.Client(stdio_client(params), mode="legacy", logging_callback=on_replay_log) as client:  # type: ignore[arg-type]
            assert await _session(client) == live
    assert replay_logs == logs

    # Over HTTP again.
    with serve_cassette(cassette) as (replay_url, engines):
        with anyio.fail_after(30):
            async with mcp.Client(replay_url, mode="legacy") as client:
                assert await _session(client) == live
    report = [e for e in engines if e.report.hits][-1].finish()
    assert report.misses == [] and report.unused == []
    assert load_cassette(cassette).meta["exit"]["reason"] == "proxy-stopped"


async def test_http_errors_are_passed_through_and_logged(tmp_path: Path) -> None:
    cassette = tmp_path / "denied.cassette.json"
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "authorization": "Bearer wrong-token-value-123456",
    }
    with serve_upstream() as upstream, recording(cassette, upstream, []) as (url, result):
        with anyio.fail_after(30):
            async with httpx2.AsyncClient() as http:
                denied = await http.post(url, json=init, headers=headers)
                assert denied.status_code == 401
                unknown = await http.post(
                    url,
                    json=init,
                    headers={**headers, "authorization": f"Bearer {TOKEN}", "mcp-session-id": "nope"},
                )
                assert unknown.status_code in (400, 404)
    recorded, proxy = result[0]
    assert [e["status"] for e in proxy.exchanges] == [401, unknown.status_code]
    assert "wrong-token-value" not in str(proxy.exchanges) and TOKEN not in cassette.read_text()
    # Both requests are recorded; the 404's JSON-RPC error body (id null) is recorded as sent.
    assert [(m.direction, m.method) for m in recorded.messages] == [
        ("client", "initialize"),
        ("client", "initialize"),
        ("server", None),
    ]
    assert recorded.messages[2].message["error"]["code"] < 0


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("problem", ["refused", "tls"])
async def test_an_unreachable_upstream_is_a_clear_502(tmp_path: Path, problem: str) -> None:
    init = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {}}
    with serve_upstream() as plain_upstream:
        if problem == "refused":
            upstream = f"http://127.0.0.1:{_closed_port()}/mcp"
        else:
            upstream = plain_upstream.replace("http://", "https://")  # TLS to a plain-HTTP port
        events: list[str] = []
        with recording(tmp_path / "x.cassette.json", upstream, [], events) as (url, _result):
            with anyio.fail_after(30):
                async with httpx2.AsyncClient() as http:
                    answer = await http.post(url, json=init, headers={"accept": "application/json"})
                with pytest.raises(MCPErrorOrGroup):
                    async with mcp.Client(url, mode="legacy"):
                        pass
    assert answer.status_code == 502
    error = answer.json()["error"]
    assert answer.json()["id"] == 7
    assert error["message"].startswith("harn-mcp-mock record: cannot reach the upstream server ")
    # stderr gets it once, after the CLI's own "harn mcp mock record: " (it said the name twice)
    assert events[0] == error["message"].removeprefix("harn-mcp-mock record: ")
    assert (
        ("Connect" in error["message"])
        if problem == "refused"
        else ("TLS" in error["message"] or "SSL" in error["message"])
    )


MCPErrorOrGroup = (Exception, BaseExceptionGroup)


def test_sse_splitter_and_header_option() -> None:
    splitter = SseSplitter()
    assert splitter.feed(b'event: message\r\nid: 1\r\ndata: {"a"') == []
    assert splitter.feed(b":1}\r\n\r\ndata:\n\ndata: x\ndata: y\n\n") == [b'{"a":1}', b"", b"x\ny"]
    assert parse_header_option("Authorization: Bearer x:y") == ("Authorization", "Bearer x:y")
    with pytest.raises(UsageError) as refused:
        parse_header_option("X-Key=nocolon-s3cret")
    assert "s3cret" not in str(refused.value)  # a header value is never echoed


def test_sse_splitter_gives_the_same_events_however_the_stream_is_cut() -> None:
    stream = (
        b'event: message\r\nid: 1\r\ndata: {"a":1}\r\n\r\n: comment\n\ndata:\n\n'
        b"data: x\ndata: y\n\nid: 2\r\ndata: " + b"z" * 5000 + b"\r\n\r\n\n\ndata: end\n\n"
    )
    whole = [b'{"a":1}', b"", b"x\ny", b"z" * 5000, b"end"]
    assert SseSplitter().feed(stream) == whole
    cuts = random.Random(12)
    for _ in range(200):  # cut anywhere: inside "\r\n", between the two line ends of a blank line...
        splitter, events, at = SseSplitter(), [], 0
        while at < len(stream):
            step = cuts.choice([1, 2, 3, cuts.randrange(1, 64), cuts.randrange(1, 6000)])
            events += splitter.feed(stream[at : at + step])
            at += step
        assert events == whole
    one_byte = SseSplitter()
    assert [e for i in range(len(stream)) for e in one_byte.feed(stream[i : i + 1])] == whole


async def _sdk_error(url: str) -> BaseException:
    try:
        with anyio.fail_after(30):
            async with mcp.Client(url, mode="legacy"):
                pass
    except BaseException as exc:  # the SDK wraps HTTP errors in groups
        return exc
    raise AssertionError("the client connected")


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


async def test_a_recorded_401_replays_over_http_as_a_401(tmp_path: Path) -> None:
    import jsonschema

    cassette = tmp_path / "denied.cassette.json"
    with serve_upstream() as upstream, recording(cassette, upstream, []) as (url, _result):
        live_error = await _sdk_error(url)  # no token: the upstream answers 401
    recorded = load_cassette(cassette)
    entries = recorded.meta["http"]
    assert entries[0]["status"] == 401 and entries[0]["method"] == "POST"
    assert recorded.messages[entries[0]["seq"]].method == "initialize"
    schema = orjson.loads((Path(__file__).parents[2] / "harn_mcp_mock/cassette/schema.json").read_bytes())
    jsonschema.validate(orjson.loads(cassette.read_bytes()), schema)

    with serve_cassette(cassette) as (replay_url, _engines):
        replay_error = await _sdk_error(replay_url)
        async with httpx2.AsyncClient() as http:
            raw = await http.post(
                replay_url,
                json=recorded.messages[0].message,
                headers={"accept": "application/json, text/event-stream"},
            )
    assert raw.status_code == 401 and "mcp-session-id" not in raw.headers

    def seen(exc: BaseException) -> list[str]:
        return [repr(leaf) for leaf in _leaves(exc)]

    # The SDK turns the 401 into "Server returned an error response": the same live and replayed.
    assert seen(live_error) == seen(replay_error)
    assert "error response" in seen(replay_error)[0]


async def test_recorded_429_with_retry_after_then_success(tmp_path: Path) -> None:
    """The n-th matching request gets the n-th recorded outcome; the engine answers the rest."""
    from harn_mcp_mock.cassette.model import Cassette, Message, save_cassette

    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    result = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"},
    }
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {}}}
    messages = [
        Message(0, "client", init),
        Message(1, "server", {"jsonrpc": "2.0", "id": 1, "result": result}, reply_to=0, latency_ms=1.0),
        Message(2, "client", call),
        Message(3, "client", call),
        Message(
            4, "server", {"jsonrpc": "2.0", "id": 2, "result": {"content": []}}, reply_to=3, latency_ms=1.0
        ),
    ]
    http = [
        {"seq": 0, "method": "POST", "status": 200, "content_type": "application/json", "headers": {}},
        {"seq": 2, "method": "POST", "status": 429, "content_type": None, "headers": {"retry-after": "3"}},
        {"seq": 3, "method": "POST", "status": 200, "content_type": "application/json", "headers": {}},
        {"seq": None, "method": "GET", "status": 405, "content_type": None, "headers": {}},
    ]
    path = save_cassette(
        Cassette(messages, {"transport": "http", "http": http}), tmp_path / "r.cassette.json"
    )
    assert load_cassette(path).meta["http"] == http
    accept = {"accept": "application/json, text/event-stream"}
    with serve_cassette(path) as (url, engines):
        async with httpx2.AsyncClient() as client:
            opened = await client.post(url, json=init, headers=accept)
            assert opened.status_code == 200
            with_id = {**accept, "mcp-session-id": opened.headers["mcp-session-id"]}
            limited = await client.post(url, json=call, headers=with_id)
            assert limited.status_code == 429 and limited.headers["retry-after"] == "3"
            answered = await client.post(url, json=call, headers=with_id)
            assert answered.status_code == 200 and answered.json()["result"] == {"content": []}
            assert (
                await client.get(url, headers={**with_id, "accept": "text/event-stream"})
            ).status_code == 405
    report = engines[-1].finish()
    assert report.unused == [] and report.misses == []


def test_a_malformed_http_list_is_a_clear_format_error(tmp_path: Path) -> None:
    from harn_mcp_mock.cassette.model import Cassette, save_cassette
    from harn_mcp_mock.errors import CassetteFormatError

    for bad, where in (
        ({"seq": 0, "method": "POST", "status": 99}, "http[0].status"),
        ({"seq": 0, "method": "PUT", "status": 401}, "http[0].method"),
        ({"seq": "0", "method": "POST", "status": 401}, "http[0].seq"),
        ({"seq": 0, "method": "POST", "status": 401, "extra": 1}, "http[0].extra"),
        ({"seq": None, "method": "GET", "status": 200, "events": ["7"]}, "http[0].events"),
    ):
        path = save_cassette(Cassette([], {"http": [bad]}), tmp_path / "bad.cassette.json")
        with pytest.raises(CassetteFormatError) as caught:
            load_cassette(path)
        assert where in str(caught.value)


LATE = "l4te-" + "".join("abcdefghjkmnpqrstuvwxyz23456789"[(i * 11 + 5) % 31] for i in range(14))


def telling_app() -> Any:
    """An SDK Streamable HTTP server behind the bearer check whose answers carry secrets."""
    server = MCPServer("teller")

    @server.tool()
    def whoami() -> str:
        """Say who is calling."""
        return f"token is {TOKEN}"

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    def login(password: str) -> str:
        """Log in."""
        return "ok"

    return bearer_guarded(server.streamable_http_app())


async def test_record_url_emit_tape_tapes_every_exchange_redacted_as_the_cassette(tmp_path: Path) -> None:
    from tests.serving import url_process

    cassette, tape = tmp_path / "up.cassette.json", tmp_path / "up.tape"
    with serve_app_lifespan(telling_app()) as upstream:
        args = ["record", "--cassette", str(cassette), "--url", upstream, "--emit-tape", str(tape)]
        with url_process([*args, "--header", f"Authorization:Bearer {TOKEN}"]) as (proc, url):
            with anyio.fail_after(30):
                async with mcp.Client(url, mode="legacy") as client:
                    told = await client.session.call_tool("whoami", {})
                    await client.session.call_tool("echo", {"text": f"see {LATE}"})
                    await client.session.call_tool("login", {"password": LATE})  # tells LATE is a secret
            assert TOKEN in str(told.content)  # the client got the live answer
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0, proc.stderr.read() if proc.stderr else ""
    _check_tape(tmp_path, cassette, tape)


def _check_tape(tmp_path: Path, cassette: Path, tape: Path) -> None:
    """The tape verifies, holds the exchanges in order as redacted in the cassette, and no secret."""
    from harn_mcp_mock.store import digest
    from harn_mcp_mock.tape import load_tape

    records = [r for r in load_tape(tape).records if not r.fields.get("notification")]
    exchanges = []
    for rec in records:  # every payload checked against its digest by the reader, and here
        request, response = rec.payload("request"), rec.payload("response")
        assert (rec.fields["request_digest"], rec.fields["response_digest"]) == (
            digest(request),
            digest(response),
        )
        exchanges.append((orjson.loads(request), orjson.loads(response)))
    calls = [(req["params"]["name"]) for req, _ in exchanges if req["method"] == "tools/call"]
    assert exchanges[0][0]["method"] == "initialize" and calls == ["whoami", "echo", "login"]
    recorded = load_cassette(cassette).messages
    requests = [m.message for m in recorded if m.direction == "client" and m.kind == "request"]
    assert [req for req, _ in exchanges] == requests  # in order, redacted as in the cassette
    answers = {
        m.message["id"]: m.message for m in recorded if m.direction == "server" and m.kind == "response"
    }
    assert [resp for _, resp in exchanges] == [answers[req["id"]] for req, _ in exchanges]
    assert "token is [REDACTED:" in str(exchanges[calls_at(exchanges, "whoami")][1]["result"])
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes() and LATE.encode() not in path.read_bytes(), path


def calls_at(exchanges: list[tuple[Any, Any]], tool: str) -> int:
    return next(i for i, (req, _) in enumerate(exchanges) if (req.get("params") or {}).get("name") == tool)


async def test_show_counts_the_redactions_the_cassette_holds_not_the_headers_it_never_kept(
    tmp_path: Path,
) -> None:
    """Every request carried the secret --header to the upstream; the proxy redacts those headers
    in memory (they are never written) and counted each as a finding: `show` said secret-key=20
    for a cassette holding a handful of placeholders."""
    import re

    from harn_mcp_mock.cassette.summary import render_summary, summarise

    server = MCPServer("echoes")

    @server.tool()
    def echo(text: str) -> str:
        """Say it back."""
        return text

    cassette = tmp_path / "echo.cassette.json"
    with (
        serve_app_lifespan(bearer_guarded(server.streamable_http_app())) as upstream,
        recording(cassette, upstream, [f"Authorization:Bearer {TOKEN}"]) as (url, result),
    ):
        with anyio.fail_after(30):
            async with mcp.Client(url, mode="legacy") as client:
                await client.session.list_tools()
                echoed = await client.session.call_tool("echo", {"text": f"the key is {TOKEN}"})
                await client.session.call_tool("echo", {"text": "nothing secret"})
    assert TOKEN in str(echoed.content)  # the client saw the real answer
    recorded, proxy = result[0]
    assert len(proxy.exchanges) >= 6 and all(TOKEN not in str(e) for e in proxy.exchanges)

    text = cassette.read_text()
    assert TOKEN not in text
    placeholders = len(re.findall(r"\[REDACTED:\d+\]", text))
    findings = recorded.meta["redaction"]["findings"]
    assert placeholders >= 3  # the --header in meta.command, the request, the answer
    assert sum(findings.values()) == placeholders, findings
    summary = summarise(load_cassette(cassette))
    assert summary["redaction"]["findings"] == findings
    found = ", ".join(f"{rule}={n}" for rule, n in findings.items())
    assert f"... ({found})" in render_summary(summary)

"""The HTTP surfaces' guard: Origin and Host (DNS rebinding), the body limit, bounded sessions.

Every check goes through real HTTP requests to a real server on port 0 (replay and the record
proxy) or through the protocol app; session expiry runs on a paused clock.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp
import orjson
import pytest
from starlette.testclient import TestClient

from harn_mcp_mock.clock import PausedClock
from harn_mcp_mock.errors import NothingRecordedError, UsageError
from harn_mcp_mock.http.guard import BodyTooLarge, GuardSettings, HttpGuard, SessionTable, render_jsonrpc
from harn_mcp_mock.http.record_proxy import record_http
from harn_mcp_mock.http.replay_server import build_app
from harn_mcp_mock.http.server import HttpServer
from harn_mcp_mock.jsonrpc.server import Engine
from harn_mcp_mock.options import LiveTarget
from harn_mcp_mock.replay.engine import ReplayEngine
from harn_mcp_mock.replay.session import open_engine
from harn_mcp_mock.session.open import ReportMerger
from tests.agents.harness_client import KEYS, PERMISSIONS
from tests.agents.harness_client import headers as protocol_headers

from .conftest import ACCEPT, INIT, serve_app, serve_cassette

LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _post(url: str, body: Any = INIT, **headers: str) -> httpx2.Response:
    with httpx2.Client(timeout=10) as http:
        return http.post(url, content=orjson.dumps(body), headers={**ACCEPT, **headers})


# --- Origin and Host ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        (None, 200),  # a non-browser client (the SDKs, curl) sends none
        ("http://localhost:5173", 200),
        ("http://127.0.0.1:8080", 200),
        ("http://[::1]:3000", 200),
        ("https://localhost", 200),
        ("http://evil.example", 403),
        ("http://localhost.evil.example:5173", 403),
        ("null", 403),
    ],
)
def test_replay_answers_a_foreign_origin_with_403_and_a_jsonrpc_error(
    notes_cassette: Path, origin: str | None, status: int
) -> None:
    with serve_cassette(notes_cassette) as (url, engines):
        r = _post(url, **({"origin": origin} if origin is not None else {}))
    assert r.status_code == status
    if status == 403:
        body = r.json()
        assert body["jsonrpc"] == "2.0" and body["id"] is None
        assert "Origin" in body["error"]["message"] and "--allow-origin" in body["error"]["message"]
        assert engines == []  # refused before any session (or engine) was made


def test_allow_origin_adds_origins_and_star_allows_all(notes_cassette: Path) -> None:
    guard = GuardSettings.for_host("127.0.0.1", allow_origins=["https://app.example:8443"])
    with serve_cassette(notes_cassette, guard=guard) as (url, _engines):
        assert _post(url, origin="https://APP.example:8443").status_code == 200
        assert _post(url, origin="https://app.example").status_code == 403
    with serve_cassette(notes_cassette, guard=GuardSettings.for_host("::1", allow_origins=["*"])) as (url, _):
        assert _post(url, origin="http://evil.example").status_code == 200


def test_replay_on_loopback_answers_a_foreign_host_with_421(notes_cassette: Path) -> None:
    with serve_cassette(notes_cassette) as (url, _engines):
        port = url.split(":")[2].split("/")[0]
        assert _post(url, host=f"evil.example:{port}").status_code == 421
        assert _post(url, host=f"localhost:{port}").status_code == 200
        assert _post(url, host=f"[::1]:{port}").status_code == 200
    guard = GuardSettings.for_host("127.0.0.1", allow_hosts=["mcp.test"])
    with serve_cassette(notes_cassette, guard=guard) as (url, _engines):
        assert _post(url, host="mcp.test:80").status_code == 200
        r = _post(url, host="other.test")
    assert r.status_code == 421 and "other.test" in r.json()["error"]["message"]
    assert not GuardSettings.for_host("0.0.0.0").check_host  # a remote bind takes any Host


async def test_the_sdk_client_still_works_behind_the_guard(notes_cassette: Path) -> None:
    with serve_cassette(notes_cassette) as (url, _engines):
        with anyio.fail_after(20):
            async with mcp.Client(url, mode="legacy") as client:
                tools = await client.session.list_tools()
    assert "list_notes" in {tool.name for tool in tools.tools}


@pytest.mark.parametrize(
    ("flags", "where"),
    [
        (["--allow-origin", "evil.example"], "--allow-origin"),
        (["--max-body-bytes", "0"], "--max-body-bytes"),
        (["--max-sessions", "-1"], "--max-sessions"),
    ],
)
def test_bad_guard_flags_are_one_line_and_exit_2(notes_cassette: Path, flags: list[str], where: str) -> None:
    from harn_mcp_mock.cli.commands import replay_main

    with pytest.raises(SystemExit) as exited:
        replay_main(notes_cassette, http=True, **_kwargs(flags))
    assert exited.value.code == 2
    with pytest.raises(UsageError, match=where.lstrip("-").split("-")[0]):
        GuardSettings.for_host("127.0.0.1", **_settings(flags))


def _kwargs(flags: list[str]) -> dict[str, Any]:
    name, value = flags[0].lstrip("-").replace("-", "_"), flags[1]
    return {name: [value] if name == "allow_origin" else int(value)}


def _settings(flags: list[str]) -> dict[str, Any]:
    name, value = flags[0].lstrip("-").replace("-", "_"), flags[1]
    return {"allow_origins": [value]} if name == "allow_origin" else {name: int(value)}


def test_guard_flags_without_http_are_a_usage_error(
    notes_cassette: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harn_mcp_mock.cli.commands import replay_main

    with pytest.raises(SystemExit) as exited:
        replay_main(notes_cassette, live=LiveTarget(["true"]), max_sessions=5)
    assert exited.value.code == 2
    assert "--max-sessions applies to --http only" in capsys.readouterr().err


# --- the body limit ----------------------------------------------------------------------------


def test_a_declared_length_over_the_limit_gets_413_without_reading(notes_cassette: Path) -> None:
    guard = GuardSettings(max_body_bytes=1024)
    with serve_cassette(notes_cassette, guard=guard) as (url, engines):
        r = _post(url, {**INIT, "pad": "x" * 2000})
        assert r.status_code == 413
        assert r.json()["error"]["message"] == "Payload Too Large: the body exceeds 1024 bytes"
        assert _post(url).status_code == 200  # under the limit: served
    assert len(engines) == 1


def test_a_chunked_body_gets_413_once_its_running_total_passes_the_limit(notes_cassette: Path) -> None:
    guard = GuardSettings(max_body_bytes=1000)
    body = orjson.dumps({**INIT, "pad": "x" * 1500})

    def chunks() -> Iterator[bytes]:  # no Content-Length: Transfer-Encoding: chunked
        for start in range(0, len(body), 400):
            yield body[start : start + 400]

    with serve_cassette(notes_cassette, guard=guard) as (url, engines), httpx2.Client(timeout=10) as http:
        r = http.post(url, content=chunks(), headers=ACCEPT)
    assert "content-length" not in r.request.headers
    assert r.status_code == 413 and engines == []


async def test_the_guard_answers_413_before_the_body_is_read_whole() -> None:
    """Fed 10 chunks of 400 bytes against a 1000-byte limit, the app reads 3 and gets 413."""
    read: list[int] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            read.append(len(message["body"]))
            if not message["more_body"]:
                break
        raise AssertionError("the whole body was read")

    messages = [{"type": "http.request", "body": b"x" * 400, "more_body": i < 9} for i in range(10)]
    sent: list[Any] = []

    async def receive() -> Any:
        return messages.pop(0)

    async def send(message: Any) -> None:
        sent.append(message)

    guard = HttpGuard(app, GuardSettings(max_body_bytes=1000), render_jsonrpc)
    await guard({"type": "http", "headers": [(b"host", b"127.0.0.1:1")]}, receive, send)
    assert read == [400, 400] and len(messages) == 7  # the third chunk passed the limit
    assert sent[0]["status"] == 413


def test_the_record_proxy_refuses_foreign_origins_and_big_bodies(tmp_path: Path) -> None:
    cassette = tmp_path / "proxy.cassette.json"
    servers: list[HttpServer] = []
    urls: list[str] = []
    ready = threading.Event()
    guard = GuardSettings.for_host("127.0.0.1", max_body_bytes=2048)

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    raised: list[BaseException] = []

    def run() -> None:
        try:
            record_http(
                cassette,
                "http://127.0.0.1:9/mcp",  # never reached: every request here is refused first
                guard=guard,
                on_ready=on_ready,
                on_server=servers.append,
            )
        except NothingRecordedError as exc:
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        r = _post(urls[0], origin="http://evil.example")
        assert r.status_code == 403 and r.json()["error"]["code"] == -32600
        assert _post(urls[0], host="evil.example").status_code == 421
        assert _post(urls[0], {**INIT, "pad": "x" * 4096}).status_code == 413
    finally:
        servers[0].stop()
        thread.join(10)
    assert not thread.is_alive()
    # every request was refused before the recorder saw it: nothing to record, nothing written
    assert len(raised) == 1 and not cassette.exists()


# --- protocol serve ----------------------------------------------------------------------------


def test_protocol_serve_refuses_with_its_error_envelope(tmp_path: Path) -> None:
    from harn_mcp_mock.agents.db import ProtocolStore
    from harn_mcp_mock.agents.server import create_app

    store = ProtocolStore(tmp_path / "p.sqlite3", clock=PausedClock())
    try:
        guard = GuardSettings(max_body_bytes=512, check_host=True, allow_hosts=("testserver",))
        client = TestClient(create_app(store, KEYS, PausedClock(), permissions=PERMISSIONS, guard=guard))
        r = client.get("/v1/tasks", headers=protocol_headers(origin="http://evil.example"))
        assert (r.status_code, r.json()["error"]["code"]) == (403, "permission_denied")
        assert r.headers["request-id"] == r.json()["error"]["request_id"]
        r = client.get("/v1/tasks", headers=protocol_headers(host="evil.example"))
        assert (r.status_code, r.json()["error"]["code"]) == (403, "permission_denied")
        assert (
            client.get("/v1/tasks", headers=protocol_headers(origin="http://localhost:3000")).status_code
            == 200
        )

        def chunks() -> Iterator[bytes]:
            yield b'{"input": "'
            yield b"x" * 600
            yield b'"}'

        r = client.post("/v1/tasks", content=chunks(), headers=protocol_headers())
        assert (r.status_code, r.json()["error"]["code"]) == (413, "payload_too_large")
        r = client.post("/v1/tasks", content=b"x" * 600, headers=protocol_headers())
        assert (r.status_code, r.json()["error"]["code"]) == (413, "payload_too_large")
    finally:
        store.close()


def test_protocol_serve_takes_the_guard_flags(tmp_path: Path) -> None:
    import subprocess

    code = "from harn_mcp_mock.cli.protocol import app; app()"
    key = "0123456789abcdef0123"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            "serve",
            "--db",
            str(tmp_path / "s.sqlite3"),
            "--api-key",
            key,
            "--allow-origin",
            "https://ui.example",
            "--max-body-bytes",
            "100",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().strip()
        hdrs = protocol_headers("0123456789abcdef0123")
        with httpx2.Client(timeout=10) as http:
            ok = http.get(f"{base}/v1/agent-card", headers={"origin": "https://ui.example"})
            foreign = http.get(f"{base}/v1/agent-card", headers={"origin": "https://evil.example"})
            big = http.post(f"{base}/v1/tasks", content=b"x" * 101, headers=hdrs)
            rebound = http.get(f"{base}/v1/agent-card", headers={"host": "evil.example"})
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert (ok.status_code, foreign.status_code, big.status_code, rebound.status_code) == (200, 403, 413, 403)


# --- bounded sessions --------------------------------------------------------------------------


def test_sessions_expire_when_idle_and_the_count_is_capped(notes_cassette: Path) -> None:
    clock = PausedClock()
    engines: list[ReplayEngine] = []

    def factory() -> ReplayEngine:
        engines.append(open_engine(notes_cassette))
        return engines[-1]

    guard = GuardSettings(session_idle_timeout=60, max_sessions=3)
    app, endpoint = build_app(factory, guard=guard, clock=clock)
    merger = ReportMerger(str(notes_cassette))

    def retire(engine: Engine) -> None:
        assert isinstance(engine, ReplayEngine)
        merger.add(engine)

    endpoint.on_retire = retire
    events: list[str] = []
    endpoint.on_event = events.append
    with serve_app(app) as url, httpx2.Client(timeout=10) as http:

        def open_session() -> str:
            r = http.post(url, content=orjson.dumps(INIT), headers=ACCEPT)
            assert r.status_code == 200
            return r.headers["mcp-session-id"]

        def use(sid: str) -> int:
            return http.post(
                url, content=orjson.dumps(LIST), headers={**ACCEPT, "mcp-session-id": sid}
            ).status_code

        first, second, third = open_session(), open_session(), open_session()
        clock.advance(30)
        assert use(first) == 200  # used: now the most recently used
        fourth = open_session()  # full: the least recently used idle session (second) makes room
        assert len(endpoint.sessions) == 3 and endpoint.sessions.evicted == 1
        assert use(second) == 404 and use(third) == 200 and use(fourth) == 200
        clock.advance(45)  # every session was last used 45 s ago (< 60)
        assert use(first) == 200
        clock.advance(59)  # third and fourth idle 104 s, first 59 s
        assert use(first) == 200
        assert use(third) == 404 and use(fourth) == 404
        assert endpoint.sessions.expired == 2 and len(endpoint.sessions) == 1
        assert endpoint.engines == [engines[0]]  # the ended sessions' engines are let go
    assert merger.count == 3 and merger.merged.requests >= 2
    assert any("expired" in e for e in events) and any("evicted" in e for e in events)


def test_a_full_table_of_busy_sessions_refuses_with_503_and_keeps_nothing() -> None:
    table: SessionTable[str] = SessionTable(
        max_sessions=2, busy=lambda item: item != "idle", clock=PausedClock()
    )
    assert table.add("a", "busy") and table.add("b", "busy")
    assert not table.add("c", "busy") and len(table) == 2 and "c" not in table
    ended: list[tuple[str, str]] = []
    table = SessionTable(
        max_sessions=2, busy=lambda item: item == "busy", on_evict=lambda i, w: ended.append((i, w))
    )
    assert table.add("a", "busy") and table.add("b", "idle") and table.add("c", "idle")
    assert ended == [("idle", "evicted")] and "b" not in table and table.get("a") == "busy"


def test_the_replay_answers_503_when_every_session_is_streaming(notes_cassette: Path) -> None:
    app, endpoint = build_app(lambda: open_engine(notes_cassette), guard=GuardSettings(max_sessions=1))
    with serve_app(app) as url, httpx2.Client(timeout=10) as http:
        sid = http.post(url, content=orjson.dumps(INIT), headers=ACCEPT).headers["mcp-session-id"]
        get_headers = {"accept": "text/event-stream", "mcp-session-id": sid}
        with http.stream("GET", url, headers=get_headers) as stream:
            assert stream.status_code == 200  # the GET stream is open: the session is busy
            r = http.post(url, content=orjson.dumps(INIT), headers=ACCEPT)
            assert r.status_code == 503 and r.json()["id"] == 1
        assert len(endpoint.engines) == 1


def test_body_too_large_names_its_limit() -> None:
    assert str(BodyTooLarge(10)) == "the request body exceeds the limit of 10 bytes"


def test_record_takes_the_guard_flags_with_url_only(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from harn_mcp_mock.cli import apps

    cassette = str(tmp_path / "r.cassette.json")
    argv = ["record", "--cassette", cassette, "--allow-origin", "https://ui.example", "--", "true"]
    result = CliRunner().invoke(apps.mock.app, argv)
    assert result.exit_code == 2
    assert "--allow-origin applies to --url only" in result.output
    bad = [
        "record",
        "--cassette",
        cassette,
        "--url",
        "http://127.0.0.1:9/mcp",
        "--allow-origin",
        "ui.example",
    ]
    result = CliRunner().invoke(apps.mock.app, bad)
    assert result.exit_code == 2 and "bad origin 'ui.example'" in result.output

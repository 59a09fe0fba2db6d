"""http/live.py: recording a stdio server while an HTTP client talks to it (``replay --http
--mode all -- CMD``), one session at a time, by raw HTTP against a scripted server."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import orjson

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.http.run import run_http_session
from harn_mcp_mock.http.server import HttpServer
from harn_mcp_mock.replay.run import ReplayOutcome
from tests.http.conftest import ACCEPT, INIT

REPO = Path(__file__).resolve().parents[2]
ECHO = [sys.executable, str(REPO / "tests" / "servers" / "fake_server.py"), "echo"]
WAIT = 60.0


@contextmanager
def recording(cassette: Path, command: list[str]) -> Iterator[tuple[str, list[ReplayOutcome]]]:
    """``run_http_session(mode="all")`` in a thread; (URL, its outcome once stopped)."""
    ready = threading.Event()
    urls: list[str] = []
    servers: list[HttpServer] = []
    outcomes: list[ReplayOutcome] = []

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    def serve() -> None:
        outcomes.append(
            run_http_session(
                cassette, mode="all", command=command, on_ready=on_ready, on_server=servers.append
            )
        )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(WAIT), "the server never listened"
    try:
        yield urls[0], outcomes
    finally:
        servers[0].stop()
        thread.join(WAIT)
        assert not thread.is_alive()


def test_the_first_session_is_recorded_and_a_second_one_is_told_why_not(tmp_path: Path) -> None:
    cassette = tmp_path / "echo.cassette.json"
    with recording(cassette, ECHO) as (url, outcomes), httpx2.Client(timeout=WAIT) as client:
        first = client.post(url, json=INIT, headers=ACCEPT)
        assert first.status_code == 200 and first.json()["result"] == {"echo": INIT["params"]}
        session = {**ACCEPT, "mcp-session-id": first.headers["mcp-session-id"]}
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x"}}
        assert client.post(url, json=call, headers=session).json()["result"] == {"echo": {"name": "x"}}
        second = client.post(url, json=INIT, headers=ACCEPT)
        assert "records one session of the stdio server" in second.json()["error"]["message"]
        assert not cassette.exists()  # written when the session ends
        assert client.delete(url, headers=session).status_code == 200
        assert cassette.exists()
    assert outcomes[0].report is None and outcomes[0].mode.value == "all"
    recorded = load_cassette(cassette)
    methods = [m.method for m in recorded.messages if m.direction == "client"]
    assert methods == ["initialize", "tools/call"]  # the refused session left nothing there
    assert orjson.loads(cassette.read_bytes())["exit"]["reason"] == "client-eof"

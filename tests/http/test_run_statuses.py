"""``replay --http`` (:func:`~harn_mcp_mock.http.run.run_replay_http`) answering a request with
its recorded HTTP status (a 400 or 404 from the recorded server, replayed as it was): the
request is on ``--emit-tape`` (its record carries ``http_status``) and in the report's request
count like any other.

The case that shows it: a 2026-07-28 client (the official SDK's ``mcp.Client`` in ``auto``
mode) recorded through ``record --url`` against a handshake-era server, which refused its
``server/discover`` with an HTTP error (server-everything answers 400); the client then falls
back to ``initialize``. The replay answers the probe with the same status, the client falls back
again, and nothing of the session is missing from the tape or the report.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import mcp
import orjson
import pytest

from harn_mcp_mock.cassette.model import Cassette, Message, load_cassette, save_cassette
from harn_mcp_mock.http.server import HttpServer
from harn_mcp_mock.tape.model import load_tape

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def refused_probe(notes: Path, path: Path, status: int) -> Path:
    """``notes`` (a recording of the notes server) with a ``server/discover`` the recorded server
    refused with HTTP ``status`` and a JSON-RPC error body, as ``record --url`` keeps it."""
    cassette = load_cassette(notes)
    seq = max(m.seq for m in cassette.messages) + 1
    probe = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": ENVELOPE}}
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad Request"}}
    messages = [
        *cassette.messages,
        Message(seq, "client", probe),
        Message(seq + 1, "server", error, reply_to=seq),
    ]
    entry = {
        "seq": seq,
        "method": "POST",
        "status": status,
        "content_type": "application/json",
        "headers": {},
    }
    meta = {**cassette.meta, "transport": "http", "http": [entry]}
    save_cassette(Cassette(messages, meta, path=path), path)
    return path


def serve(cassette: Path, tape: Path, report: Path) -> tuple[str, HttpServer, threading.Thread]:
    from harn_mcp_mock.http.run import run_replay_http

    servers: list[HttpServer] = []
    urls: list[str] = []
    ready = threading.Event()

    def run() -> None:
        run_replay_http(
            cassette,
            report_path=report,
            emit_tape=tape,
            on_ready=lambda url: (urls.append(url), ready.set()),
            on_server=servers.append,
        )

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(20)
    return urls[0], servers[0], thread


@pytest.mark.parametrize("status", [400, 404])
def test_a_request_answered_with_its_recorded_http_status_is_on_the_tape_and_in_the_report(
    notes_cassette: Path, tmp_path: Path, status: int
) -> None:
    cassette = refused_probe(notes_cassette, tmp_path / "probed.cassette.json", status)
    tape, report_path = tmp_path / "replay.tape", tmp_path / "report.json"
    url, server, thread = serve(cassette, tape, report_path)

    async def session() -> list[str]:
        with anyio.fail_after(20):
            async with mcp.Client(url, mode="auto") as client:
                tools = await client.list_tools()
                await client.call_tool("read_note", {"name": "welcome"})
                return [tool.name for tool in tools.tools]

    try:
        names = anyio.run(session)
    finally:
        server.stop()
        thread.join(20)
    assert not thread.is_alive()
    assert "read_note" in names

    records = [r.fields for r in load_tape(tape).records if r.kind == "mcp_json_rpc"]
    sent = [str(f["method"]) for f in records if not f.get("notification")]
    assert sent == ["server/discover", "initialize", "tools/list", "tools/call"]
    [probe] = [f for f in records if f["method"] == "server/discover"]
    assert probe["http_status"] == status and probe.get("error_code") == -32000, probe
    assert "unanswered" not in probe
    report: dict[str, Any] = orjson.loads(report_path.read_bytes())
    assert report["requests"] == len(sent) and report["hits"] == len(sent), report
    assert report["misses"] == [], report
    assert "server/discover" not in [u["method"] for u in report["unused"]], report

"""Fixtures for the Streamable HTTP tests: a notes cassette recorded over stdio, a server in a thread."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from harn_mcp_mock.api import record_session
from harn_mcp_mock.http.replay_server import StreamableHttpEndpoint, build_app
from harn_mcp_mock.jsonrpc.server import Engine
from harn_mcp_mock.replay.engine import ReplayEngine
from harn_mcp_mock.replay.session import open_engine
from tests.serving import server_in_thread

# A raw client's headers and first message, for tests that speak HTTP by hand.
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}

REPO = Path(__file__).resolve().parents[2]
NOTES = REPO / "examples" / "servers" / "notes_server.py"


@pytest.fixture(scope="session")
def notes_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cassette recorded over stdio from the notes example server (legacy handshake)."""
    path = tmp_path_factory.mktemp("http-notes") / "notes.cassette.json"

    async def record() -> None:
        async with record_session(path, [sys.executable, str(NOTES)]) as session:
            await session.list_tools()
            await session.call_tool("list_notes", {})
            await session.call_tool("read_note", {"name": "welcome"})
            await session.call_tool("write_note", {"name": "todo", "text": "buy milk"})

    anyio.run(record)
    return path


def serve_app(app: Any) -> AbstractContextManager[str]:
    """Run ``app`` with uvicorn on 127.0.0.1:0 in a thread; yields the URL."""
    return server_in_thread(app)


@contextmanager
def serve_engines(
    factory: Callable[[], Engine], **options: Any
) -> Iterator[tuple[str, StreamableHttpEndpoint]]:
    app, endpoint = build_app(factory, **options)
    with serve_app(app) as url:
        yield url, endpoint


@contextmanager
def serve_cassette(cassette: Path, **options: Any) -> Iterator[tuple[str, list[ReplayEngine]]]:
    engines: list[ReplayEngine] = []

    def factory() -> ReplayEngine:
        engine = open_engine(cassette)
        engines.append(engine)
        return engine

    with serve_engines(factory, **options) as (url, _endpoint):
        yield url, engines

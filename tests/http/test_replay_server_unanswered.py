"""Over Streamable HTTP, a request recorded without an answer gets error -32051 and the session
ends, as the recorded server's did: later requests of that session are 404, nothing hangs."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2
import mcp
import pytest
from mcp.shared.exceptions import MCPError

from harn_mcp_mock.jsonrpc.codes import RECORDED_UNANSWERED
from tests.replay.test_session_unanswered import record_crash

from .conftest import serve_cassette

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("http/test_replay_server_unanswered")

ACCEPT = {"accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def crash_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("http-crash") / "crash.cassette.json"
    record_crash(path)
    return path


async def test_the_sdk_client_gets_the_error_and_the_session_is_gone(crash_cassette: Path) -> None:
    with serve_cassette(crash_cassette) as (url, engines):
        with anyio.fail_after(30):  # without the fix the crash call waits forever
            async with mcp.Client(url, mode="legacy") as client:
                await client.call_tool("echo", {"text": "hi"})
                with pytest.raises(MCPError) as died:
                    await client.call_tool("crash", {})
                assert died.value.error.code == RECORDED_UNANSWERED
                assert "the server exited with code 1 before answering" in died.value.error.message
                with pytest.raises(MCPError):  # the session ended: 404, not a hang
                    await client.call_tool("echo", {"text": "again"})
    (engine,) = [e for e in engines if e.report.hits]
    report = engine.finish()
    assert not report.clean
    assert [u["tool"] for u in report.unanswered] == ["crash"]


@pytest.mark.parametrize("accept", ["application/json", "application/json, text/event-stream"])
async def test_after_the_error_the_session_id_is_404(crash_cassette: Path, accept: str) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    crash = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "crash", "arguments": {}}}
    with serve_cassette(crash_cassette) as (url, _engines):
        with anyio.fail_after(30):
            async with httpx2.AsyncClient() as http:
                opened = await http.post(url, json=init, headers=ACCEPT)
                sid = opened.headers["mcp-session-id"]
                headers = {"accept": accept, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
                get_headers = {**headers, "accept": "text/event-stream"}
                async with http.stream("GET", url, headers=get_headers) as get_stream:
                    assert get_stream.status_code == 200
                    died = await http.post(url, json=crash, headers=headers)
                    assert died.status_code == 200
                    assert b'"code":-32051' in died.content
                    await get_stream.aread()  # the session's GET stream ends with it
                later = await http.post(url, json={**crash, "id": 5}, headers=headers)
                assert later.status_code == 404

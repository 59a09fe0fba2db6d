"""`verify` of an unchanged real server finds nothing above INFO, live or cassette to cassette.

Each real server is recorded with the official SDK client, then verified (a) against itself as a
cassette, (b) live against the same server (stdio command or ``--url``), and (c) against the
candidate that live run saved, as a second cassette. None of these may give a WARN or an ERR:
volatile values (clock times, "created at" stamps) are B7 INFO, and B3 only reports a JSON
text mirror that went away, not one a server never sent. No ``--ignore-path`` is given.
"""

from __future__ import annotations

import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import anyio
import mcp
import pytest

from harn_mcp_mock.findings.model import Severity
from harn_mcp_mock.verify.run import verify
from tests.conftest import require_peer
from tests.e2e.peers import WAIT, everything_package_dir
from tests.e2e.scenarios import run_everything, run_time
from tests.steady import STEADY_FLOOR_MS

pytestmark = pytest.mark.e2e

HARN = [sys.executable, "-m", "harn_mcp_mock"]
EVERYTHING_HTTP = Path(__file__).parent / "everything_http.mjs"


def above_info(cassette: Path, **how: Any) -> list[str]:
    result = verify(cassette, **how, latency_floor_ms=STEADY_FLOOR_MS)
    return [
        f"{f.severity.name} {f.rule} {f.tool} {f.pointer}: {f.message}"
        for f in result.findings
        if f.severity > Severity.INFO
    ]


def assert_unchanged(cassette: Path, tmp_path: Path, **live: Any) -> None:
    assert verify(cassette, candidate=cassette).findings == []
    saved = tmp_path / "live.cassette.json"
    assert above_info(cassette, save_candidate=saved, **live) == []
    assert above_info(cassette, candidate=saved) == []
    assert above_info(saved, candidate=cassette) == []


def record_stdio(cassette: Path, command: list[str], scenario: Any, mode: str) -> None:
    record = [*HARN, "record", "--quiet", "--cassette", str(cassette), "--", *command]
    anyio.run(lambda: scenario(record, mode=mode))
    assert cassette.exists()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_mcp_server_time_unchanged(time_command: list[str], tmp_path: Path, mode: str) -> None:
    cassette = tmp_path / "time.cassette.json"
    record_stdio(cassette, time_command, run_time, mode)
    assert_unchanged(cassette, tmp_path, command=time_command)


def test_server_everything_stdio_unchanged(everything_command: list[str], tmp_path: Path) -> None:
    cassette = tmp_path / "everything.cassette.json"
    record_stdio(cassette, everything_command, run_everything, "auto")
    assert_unchanged(cassette, tmp_path, command=everything_command)


def _watch_listening(stream: IO[str], found: queue.SimpleQueue[str | None]) -> None:
    """Put the URL of the ``HARN-LISTENING`` line on ``found`` (None if the stream ended first),
    then drain the rest. One reader of the pipe: a ``select`` on the pipe beside a buffered
    ``readline`` misses a line that came in the same read as the one before it."""
    url = None
    for line in stream:
        if url is None and line.startswith("HARN-LISTENING "):
            url = line.split()[1]
            found.put(url)
    if url is None:
        found.put(None)


def _locate_node() -> list[str]:
    everything_package_dir()
    node = shutil.which("node")
    if node is None:
        from tests.e2e.peers import PeerUnavailableError

        raise PeerUnavailableError("`node` is not on PATH: install Node.js 20+")
    return [node, str(EVERYTHING_HTTP)]


@pytest.fixture
def everything_http() -> Iterator[str]:
    """server-everything's Streamable HTTP transport on a free loopback port: its URL."""
    command = require_peer(_locate_node)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    found: queue.SimpleQueue[str | None] = queue.SimpleQueue()
    reader = threading.Thread(target=_watch_listening, args=(proc.stdout, found), daemon=True)
    reader.start()
    try:
        try:
            url = found.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(
                f"server-everything (HTTP) printed no HARN-LISTENING line within {WAIT} s"
            ) from None
        assert url is not None, "server-everything (HTTP) exited before listening"
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        reader.join(10)
        proc.stdout.close()


async def _http_session(url: str) -> None:
    with anyio.fail_after(WAIT):
        async with mcp.Client(url) as client:
            await client.list_tools()
            await client.call_tool("echo", {"message": "hello"})
            await client.call_tool("get-sum", {"a": 2, "b": 3.5})
            await client.call_tool("get-structured-content", {"location": "Chicago"})
            await client.call_tool("get-tiny-image", {})
            await client.list_resources()
            await client.list_resource_templates()
            await client.read_resource("demo://resource/dynamic/text/7")
            await client.list_prompts()
            await client.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "3"})


def test_server_everything_http_unchanged(everything_http: str, tmp_path: Path) -> None:
    from tests.http.test_record_proxy import recording

    cassette = tmp_path / "everything-http.cassette.json"
    with recording(cassette, everything_http, []) as (proxy, _result):
        anyio.run(_http_session, proxy)
    assert cassette.exists()
    assert_unchanged(cassette, tmp_path, url=everything_http)

"""HTTP replay of a cassette that holds several sessions (a client that reconnects): each new
session goes on with the recorded sequence instead of starting over, and ``--strict`` judges
all sessions together. Real peers: a stateful SDK server, ``record --url``, ``replay --http``
and the SDK client, each as its own process or session."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import mcp
import orjson
import pytest

from harn_mcp_mock.cassette.model import load_cassette
from tests.serving import url_process

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("http/test_replay_server_sessions")

REPO = Path(__file__).resolve().parents[2]
COUNTER = REPO / "tests" / "servers" / "counter_server.py"
WAIT = 60


@contextmanager
def counter_server() -> Iterator[str]:
    """The stateful SDK server in its own process; yields its URL (read from its first line)."""
    proc = subprocess.Popen([sys.executable, str(COUNTER)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout and proc.stderr
    try:
        line = proc.stdout.readline().decode().strip()
        assert line.startswith("HARN-LISTENING "), proc.stderr.read()
        yield line.removeprefix("HARN-LISTENING ")
    finally:
        proc.kill()
        proc.wait(timeout=WAIT)
        proc.stdout.close()
        proc.stderr.close()


async def increment(url: str) -> str:
    """One SDK client session that calls ``increment`` once; the text it answered."""
    with anyio.fail_after(WAIT):
        async with mcp.Client(url, mode="legacy") as client:
            result = await client.session.call_tool("increment", {})
    (content,) = result.content
    assert content.type == "text"
    return content.text


def stop(proc: subprocess.Popen[bytes]) -> str:
    """SIGTERM (as an MCP host stops a server); its stderr."""
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=WAIT)
    assert proc.stderr is not None
    stderr = proc.stderr.read().decode()
    assert "Traceback" not in stderr
    return stderr


@pytest.fixture(scope="module")
def two_sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two client sessions, one after the other, recorded through ``record --url``: 1, then 2."""
    cassette = tmp_path_factory.mktemp("sessions") / "counter.cassette.json"

    async def record() -> None:
        with counter_server() as upstream:
            with url_process(["record", "--cassette", str(cassette), "--url", upstream]) as (proc, url):
                assert [await increment(url), await increment(url)] == ["1", "2"]
                stop(proc)

    anyio.run(record)
    return cassette


def test_the_cassette_holds_both_sessions(two_sessions: Path) -> None:
    loaded = load_cassette(two_sessions)
    methods = [m.method for m in loaded.messages if m.direction == "client" and m.kind == "request"]
    # (the SDK sends tools/list after a call, to validate its output)
    assert [m for m in methods if m != "tools/list"] == ["initialize", "tools/call"] * 2


async def test_a_reconnecting_client_gets_the_recorded_sequence(two_sessions: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    args = ["replay", "--http", "--strict", "--cassette", str(two_sessions), "--report", str(report)]
    with url_process(args) as (proc, url):
        # Without the fix each session started over: the second answered 1 where 2 was recorded.
        assert [await increment(url), await increment(url)] == ["1", "2"]
        stop(proc)
    summary = orjson.loads(report.read_bytes())
    assert summary["ok"] is True, summary
    recorded = [
        m for m in load_cassette(two_sessions).messages if m.direction == "client" and m.kind == "request"
    ]
    assert (summary["requests"], summary["hits"], summary["unused"]) == (len(recorded), len(recorded), [])


async def test_strict_judges_the_sessions_together(two_sessions: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    args = ["replay", "--http", "--strict", "--cassette", str(two_sessions), "--report", str(report)]
    with url_process(args) as (proc, url):
        assert await increment(url) == "1"
        stop(proc)
    summary = orjson.loads(report.read_bytes())
    assert summary["ok"] is False  # the second recorded session never ran
    requests = [
        m for m in load_cassette(two_sessions).messages if m.direction == "client" and m.kind == "request"
    ]
    second = [m.seq for m in requests if m.method == "initialize"][1]
    assert [u["seq"] for u in summary["unused"]] == [m.seq for m in requests if m.seq >= second]

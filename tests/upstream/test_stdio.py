"""upstream/stdio.py against real servers: mcp-server-time, and small servers of our own for
the edges (one that never answers, one that exits)."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from harn_mcp_mock.errors import ServerError, ServerStartError, UpstreamTimeout
from harn_mcp_mock.jsonrpc.frames import Frame
from harn_mcp_mock.upstream import StdioUpstream, Upstream, open_upstream, request_ids
from harn_mcp_mock.upstream.stdio import exit_info
from tests.http.conftest import INIT

SERVERS = Path(__file__).resolve().parents[1] / "servers"


def _exchange(upstream: Upstream, message: dict[str, object], timeout: float = 30.0) -> list[Frame]:
    body = orjson.dumps(message)
    from harn_mcp_mock.jsonrpc.frames import CLIENT, parse_frame

    return list(upstream.exchange(body, request_ids(parse_frame(body, CLIENT)), timeout))


@pytest.mark.e2e
def test_a_stdio_upstream_drives_mcp_server_time_through_a_session_and_reports_its_exit(
    time_command: list[str],
) -> None:
    upstream = open_upstream(time_command)
    assert isinstance(upstream, StdioUpstream)
    try:
        [init] = [f for f in _exchange(upstream, INIT) if f.kind == "response"]
        assert init.obj["result"]["serverInfo"]["name"] == "mcp-time"
        upstream.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        frames = _exchange(upstream, {"jsonrpc": "2.0", "id": "two", "method": "tools/list"})
        names = {t["name"] for t in frames[-1].obj["result"]["tools"]}
        assert names == {"get_current_time", "convert_time"}
    except BaseException:
        upstream.kill()
        raise
    assert upstream.close(5.0) == {"code": 0, "signal": None, "reason": "client-eof"}


def test_a_server_that_never_answers_raises_upstream_timeout_and_is_killed_on_close() -> None:
    silent = [sys.executable, "-c", "import signal, sys\nsys.stdin.readline()\nsignal.pause()"]
    upstream = StdioUpstream.spawn(silent)
    with pytest.raises(UpstreamTimeout, match=r"did not answer within 0\.2s"):
        _exchange(upstream, INIT, timeout=0.2)
    info = upstream.close(0.0)
    assert info == {"code": None, "signal": "SIGTERM", "reason": "client-eof"}


def test_a_server_that_exits_before_answering_raises_server_error() -> None:
    upstream = StdioUpstream.spawn([sys.executable, "-c", "pass"])
    with pytest.raises(ServerError, match="exited before answering"):
        _exchange(upstream, INIT)
    assert upstream.close(5.0)["code"] == 0


def test_a_server_already_gone_when_the_request_is_written_exited_before_answering() -> None:
    upstream = StdioUpstream.spawn([sys.executable, "-c", "raise SystemExit(3)"])
    upstream.proc.wait(30)
    with pytest.raises(ServerError, match=r"exited before answering \(exit code 3\)"):
        _exchange(upstream, INIT)
    assert upstream.close(5.0)["code"] == 3


def test_a_running_server_that_closed_its_stdin_stopped_reading() -> None:
    script = "import os, signal\nos.close(0)\nos.write(1, b'closed\\n')\nsignal.pause()"
    upstream = StdioUpstream.spawn([sys.executable, "-c", script])
    try:
        assert upstream.read_chunk(30) == b"closed\n"
        with pytest.raises(ServerError, match="stopped reading its stdin"):
            _exchange(upstream, INIT)
    finally:
        assert upstream.close(0.0)["signal"] == "SIGTERM"


def test_what_a_server_writes_while_exiting_reaches_on_frame() -> None:
    script = (
        'import sys\nsys.stdin.read()\nprint(\'{"jsonrpc":"2.0","method":"bye"}\')\nprint(\'tail\', end=\'\')'
    )
    upstream = StdioUpstream.spawn([sys.executable, "-c", script])
    seen: list[Frame] = []
    upstream.close(5.0, on_frame=seen.append)
    assert [(f.kind, f.method) for f in seen] == [("notification", "bye"), ("invalid", None)]


def test_a_missing_command_is_one_clear_start_error() -> None:
    with pytest.raises(ServerStartError, match="command not found"):
        open_upstream(["no-such-mcp-server-anywhere"])


def test_exit_info_names_the_signal_that_ended_the_server() -> None:
    assert exit_info(-9, "x") == {"code": None, "signal": "SIGKILL", "reason": "x"}
    assert exit_info(3, "y") == {"code": 3, "signal": None, "reason": "y"}

"""A request recorded without an answer (the server died first): listed by record and show,
answered by replay with error -32051 and the end of the session, counted by --strict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp
import orjson
import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from harn_mcp_mock.api import open_replay, replay_session
from harn_mcp_mock.jsonrpc.codes import RECORDED_UNANSWERED

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("replay/test_session_unanswered")

SERVERS = Path(__file__).parents[1] / "servers"
CRASHING = str(SERVERS / "crashing_server.py")
FAKE = str(SERVERS / "fake_server.py")
HARN = [sys.executable, "-m", "harn_mcp_mock"]
WAIT = 60


def record_crash(cassette: Path) -> str:
    """Record the crashing SDK server through `harn mcp mock record` with the SDK client: one
    answered call, then the call the server dies on. Returns the recorder's stderr."""
    errlog = cassette.with_suffix(".stderr")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "harn_mcp_mock", "record", "--cassette", str(cassette), "--", sys.executable, CRASHING],
    )

    async def session() -> None:
        with errlog.open("w") as err, anyio.fail_after(WAIT):
            async with mcp.Client(stdio_client(params, errlog=err), mode="legacy") as client:
                assert (await client.call_tool("echo", {"text": "hi"})).structured_content == {"result": "hi"}
                with pytest.raises(MCPError, match="Connection closed"):
                    await client.call_tool("crash", {})

    anyio.run(session)
    return errlog.read_text()


@pytest.fixture(scope="module")
def crash_recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("crash") / "crash.cassette.json"
    return path, record_crash(path)


def test_the_record_summary_names_the_request_the_server_died_on(crash_recording: tuple[Path, str]) -> None:
    _path, stderr = crash_recording
    assert "server exit 1, server-exit" in stderr
    assert "1 request(s) recorded without an answer: tools/call crash (id " in stderr


def test_show_lists_the_unanswered_request_and_how_the_server_ended(
    crash_recording: tuple[Path, str],
) -> None:
    path, _ = crash_recording
    text = subprocess.run(
        [*HARN, "show", "--cassette", str(path)], capture_output=True, timeout=WAIT, text=True
    )
    assert text.returncode == 0, text.stderr
    assert "unanswered 1 request(s): the server exited with code 1 first" in text.stdout
    assert "tools/call crash (id " in text.stdout
    shown = subprocess.run(
        [*HARN, "show", "--json", "--cassette", str(path)], capture_output=True, timeout=WAIT
    )
    unanswered = orjson.loads(shown.stdout)["unanswered"]
    assert [(u["method"], u["tool"]) for u in unanswered] == [("tools/call", "crash")]


async def test_the_sdk_client_gets_an_error_not_a_hang_and_the_stdio_session_ends(
    crash_recording: tuple[Path, str], tmp_path: Path
) -> None:
    path, _ = crash_recording
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "harn_mcp_mock", "replay", "--strict", "--cassette", str(path)]
    )
    errlog = tmp_path / "replay.stderr"
    with errlog.open("w") as err, anyio.fail_after(WAIT):  # without the fix the crash call waits forever
        async with mcp.Client(stdio_client(params, errlog=err), mode="legacy") as client:
            assert (await client.call_tool("echo", {"text": "hi"})).structured_content == {"result": "hi"}
            with pytest.raises(MCPError) as died:
                await client.call_tool("crash", {})
            assert died.value.error.code == RECORDED_UNANSWERED
            assert "recorded without an answer: the server exited with code 1 before answering" in str(
                died.value
            )
            with pytest.raises(MCPError, match="Connection closed"):  # the replayed server is gone
                await client.call_tool("echo", {"text": "again"})
    assert "1 request(s) recorded without an answer" in errlog.read_text()


async def test_the_in_memory_replay_answers_with_the_error_and_then_fails_fast(
    crash_recording: tuple[Path, str],
) -> None:
    path, _ = crash_recording
    with anyio.fail_after(WAIT):
        async with open_replay(path) as replay:
            session = replay.session
            await session.call_tool("echo", {"text": "hi"})
            with pytest.raises(MCPError) as died:
                await session.call_tool("crash", {})
            assert died.value.error.code == RECORDED_UNANSWERED
            with pytest.raises(MCPError, match="Connection closed"):  # at once, not a hang
                await session.call_tool("echo", {"text": "again"})
    report = replay.report
    assert report is not None and not report.clean
    assert [(u["method"], u["tool"]) for u in report.unanswered] == [("tools/call", "crash")]


async def test_replay_session_raises_the_unanswered_error(crash_recording: tuple[Path, str]) -> None:
    path, _ = crash_recording
    with anyio.fail_after(WAIT):
        async with replay_session(path) as session:
            with pytest.raises(MCPError, match="recorded without an answer"):
                await session.call_tool("crash", {})


# --- the CLI over raw stdio, with a server that dies on reading a request ---------------------


def line(i: Any, method: str, **params: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + b"\n"


@pytest.fixture(scope="module")
def died_on_second(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("died") / "died.cassette.json"
    stdin = line(1, "initialize") + line(2, "tools/call", name="boom", arguments={})
    args = ["record", "--quiet", "--cassette", str(path), "--", sys.executable, FAKE, "die-on", "1"]
    done = subprocess.run([*HARN, *args], input=stdin, capture_output=True, timeout=WAIT)
    assert done.returncode == 3, done.stderr
    return path


@pytest.mark.parametrize("strict", [True, False])
def test_replay_answers_the_error_stops_reading_and_strict_fails(
    died_on_second: Path, tmp_path: Path, strict: bool
) -> None:
    report = tmp_path / "report.json"
    args = ["replay", "--cassette", str(died_on_second), "--report", str(report)] + (
        ["--strict"] if strict else []
    )
    # stdin stays open: the replay must end by itself, as the recorded server did
    proc = subprocess.Popen(
        [*HARN, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdin is not None
    proc.stdin.write(
        line(1, "initialize") + line(2, "tools/call", name="boom", arguments={}) + line(3, "ping")
    )
    proc.stdin.flush()
    out, err = proc.communicate(timeout=WAIT)
    answers = {m["id"]: m for m in map(orjson.loads, out.splitlines())}
    assert sorted(answers) == [1, 2]  # the ping after the server's end is never read
    assert answers[2]["error"]["code"] == RECORDED_UNANSWERED
    assert "the server exited with code 3" in answers[2]["error"]["message"]
    assert proc.returncode == (1 if strict else 0), err
    summary = orjson.loads(report.read_bytes())
    assert summary["ok"] is False
    assert [(u["method"], u["id"], u["tool"]) for u in summary["unanswered"]] == [("tools/call", 2, "boom")]
    if strict:
        assert b"--strict: " in err and b"1 request(s) recorded without an answer" in err

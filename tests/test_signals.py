"""Stop signals end `replay` and `world` as a client disconnect does: every output file is written,
no traceback, exit 128 + N (130 SIGINT, 143 SIGTERM, 129 SIGHUP). Real processes, real events:
each signal is sent only after a response line was read from the server's stdout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from harn_mcp_mock.cassette.model import journal_path, load_cassette
from harn_mcp_mock.tape import load_tape

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_signals")

REPO = Path(__file__).resolve().parents[1]
NOTES = REPO / "examples" / "servers" / "notes_server.py"
NOTES_WORLD = REPO / "worlds" / "notes" / "notes.world.json"
HARN = [sys.executable, "-m", "harn_mcp_mock"]
WAIT = 60
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def msg(i: Any, method: str, **params: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + b"\n"


INIT = msg(
    0, "initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo={"name": "t", "version": "1"}
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


@pytest.fixture(scope="module")
def notes_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("signals") / "notes.cassette.json"
    session = INIT + INITIALIZED + msg(1, "tools/list")
    result = subprocess.run(
        [*HARN, "record", "--quiet", "--cassette", str(path), "--", sys.executable, str(NOTES)],
        input=session,
        capture_output=True,
        timeout=WAIT,
    )
    assert result.returncode == 0, result.stderr
    return path


def stop_after_first_answer(args: list[str], sig: signal.Signals) -> tuple[int, str]:
    """Start ``harn mcp mock ARGS``, send ``initialize``, read its answer, send ``sig`` with
    stdin still open (only the signal ends the run); (exit code, stderr)."""
    proc = subprocess.Popen(
        [*HARN, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdin and proc.stdout and proc.stderr
    try:
        proc.stdin.write(INIT)
        proc.stdin.flush()
        answer = orjson.loads(proc.stdout.readline())
        assert answer["id"] == 0 and "result" in answer
        proc.send_signal(sig)
        code = proc.wait(timeout=WAIT)
        return code, proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.wait(timeout=WAIT)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            pipe.close()


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_stop_signal_ends_a_replay_with_its_report_and_tape_written(
    tmp_path: Path, notes_cassette: Path, sig: signal.Signals
) -> None:
    report, tape = tmp_path / "report.json", tmp_path / "replay.tape"
    code, stderr = stop_after_first_answer(
        ["replay", "--cassette", str(notes_cassette), "--report", str(report), "--emit-tape", str(tape)], sig
    )
    assert code == 128 + sig
    assert "Traceback" not in stderr
    summary = orjson.loads(report.read_bytes())
    assert summary["requests"] == 1 and summary["hits"] == 1
    assert [r.kind for r in load_tape(tape)] == ["mcp_json_rpc"]  # initialize and its answer


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_stop_signal_ends_a_world_with_its_state_report_and_tape_written(
    tmp_path: Path, sig: signal.Signals
) -> None:
    state, report, tape = tmp_path / "state.json", tmp_path / "report.json", tmp_path / "world.tape"
    args = ["world", "--spec", str(NOTES_WORLD), "--state-out", str(state), "--report", str(report)]
    code, stderr = stop_after_first_answer([*args, "--emit-tape", str(tape)], sig)
    assert code == 128 + sig
    assert "Traceback" not in stderr
    assert orjson.loads(state.read_bytes())["world"] == "notes"
    assert "task" in orjson.loads(report.read_bytes())
    assert [r.kind for r in load_tape(tape)] == ["mcp_json_rpc"]


def test_strict_replay_stopped_by_a_signal_exits_128_plus_n_and_still_reports(
    tmp_path: Path, notes_cassette: Path
) -> None:
    report = tmp_path / "report.json"
    code, stderr = stop_after_first_answer(
        ["replay", "--strict", "--cassette", str(notes_cassette), "--report", str(report)], signal.SIGTERM
    )
    assert code == 143
    assert "--strict: 0 missed request(s), 1 unused" in stderr  # tools/list was never asked
    assert orjson.loads(report.read_bytes())["ok"] is False


async def test_an_sdk_host_that_closes_stdin_then_sends_sigterm_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK's stdio client closes the server's stdin, then SIGTERMs its process group. With no
    grace at all the SIGTERM lands while the world is still finishing: the files are whole."""
    import mcp.client.stdio as sdk_stdio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    monkeypatch.setattr(sdk_stdio, "PROCESS_TERMINATION_TIMEOUT", 0.0)
    state, report, tape = tmp_path / "state.json", tmp_path / "report.json", tmp_path / "world.tape"
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "harn_mcp_mock",
            "world",
            "--spec",
            str(NOTES_WORLD),
            "--state-out",
            str(state),
            "--report",
            str(report),
            "--emit-tape",
            str(tape),
        ],
    )
    errlog = (tmp_path / "stderr.txt").open("w")
    with anyio.fail_after(WAIT):
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = await session.list_tools()
            assert tools.tools
    errlog.close()
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
    assert orjson.loads(state.read_bytes())["world"] == "notes"
    assert "task" in orjson.loads(report.read_bytes())
    assert [r.kind for r in load_tape(tape)].count("mcp_json_rpc") >= 2  # initialize, tools/list


def test_a_stop_signal_in_new_episodes_still_appends_what_was_recorded(
    tmp_path: Path, notes_cassette: Path
) -> None:
    cassette = tmp_path / "ep.cassette.json"
    cassette.write_bytes(notes_cassette.read_bytes())
    report = tmp_path / "report.json"
    args = ["replay", "--mode", "new_episodes", "--cassette", str(cassette), "--report", str(report)]
    proc = subprocess.Popen(
        [*HARN, *args, "--", sys.executable, str(NOTES)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(INIT + msg(5, "tools/call", name="read_note", arguments={"name": "welcome"}))
    proc.stdin.flush()
    answers = [orjson.loads(proc.stdout.readline()) for _ in range(2)]
    assert [a["id"] for a in answers] == [0, 5]  # a hit, then a miss answered by the live server
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=WAIT) == 143
    stderr = proc.stderr.read().decode()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        pipe.close()
    assert "Traceback" not in stderr and "appended 2 new messages" in stderr
    assert orjson.loads(report.read_bytes())["recorded"] == 1
    assert not (tmp_path / "ep.new-episodes.cassette.json.journal").exists()


async def test_an_sdk_host_stopping_record_gets_a_finished_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK closes the recorder's stdin and SIGTERMs it at once (no grace), then SIGKILLs it
    two seconds later: the recorder must have finished the cassette by then, journal gone."""
    import mcp.client.stdio as sdk_stdio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    monkeypatch.setattr(sdk_stdio, "PROCESS_TERMINATION_TIMEOUT", 0.0)
    cassette = tmp_path / "time.cassette.json"
    server = str(Path(sys.executable).parent / "mcp-server-time")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "harn_mcp_mock", "record", "--cassette", str(cassette), "--", server],
    )
    errlog = (tmp_path / "stderr.txt").open("w")
    with anyio.fail_after(WAIT):
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            assert (await session.list_tools()).tools
    errlog.close()
    stderr = (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in stderr and f"wrote {cassette}" in stderr
    methods = [m.method for m in load_cassette(cassette).messages if m.direction == "client" and m.method]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]
    assert not journal_path(cassette).exists()


def test_stop_signals_outside_the_main_thread_install_no_handler_but_still_stop() -> None:
    from harn_mcp_mock.shutdown import StopSignals

    before = [signal.getsignal(sig) for sig in SIGNALS]
    seen: list[Any] = []

    def enter() -> None:
        with StopSignals() as stop:
            seen.append([signal.getsignal(sig) for sig in SIGNALS])
            stop.request(signal.SIGTERM)  # what a caller in that thread may still do
            seen.append((stop.exit_code, os.read(stop.fd, 1)))

    worker = threading.Thread(target=enter)
    worker.start()
    worker.join(WAIT)
    assert seen == [before, (143, b"\0")]
    with StopSignals():  # the main thread: installed, then restored
        assert all(signal.getsignal(sig) != old for sig, old in zip(SIGNALS, before, strict=True))
    assert [signal.getsignal(sig) for sig in SIGNALS] == before

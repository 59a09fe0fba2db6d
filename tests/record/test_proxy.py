"""`harn mcp mock record` as a real process: transparency, exit codes, signals, crashes, load."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from harn_mcp_mock.cassette.model import cas_dir, journal_path, load_cassette

FAKE = str(Path(__file__).parents[1] / "servers" / "fake_server.py")
WAIT = 30  # seconds: the bound of every wait on a child process


def record_cmd(
    cassette: Path, *server_args: str, grace: str | None = "0.5", server: list[str] | None = None
) -> list[str]:
    """``harn mcp mock record`` of the fake server with ``server_args`` (or of ``server``); a
    ``grace`` of None keeps record's default shutdown timeout."""
    timeout = ["--shutdown-timeout", grace] if grace is not None else []
    harn = [sys.executable, "-m", "harn_mcp_mock", "record", "--quiet", "--cassette", str(cassette)]
    return [*harn, *timeout, "--", *(server or [sys.executable, FAKE]), *server_args]


def req(i: int, method: str = "tools/call", **params: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + b"\n"


def run(
    cmd: list[str], stdin: bytes, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(cmd, input=stdin, capture_output=True, timeout=WAIT, env=env)


def wait_for_exit(pid: int) -> None:
    """Block until process ``pid`` (not our child) is gone, bounded; no polling."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        ready, _, _ = select.select([fd], [], [], WAIT)
        assert ready, f"process {pid} still running after {WAIT}s"
    finally:
        os.close(fd)


def test_the_client_sees_exactly_the_bytes_the_server_wrote(tmp_path: Path) -> None:
    stdin = (
        req(1, name="echo", arguments={"text": "héllo \u2603"})
        + b'{"jsonrpc":"2.0","method":"notifications/x"}\n'
        + req(2)
    )
    direct = run([sys.executable, FAKE, "echo"], stdin)
    proxied = run(record_cmd(tmp_path / "a.cassette.json", "echo"), stdin)
    assert proxied.returncode == 0
    assert proxied.stdout == direct.stdout
    assert proxied.stdout.startswith(b'{"result": {"echo": ')


def test_every_message_is_recorded_in_order_in_each_direction(tmp_path: Path) -> None:
    cassette = tmp_path / "a.cassette.json"
    run(record_cmd(cassette, "garbage"), req(1) + b"{not json from the client\n" + req(2))
    messages = load_cassette(cassette).messages
    assert [m.seq for m in messages] == list(range(7))
    client = [(m.kind, m.id) for m in messages if m.direction == "client"]
    assert client == [("request", 1), ("invalid", None), ("request", 2)]
    by_dir = [(m.kind, m.id) for m in messages if m.direction == "server"]
    assert by_dir == [("invalid", None), ("response", 1), ("invalid", None), ("response", 2)]


def test_the_proxy_exits_with_the_servers_exit_code_when_it_crashes(tmp_path: Path) -> None:
    cassette = tmp_path / "a.cassette.json"
    proc = subprocess.Popen(
        record_cmd(cassette, "crash-after", "2"), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write(req(1) + req(2) + req(3))
    proc.stdin.flush()
    assert len(proc.stdout.read().splitlines()) == 2  # read to EOF: the client keeps its stdin open
    assert proc.wait(timeout=WAIT) == 3
    proc.stdin.close()
    proc.stdout.close()
    loaded = load_cassette(cassette)
    assert loaded.meta["exit"] == {"code": 3, "signal": None, "reason": "server-exit"}
    assert [m.id for m in loaded.messages if m.kind == "response"] == [1, 2]


def test_a_server_that_ignores_eof_and_sigterm_is_killed_after_the_grace_period(tmp_path: Path) -> None:
    cassette = tmp_path / "a.cassette.json"
    result = run(record_cmd(cassette, "stubborn", grace="0.2"), req(1))
    assert result.returncode == 128 + signal.SIGKILL
    assert load_cassette(cassette).meta["exit"] == {"code": None, "signal": "SIGKILL", "reason": "client-eof"}


def test_a_server_still_writing_after_the_clients_eof_gets_more_grace_and_exits_by_itself(
    tmp_path: Path,
) -> None:
    """A piped client sends EOF at once; a server that keeps answering past one grace period (a
    slow start under load) is still working, not hung: it is not SIGTERMed while it writes."""
    cassette = tmp_path / "a.cassette.json"
    result = run(record_cmd(cassette, "slow-exit", "8", grace="0.25"), req(1))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count(b"working") == 8
    assert load_cassette(cassette).meta["exit"] == {"code": 0, "signal": None, "reason": "client-eof"}


@pytest.mark.e2e
def test_a_piped_client_gets_every_answer_from_an_sdk_server_that_stops_at_end_of_input(
    tmp_path: Path,
) -> None:
    """The quickstart's way: a file of requests piped in, EOF right after the last one. The SDK's
    stdio server (mcp-server-time) stops at the end of its input and drops the requests it is
    still handling, so the recorder keeps its stdin open until it answered what it owes."""
    cassette = tmp_path / "time.cassette.json"
    server = [str(Path(sys.executable).parent / "mcp-server-time"), "--local-timezone", "UTC"]
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    stdin = (
        req(1, "initialize", **init)
        + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        + req(2, "tools/list")
        + req(
            3,
            name="convert_time",
            arguments={"source_timezone": "UTC", "time": "12:00", "target_timezone": "UTC"},
        )
    )
    result = run(record_cmd(cassette, grace=None, server=server), stdin)
    assert result.returncode == 0, result.stderr
    assert [orjson.loads(line)["id"] for line in result.stdout.splitlines()] == [1, 2, 3]
    loaded = load_cassette(cassette)
    assert [m.id for m in loaded.messages if m.kind == "response"] == [1, 2, 3]
    assert loaded.meta["exit"] == {"code": 0, "signal": None, "reason": "client-eof"}


def test_a_server_that_never_answers_after_the_clients_eof_gets_its_input_closed_after_a_quiet_grace(
    tmp_path: Path,
) -> None:
    """The wait for answers owed ends when the server goes quiet: it then sees EOF as before."""
    cassette = tmp_path / "a.cassette.json"
    result = run(record_cmd(cassette, "reverse", "3", grace="0.25"), req(1) + req(2))
    assert result.returncode == 0, result.stderr
    assert result.stdout == b""
    loaded = load_cassette(cassette)
    assert [m.kind for m in loaded.messages] == ["request", "request"]
    assert loaded.meta["exit"] == {"code": 0, "signal": None, "reason": "client-eof"}


async def test_ctrl_c_while_record_waits_for_answers_owed_ends_the_wait_and_keeps_what_came(
    tmp_path: Path,
) -> None:
    """The client sent a request and closed its input; the server (working, silent) still owes
    the answer, so record keeps its input open and says so. A Ctrl-C ends that wait: the server's
    input is closed, the answer it then writes reaches the client and the cassette, record exits
    with the server's exit code, no traceback, and the server is gone."""
    import anyio
    from anyio.streams.buffered import BufferedByteReceiveStream

    cassette = tmp_path / "a.cassette.json"
    pid_file = tmp_path / "server.pid"
    cmd = record_cmd(cassette, "answer-at-eof", grace=str(WAIT))
    cmd.remove("--quiet")
    env = {**os.environ, "FAKE_PID_FILE": str(pid_file)}
    with anyio.fail_after(WAIT):
        async with await anyio.open_process(cmd, env=env) as proc:
            assert proc.stdin and proc.stdout and proc.stderr
            out, err = BufferedByteReceiveStream(proc.stdout), BufferedByteReceiveStream(proc.stderr)
            await proc.stdin.send(req(1, name="slow"))
            working = orjson.loads(await out.receive_until(b"\n", 1 << 16))
            assert working["params"] == {"data": "working 1"}  # the server has the request
            await proc.stdin.aclose()  # the client's EOF, its answer still owed
            waiting = (await err.receive_until(b"\n", 1 << 16)).decode()
            assert waiting == (
                "harn mcp mock record: the client closed its input; keeping the server's open for the "
                "1 answer(s) it owes (Ctrl-C stops waiting)"
            )
            proc.send_signal(signal.SIGINT)
            stopping = (await err.receive_until(b"\n", 1 << 16)).decode()
            assert "stopping: no longer waiting for the server's answers; closing its input" in stopping
            answer = orjson.loads(await out.receive_until(b"\n", 1 << 16))
            assert answer == {"jsonrpc": "2.0", "id": 1, "result": {"echo": {"name": "slow"}}}
            code = await proc.wait()
            rest = b"".join([chunk async for chunk in err]).decode()
    assert code == 0, rest  # record exits with the server's exit code: it ended at its input's end
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest
    assert f"wrote {cassette} (1 client, 2 server, 0 invalid messages; server exit 0" in rest
    wait_for_exit(int(pid_file.read_text()))
    loaded = load_cassette(cassette)
    assert [(m.kind, m.id) for m in loaded.messages] == [
        ("request", 1),
        ("notification", None),
        ("response", 1),
    ]
    assert loaded.meta["exit"]["code"] == 0 and not journal_path(cassette).exists()


STOP_SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


@pytest.mark.parametrize("sig", STOP_SIGNALS, ids=lambda s: s.name)
def test_a_stop_signal_says_so_closes_the_servers_stdin_and_finishes_the_cassette(
    tmp_path: Path, sig: signal.Signals
) -> None:
    cassette = tmp_path / "a.cassette.json"
    proc = subprocess.Popen(
        record_cmd(cassette, "graceful"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(req(1))
    proc.stdin.flush()
    assert proc.stdout.readline().startswith(b'{"result"')
    proc.send_signal(sig)
    again = "Ctrl-C" if sig == signal.SIGINT else sig.name
    expected = f"stopping: waiting up to 0.5 s for the server to exit ({again} again to kill it)"
    assert expected in proc.stderr.readline().decode()
    out = proc.stdout.read()  # to EOF, stdin still open: only the signal ends this session
    assert proc.wait(timeout=WAIT) == 0  # the server exited by itself at the end of its input
    stderr = proc.stderr.read().decode()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        pipe.close()
    assert b"bye eof" in out  # what the server wrote while stopping reached the client
    assert "Traceback" not in stderr
    loaded = load_cassette(cassette)
    assert loaded.meta["exit"] == {"code": 0, "signal": None, "reason": f"signal:{sig.name}"}
    assert loaded.messages[-1].method == "notifications/message"
    assert not journal_path(cassette).exists()


def test_ctrl_c_stops_a_real_server_without_a_traceback_and_writes_the_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "time.cassette.json"
    server = str(Path(sys.executable).parent / "mcp-server-time")
    cmd = [sys.executable, "-m", "harn_mcp_mock", "record", "--cassette", str(cassette), "--", server]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin and proc.stdout and proc.stderr
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    proc.stdin.write(req(0, "initialize", **init))
    proc.stdin.flush()
    assert b'"serverInfo"' in proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    assert "stopping: waiting up to 5 s for the server to exit" in proc.stderr.readline().decode()
    assert proc.wait(timeout=WAIT) == 0
    stderr = proc.stderr.read().decode()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        pipe.close()
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert f"wrote {cassette} (1 client, 1 server" in stderr
    loaded = load_cassette(cassette)
    assert [m.method for m in loaded.messages if m.direction == "client"] == ["initialize"]
    assert loaded.meta["exit"]["reason"] == "signal:SIGINT"


def test_a_second_ctrl_c_kills_a_server_that_will_not_stop_and_keeps_what_was_recorded(
    tmp_path: Path,
) -> None:
    cassette = tmp_path / "a.cassette.json"
    proc = subprocess.Popen(
        record_cmd(cassette, "stubborn", grace="600"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(req(1))
    proc.stdin.flush()
    assert proc.stdout.readline().startswith(b'{"result"')
    proc.send_signal(signal.SIGINT)
    assert "waiting up to 600 s" in proc.stderr.readline().decode()
    assert proc.poll() is None  # said at once, while it waits (600 s) for the server
    proc.send_signal(signal.SIGINT)
    assert "killing the server (SIGKILL)" in proc.stderr.readline().decode()
    assert proc.wait(timeout=WAIT) == 128 + signal.SIGKILL
    stderr = proc.stderr.read().decode()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        pipe.close()
    assert "Traceback" not in stderr
    loaded = load_cassette(cassette)
    assert loaded.meta["exit"] == {"code": None, "signal": "SIGKILL", "reason": "signal:SIGINT"}
    assert [(m.direction, m.kind) for m in loaded.messages] == [("client", "request"), ("server", "response")]
    assert not journal_path(cassette).exists()


def test_sigterm_after_the_client_closed_stdin_stops_the_server_at_once(tmp_path: Path) -> None:
    """What MCP hosts do: close the server's stdin, then SIGTERM it. The recorder does not make
    the host wait out --shutdown-timeout (here 600 s): the server gets SIGTERM now."""
    cassette = tmp_path / "a.cassette.json"
    proc = subprocess.Popen(
        record_cmd(cassette, "linger", grace="600"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(req(1))
    proc.stdin.close()
    assert proc.stdout.readline().startswith(b'{"result"')
    assert b'"eof"' in proc.stdout.readline()  # the server saw its stdin close: the proxy is waiting
    proc.send_signal(signal.SIGTERM)
    assert "sending it SIGTERM" in proc.stderr.readline().decode()
    assert proc.wait(timeout=WAIT) == 0  # the server's own SIGTERM handler exits 0
    stderr = proc.stderr.read().decode()
    proc.stdout.close()
    proc.stderr.close()
    assert "Traceback" not in stderr
    loaded = load_cassette(cassette)
    assert loaded.meta["exit"] == {"code": 0, "signal": None, "reason": "client-eof"}
    assert loaded.messages[-1].message["params"] == {"data": "bye 15"}


# --- record never clobbers a good cassette ------------------------------------------------------


def good_cassette(tmp_path: Path) -> tuple[Path, bytes]:
    cassette = tmp_path / "good.cassette.json"
    assert run(record_cmd(cassette, "echo"), req(1)).returncode == 0
    return cassette, cassette.read_bytes()


def assert_one_line_nothing_recorded(result_stderr: bytes, kept: bool) -> None:
    lines = result_stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert "nothing recorded: the client sent no message" in lines[0]
    assert ("kept the existing cassette unchanged" in lines[0]) is kept
    assert "--allow-empty" in lines[0]


def test_record_from_dev_null_keeps_an_existing_cassette_byte_for_byte(tmp_path: Path) -> None:
    cassette, before = good_cassette(tmp_path)
    result = subprocess.run(
        record_cmd(cassette, "echo"), stdin=subprocess.DEVNULL, capture_output=True, timeout=WAIT
    )
    assert result.returncode == 5
    assert_one_line_nothing_recorded(result.stderr, kept=True)
    assert cassette.read_bytes() == before
    assert not journal_path(cassette).exists()


def test_a_server_that_fails_before_saying_anything_never_replaces_a_cassette(tmp_path: Path) -> None:
    """A typo in the server's path (`python servr.py` exits 2 at once) used to replace a good
    cassette with one in which every request went unanswered."""
    cassette, before = good_cassette(tmp_path)

    def typo(path: Path, *flags: str) -> list[str]:
        cmd = record_cmd(path, "echo")
        at = cmd.index("--")
        return [*cmd[:at], *flags, "--", sys.executable, str(tmp_path / "no_such_server.py")]

    result = run(typo(cassette), req(1))
    assert result.returncode == 5, result.stderr
    said = [line for line in result.stderr.decode().splitlines() if line.startswith("harn mcp mock")]
    # Which end the proxy saw close first, the client's input or the server's output, is a race
    # the server can win by exiting at once (then the request may not have been read either):
    # each is this session's true ending.
    [line] = said
    assert re.fullmatch(
        rf"harn mcp mock record: error: {re.escape(str(cassette))}: nothing recorded: the (server|client) "
        r"sent no message \(server exit 2, (client-eof|server-exit)\); kept the existing cassette "
        r"unchanged; pass --allow-empty to overwrite it with this recording",
        line,
    ), line
    assert cassette.read_bytes() == before
    assert not journal_path(cassette).exists()
    fresh = tmp_path / "fresh.cassette.json"
    assert run(typo(fresh), req(1)).returncode == 5
    assert not fresh.exists()
    allowed = run(typo(fresh, "--allow-empty"), req(1))
    assert allowed.returncode == 2  # the server's own exit code, as for any recording
    assert [m.kind for m in load_cassette(fresh).messages] in (["request"], [])  # the same race


def test_record_from_dev_null_writes_no_new_cassette_unless_allow_empty(tmp_path: Path) -> None:
    cassette = tmp_path / "new.cassette.json"
    result = subprocess.run(
        record_cmd(cassette, "big", "5000"), stdin=subprocess.DEVNULL, capture_output=True, timeout=WAIT
    )
    assert result.returncode == 5
    assert_one_line_nothing_recorded(result.stderr, kept=False)
    assert sorted(tmp_path.iterdir()) == []  # no cassette, no journal, no blob folder
    cmd = record_cmd(cassette, "echo")
    allowed = subprocess.run(
        [*cmd[:4], "--allow-empty", *cmd[4:]], stdin=subprocess.DEVNULL, capture_output=True, timeout=WAIT
    )
    assert allowed.returncode == 0, allowed.stderr
    assert load_cassette(cassette).messages == []


def test_ctrl_c_before_the_client_says_anything_keeps_the_cassette(tmp_path: Path) -> None:
    cassette, before = good_cassette(tmp_path)
    env = {**os.environ, "FAKE_ANNOUNCE": "1"}
    proc = subprocess.Popen(
        record_cmd(cassette, "echo"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin and proc.stdout and proc.stderr
    assert b'"ready"' in proc.stdout.readline()  # the proxy runs, the server spoke; the client did not
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=WAIT) == 5
    stderr = proc.stderr.read()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        pipe.close()
    assert b"stopping: waiting up to 0.5 s" in stderr
    assert_one_line_nothing_recorded(stderr.split(b"\n", 1)[1], kept=True)
    assert cassette.read_bytes() == before
    assert not journal_path(cassette).exists()


def test_replay_modes_that_record_keep_the_cassette_when_the_client_sent_nothing(tmp_path: Path) -> None:
    cassette, before = good_cassette(tmp_path)
    server = ["--", sys.executable, FAKE, "echo"]
    replay = [sys.executable, "-m", "harn_mcp_mock", "replay", "--cassette"]
    result = subprocess.run(
        [*replay, str(cassette), "--mode", "all", *server],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=WAIT,
    )
    assert result.returncode == 5
    assert cassette.read_bytes() == before
    fresh = tmp_path / "fresh.cassette.json"
    result = subprocess.run(
        [*replay, str(fresh), "--mode", "once", *server],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=WAIT,
    )
    assert result.returncode == 5
    assert "nothing recorded" in result.stderr.decode()
    assert not fresh.exists() and not journal_path(fresh).exists()


def test_a_killed_proxy_leaves_a_journal_that_recovers_and_no_orphan_server(tmp_path: Path) -> None:
    cassette = tmp_path / "a.cassette.json"
    pid_file = tmp_path / "server.pid"
    env = {**os.environ, "FAKE_PID_FILE": str(pid_file)}
    proc = subprocess.Popen(
        record_cmd(cassette, "echo"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert proc.stdin and proc.stdout
    for i in (1, 2):
        proc.stdin.write(req(i))
        proc.stdin.flush()
        assert proc.stdout.readline()
    proc.kill()
    proc.wait(timeout=WAIT)
    proc.stdin.close()
    proc.stdout.close()
    wait_for_exit(int(pid_file.read_text()))  # the server got SIGTERM from PR_SET_PDEATHSIG
    assert not cassette.exists() and journal_path(cassette).exists()
    partial = load_cassette(cassette)
    assert [(m.direction, m.id) for m in partial.messages] == [
        ("client", 1),
        ("server", 1),
        ("client", 2),
        ("server", 2),
    ]
    again = run(record_cmd(cassette, "echo"), req(1))
    assert again.returncode == 3 and b"unfinished recording" in again.stderr
    recovered = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "recover", "--cassette", str(cassette)],
        capture_output=True,
        timeout=WAIT,
    )
    assert recovered.returncode == 0, recovered.stderr
    assert len(load_cassette(cassette).messages) == 4


def test_multi_megabyte_messages_are_relayed_intact_and_spilled_to_the_cas(tmp_path: Path) -> None:
    cassette = tmp_path / "a.cassette.json"
    size = 5 * 1024 * 1024
    result = run(record_cmd(cassette, "big", str(size)), req(1) + req(2, blob="z" * size))
    lines = result.stdout.splitlines()
    assert [len(orjson.loads(x)["result"]["blob"]) for x in lines] == [size, size]
    assert cassette.stat().st_size < 20_000
    assert len(list(cas_dir(cassette).iterdir())) == 3  # the big request and both responses spilled
    responses = [m for m in load_cassette(cassette).messages if m.kind == "response"]
    assert [m.message["result"]["blob"] == "y" * size for m in responses] == [True, True]


def test_hundreds_of_concurrent_requests_answered_out_of_order_pair_correctly(tmp_path: Path) -> None:
    cassette = tmp_path / "a.cassette.json"
    n = 500
    result = run(record_cmd(cassette, "reverse", str(n)), b"".join(req(i, k=i) for i in range(n)))
    assert len(result.stdout.splitlines()) == n
    loaded = load_cassette(cassette)
    by_seq = {m.seq: m for m in loaded.messages}
    responses = [m for m in loaded.messages if m.kind == "response"]
    assert len(responses) == n
    for resp in responses:
        assert isinstance(resp.reply_to, int)
        assert by_seq[resp.reply_to].id == resp.id
        assert resp.message["result"]["echo"] == {"k": resp.id}


def test_a_missing_server_command_is_one_line_with_exit_4_and_leaves_nothing(tmp_path: Path) -> None:
    cassette = tmp_path / "a.cassette.json"
    cmd = [
        sys.executable,
        "-m",
        "harn_mcp_mock",
        "record",
        "--cassette",
        str(cassette),
        "--",
        "no-such-server-xyz",
    ]
    result = run(cmd, b"")
    assert result.returncode == 4
    assert result.stderr.decode().strip().splitlines() == [
        "harn mcp mock record: error: cannot start server 'no-such-server-xyz': command not found"
    ]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["folder", "under-a-file"])
def test_a_cassette_path_that_cannot_be_written_is_one_line_with_exit_3_before_the_server_starts(
    tmp_path: Path, where: str
) -> None:
    """A folder given as --cassette, or a path under a file: refused before the session, not an
    internal error after it (the folder case used to proxy the whole session, then fail to
    write the cassette)."""
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "notes.txt").write_text("a file")
    cassette = tmp_path / ("cassettes" if where == "folder" else "notes.txt/a.cassette.json")
    result = run(record_cmd(cassette, "echo"), req(1))
    assert result.returncode == 3, result.stderr
    assert result.stdout == b""  # the server was never started
    [line] = result.stderr.decode().strip().splitlines()
    assert line.startswith(f"harn mcp mock record: error: {cassette}: ")
    said = "is a folder" if where == "folder" else f"{tmp_path / 'notes.txt'} is a file, not a folder"
    assert said in line  # not the OS's "File exists"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cassettes", "notes.txt"]
    assert list((tmp_path / "cassettes").iterdir()) == []


def test_record_without_a_server_command_is_a_usage_error(tmp_path: Path) -> None:
    result = run(
        [sys.executable, "-m", "harn_mcp_mock", "record", "--cassette", str(tmp_path / "a.json")], b""
    )
    assert result.returncode == 2
    assert b"put it after `--`" in result.stderr

"""`harn mcp mock record` as a real process: transparency, exit codes, signals, crashes, load."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from harn_mcp_mock.cassette.model import cas_dir, journal_path, load_cassette

FAKE = str(Path(__file__).parent / "servers" / "fake_server.py")
WAIT = 30  # seconds: the bound of every wait on a child process


def record_cmd(cassette: Path, *server_args: str, grace: str = "0.5") -> list[str]:
    return [
        sys.executable,
        "-m",
        "harn_mcp_mock",
        "record",
        "--quiet",
        "--cassette",
        str(cassette),
        "--shutdown-timeout",
        grace,
        "--",
        sys.executable,
        FAKE,
        *server_args,
    ]


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


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_are_forwarded_and_the_cassette_is_finished(tmp_path: Path, sig: signal.Signals) -> None:
    cassette = tmp_path / "a.cassette.json"
    proc = subprocess.Popen(record_cmd(cassette, "graceful"), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    proc.stdin.write(req(1))
    proc.stdin.flush()
    assert proc.stdout.readline().startswith(b'{"result"')
    proc.send_signal(sig)
    out = proc.stdout.read()  # to EOF, stdin still open: only the signal ends this session
    assert proc.wait(timeout=WAIT) == 0
    proc.stdin.close()
    proc.stdout.close()
    assert f"bye {int(sig)}".encode() in out
    loaded = load_cassette(cassette)
    assert loaded.meta["exit"]["reason"] == f"signal:{sig.name}"
    assert loaded.messages[-1].method == "notifications/message"
    assert not journal_path(cassette).exists()


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


def test_record_without_a_server_command_is_a_usage_error(tmp_path: Path) -> None:
    result = run(
        [sys.executable, "-m", "harn_mcp_mock", "record", "--cassette", str(tmp_path / "a.json")], b""
    )
    assert result.returncode == 2
    assert b"put it after `--`" in result.stderr

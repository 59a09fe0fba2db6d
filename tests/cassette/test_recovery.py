"""Recovering a killed recording's journal (harn_mcp_mock/cassette/recovery.py): the cassette it
writes, and the recording claim it holds, so that a recording in progress is never taken for a
killed one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from harn_mcp_mock.cassette import load_cassette, recover_journal, save_cassette
from harn_mcp_mock.cassette.claim import CassetteClaim, claim_path
from harn_mcp_mock.cassette.model import journal_path
from harn_mcp_mock.errors import CassetteBusyError, CassetteError, NothingRecordedError
from tests.echo_cassette import echo_cassette

WAIT = 60
ROOT = Path(__file__).resolve().parents[2]
FAKE_SERVER = ROOT / "tests" / "servers" / "fake_server.py"
HEADER = {"format": "harn-mcp-mock/journal", "version": 1, "transport": "stdio", "command": ["srv"]}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def _journal(path: Path, *lines: object, torn: bytes = b"") -> None:
    journal_path(path).write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in (HEADER, *lines)) + torn)


def test_an_unfinished_journal_loads_and_recovers(tmp_path: Path) -> None:
    path = tmp_path / "a.cassette.json"
    _journal(
        path,
        {"seq": 0, "dir": "client", "message": {"jsonrpc": "2.0", "id": 1, "method": "ping"}},
        torn=b'{"seq": 1, "di',
    )
    partial = load_cassette(path)
    assert not partial.complete
    assert [m.method for m in partial.messages] == ["ping"]
    recovered = recover_journal(path)
    assert recovered.meta["exit"]["reason"] == "recorder-died"
    assert not journal_path(path).exists()
    assert load_cassette(path).messages == partial.messages


def test_recovering_a_journal_without_a_client_message_keeps_the_cassette(tmp_path: Path) -> None:
    path = echo_cassette(tmp_path / "a.cassette.json", "hi")
    before = path.read_bytes()
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
    _journal(path, {"seq": 0, "dir": "server", "message": note})
    with pytest.raises(NothingRecordedError, match="kept the existing cassette unchanged"):
        recover_journal(path)
    assert path.read_bytes() == before
    assert not journal_path(path).exists()


def test_the_server_summary_the_trailer_lacked_is_made_from_the_handshake(tmp_path: Path) -> None:
    path = tmp_path / "a.cassette.json"
    answer = load_cassette(echo_cassette(tmp_path / "echo.cassette.json")).messages[1].message
    _journal(
        path, {"seq": 0, "dir": "client", "message": INIT}, {"seq": 1, "dir": "server", "message": answer}
    )
    recovered = recover_journal(path)
    assert recovered.server["serverInfo"] == {"name": "echo", "version": "1.0"}
    assert recovered.server["attempts"] == [{"method": "initialize"}]
    assert load_cassette(path).server == recovered.server


def test_a_journal_whose_recorder_holds_the_claim_is_not_recovered(tmp_path: Path) -> None:
    path = tmp_path / "a.cassette.json"
    _journal(path, {"seq": 0, "dir": "client", "message": INIT})
    journal = journal_path(path).read_bytes()
    with CassetteClaim(path):  # a recorder at work (this process)
        with pytest.raises(CassetteBusyError, match="still recording this cassette") as busy:
            recover_journal(path)
    assert f"pid {os.getpid()}" in str(busy.value)
    assert journal_path(path).read_bytes() == journal and not path.exists()


def test_a_dead_recorders_claim_is_taken_over_and_its_file_removed(tmp_path: Path) -> None:
    path = tmp_path / "a.cassette.json"
    _journal(path, {"seq": 0, "dir": "client", "message": INIT})
    # What SIGKILL leaves: the claim file names the dead recorder; the OS dropped its lock.
    claim_path(path).write_bytes(orjson.dumps({"pid": 2**22 + 1, "host": "h", "worker": None}) + b"\n")
    recover_journal(path)
    assert path.exists() and not journal_path(path).exists() and not claim_path(path).exists()


def test_recover_of_a_live_recording_is_refused_and_the_recording_loses_nothing(tmp_path: Path) -> None:
    """`harn mcp mock recover` run beside a `record` still recording: exit 3 with one line naming
    the recorder; the recording goes on and writes every message."""
    cassette = tmp_path / "live.cassette.json"
    harn = [sys.executable, "-m", "harn_mcp_mock"]
    record = [
        *harn,
        "record",
        "--quiet",
        "--cassette",
        str(cassette),
        "--",
        sys.executable,
        str(FAKE_SERVER),
        "echo",
    ]
    proc = subprocess.Popen(record, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(orjson.dumps(INIT) + b"\n")
        proc.stdin.flush()
        assert orjson.loads(proc.stdout.readline())["id"] == 0  # journaled before it was forwarded
        recover = subprocess.run(
            [*harn, "recover", "--cassette", str(cassette)], capture_output=True, text=True, timeout=WAIT
        )
        assert recover.returncode == 3, recover.stderr
        assert recover.stderr.count("\n") == 1 and "still recording this cassette" in recover.stderr
        assert f"pid {proc.pid}" in recover.stderr and "Traceback" not in recover.stderr
        proc.stdin.write(orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) + b"\n")
        proc.stdin.flush()
        assert orjson.loads(proc.stdout.readline())["id"] == 1
        proc.stdin.close()
        assert proc.wait(timeout=WAIT) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=WAIT)
        for pipe in (proc.stdout, proc.stderr):
            pipe.close()
    methods = [m.method for m in load_cassette(cassette).messages if m.direction == "client"]
    assert methods == ["initialize", "tools/list"]
    assert not journal_path(cassette).exists() and not claim_path(cassette).exists()


def test_a_cassette_with_no_journal_has_nothing_to_recover(tmp_path: Path) -> None:
    path = save_cassette(
        load_cassette(echo_cassette(tmp_path / "a.cassette.json")), tmp_path / "b.cassette.json"
    )
    with pytest.raises(CassetteError, match="no unfinished recording"):
        recover_journal(path)
    assert not claim_path(path).exists()

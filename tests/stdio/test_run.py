"""`harn mcp mock replay` as a real process: serving, strict/report, record modes, bad input."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.store import digest
from harn_mcp_mock.tape import load_tape

FAKE = str(Path(__file__).parents[1] / "servers" / "fake_server.py")
NOTES = str(Path(__file__).parents[2] / "examples" / "servers" / "notes_server.py")
# One worker runs the module, so the live server is recorded once (notes_session / recorded).
pytestmark = pytest.mark.xdist_group("stdio/test_run")

WAIT = 60
HARN = [sys.executable, "-m", "harn_mcp_mock"]


def msg(i: Any, method: str, **params: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + b"\n"


INIT = msg(
    0, "initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo={"name": "t", "version": "1"}
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def run(args: list[str], stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*HARN, *args], input=stdin, capture_output=True, timeout=WAIT)


def replies(out: bytes) -> dict[Any, Any]:
    return {m.get("id"): m for m in map(orjson.loads, out.splitlines())}


def record_notes(path: Path, stdin: bytes) -> bytes:
    result = run(["record", "--quiet", "--cassette", str(path), "--", sys.executable, NOTES], stdin)
    assert result.returncode == 0, result.stderr
    return result.stdout


SESSION = (
    INIT
    + INITIALIZED
    + msg(1, "tools/list")
    + msg(2, "tools/call", name="read_note", arguments={"name": "welcome"})
)


@pytest.fixture(scope="module")
def notes_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """SESSION recorded once for the module from the live notes server: the cassette, and what
    the server answered (through the recorder's stdout)."""
    cassette = tmp_path_factory.mktemp("notes") / "notes.cassette.json"
    return cassette, record_notes(cassette, SESSION)


@pytest.fixture
def cassette(notes_session: tuple[Path, bytes], tmp_path: Path) -> Path:
    """A copy of the module's recording, for a test to replay (and write beside) on its own."""
    return Path(shutil.copy(notes_session[0], tmp_path / "notes.cassette.json"))


def test_a_replay_answers_exactly_what_the_live_server_answered(
    notes_session: tuple[Path, bytes], cassette: Path
) -> None:
    replayed = run(["replay", "--cassette", str(cassette)], SESSION)
    assert replayed.returncode == 0, replayed.stderr
    assert replies(replayed.stdout) == replies(notes_session[1])


def test_strict_mode_fails_on_a_miss_and_the_report_explains_it(cassette: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    stdin = INIT + INITIALIZED + msg(2, "tools/call", name="read_note", arguments={"name": "missing"})
    result = run(["replay", "--cassette", str(cassette), "--strict", "--report", str(report)], stdin)
    assert result.returncode == 1
    error = replies(result.stdout)[2]["error"]
    assert error["code"] == -32050
    assert "params.arguments.name: recorded 'welcome', got 'missing'" in error["message"]
    assert b"miss: tools/call" in result.stderr
    summary = orjson.loads(report.read_bytes())
    assert summary["ok"] is False
    assert [m["method"] for m in summary["misses"]] == ["tools/call"]
    assert [u["method"] for u in summary["unused"]] == ["tools/list", "tools/call"]


def test_strict_mode_passes_when_everything_matched_and_was_used(cassette: Path) -> None:
    assert run(["replay", "--cassette", str(cassette), "--strict"], SESSION).returncode == 0


SECRET = "sk-tape-" + "Zq7" * 8  # FAKE_TOKEN: the fake server answers with it (`secrets`)
LATE = "l4te-" + "".join("abcdefghjkmnpqrstuvwxyz23456789"[(i * 7 + 3) % 31] for i in range(14))


def run_env(args: list[str], stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "FAKE_TOKEN": SECRET}
    return subprocess.run([*HARN, *args], input=stdin, capture_output=True, timeout=WAIT, env=env)


def taped(path: Path) -> list[tuple[str, Any, Any]]:
    """(method, request, response) of each exchange on the tape, every payload checked against
    its digest (and the sidecar's blobs against their names) by the tape reader."""
    out = []
    for rec in load_tape(path).records:
        assert rec.kind == "mcp_json_rpc"
        request, response = rec.payload("request"), rec.payload("response")
        assert rec.fields["request_digest"] == digest(request)
        assert rec.fields["response_digest"] == digest(response)
        out.append((rec.fields["method"], orjson.loads(request), orjson.loads(response)))
    return out


def no_secret_on_disk(root: Path, *secrets: str) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            for secret in secrets:
                assert secret.encode() not in path.read_bytes(), path


WHOAMI = INIT + msg(1, "tools/call", name="whoami", arguments={})


@pytest.mark.parametrize("mode", ["once", "all"])
def test_a_session_that_records_tapes_what_the_client_and_the_live_server_exchanged(
    tmp_path: Path, mode: str
) -> None:
    cassette, tape = tmp_path / "x.cassette.json", tmp_path / "t.tape"
    if mode == "all":  # re-records a cassette that exists
        old = run_env(["record", "-q", "--cassette", str(cassette), "--", sys.executable, FAKE, "echo"], INIT)
        assert old.returncode == 0, old.stderr
    args = ["replay", "--mode", mode, "--cassette", str(cassette), "--emit-tape", str(tape)]
    result = run_env([*args, "--", sys.executable, FAKE, "secrets"], WHOAMI)
    assert result.returncode == 0, result.stderr
    assert SECRET in result.stdout.decode()  # the client got the live answer
    exchanges = taped(tape)
    assert [(m, req["id"]) for m, req, _ in exchanges] == [("initialize", 0), ("tools/call", 1)]
    recorded = [m.message for m in load_cassette(cassette).messages if m.direction == "server"]
    assert [resp for _, _, resp in exchanges] == recorded  # redacted as in the cassette
    assert "[REDACTED:" in str(recorded[1])
    no_secret_on_disk(tmp_path, SECRET)


def test_a_new_episodes_session_tapes_every_exchange_served_replayed_or_live(tmp_path: Path) -> None:
    cassette, tape = tmp_path / "x.cassette.json", tmp_path / "t.tape"
    first = run_env(
        ["record", "-q", "--cassette", str(cassette), "--", sys.executable, FAKE, "secrets"], WHOAMI
    )
    assert first.returncode == 0, first.stderr
    session = (
        WHOAMI
        + msg(2, "tools/call", name="note", arguments={"text": f"see {LATE}"})  # a miss: live
        + msg(3, "tools/call", name="login", arguments={"password": LATE})  # tells LATE is a secret
    )
    args = ["replay", "--mode", "new_episodes", "--cassette", str(cassette), "--emit-tape", str(tape)]
    result = run_env([*args, "--", sys.executable, FAKE, "secrets"], session)
    assert result.returncode == 0, result.stderr
    assert b"appended 4 new messages" in result.stderr
    exchanges = taped(tape)
    assert [(m, req["id"]) for m, req, _ in exchanges] == [
        ("initialize", 0),
        ("tools/call", 1),  # replayed
        ("tools/call", 2),  # live, then recorded
        ("tools/call", 3),
    ]
    cassette_answers = {
        m.message["id"]: m.message for m in load_cassette(cassette).messages if m.direction == "server"
    }
    assert [resp for _, _, resp in exchanges] == [cassette_answers[i] for i in range(4)]
    assert "[REDACTED:" in str(exchanges[2][2]["result"]["content"])
    # LATE reached the tape in request 2 before request 3 told it: redacted again at the end.
    no_secret_on_disk(tmp_path, SECRET, LATE)


@pytest.mark.slow
def test_a_line_that_is_not_json_gets_a_parse_error_and_the_replay_goes_on(tmp_path: Path) -> None:
    cassette = tmp_path / "notes.cassette.json"
    record_notes(cassette, SESSION)
    result = run(["replay", "--cassette", str(cassette)], INIT + b"{oops\n" + msg(1, "tools/list"))
    lines = [orjson.loads(x) for x in result.stdout.splitlines()]
    assert lines[1]["error"]["code"] == -32700
    assert "tools" in lines[2]["result"]


def test_mode_none_with_a_missing_cassette_is_one_line_exit_3(tmp_path: Path) -> None:
    result = run(["replay", "--cassette", str(tmp_path / "nope.cassette.json")], b"")
    assert result.returncode == 3
    assert result.stderr.decode().strip().count("\n") == 0
    assert "no such cassette" in result.stderr.decode()


def test_a_bad_mode_lists_the_valid_modes(tmp_path: Path) -> None:
    result = run(["replay", "--cassette", str(tmp_path / "x.json"), "--mode", "sometimes"], b"")
    assert result.returncode == 2
    assert "valid modes: none, once, new_episodes, all" in result.stderr.decode()


def test_mode_once_records_when_missing_then_replays_without_the_server(tmp_path: Path) -> None:
    cassette = tmp_path / "once.cassette.json"
    first = run(
        ["replay", "--mode", "once", "--cassette", str(cassette), "--", sys.executable, NOTES], SESSION
    )
    assert first.returncode == 0, first.stderr
    assert cassette.exists()
    second = run(
        ["replay", "--mode", "once", "--cassette", str(cassette), "--", "no-such-server-xyz"], SESSION
    )
    assert second.returncode == 0, second.stderr
    assert replies(second.stdout) == replies(first.stdout)


def test_x07_aliases_name_the_same_modes(tmp_path: Path) -> None:
    cassette = tmp_path / "rw.cassette.json"
    result = run(
        ["replay", "--mode", "rewrite", "--cassette", str(cassette), "--", sys.executable, NOTES], SESSION
    )
    assert result.returncode == 0 and cassette.exists()


@pytest.mark.slow
def test_mode_none_refuses_a_server_command(tmp_path: Path) -> None:
    cassette = tmp_path / "notes.cassette.json"
    record_notes(cassette, SESSION)
    result = run(["replay", "--cassette", str(cassette), "--", sys.executable, NOTES], SESSION)
    assert result.returncode == 2
    assert "never starts a server" in result.stderr.decode()


@pytest.mark.slow
def test_new_episodes_replays_hits_records_misses_and_the_result_replays_cleanly(tmp_path: Path) -> None:
    cassette = tmp_path / "ep.cassette.json"
    record_notes(cassette, SESSION)
    before = len(load_cassette(cassette).messages)
    new_call = msg(3, "tools/call", name="write_note", arguments={"name": "n2", "text": "two words"})
    stdin = SESSION + new_call
    result = run(
        ["replay", "--mode", "new_episodes", "--cassette", str(cassette), "--", sys.executable, NOTES], stdin
    )
    assert result.returncode == 0, result.stderr
    got = replies(result.stdout)
    assert got[3]["result"]["structuredContent"] == {"name": "n2", "text": "two words", "words": 2}
    after = load_cassette(cassette)
    assert len(after.messages) == before + 2
    assert after.messages[-1].reply_to == after.messages[-2].seq
    again = run(["replay", "--cassette", str(cassette), "--strict"], stdin)
    assert again.returncode == 0, again.stderr
    assert replies(again.stdout) == got


def test_new_episodes_without_a_cassette_records_everything(tmp_path: Path) -> None:
    cassette = tmp_path / "fresh.cassette.json"
    result = run(
        ["replay", "--mode", "new_episodes", "--cassette", str(cassette), "--", sys.executable, FAKE, "echo"],
        msg(1, "x"),
    )
    assert result.returncode == 0
    assert [m.kind for m in load_cassette(cassette).messages] == ["request", "response"]

"""``harn mcp mock recover`` redacts the tape of a killed recording with the journal's memory.

One real recording (``record --emit-tape`` of tests/servers/memory_server.py, an MCP server on
the official SDK, driven by raw JSON-RPC lines) is killed with SIGKILL after a value that went
free-standing to the journal, the tape and the tape's sidecar was told to be a secret by a later
``password``. Each test recovers a copy of what the kill left (the journal names the tape
relative to the cassette's folder, so the copy finds its own tape). The secret is assembled at
run time: this file holds none.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.tape import load_tape
from tests.e2e.test_record_secrets import assert_never_written, secret_forms
from tests.e2e.test_record_value_memory import LATE, late_session, start_recording

WAIT = 60


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder a recording killed by SIGKILL left: journal, its blobs, tape, tape sidecar."""
    out = tmp_path_factory.mktemp("killed")
    proc = start_recording(out)  # the e2e value-memory test's session, then SIGKILL
    try:
        late_session(proc)
        # The answer to `configure` was read: the recorder journals (and tapes) each chunk before
        # it forwards it, so the `learned` line and every tape line are on disk. SIGKILL: nothing
        # runs at the end.
        proc.kill()
        proc.communicate(timeout=WAIT)
    finally:
        proc.kill()
    return out


def _copy(killed: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(killed, out)
    return out


def _recover(out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "recover", "--cassette", str(out / "s.cassette.json")],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


def _holds(folder: Path, secret: str) -> bool:
    data = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())
    return any(form in data for form in secret_forms(secret).values())


def test_recover_redacts_the_tape_and_its_sidecar_of_a_killed_recording(killed: Path, tmp_path: Path) -> None:
    out = _copy(killed, tmp_path)
    tape = out / "s.tape.jsonl"
    journal = out / "s.cassette.json.journal"
    # What the kill left: the tape and its sidecar hold the value in clear (so this test can fail),
    # and the journal names the tape relative to the cassette's folder.
    assert LATE.encode() in tape.read_bytes()
    assert any(LATE.encode() in blob.read_bytes() for blob in (out / "s.tape.jsonl.cas").iterdir())
    assert json.loads(journal.read_bytes().split(b"\n")[0])["tape"] == "s.tape.jsonl"
    done = _recover(out)
    assert done.returncode == 0, done.stderr
    assert not journal.exists()
    wrote, said = done.stderr.splitlines()
    assert wrote.startswith("harn mcp mock recover: wrote ")
    assert said == f"harn mcp mock recover: tape {tape}: redacted again with what the journal remembers", said
    # No byte of the tape, its sidecar, the cassette or its blobs holds it, in any form.
    assert_never_written(out, {"late": LATE})
    loaded = load_tape(tape)  # a valid tape: digests follow their payloads
    assert loaded.notes == []
    for record in loaded:
        for name in ("request", "response", "payload"):
            if name in record.fields:
                record.payload(name)
    assert "[REDACTED:" in tape.read_text()
    recovered = load_cassette(out / "s.cassette.json")
    assert recovered.meta["exit"]["reason"] == "recorder-died"
    # The trailer the recorder never wrote: its server summary is made again from the handshake.
    assert recovered.server["serverInfo"]["name"] == "memory"
    assert recovered.server["handshake"] == "initialize" and recovered.server["capabilities"]
    assert recovered.server["attempts"] == [{"method": "initialize"}]
    assert not _holds(out, LATE)


def test_a_torn_last_line_of_the_tape_is_dropped(killed: Path, tmp_path: Path) -> None:
    out = _copy(killed, tmp_path)
    tape = out / "s.tape.jsonl"
    lines = tape.read_bytes().split(b"\n")
    [early] = [line for line in lines if b"remember " + LATE.encode() in line]
    # The kill cut a line mid-write: a prefix of a line that holds the value in clear.
    torn = early[: early.index(LATE.encode()) + len(LATE) + 3]
    tape.write_bytes(tape.read_bytes() + torn)
    assert load_tape(tape).notes  # the loader drops it with a note
    done = _recover(out)
    assert done.returncode == 0, done.stderr
    assert "its torn last line dropped" in done.stderr
    assert tape.read_bytes().endswith(b"\n")  # complete lines only
    assert load_tape(tape).notes == []
    assert_never_written(out, {"late": LATE})


def test_a_tape_gone_does_not_stop_the_cassette_recovering(killed: Path, tmp_path: Path) -> None:
    out = _copy(killed, tmp_path)
    tape = out / "s.tape.jsonl"
    tape.unlink()
    shutil.rmtree(out / "s.tape.jsonl.cas")
    done = _recover(out)
    assert done.returncode == 0, done.stderr
    assert f"tape {tape}, named in the journal, is gone: nothing to redact there" in done.stderr
    assert (out / "s.cassette.json").exists() and not (out / "s.cassette.json.journal").exists()
    assert_never_written(out, {"late": LATE})


def test_a_file_that_is_not_the_tape_is_left_as_it_is(killed: Path, tmp_path: Path) -> None:
    out = _copy(killed, tmp_path)
    tape = out / "s.tape.jsonl"
    shutil.rmtree(out / "s.tape.jsonl.cas")
    text = b"notes of mine\nnot a tape, and its last line has no newline"
    tape.write_bytes(text)
    done = _recover(out)
    assert done.returncode == 0, done.stderr
    wrote, said = done.stderr.splitlines()
    assert wrote.startswith("harn mcp mock recover: wrote ")
    assert f"{tape}, named in the journal as its tape, is not a tape" in said and "left as it is" in said
    assert tape.read_bytes() == text  # nothing lost
    assert (out / "s.cassette.json").exists()


def test_a_journal_whose_tape_path_leads_elsewhere_touches_nothing_there(
    killed: Path, tmp_path: Path
) -> None:
    out = _copy(killed, tmp_path)
    journal = out / "s.cassette.json.journal"
    lines = journal.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "file.txt").write_bytes(b"not yours\n")
    header["tape"] = "../elsewhere"  # a folder
    journal.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]))
    done = _recover(out)
    assert done.returncode == 0, done.stderr
    assert "is not a regular file" in done.stderr and "left as it is" in done.stderr
    assert (elsewhere / "file.txt").read_bytes() == b"not yours\n"


def test_a_tape_that_cannot_be_rewritten_keeps_the_journal_to_try_again(
    killed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harn_mcp_mock.errors import TapeError
    from harn_mcp_mock.record.recover import recover_recording
    from harn_mcp_mock.tape import mcp

    out = _copy(killed, tmp_path)
    journal = out / "s.cassette.json.journal"

    def refused(path: Path, data: bytes, *, sync: bool = True) -> None:
        raise PermissionError(13, "Permission denied")  # a read-only folder (root ignores modes)

    with monkeypatch.context() as patched:
        patched.setattr(mcp, "atomic_write", refused)
        with pytest.raises(
            TapeError, match=r"cannot rewrite the tape .*Permission denied.*the journal is kept"
        ):
            recover_recording(out / "s.cassette.json")
    assert journal.exists() and not (out / "s.cassette.json").exists()  # nothing lost: run it again
    done = recover_recording(out / "s.cassette.json")
    assert done.tape is not None and "redacted again" in done.tape
    assert_never_written(out, {"late": LATE})

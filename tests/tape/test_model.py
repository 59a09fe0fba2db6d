"""The event tape: writer, loader, CAS spill, versioning, torn lines, determinism."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from harn_mcp_mock.clock import PausedClock
from harn_mcp_mock.store import canonical_bytes, digest
from harn_mcp_mock.tape import (
    TAPE_FORMAT_VERSION,
    Tape,
    TapeError,
    TapeFormatError,
    TapeIntegrityError,
    TapeRecord,
    TapeVersionError,
    TapeWriter,
    cas_dir,
    load_tape,
    load_tape_pair,
)
from harn_mcp_mock.tape.mcp import McpTapeObserver

START = 1_767_225_600_000


def write_sample(path: Path, clock: PausedClock | None = None) -> Path:
    clock = clock or PausedClock(START, step_ns=1_000_000)
    with TapeWriter(path, clock=clock, script_path="examples/cron.harn", argv=["--mode=daily"]) as w:
        w.record("clock_read", source="wall", value_ms=clock.wall_ms())
        w.record("clock_sleep", duration_ms=250)
        clock.advance(0.25)
        w.record("llm_call", request_digest=digest(b"req"), payloads={"response": "hello"})
        w.record("file_write", path="out.txt", content_hash=digest(b"data"), len_bytes=4)
        w.record("file_delete", path="tmp.txt", phase="runtime_finalize")
    return path


def test_round_trip(tmp_path: Path) -> None:
    tape = load_tape(write_sample(tmp_path / "run.tape"))
    assert isinstance(tape, Tape)
    assert tape.header == {
        "type": "header",
        "version": TAPE_FORMAT_VERSION,
        "harn_version": tape.header["harn_version"],
        "started_at_unix_ms": START,
        "script_path": "examples/cron.harn",
        "argv": ["--mode=daily"],
    }
    assert [r.seq for r in tape.records] == [0, 1, 2, 3, 4]
    assert [r.kind for r in tape.records] == [
        "clock_read",
        "clock_sleep",
        "llm_call",
        "file_write",
        "file_delete",
    ]
    assert [r.phase for r in tape.records][-1] == "runtime_finalize"
    first, sleep, llm = tape.records[:3]
    assert isinstance(first, TapeRecord)
    assert first.fields == {"source": "wall", "value_ms": START + 1}
    assert first.virtual_time_ms == START + 1 and first.monotonic_ms == 1  # one 1 ms step since the start
    assert sleep.fields == {"duration_ms": 250}
    assert llm.virtual_time_ms > START + 250 - 1 and llm.monotonic_ms >= 250
    assert llm.fields["response"] == {"content_hash": digest(b"hello"), "text": "hello"}
    assert llm.payload("response") == b"hello"
    assert not cas_dir(tape.path).exists()  # nothing spilled: no sidecar
    assert tape.notes == []


def test_lines_are_canonical_json(tmp_path: Path) -> None:
    path = write_sample(tmp_path / "run.tape")
    lines = path.read_bytes().splitlines()
    assert len(lines) == 6
    for line in lines:
        assert canonical_bytes(orjson.loads(line)) == line
    assert orjson.loads(lines[1])["type"] == "record"


def test_record_returns_written_document(tmp_path: Path) -> None:
    clock = PausedClock(START)
    with TapeWriter(tmp_path / "t.tape", clock=clock) as w:
        rec = w.record("clock_sleep", duration_ms=5)
        assert rec == {
            "type": "record",
            "seq": 0,
            "phase": "user_script",
            "virtual_time_ms": START,
            "monotonic_ms": 0,
            "kind": "clock_sleep",
            "duration_ms": 5,
        }
        assert w.records_written == 1


def test_large_payload_spills_to_cas_and_dedups(tmp_path: Path) -> None:
    big = "x" * 5000
    path = tmp_path / "run.tape"
    with TapeWriter(path, clock=PausedClock()) as w:
        w.record("llm_call", request_digest="r1", payloads={"response": big})
        w.record("llm_call", request_digest="r2", payloads={"response": big})
        w.record(
            "process_spawn", program="p", payloads={"stdout_payload": b"\xff\xfe", "stderr_payload": b"ok"}
        )
    tape = load_tape(path)
    ref = tape.records[0].fields["response"]
    assert ref == {"content_hash": digest(big.encode()), "len_bytes": 5000}
    assert tape.records[1].fields["response"] == ref
    blobs = sorted(p.name for p in cas_dir(path).iterdir())
    assert blobs == sorted({digest(big.encode()), digest(b"\xff\xfe")})  # stored once
    assert tape.records[0].payload("response") == big.encode()
    # bytes that are not UTF-8 always spill, however small
    assert tape.records[2].fields["stdout_payload"] == {"content_hash": digest(b"\xff\xfe"), "len_bytes": 2}
    assert tape.records[2].fields["stderr_payload"] == {"content_hash": digest(b"ok"), "text": "ok"}
    assert tape.records[2].payload("stdout_payload") == b"\xff\xfe"


@pytest.mark.parametrize(("sync", "fsyncs"), [(True, 2), (False, 0)])
def test_sync_decides_the_fsyncs_of_the_tape_and_its_blobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync: bool, fsyncs: int
) -> None:
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    path = tmp_path / "run.tape"
    with TapeWriter(path, clock=PausedClock(), sync=sync) as w:  # one blob, then the tape at close
        w.record("llm_call", request_digest="r1", payloads={"response": "x" * 5000})
    assert len(calls) == fsyncs
    assert load_tape(path).records[0].payload("response") == b"x" * 5000


def test_threshold_is_4096_bytes(tmp_path: Path) -> None:
    with TapeWriter(tmp_path / "t.tape", clock=PausedClock()) as w:
        assert "text" in w.payload_ref("a" * 4096)
        assert "len_bytes" in w.payload_ref("a" * 4097)
        assert "len_bytes" in w.payload_ref("é" * 2049)  # 4098 UTF-8 bytes


def test_payload_integrity(tmp_path: Path) -> None:
    path = tmp_path / "run.tape"
    with TapeWriter(path, clock=PausedClock()) as w:
        w.record("llm_call", payloads={"response": "y" * 5000, "small": "hi"})
    tape = load_tape(path)
    rec = tape.records[0]
    (cas_dir(path) / rec.fields["response"]["content_hash"]).write_bytes(b"tampered")
    with pytest.raises(TapeIntegrityError, match="altered"):
        rec.payload("response")
    rec.fields["small"]["text"] = "ho"
    with pytest.raises(TapeIntegrityError, match="content_hash"):
        rec.payload("small")
    with pytest.raises(KeyError):
        rec.payload("nope")


def test_unknown_kind_loads_as_unknown(tmp_path: Path) -> None:
    path = tmp_path / "run.tape"
    with TapeWriter(path, clock=PausedClock()) as w:
        w.record("http_request", url="https://example.com")
        w.record("mcp_json_rpc", server="s", method="tools/list")
    tape = load_tape(path)
    assert tape.records[0].kind == "unknown"
    assert tape.records[0].raw_kind == "http_request"
    assert tape.records[0].fields == {"url": "https://example.com"}
    assert tape.records[1].kind == "mcp_json_rpc"
    assert tape.records[0].to_json()["kind"] == "http_request"


def test_newer_version_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "new.tape"
    path.write_bytes(canonical_bytes({"type": "header", "version": TAPE_FORMAT_VERSION + 1}) + b"\n")
    with pytest.raises(TapeVersionError) as info:
        load_tape(path)
    text = str(info.value)
    assert "\n" not in text
    assert str(path) in text and "newer" in text
    assert info.value.exit_code == 3


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"", "empty tape"),
        (b"not json\n", "header is not valid JSON"),
        (b'{"type": "record"}\n', "first line"),
        (b'{"type": "header", "version": "1"}\n', "positive integer"),
        (b'{"type": "header", "version": 1}\n[1]\n{"type": "record"}\n', "JSON object"),
        (b'{"type": "header", "version": 1}\n{"type": "record", "seq": 0}\n', "no 'phase'"),
        (b'{"type": "header", "version": 1}\nnope\n{"type": "header", "version": 1}\n', "not valid JSON"),
        (b'{"type": "header", "version": 1}\n{"type": "other"}\n', "no 'seq'|record"),
    ],
)
def test_malformed_tapes(tmp_path: Path, content: bytes, match: str) -> None:
    path = tmp_path / "bad.tape"
    path.write_bytes(content)
    with pytest.raises(TapeFormatError, match=match):
        load_tape(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TapeError, match="cannot read tape"):
        load_tape(tmp_path / "absent.tape")


def test_torn_last_line_dropped_with_note(tmp_path: Path) -> None:
    path = write_sample(tmp_path / "run.tape")
    data = path.read_bytes()
    path.write_bytes(data + b'{"type":"record","seq":5,"ph')  # the writer died mid-line
    tape = load_tape(path)
    assert len(tape.records) == 5
    assert len(tape.notes) == 1 and "torn last line 7" in tape.notes[0]
    # a complete (newline-terminated) bad last line is an error, not a torn write
    path.write_bytes(data + b"garbage\n")
    with pytest.raises(TapeFormatError, match="not valid JSON"):
        load_tape(path)


def test_tape_readable_while_writing(tmp_path: Path) -> None:
    path = tmp_path / "run.tape"
    w = TapeWriter(path, clock=PausedClock())
    w.record("clock_sleep", duration_ms=1)
    assert len(load_tape(path).records) == 1  # flushed per record
    w.close()
    w.close()  # idempotent
    assert w.closed
    with pytest.raises(ValueError, match="closed"):
        w.record("clock_sleep", duration_ms=1)


def test_writer_rejects_bad_input(tmp_path: Path) -> None:
    with TapeWriter(tmp_path / "t.tape", clock=PausedClock()) as w:
        with pytest.raises(ValueError, match="phase"):
            w.record("clock_sleep", phase="teardown")
        with pytest.raises(ValueError, match="clash"):
            w.record("clock_sleep", seq=3)
        with pytest.raises(ValueError, match="clash"):
            w.record("llm_call", response=1, payloads={"response": "x"})
        with pytest.raises(ValueError, match="kind"):
            w.record("")


def test_two_identical_runs_give_byte_identical_tapes(tmp_path: Path) -> None:
    def run(path: Path) -> bytes:
        clock = PausedClock(START, step_ns=333_333)
        with TapeWriter(path, clock=clock, script_path="s.harn", argv=["-v"]) as w:
            obs = McpTapeObserver(w, "srv")
            obs.on_message("client->server", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            clock.advance(0.0123)
            w.record("llm_call", request_digest=digest(b"q"), payloads={"response": "r" * 5000})
            obs.on_message("server->client", {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})
            w.record(
                "process_spawn",
                program="ls",
                exit_code=0,
                duration_ms=3,
                payloads={"stdout_payload": b"\xff", "stderr_payload": ""},
            )
        return path.read_bytes()

    assert run(tmp_path / "a" / "run.tape") == run(tmp_path / "b" / "run.tape")
    a = write_sample(tmp_path / "a" / "s.tape")
    b = write_sample(tmp_path / "b" / "s.tape")
    assert a.read_bytes() == b.read_bytes()


def test_load_tape_pair_shares_equal_lines(tmp_path: Path) -> None:
    a = write_sample(tmp_path / "a.tape")
    b = write_sample(tmp_path / "b.tape")
    with b.open("ab") as fh:
        fh.write(
            canonical_bytes(
                {
                    "type": "record",
                    "seq": 5,
                    "phase": "user_script",
                    "virtual_time_ms": 1,
                    "monotonic_ms": 1,
                    "kind": "clock_sleep",
                    "duration_ms": 1,
                }
            )
            + b"\n"
        )
    ta, tb = load_tape_pair(a, b)
    assert len(ta.records) == 5 and len(tb.records) == 6
    assert all(x is y for x, y in zip(ta.records, tb.records, strict=False))
    assert tb.path == b


def test_default_clock_and_started_at(tmp_path: Path) -> None:
    with TapeWriter(tmp_path / "t.tape", started_at_unix_ms=42) as w:
        rec = w.record("clock_sleep", duration_ms=0)
    assert w.header["started_at_unix_ms"] == 42
    assert rec["monotonic_ms"] >= 0 and rec["virtual_time_ms"] > 1_600_000_000_000


def test_a_tape_path_that_cannot_be_written_is_one_line_naming_it(tmp_path: Path) -> None:
    """--emit-tape FOLDER (or a path under a file) was an internal IsADirectoryError."""
    from harn_mcp_mock.errors import OutputError

    (tmp_path / "notes.txt").write_text("a file")
    with pytest.raises(OutputError) as caught:
        TapeWriter(tmp_path, clock=PausedClock())
    assert str(caught.value) == f"{tmp_path}: cannot write it: it is a folder"
    with pytest.raises(OutputError, match=r"notes\.txt is a file, not a folder"):
        TapeWriter(tmp_path / "notes.txt" / "t.tape", clock=PausedClock())

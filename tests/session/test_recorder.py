from pathlib import Path
from typing import Any

import orjson
import pytest

from harn_mcp_mock.cassette.model import journal_path, load_cassette
from harn_mcp_mock.clock import PausedClock
from harn_mcp_mock.errors import NothingRecordedError
from harn_mcp_mock.jsonrpc import CLIENT, SERVER
from harn_mcp_mock.session.recorder import Recorder


class ReplaceSecret:
    """A stand-in redactor: replaces the word SECRET everywhere."""

    def __init__(self) -> None:
        self.findings: dict[str, int] = {}

    def redact_message(self, obj: Any) -> Any:
        return orjson.loads(orjson.dumps(obj).replace(b"SECRET", b"[REDACTED:1]"))

    def redact_text(self, text: str) -> str:
        return text.replace("SECRET", "[REDACTED:1]")


def line(obj: Any) -> bytes:
    return orjson.dumps(obj) + b"\n"


def make(tmp_path: Path, step_ns: int = 1_000_000) -> Recorder:
    return Recorder(
        tmp_path / "r.cassette.json",
        ReplaceSecret(),
        command=["srv"],
        policy_name="test",
        policy_digest="blake3:" + "0" * 64,
        clock=PausedClock(step_ns=step_ns),
    )


EXIT = {"code": 0, "signal": None, "reason": "client-eof"}


def test_responses_pair_with_requests_by_id_and_direction_with_latency(tmp_path: Path) -> None:
    rec = make(tmp_path)
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}))
    # the server asks the client something with the same id: a different exchange
    rec.feed(SERVER, line({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {}}))
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 1, "result": {"role": "assistant"}}))
    rec.feed(SERVER, line({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}))
    cassette = rec.finish(EXIT)
    got = [(m.seq, m.direction, m.kind, m.reply_to, m.latency_ms) for m in cassette.messages]
    assert got == [
        (0, "client", "request", None, None),
        (1, "server", "request", None, None),
        (2, "client", "response", 1, 1.0),
        (3, "server", "response", 0, 3.0),
    ]


def test_string_and_integer_ids_are_different_ids(tmp_path: Path) -> None:
    rec = make(tmp_path)
    rec.feed(
        CLIENT,
        line({"jsonrpc": "2.0", "id": 1, "method": "a"}) + line({"jsonrpc": "2.0", "id": "1", "method": "b"}),
    )
    rec.feed(SERVER, line({"jsonrpc": "2.0", "id": "1", "result": {}}))
    assert rec.finish(EXIT).messages[2].reply_to == 1


def test_a_forgotten_request_leaves_the_answer_to_its_retry(tmp_path: Path) -> None:
    rec = make(tmp_path)
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {}}
    rec.feed(CLIENT, line(call))  # refused with an HTTP 307: never answered
    assert rec.forget_request(CLIENT, 7, 0)
    assert not rec.forget_request(CLIENT, 7, 0)
    rec.feed(CLIENT, line(call))  # the retry, same id
    rec.feed(SERVER, line({"jsonrpc": "2.0", "id": 7, "result": {}}))
    messages = rec.finish(EXIT).messages
    assert (messages[0].reply_to, messages[2].reply_to) == (None, 1)


def test_batches_pair_item_by_item(tmp_path: Path) -> None:
    rec = make(tmp_path)
    rec.feed(
        CLIENT,
        line(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "a"},
                {"jsonrpc": "2.0", "method": "n"},
                {"jsonrpc": "2.0", "id": 2, "method": "b"},
            ]
        ),
    )
    rec.feed(
        SERVER, line([{"jsonrpc": "2.0", "id": 2, "result": {}}, {"jsonrpc": "2.0", "id": 9, "result": {}}])
    )
    reply = rec.finish(EXIT).messages[1]
    assert reply.reply_to == [0, None]
    assert reply.latency_ms == [1.0, None]


def test_the_discover_fallback_handshake_is_summarised(tmp_path: Path) -> None:
    rec = make(tmp_path)
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {}}))
    rec.feed(
        SERVER, line({"jsonrpc": "2.0", "id": 0, "error": {"code": -32601, "message": "Method not found"}})
    )
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
    rec.feed(
        SERVER,
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            }
        ),
    )
    server = rec.finish(EXIT).server
    assert server == {
        "handshake": "initialize",
        "protocolVersion": "2025-11-25",
        "serverInfo": {"name": "s", "version": "1"},
        "capabilities": {},
        "attempts": [{"method": "server/discover", "error": -32601}, {"method": "initialize"}],
    }


def test_secrets_are_redacted_before_the_journal_is_written(tmp_path: Path) -> None:
    rec = make(tmp_path)
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"k": "SECRET"}}))
    rec.feed(CLIENT, b"not json SECRET\n")
    assert b"SECRET" not in journal_path(rec.cassette_path).read_bytes()
    rec.finish(EXIT)
    assert b"SECRET" not in rec.cassette_path.read_bytes()


def test_an_unterminated_last_line_is_recorded_at_end_of_stream(tmp_path: Path) -> None:
    rec = make(tmp_path)
    rec.feed(SERVER, b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}\n{"jsonrpc":"2.0","met')
    cassette = rec.finish({"code": 1, "signal": None, "reason": "server-exit"})
    assert [m.kind for m in cassette.messages] == ["notification", "invalid"]
    assert cassette.messages[1].raw == '{"jsonrpc":"2.0","met'


def test_finishing_writes_the_cassette_and_removes_the_journal(tmp_path: Path) -> None:
    rec = make(tmp_path)
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    assert journal_path(rec.cassette_path).exists()
    rec.finish(EXIT)
    assert not journal_path(rec.cassette_path).exists()
    loaded = load_cassette(rec.cassette_path)
    assert loaded.meta["exit"] == EXIT
    assert loaded.meta["recorded_at"] == "2026-01-01T00:00:00.000Z"


def test_a_recorder_that_dies_leaves_a_loadable_journal(tmp_path: Path) -> None:
    rec = make(tmp_path)
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    rec.abandon()  # as if the process were killed here
    partial = load_cassette(rec.cassette_path)
    assert not partial.complete
    assert [m.method for m in partial.messages] == ["ping"]


def test_finish_without_a_client_message_keeps_the_old_cassette_and_leaves_no_journal(tmp_path: Path) -> None:
    old = make(tmp_path)
    old.feed(CLIENT, line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    path = old.finish(EXIT).path
    before = path.read_bytes()
    rec = make(tmp_path)
    rec.feed(
        SERVER, line({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x" * 5000}})
    )
    with pytest.raises(NothingRecordedError, match="kept the existing cassette unchanged") as caught:
        rec.finish(EXIT, allow_empty=False)
    assert caught.value.exit_code == 5
    assert path.read_bytes() == before
    assert not journal_path(path).exists()


def test_a_recording_that_broke_off_keeps_its_journal_only_if_the_client_spoke(tmp_path: Path) -> None:
    silent = make(tmp_path)
    silent.feed(SERVER, line({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}))
    silent.broke_off()
    assert not journal_path(tmp_path / "r.cassette.json").exists()
    spoke = make(tmp_path)
    spoke.feed(CLIENT, line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    spoke.broke_off()
    assert len(load_cassette(tmp_path / "r.cassette.json").messages) == 1  # read from the journal


# --- a value the redactor learns after the lines that carry it were written ----------------------

LATER = "l4ter-" + "".join("abcdefghjkmnpqrstuvwxyz23456789"[(i * 7 + 3) % 31] for i in range(14))


def _real(tmp_path: Path) -> Recorder:
    from harn_mcp_mock.redact import RedactionPolicy

    return Recorder(
        tmp_path / "r.cassette.json",
        RedactionPolicy.default().redactor(argv=["srv"], env={}),
        command=["srv"],
        policy_name="default",
        policy_digest="blake3:" + "0" * 64,
        clock=PausedClock(step_ns=1_000_000),
    )


def _told_late(rec: Recorder) -> None:
    """LATER travels free in the handshake answer and a long notification, then a `password` tells it."""
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}))
    info = {"name": "srv", "version": "1"}
    rec.feed(
        SERVER,
        line({"jsonrpc": "2.0", "id": 0, "result": {"serverInfo": info, "instructions": f"use {LATER}"}}),
    )
    big = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "lorem " * 900 + LATER}}
    rec.feed(SERVER, line(big))
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 1, "method": "login", "params": {"password": LATER}}))


def _written(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file())


def test_a_journal_left_behind_is_rewritten_without_a_value_learned_after_it_was_written(
    tmp_path: Path,
) -> None:
    rec = _real(tmp_path)
    _told_late(rec)
    journal = journal_path(rec.cassette_path)
    lines = journal.read_bytes().splitlines()
    assert LATER.encode() in journal.read_bytes()  # written before it was told
    # The line that told it is followed, in the same write, by the fingerprints of what is known.
    assert b'"learned"' in lines[-1] and b'"seq"' in lines[-2]
    blobs = set((tmp_path / "r.cassette.json.cas").iterdir())
    rec.broke_off()  # an exception ended the session: the journal stays for `recover`
    assert LATER.encode() not in _written(tmp_path)
    now = set((tmp_path / "r.cassette.json.cas").iterdir())
    assert len(now) == len(blobs) == 1 and now != blobs  # the long message's blob, redacted again
    partial = load_cassette(rec.cassette_path)
    assert not partial.complete
    assert [m.seq for m in partial.messages] == [0, 1, 2, 3]
    assert partial.meta["redaction"]["fingerprints"]["values"]


def test_the_server_summary_is_redacted_again_at_finish(tmp_path: Path) -> None:
    rec = _real(tmp_path)
    _told_late(rec)
    cassette = rec.finish(EXIT)
    assert LATER.encode() not in _written(tmp_path)
    assert cassette.server["instructions"] == "use [REDACTED:1]"
    assert load_cassette(rec.cassette_path).server["serverInfo"] == {"name": "srv", "version": "1"}


def test_a_batched_handshake_answer_is_summarised_from_its_redacted_member(tmp_path: Path) -> None:
    rec = _real(tmp_path)
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}))
    answer = {"jsonrpc": "2.0", "id": 0, "result": {"serverInfo": {"name": "s"}, "instructions": "hi"}}
    answer["result"]["capabilities"] = {"experimental": {"password": LATER}}
    rec.feed(SERVER, line([answer]))
    cassette = rec.finish(EXIT)
    assert cassette.server["capabilities"] == {"experimental": {"password": "[REDACTED:1]"}}
    assert LATER.encode() not in _written(tmp_path)


def test_each_learned_value_adds_only_its_own_fingerprint_to_the_journal(tmp_path: Path) -> None:
    rec = _real(tmp_path)
    told = [f"{LATER}-{n}" for n in range(3)]
    for n, value in enumerate(told):
        rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": n, "method": "login", "params": {"password": value}}))
    raw = journal_path(rec.cassette_path).read_bytes().splitlines()
    notes = [orjson.loads(x)["learned"] for x in raw if b'"learned"' in x]
    assert [len(n["values"]) for n in notes] == [1, 1, 1]  # what is new, not all that is known
    assert len({n["key"] for n in notes}) == 1
    merged = load_cassette(rec.cassette_path).meta["redaction"]["fingerprints"]  # read from the journal
    assert merged["values"] == sorted(v for n in notes for v in n["values"])
    rec.abandon()  # rewritten: the header holds them all
    header = orjson.loads(journal_path(rec.cassette_path).read_bytes().splitlines()[0])
    assert header["redaction"]["fingerprints"]["values"] == merged["values"]


class _TapeObserver:
    """An observer that writes a tape (what a recorder's journal names for ``recover``)."""

    def __init__(self, tape_path: Path) -> None:
        self.tape_path = tape_path

    def on_message(self, direction: str, message: Any, *, latency_ms: float | None = None) -> None:
        pass


def test_the_journal_says_where_the_tape_is_relative_to_the_cassettes_folder(tmp_path: Path) -> None:
    (tmp_path / "tapes").mkdir()
    rec = Recorder(
        tmp_path / "r.cassette.json",
        ReplaceSecret(),
        command=["srv"],
        policy_name="test",
        policy_digest="blake3:" + "0" * 64,
        observer=_TapeObserver(tmp_path / "tapes" / "t.tape"),
    )
    journal = journal_path(rec.cassette_path)
    assert orjson.loads(journal.read_bytes().splitlines()[0])["tape"] == "tapes/t.tape"
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    assert load_cassette(rec.cassette_path).meta["tape"] == "tapes/t.tape"  # read back from the journal
    cassette = rec.finish(EXIT)
    assert "tape" not in orjson.loads(rec.cassette_path.read_bytes())  # the cassette keeps no tape
    assert cassette.messages


def test_a_tape_attached_after_the_journal_began_is_journaled_and_survives_its_rewrite(
    tmp_path: Path,
) -> None:
    rec = _real(tmp_path)  # sessions over HTTP attach the tape's observer once the session opens
    rec.observer = _TapeObserver(tmp_path.parent / "elsewhere.tape")
    _told_late(rec)
    journal = journal_path(rec.cassette_path)
    assert any(orjson.loads(x).get("tape") == "../elsewhere.tape" for x in journal.read_bytes().splitlines())
    rec.broke_off()  # the journal is rewritten (value memory): the tape's place stays in its header
    assert orjson.loads(journal.read_bytes().splitlines()[0])["tape"] == "../elsewhere.tape"


def test_a_request_its_sender_cancelled_is_not_awaited_and_a_late_answer_still_pairs(tmp_path: Path) -> None:
    """At the client's EOF, record keeps the server's stdin open while answers are owed
    (`awaiting`): a request the client cancelled is owed none, so nothing is waited for."""
    rec = make(tmp_path)
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}))
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": "b", "method": "tools/list"}))
    assert rec.awaiting(CLIENT) == 2 and rec.awaiting(SERVER) == 0
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    rec.feed(CLIENT, line(cancel))
    assert rec.awaiting(CLIENT) == 1
    rec.feed(SERVER, line({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}))  # answered anyway
    rec.feed(SERVER, line({"jsonrpc": "2.0", "id": "b", "result": {"tools": []}}))
    assert rec.awaiting(CLIENT) == 0
    rec.feed(CLIENT, line({"jsonrpc": "2.0", "id": 1, "method": "ping"}))  # the id used again
    assert rec.awaiting(CLIENT) == 1
    cassette = rec.finish(EXIT)
    assert [m.reply_to for m in cassette.messages if m.kind == "response"] == [0, 1]

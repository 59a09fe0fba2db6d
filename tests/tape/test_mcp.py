"""McpTapeObserver: JSON-RPC exchanges and notifications onto the tape."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from harn_mcp_mock.clock import PausedClock
from harn_mcp_mock.store import canonical_bytes, digest_json
from harn_mcp_mock.tape import TapeWriter, load_tape
from harn_mcp_mock.tape.mcp import McpTapeObserver


def req(id_: object, method: str, **params: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def res(id_: object, **result: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def test_pairs_out_of_order_responses(tmp_path: Path) -> None:
    clock = PausedClock()
    path = tmp_path / "run.tape"
    with TapeWriter(path, clock=clock) as w:
        obs = McpTapeObserver(w, "weather")
        obs.on_message("client->server", req(1, "tools/call", name="a"))
        clock.advance(0.001)
        obs.on_message("client->server", req(2, "tools/call", name="b"))
        clock.advance(0.002)
        obs.on_message("server->client", res(2, ok=2))
        clock.advance(0.004)
        obs.on_message("server->client", res(1, ok=1))
        assert obs.pending == 0
    records = load_tape(path).records
    assert [r.kind for r in records] == ["mcp_json_rpc", "mcp_json_rpc"]
    second, first = records  # completion order
    assert second.fields["method"] == "tools/call" and second.fields["direction"] == "client->server"
    assert second.fields["request_digest"] == digest_json(req(2, "tools/call", name="b"))
    assert second.fields["response_digest"] == digest_json(res(2, ok=2))
    assert second.fields["latency_ms"] == 2.0
    assert first.fields["latency_ms"] == 7.0
    assert first.payload("request") == canonical_bytes(req(1, "tools/call", name="a"))
    assert first.payload("response") == canonical_bytes(res(1, ok=1))
    assert first.fields["server"] == "weather"
    assert "error_code" not in first.fields


def test_error_code_and_given_latency(tmp_path: Path) -> None:
    path = tmp_path / "run.tape"
    with TapeWriter(path, clock=PausedClock()) as w:
        obs = McpTapeObserver(w, "s")
        obs.on_message("client", req("x", "tools/call"))
        obs.on_message(
            "server",
            {"jsonrpc": "2.0", "id": "x", "error": {"code": -32602, "message": "bad"}},
            latency_ms=12.3456,
        )
    (r,) = load_tape(path).records
    assert r.fields["error_code"] == -32602
    assert r.fields["latency_ms"] == 12.346


def test_same_id_both_directions_and_int_vs_str(tmp_path: Path) -> None:
    path = tmp_path / "run.tape"
    with TapeWriter(path, clock=PausedClock()) as w:
        obs = McpTapeObserver(w, "s")
        obs.on_message("client->server", req(1, "tools/call"))
        obs.on_message("server->client", req(1, "sampling/createMessage"))  # server-initiated, same id
        obs.on_message("client->server", req("1", "resources/read"))
        obs.on_message("client->server", res(1, role="assistant"))  # answers the server's request
        obs.on_message("server->client", res("1", contents=[]))
        obs.on_message("server->client", res(1, content=[]))
    methods = [(r.fields["method"], r.fields["direction"]) for r in load_tape(path).records]
    assert methods == [
        ("sampling/createMessage", "server->client"),
        ("resources/read", "client->server"),
        ("tools/call", "client->server"),
    ]


def test_notifications_batches_and_noise(tmp_path: Path) -> None:
    path = tmp_path / "run.tape"
    note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
    with TapeWriter(path, clock=PausedClock()) as w:
        obs = McpTapeObserver(w, "s")
        obs.on_message("server->client", note)
        obs.on_message("client->server", [req(1, "ping"), req(2, "ping")])
        obs.on_message("server->client", [res(2), res(1)])
        obs.on_message("server->client", "not json-rpc")
        obs.on_message("server->client", {"jsonrpc": "2.0", "id": 9})  # neither result nor error
    records = load_tape(path).records
    assert len(records) == 3
    n = records[0]
    assert n.fields["notification"] is True and n.fields["method"] == "notifications/progress"
    assert n.fields["direction"] == "server->client"
    assert n.payload("payload") == canonical_bytes(note)
    assert n.fields["request_digest"] == digest_json(note)


def test_unmatched_response_and_unanswered_requests(tmp_path: Path) -> None:
    path = tmp_path / "run.tape"
    with TapeWriter(path, clock=PausedClock()) as w:
        obs = McpTapeObserver(w, "s")
        obs.on_message("server->client", res(5, x=1))
        obs.on_message("client->server", req(6, "tools/list"))
        obs.on_message("client->server", req(7, "prompts/list"))
        obs.finish()
        assert obs.pending == 0
    unmatched, six, seven = load_tape(path).records
    assert unmatched.fields["unmatched"] is True and unmatched.fields["method"] is None
    assert unmatched.fields["request_digest"] is None
    assert [six.fields["method"], seven.fields["method"]] == ["tools/list", "prompts/list"]
    assert six.fields["unanswered"] is True and six.fields["response_digest"] is None
    assert six.fields["latency_ms"] is None


def test_bad_direction(tmp_path: Path) -> None:
    with TapeWriter(tmp_path / "t.tape", clock=PausedClock()) as w:
        with pytest.raises(ValueError, match="direction"):
            McpTapeObserver(w, "s").on_message("sideways", req(1, "ping"))


def test_large_messages_spill(tmp_path: Path) -> None:
    path = tmp_path / "run.tape"
    big = "z" * 10_000
    with TapeWriter(path, clock=PausedClock()) as w:
        obs = McpTapeObserver(w, "s")
        obs.on_message("client->server", req(1, "tools/call", blob=big))
        obs.on_message("server->client", res(1, text=big))
    (r,) = load_tape(path).records
    assert "len_bytes" in r.fields["request"] and "len_bytes" in r.fields["response"]
    assert r.payload("response") == canonical_bytes(res(1, text=big))


def test_redact_tape_rewrites_payloads_digests_and_sidecar_blobs(tmp_path: Path) -> None:
    from harn_mcp_mock.store import digest
    from harn_mcp_mock.tape.mcp import redact_tape

    value = "v4lue-" + "kq7" * 5
    path = tmp_path / "run.tape"
    with TapeWriter(path, clock=PausedClock(), script_path="srv", argv=["--note", value]) as w:
        obs = McpTapeObserver(w, "srv")
        obs.on_message("client", req(1, "tools/call", name="a", text=f"say {value}"))
        obs.on_message("server", res(1, text="lorem " * 900 + value))  # over 4 KiB: a sidecar blob
        obs.on_message(
            "server", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"x": value}}
        )
        obs.on_message("client", req(2, "tools/call", name="b"))
        obs.on_message("server", res(2, ok=True))
    old_blobs = set((tmp_path / "run.tape.cas").iterdir())
    clean_line = path.read_bytes().splitlines()[-1]

    def redact(value_: object) -> object:
        data = canonical_bytes(value_)
        return (
            value_
            if value.encode() not in data
            else orjson.loads(data.replace(value.encode(), b"[REDACTED:1]"))
        )

    assert redact_tape(path, redact)
    assert not redact_tape(path, redact)  # nothing left to change: the tape is not written again
    written = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert value.encode() not in written
    tape = load_tape(path)
    assert tape.header["argv"] == ["--note", "[REDACTED:1]"]
    for record in tape.records:
        for name, digest_field in (
            ("request", "request_digest"),
            ("response", "response_digest"),
            ("payload", "request_digest"),
        ):
            if name in record.fields:
                assert record.fields[digest_field] == digest(record.payload(name))  # verified on read too
    assert set((tmp_path / "run.tape.cas").iterdir()).isdisjoint(old_blobs)  # the blob that held it is gone
    assert path.read_bytes().splitlines()[-1] == clean_line  # an unchanged line keeps its bytes

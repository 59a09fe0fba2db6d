"""The recording engine over any Upstream: an in-memory upstream stands in for the live server."""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock.clock import PausedClock
from harn_mcp_mock.errors import ServerExited
from harn_mcp_mock.jsonrpc.frames import SERVER, Frame, parse_frame
from harn_mcp_mock.session.record import RecordCore, RecordEngine
from harn_mcp_mock.session.recorder import Recorder
from harn_mcp_mock.upstream.base import ExitInfo, Reply, answered_ids


class Plain:
    def __init__(self) -> None:
        self.findings: dict[str, int] = {}

    def redact_message(self, obj: Any) -> Any:
        return obj

    def redact_text(self, text: str) -> str:
        return text


def server(obj: Any) -> Frame:
    return parse_frame(orjson.dumps(obj), SERVER)


class ScriptedUpstream:
    """Answers each client request from ``script`` (method -> the server messages it sends);
    a script entry that is a request of the server's own waits for the client's answer (sent
    with :meth:`send` or as the next exchange) before the rest is yielded, as one stream."""

    def __init__(self, script: dict[str, list[Any]]) -> None:
        self.script = script
        self.sent: list[Any] = []
        self.listener: Callable[[Frame], list[Reply]] | None = None
        self.closed = False

    def exchange(
        self, body: bytes, expect: set[bytes], timeout: float, *, seq: int | None = None
    ) -> Iterator[Frame]:
        message = orjson.loads(body)
        self.sent.append(message)
        waiting = set(expect)
        for obj in self.script.get(message.get("method", ""), []) if waiting else []:
            if isinstance(obj, Exception):
                raise obj
            frame = server({**obj, "id": message["id"]} if "result" in obj else obj)
            waiting -= answered_ids(frame)
            yield frame

    def send(self, body: bytes, *, seq: int | None = None) -> None:
        self.sent.append(orjson.loads(body))

    def listen(self, on_frame: Callable[[Frame], list[Reply]]) -> None:
        self.listener = on_frame

    def close(self, grace: float, on_frame: Callable[[Frame], object] | None = None) -> ExitInfo:
        self.closed = True
        return {"code": 0, "signal": None, "reason": "client-eof"}


def engine(tmp_path: Path, upstream: ScriptedUpstream) -> RecordEngine:
    recorder = Recorder(
        tmp_path / "r.cassette.json",
        Plain(),
        command=["live"],
        policy_name="test",
        policy_digest="blake3:" + "0" * 64,
        clock=PausedClock(step_ns=1_000_000),
    )
    return RecordEngine(RecordCore(recorder), upstream, timeout=1.0)


def request(msg_id: int, method: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {}}


def test_each_request_is_forwarded_answered_and_recorded(tmp_path: Path) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "hi"}}
    upstream = ScriptedUpstream({"tools/list": [note, {"jsonrpc": "2.0", "result": {"tools": []}}]})
    rec = engine(tmp_path, upstream)
    outs = rec.receive(request(1, "tools/list"))
    assert [out.message for out in outs] == [note, {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}]
    assert rec.waiting == set()
    cassette = rec.finish()
    assert cassette is not None and upstream.closed
    assert [(m.direction, m.kind, m.reply_to) for m in cassette.messages] == [
        ("client", "request", None),
        ("server", "notification", None),
        ("server", "response", 0),
    ]


def test_a_server_request_pauses_the_exchange_until_the_client_answers(tmp_path: Path) -> None:
    ask = request(7, "sampling/createMessage")
    upstream = ScriptedUpstream({"tools/call": [ask, {"jsonrpc": "2.0", "result": {"content": []}}]})
    rec = engine(tmp_path, upstream)
    first = rec.receive(request(1, "tools/call"))
    assert [out.message for out in first] == [ask]  # the rest waits for the client's answer
    answer = {"jsonrpc": "2.0", "id": 7, "result": {"role": "assistant"}}
    rest = rec.receive(answer)
    assert [out.message for out in rest] == [{"jsonrpc": "2.0", "id": 1, "result": {"content": []}}]
    assert upstream.sent[-1] == answer
    cassette = rec.finish()
    assert cassette is not None
    assert [(m.direction, m.kind) for m in cassette.messages] == [
        ("client", "request"),
        ("server", "request"),
        ("client", "response"),
        ("server", "response"),
    ]


def test_what_the_server_pushes_unprompted_is_recorded_and_sent_with_the_next_answer(
    tmp_path: Path,
) -> None:
    upstream = ScriptedUpstream({"ping": [{"jsonrpc": "2.0", "result": {}}]})
    rec = engine(tmp_path, upstream)
    rec.receive(request(1, "ping"))
    assert upstream.listener is not None  # the push side is open once a session is
    pushed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert upstream.listener(server(pushed)) == []
    outs = rec.receive(request(2, "ping"))
    assert [out.message for out in outs] == [pushed, {"jsonrpc": "2.0", "id": 2, "result": {}}]
    cassette = rec.finish()
    assert cassette is not None
    assert [m.kind for m in cassette.messages].count("notification") == 1


def test_a_live_server_that_is_gone_answers_each_request_owed_with_an_error(tmp_path: Path) -> None:
    upstream = ScriptedUpstream({"tools/call": [ServerExited("the live server exited before answering")]})
    rec = engine(tmp_path, upstream)
    (out,) = rec.receive(request(3, "tools/call"))
    assert out.message["id"] == 3 and out.message["error"]["code"] == -32603
    assert "the live server exited while recording" in out.message["error"]["message"]
    assert rec.waiting == set()
    cassette = rec.finish()
    assert cassette is not None and cassette.messages[0].method == "tools/call"

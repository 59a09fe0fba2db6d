"""The replay engine on small hand-made cassettes: matching, scripts, misses, reports."""

from __future__ import annotations

from typing import Any

from harn_mcp_mock.cassette.matching import Matcher
from harn_mcp_mock.cassette.model import Cassette, Message
from harn_mcp_mock.jsonrpc.codes import CASSETTE_MISS, METHOD_NOT_FOUND
from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.replay.engine import ReplayEngine


def req(i: Any, method: str, params: Any = None, **meta: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None or meta:
        msg["params"] = dict(params or {})
        if meta:
            msg["params"]["_meta"] = meta
    return msg


def res(i: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "result": result}


def note(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


class Tape:
    """Builds a recorded session message by message."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.pending: dict[tuple[str, Any], int] = {}

    def client(self, msg: dict[str, Any]) -> Tape:
        return self._add("client", msg)

    def server(self, msg: dict[str, Any]) -> Tape:
        return self._add("server", msg)

    def _add(self, direction: str, msg: dict[str, Any]) -> Tape:
        seq = len(self.messages)
        entry = Message(seq, direction, msg)
        if "method" in msg and "id" in msg:
            self.pending[(direction, msg["id"])] = seq
        elif "id" in msg:
            other = "server" if direction == "client" else "client"
            entry.reply_to = self.pending.pop((other, msg["id"]))
            entry.latency_ms = 2.0
        self.messages.append(entry)
        return self

    def engine(self, **kwargs: Any) -> ReplayEngine:
        redactor = RedactionPolicy.default().redactor(argv=[], env={})
        return ReplayEngine(Cassette(self.messages, {}), redactor=redactor, **kwargs)


def messages(outs: list[Any]) -> list[Any]:
    return [o.message for o in outs]


INIT = req(
    0,
    "initialize",
    {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}},
)
INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "s", "version": "1"},
    "x-vendor": {"kept": True},
}


def test_a_request_gets_its_recorded_response_under_the_clients_id_with_unknown_fields_kept() -> None:
    engine = Tape().client(INIT).server(res(0, INIT_RESULT)).engine()
    other_client = req(
        "abc",
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"roots": {}},
            "clientInfo": {"name": "b", "version": "9"},
        },
    )
    assert messages(engine.receive(other_client)) == [res("abc", INIT_RESULT)]


def test_the_json_rpc_id_and_params_meta_do_not_take_part_in_matching() -> None:
    tape = Tape().client(
        req(1, "tools/call", {"name": "echo", "arguments": {"m": "hi"}}, progressToken=1, traceparent="00-a")
    )
    engine = tape.server(res(1, {"content": [{"type": "text", "text": "hi"}]})).engine()
    out = messages(
        engine.receive(req(77, "tools/call", {"name": "echo", "arguments": {"m": "hi"}}, progressToken=9))
    )
    assert out == [res(77, {"content": [{"type": "text", "text": "hi"}]})]


def test_repeated_identical_requests_replay_in_recorded_order_then_repeat_the_last() -> None:
    tape = Tape()
    for i, text in enumerate(["first", "second"], start=1):
        tape.client(req(i, "tools/call", {"name": "roll"})).server(res(i, {"v": text}))
    engine = tape.engine()
    got = [
        messages(engine.receive(req(10 + i, "tools/call", {"name": "roll"})))[0]["result"]["v"]
        for i in range(3)
    ]
    assert got == ["first", "second", "second"]


def test_repeat_cycle_and_error() -> None:
    tape = Tape()
    for i, text in enumerate(["a", "b"], start=1):
        tape.client(req(i, "t", {})).server(res(i, {"v": text}))
    cycle = tape.engine(repeat="cycle")
    assert [messages(cycle.receive(req(i, "t", {})))[0]["result"]["v"] for i in range(3)] == ["a", "b", "a"]
    error = tape.engine(repeat="error")
    outs = [messages(error.receive(req(i, "t", {})))[0] for i in range(3)]
    assert outs[2]["error"]["code"] == CASSETTE_MISS
    assert "already used" in outs[2]["error"]["message"]


def test_a_miss_is_an_error_naming_the_method_and_the_nearest_candidate() -> None:
    tape = Tape()
    tape.client(req(1, "tools/call", {"name": "weather", "arguments": {"city": "Paris"}})).server(res(1, {}))
    tape.client(req(2, "tools/call", {"name": "time", "arguments": {}})).server(res(2, {}))
    engine = tape.engine()
    error = messages(
        engine.receive(req(5, "tools/call", {"name": "weather", "arguments": {"city": "Lyon"}}))
    )[0]["error"]
    assert error["code"] == CASSETTE_MISS
    assert "tools/call" in error["message"]
    assert "params.arguments.city: recorded 'Paris', got 'Lyon'" in error["message"]
    report = engine.finish()
    assert report.misses[0]["method"] == "tools/call"
    assert [u["seq"] for u in report.unused] == [0, 2]


def test_a_method_never_recorded_lists_the_recorded_methods() -> None:
    engine = Tape().client(req(1, "tools/list")).server(res(1, {"tools": []})).engine()
    error = messages(engine.receive(req(2, "prompts/list")))[0]["error"]
    assert "no recorded request has method 'prompts/list' (recorded methods: tools/list)" in error["message"]


def test_an_unseen_server_discover_is_method_not_found_so_clients_fall_back() -> None:
    engine = Tape().client(INIT).server(res(0, INIT_RESULT)).engine()
    assert messages(engine.receive(req(1, "server/discover", {})))[0]["error"]["code"] == METHOD_NOT_FOUND
    assert engine.finish().misses == []


def test_a_recorded_discover_is_answered_as_recorded() -> None:
    discover = {"supportedVersions": ["2026-07-28"], "capabilities": {}}
    engine = Tape().client(req(0, "server/discover", {})).server(res(0, discover)).engine()
    assert messages(engine.receive(req(4, "server/discover", {}, protocolVersion="2026-07-28"))) == [
        res(4, discover)
    ]


def test_initialize_follows_the_clients_version_when_the_server_echoed_it() -> None:
    engine = Tape().client(INIT).server(res(0, INIT_RESULT)).engine()
    asked = req(
        1,
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    )
    assert messages(engine.receive(asked))[0]["result"]["protocolVersion"] == "2025-06-18"


def test_initialize_keeps_the_servers_own_version_when_it_did_not_echo() -> None:
    result = {**INIT_RESULT, "protocolVersion": "2025-06-18"}
    engine = Tape().client(INIT).server(res(0, result)).engine()
    asked = req(
        1,
        "initialize",
        {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    )
    assert messages(engine.receive(asked))[0]["result"]["protocolVersion"] == "2025-06-18"


def test_progress_is_replayed_before_the_response_with_the_clients_token() -> None:
    tape = Tape().client(req(1, "tools/call", {"name": "slow"}, progressToken="rec-token"))
    tape.server(note("notifications/progress", {"progressToken": "rec-token", "progress": 1, "total": 2}))
    tape.server(note("notifications/message", {"level": "info", "data": "working"}))
    tape.server(res(1, {"done": True}))
    engine = tape.engine()
    out = messages(engine.receive(req(9, "tools/call", {"name": "slow"}, progressToken=42)))
    assert out == [
        note("notifications/progress", {"progressToken": 42, "progress": 1, "total": 2}),
        note("notifications/message", {"level": "info", "data": "working"}),
        res(9, {"done": True}),
    ]
    again = messages(engine.receive(req(10, "tools/call", {"name": "slow"})))
    assert [m.get("method", "response") for m in again] == ["notifications/message", "response"]


def test_a_recorded_sampling_request_is_reissued_and_the_result_waits_for_the_answer() -> None:
    tape = Tape().client(req(1, "tools/call", {"name": "ask"}))
    tape.server(req(0, "sampling/createMessage", {"messages": [], "maxTokens": 10}))
    tape.client(res(0, {"role": "assistant", "content": {"type": "text", "text": "yes"}, "model": "m"}))
    tape.server(res(1, {"content": [{"type": "text", "text": "model said yes"}]}))
    engine = tape.engine()
    first = messages(engine.receive(req(5, "tools/call", {"name": "ask"})))
    assert first == [req(0, "sampling/createMessage", {"messages": [], "maxTokens": 10})]
    second = messages(
        engine.receive(res(0, {"role": "assistant", "content": {"type": "text", "text": "no"}, "model": "m"}))
    )
    assert second == [res(5, {"content": [{"type": "text", "text": "model said yes"}]})]
    mismatch = engine.finish().answer_mismatches
    assert len(mismatch) == 1 and mismatch[0]["method"] == "tools/call" and '"no"' in mismatch[0]["got"]


def test_concurrent_requests_answered_out_of_order_each_get_their_own_response() -> None:
    tape = Tape().client(req(1, "tools/call", {"name": "a"})).client(req(2, "tools/call", {"name": "b"}))
    tape.server(res(2, {"v": "b"})).server(res(1, {"v": "a"}))
    engine = tape.engine()
    assert messages(engine.receive(req(20, "tools/call", {"name": "b"}))) == [res(20, {"v": "b"})]
    assert messages(engine.receive(req(10, "tools/call", {"name": "a"}))) == [res(10, {"v": "a"})]


def test_strict_order_refuses_a_request_out_of_recorded_order() -> None:
    tape = Tape().client(req(1, "a", {})).server(res(1, {})).client(req(2, "b", {})).server(res(2, {}))
    engine = tape.engine(strict_order=True)
    error = messages(engine.receive(req(1, "b", {})))[0]["error"]
    assert "strict order: expected 'a'" in error["message"]
    assert "result" in messages(engine.receive(req(2, "a", {})))[0]


def test_unsolicited_server_messages_follow_the_response_they_came_after() -> None:
    tape = Tape().client(req(1, "tools/call", {"name": "add_tool"})).server(res(1, {}))
    tape.server(note("notifications/tools/list_changed", {}))
    engine = tape.engine()
    out = messages(engine.receive(req(3, "tools/call", {"name": "add_tool"})))
    assert out == [res(3, {}), note("notifications/tools/list_changed", {})]


def test_batches_get_a_batch_of_responses() -> None:
    tape = (
        Tape()
        .client(req(1, "a", {}))
        .server(res(1, {"v": 1}))
        .client(req(2, "b", {}))
        .server(res(2, {"v": 2}))
    )
    out = messages(tape.engine().receive([req(7, "a", {}), req(8, "b", {}), note("notifications/x", {})]))
    assert out == [[res(7, {"v": 1}), res(8, {"v": 2})]]


def test_ping_is_answered_even_when_never_recorded() -> None:
    assert messages(Tape().engine().receive(req(1, "ping"))) == [res(1, {})]


def test_secrets_in_incoming_requests_are_redacted_before_matching() -> None:
    secret = "ghp_" + "Q7" * 18
    tape = Tape().client(req(1, "tools/call", {"name": "login", "arguments": {"token": "[REDACTED:3]"}}))
    engine = tape.server(res(1, {"ok": True})).engine()
    out = messages(engine.receive(req(2, "tools/call", {"name": "login", "arguments": {"token": secret}})))
    assert out == [res(2, {"ok": True})]


def test_user_ignore_paths_leave_volatile_arguments_out_of_matching() -> None:
    tape = Tape().client(req(1, "tools/call", {"name": "log", "arguments": {"at": "2026-01-01", "m": "x"}}))
    tape.server(res(1, {}))
    engine = tape.engine(matcher=Matcher.with_paths(["/params/arguments/at"]))
    assert (
        "result"
        in messages(
            engine.receive(req(2, "tools/call", {"name": "log", "arguments": {"at": "2027-05-05", "m": "x"}}))
        )[0]
    )


def test_a_request_worded_without_its_empty_optionals_is_a_hit_and_is_never_forwarded() -> None:
    tape = Tape().client(req(1, "prompts/get", {"name": "p", "arguments": {}}))
    engine = tape.server(res(1, {"messages": []})).engine()
    fastmcp_style = req("a", "prompts/get", {"name": "p"})
    assert engine.has_match(fastmcp_style)  # new_episodes answers it from the cassette
    assert messages(engine.receive(fastmcp_style)) == [res("a", {"messages": []})]
    assert engine.finish().clean

"""The replay engine: the eras bridged (handshake, the server's questions), non-JSON lines and the
preamble in their recorded place."""

from __future__ import annotations

from typing import Any

from harn_mcp_mock.cassette.matching import Matcher
from harn_mcp_mock.cassette.model import Message
from harn_mcp_mock.jsonrpc.codes import CASSETTE_MISS
from harn_mcp_mock.replay.engine import ReplayEngine
from harn_mcp_mock.replay.handshake import initialize_from_discover
from tests.replay.test_engine import Tape, messages, note, req, res

MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
DISCOVER_RESULT = {
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {"listChanged": False}},
    "instructions": "use the clock",
    "resultType": "complete",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "clock", "version": "2"}},
}
CLASSIC_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "c", "version": "1"},
}


def discover_tape() -> Tape:
    tape = Tape().client(req(1, "server/discover", **MODERN)).server(res(1, DISCOVER_RESULT))
    tape.client(req(2, "tools/list", **MODERN)).server(res(2, {"tools": []}))
    return tape.client(req(3, "tools/call", {"name": "now"}, **MODERN)).server(res(3, {"content": []}))


def test_a_classic_initialize_is_answered_from_the_recorded_discover_result() -> None:
    engine = discover_tape().engine()
    [answer] = messages(engine.receive(req("a", "initialize", CLASSIC_INIT)))
    assert answer == res(
        "a",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "clock", "version": "2"},
            "instructions": "use the clock",
        },
    )
    assert engine.receive({"jsonrpc": "2.0", "method": "notifications/initialized"}) == []
    # Classic requests: no _meta, and no params where the 2026 client sent only _meta.
    assert messages(engine.receive(req("b", "tools/list"))) == [res("b", {"tools": []})]
    assert messages(engine.receive(req("c", "tools/call", {"name": "now"}))) == [res("c", {"content": []})]
    report = engine.finish()
    assert report.clean, report.to_dict()
    assert report.hits == report.requests == 3


def test_the_initialize_version_is_one_the_recorded_server_listed_when_it_listed_one() -> None:
    listed = {**DISCOVER_RESULT, "supportedVersions": ["2025-06-18", "2025-11-25", "2026-07-28"]}
    asks = {"protocolVersion": "2025-06-18"}
    assert initialize_from_discover(res(1, listed), asks, {})["protocolVersion"] == "2025-06-18"  # type: ignore[index]
    unknown = {"protocolVersion": "2024-01-01"}
    assert initialize_from_discover(res(1, listed), unknown, {})["protocolVersion"] == "2025-11-25"  # type: ignore[index]
    assert initialize_from_discover(res(1, DISCOVER_RESULT), unknown, {})["protocolVersion"] == "2024-01-01"  # type: ignore[index]
    no_name = {k: v for k, v in DISCOVER_RESULT.items() if k != "_meta"}
    server = {"serverInfo": {"name": "from-meta", "version": "3"}}
    assert initialize_from_discover(res(1, no_name), asks, server)["serverInfo"] == server["serverInfo"]  # type: ignore[index]
    failed = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}
    assert initialize_from_discover(failed, asks, {}) is None


def test_an_initialize_against_a_cassette_without_either_handshake_is_a_miss() -> None:
    engine = Tape().client(req(1, "tools/list")).server(res(1, {"tools": []})).engine()
    [answer] = messages(engine.receive(req("a", "initialize", CLASSIC_INIT)))
    assert answer["error"]["code"] == CASSETTE_MISS
    assert not engine.has_match(req("a", "initialize", CLASSIC_INIT))
    assert discover_tape().engine().has_match(req("a", "initialize", CLASSIC_INIT))
    refused = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}
    engine = Tape().client(req(1, "server/discover")).server(refused).engine()
    assert not engine.has_match(req("a", "initialize", CLASSIC_INIT))
    [answer] = messages(engine.receive(req("a", "initialize", CLASSIC_INIT)))
    assert answer["error"]["code"] == CASSETTE_MISS


def test_what_the_server_sent_with_its_discover_answer_comes_with_the_initialize_answer() -> None:
    tape = Tape().client(req(1, "server/discover", **MODERN))
    tape.server(note("notifications/message", {"level": "info", "data": "hello"}))
    engine = tape.server(res(1, DISCOVER_RESULT)).engine()
    log, answer = messages(engine.receive(req("a", "initialize", CLASSIC_INIT)))
    assert log["method"] == "notifications/message"
    assert answer["result"]["serverInfo"] == {"name": "clock", "version": "2"}


def test_empty_params_match_absent_params() -> None:
    matcher = Matcher()
    assert matcher.key(req(1, "tools/list", **MODERN)) == matcher.key(req(2, "tools/list"))
    assert matcher.key(req(1, "tools/list", {})) == matcher.key(req(2, "tools/list"))
    assert matcher.key(req(1, "tools/list", {"cursor": "x"})) != matcher.key(req(2, "tools/list"))


def noisy_tape() -> Tape:
    tape = Tape()
    tape.messages.append(Message(0, "server", invalid="not JSON: ...", raw="banner at start"))
    tape.client(req(1, "tools/call", {"name": "x"}))
    tape.messages.append(Message(2, "server", invalid="not JSON: ...", raw="debug: before"))
    tape.server(res(1, {"content": []}))
    tape.messages.append(Message(4, "server", invalid="not JSON: ...", raw="debug: after ✓"))
    return tape.server(note("notifications/message", {"level": "info", "data": "late"}))


def test_non_json_lines_go_out_byte_for_byte_in_their_recorded_place_on_a_line_transport() -> None:
    outs = noisy_tape().engine(raw_lines=True).receive(req("a", "tools/call", {"name": "x"}))
    shown = [o.raw if o.raw is not None else o.message for o in outs]
    assert shown == [
        b"banner at start",
        b"debug: before",
        res("a", {"content": []}),
        "debug: after ✓".encode(),
        note("notifications/message", {"level": "info", "data": "late"}),
    ]


def test_other_transports_leave_the_lines_out_and_keep_the_order_of_the_rest() -> None:
    outs = noisy_tape().engine().receive(req("a", "tools/call", {"name": "x"}))
    assert [o.raw for o in outs] == [None, None]
    assert messages(outs) == [
        res("a", {"content": []}),
        note("notifications/message", {"level": "info", "data": "late"}),
    ]


def test_a_server_request_before_initialized_is_reissued_right_after_the_initialize_answer() -> None:
    tape = Tape().client(req(1, "initialize", CLASSIC_INIT))
    tape.server(
        res(
            1,
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "serverInfo": {"name": "s", "version": "1"},
            },
        )
    )
    tape.server(req("r", "roots/list"))
    tape.client({"jsonrpc": "2.0", "id": "r", "result": {"roots": []}})
    tape.client({"jsonrpc": "2.0", "method": "notifications/initialized"})
    engine = tape.engine()
    answer, roots = messages(engine.receive(req("a", "initialize", CLASSIC_INIT)))
    assert answer["id"] == "a" and roots["method"] == "roots/list"
    assert engine.receive({"jsonrpc": "2.0", "id": roots["id"], "result": {"roots": []}}) == []
    assert engine.finish().clean


# --- the server's questions across eras -------------------------------------------------------

SAMPLE = {"method": "sampling/createMessage", "params": {"maxTokens": 8, "messages": []}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}
ROOTS = {"method": "roots/list"}
LISTED = {"roots": [{"uri": "file:///p"}]}
DONE = {"content": [{"type": "text", "text": "done"}], "isError": False, "resultType": "complete"}
CALL = {"name": "plan", "arguments": {"topic": "x"}}


def asking_tape() -> Tape:
    """A 2026-07-28 recording: ``plan`` asks two questions in one input_required round, then
    a third in a second round, then answers."""
    first = {
        "resultType": "input_required",
        "inputRequests": {"s": SAMPLE, "r": ROOTS},
        "requestState": "st1",
    }
    second = {"resultType": "input_required", "inputRequests": {"r2": ROOTS}, "requestState": "st2"}
    tape = Tape().client(req(0, "server/discover", **MODERN)).server(res(0, DISCOVER_RESULT))
    tape.client(req(1, "tools/call", CALL, **MODERN)).server(res(1, first))
    retry = {**CALL, "inputResponses": {"s": SAMPLED, "r": LISTED}, "requestState": "st1"}
    tape.client(req(2, "tools/call", retry, **MODERN)).server(res(2, second))
    again = {**CALL, "inputResponses": {"r2": LISTED}, "requestState": "st2"}
    return tape.client(req(3, "tools/call", again, **MODERN)).server(res(3, DONE))


def classic_engine() -> ReplayEngine:
    """The 2026-07-28 recording, after a classic client's ``initialize``."""
    engine = asking_tape().engine()
    assert messages(engine.receive(req("i", "initialize", CLASSIC_INIT)))[0]["result"]
    return engine


def test_a_recorded_input_required_round_is_asked_of_a_classic_client_as_its_requests() -> None:
    engine = classic_engine()
    [ask] = messages(engine.receive(req("a", "tools/call", CALL)))
    assert {k: ask[k] for k in ("method", "params")} == SAMPLE and ask["jsonrpc"] == "2.0"
    [ask2] = messages(engine.receive(res(ask["id"], SAMPLED)))
    assert ask2["method"] == "roots/list" and "params" not in ask2 and ask2["id"] != ask["id"]
    [ask3] = messages(engine.receive(res(ask2["id"], LISTED)))  # second round
    assert ask3["method"] == "roots/list"
    assert messages(engine.receive(res(ask3["id"], LISTED))) == [res("a", DONE)]
    report = engine.finish()
    assert report.clean, report.to_dict()
    assert (report.requests, report.hits) == (2, 2)


def test_a_classic_clients_other_answer_is_reported_and_the_recorded_result_still_comes() -> None:
    engine = classic_engine()
    [ask] = messages(engine.receive(req("a", "tools/call", CALL)))
    [ask2] = messages(engine.receive(res(ask["id"], {**SAMPLED, "model": "other"})))
    [ask3] = messages(engine.receive(res(ask2["id"], LISTED)))
    assert messages(engine.receive(res(ask3["id"], LISTED))) == [res("a", DONE)]
    [mismatch] = engine.finish().answer_mismatches
    assert mismatch["seq"] == 4 and "other" in mismatch["got"]


def test_a_classic_client_that_refuses_a_question_is_reported() -> None:
    engine = classic_engine()
    [ask] = messages(engine.receive(req("a", "tools/call", CALL)))
    refused = {"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -1, "message": "no sampling"}}
    [ask2] = messages(engine.receive(refused))
    [ask3] = messages(engine.receive(res(ask2["id"], LISTED)))
    assert messages(engine.receive(res(ask3["id"], LISTED))) == [res("a", DONE)]
    [mismatch] = engine.finish().answer_mismatches
    assert "no sampling" in mismatch["got"]


def test_a_client_of_the_recorded_era_or_of_none_said_gets_the_round_as_recorded() -> None:
    for call in (req("a", "tools/call", CALL, **MODERN), req("a", "tools/call", CALL)):
        [first] = messages(asking_tape().engine().receive(call))
        assert first["result"]["inputRequests"] == {"s": SAMPLE, "r": ROOTS}


def classic_asking_tape() -> Tape:
    """A 2025-11-25 recording: initialize, tools/list, then a call that samples and lists roots."""
    tape = Tape().client(req(0, "initialize", CLASSIC_INIT))
    tape.server(
        res(
            0,
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "serverInfo": {"name": "s", "version": "1"},
            },
        )
    )
    tape.client(req(1, "tools/list")).server(res(1, {"tools": []}))
    tape.client(req(2, "tools/call", CALL))
    tape.server(note("notifications/message", {"level": "info", "data": "asking"}))
    tape.server(req(10, **SAMPLE)).client(res(10, SAMPLED))
    tape.server(req(11, **ROOTS)).client(res(11, LISTED))
    return tape.server(res(2, {"content": [{"type": "text", "text": "done"}], "isError": False}))


def retry_of(answer: dict[str, Any], response: Any, i: Any) -> dict[str, Any]:
    [key] = answer["result"]["inputRequests"]
    params = {**CALL, "inputResponses": {key: response}, "requestState": answer["result"]["requestState"]}
    return req(i, "tools/call", params, **MODERN)


def test_a_recorded_server_request_is_asked_of_a_2026_client_as_an_input_required_round() -> None:
    engine = classic_asking_tape().engine()
    [listed] = messages(engine.receive(req("l", "tools/list", **MODERN)))
    assert listed["result"] == {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    log, first = messages(engine.receive(req("a", "tools/call", CALL, **MODERN)))
    assert log["method"] == "notifications/message" and first["id"] == "a"
    assert first["result"]["resultType"] == "input_required"
    assert list(first["result"]["inputRequests"].values()) == [SAMPLE]
    assert engine.has_match(retry_of(first, SAMPLED, "b"))  # new_episodes must not forward it
    [second] = messages(engine.receive(retry_of(first, SAMPLED, "b")))
    assert second["id"] == "b" and list(second["result"]["inputRequests"].values()) == [ROOTS]
    [done] = messages(engine.receive(retry_of(second, LISTED, "c")))
    assert done == res(
        "c", {"content": [{"type": "text", "text": "done"}], "isError": False, "resultType": "complete"}
    )
    report = engine.finish()
    assert report.clean, report.to_dict()  # a 2026-07-28 client has no initialize to use
    assert (report.requests, report.hits) == (4, 4)


def test_a_2026_clients_other_input_response_is_reported() -> None:
    engine = classic_asking_tape().engine()
    [_, first] = messages(engine.receive(req("a", "tools/call", CALL, **MODERN)))
    [second] = messages(engine.receive(retry_of(first, {**SAMPLED, "model": "other"}, "b")))
    assert messages(engine.receive(retry_of(second, LISTED, "c")))[0]["result"]["content"]
    [mismatch] = engine.finish().answer_mismatches
    assert "other" in mismatch["got"] and "other" not in mismatch["recorded"]


def test_a_server_request_outside_a_call_is_left_out_for_a_2026_client() -> None:
    tape = Tape().client(req(1, "tools/list")).server(res(1, {"tools": []}))
    tape.server(req(10, **ROOTS)).client(res(10, LISTED))
    engine = tape.engine()
    [listed] = messages(engine.receive(req("l", "tools/list", **MODERN)))
    assert listed["id"] == "l" and listed["result"]["tools"] == []
    assert engine.finish().clean

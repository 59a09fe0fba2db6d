"""Replay matching of 2026-07-28 multi-round-trip retries, and misses that name the differing field."""

from __future__ import annotations

from typing import Any

from harn_mcp_mock.cassette.matching import Matcher
from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.jsonrpc.codes import CASSETTE_MISS
from harn_mcp_mock.verify.live import RoundTrips
from tests.replay.test_engine import Tape, messages, req, res

ASKED: dict[str, Any] = {
    "resultType": "input_required",
    "inputRequests": {"k1": {"method": "sampling/createMessage", "params": {"maxTokens": 8, "messages": []}}},
    "requestState": "v1.recorded-state",
}
ANSWER = {"role": "assistant", "content": {"type": "text", "text": "recorded words"}, "model": "m"}
DONE = {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}
CALL = {"name": "summarize", "arguments": {"text": "hi"}}


def round_trip_tape() -> Tape:
    tape = Tape().client(req(1, "tools/call", CALL)).server(res(1, ASKED))
    retry = {**CALL, "inputResponses": {"k1": ANSWER}, "requestState": "v1.recorded-state"}
    return tape.client(req(2, "tools/call", retry)).server(res(2, DONE))


def test_request_state_and_input_response_values_are_left_out_of_the_key() -> None:
    matcher = Matcher()
    a = req(1, "tools/call", {**CALL, "requestState": "s1", "inputResponses": {"k1": ANSWER}})
    b = req(2, "tools/call", {**CALL, "requestState": "s2", "inputResponses": {"k1": {"other": 1}}})
    assert matcher.key(a) == matcher.key(b)
    assert matcher.key(a) != matcher.key(req(3, "tools/call", CALL))  # a retry is not a first round
    other_id = req(4, "tools/call", {**CALL, "requestState": "s1", "inputResponses": {"k2": ANSWER}})
    assert matcher.key(a) != matcher.key(other_id)  # it answers another request of the server


def test_a_retry_with_fresh_state_and_another_answer_is_a_differing_answer_not_a_miss() -> None:
    engine = round_trip_tape().engine()
    assert messages(engine.receive(req(7, "tools/call", CALL))) == [res(7, ASKED)]
    other = {"role": "assistant", "content": {"type": "text", "text": "another model"}, "model": "m2"}
    retry = {**CALL, "inputResponses": {"k1": other}, "requestState": "v1.live-state"}
    assert messages(engine.receive(req(8, "tools/call", retry))) == [res(8, DONE)]
    report = engine.finish()
    assert report.misses == [] and report.unused == []
    assert [(m["method"], m["seq"]) for m in report.answer_mismatches] == [("tools/call", 2)]
    assert "another model" in report.answer_mismatches[0]["got"]
    assert "recorded words" in report.answer_mismatches[0]["recorded"]


def test_the_same_answer_is_clean() -> None:
    engine = round_trip_tape().engine()
    engine.receive(req(7, "tools/call", CALL))
    engine.receive(req(8, "tools/call", {**CALL, "inputResponses": {"k1": ANSWER}, "requestState": "x"}))
    assert engine.finish().clean


def test_a_miss_names_a_field_that_was_redacted_without_showing_the_new_value() -> None:
    recorded = {"name": "login", "arguments": {"token": "[REDACTED:1]", "user": "ann"}}
    engine = Tape().client(req(1, "tools/call", recorded)).server(res(1, {})).engine()
    # A placeholder (whatever its number) where one was recorded is no difference.
    got = {"name": "login", "arguments": {"token": "[REDACTED:1]", "user": "bob"}}
    message = messages(engine.receive(req(2, "tools/call", got)))[0]["error"]["message"]
    assert "params.arguments.user: recorded 'ann', got 'bob'" in message
    assert "params.arguments.token" not in message  # the same placeholder: no difference
    # Recorded as a secret (say a literal from the server's environment at record time); the
    # request's value is not one by this policy: named as different, never shown.
    recorded2 = {"name": "open", "arguments": {"key": "[REDACTED:2]"}}
    engine = Tape().client(req(1, "tools/call", recorded2)).server(res(1, {})).engine()
    out = messages(engine.receive(req(2, "tools/call", {"name": "open", "arguments": {"key": "hunter22"}})))
    error = out[0]["error"]
    assert error["code"] == CASSETTE_MISS
    assert (
        "params.arguments.key: recorded '[REDACTED:2]' (redacted when recorded), got a different value, "
        "not redacted by this policy (8 characters, not shown)" in error["message"]
    )
    assert "hunter22" not in error["message"]


def test_round_trips_carry_the_live_servers_state_and_ids() -> None:
    tape = round_trip_tape()
    trips = RoundTrips(Cassette(tape.messages, {}))
    first, retry = tape.messages[0].message, tape.messages[2].message
    assert trips.outgoing(0, first) is first
    live = {**ASKED, "requestState": "v1.live", "inputRequests": {"k9": ASKED["inputRequests"]["k1"]}}
    trips.incoming(res(1, live))
    sent = trips.outgoing(2, retry)
    assert sent["params"]["requestState"] == "v1.live"
    assert sent["params"]["inputResponses"] == {"k9": ANSWER}
    assert retry["params"]["requestState"] == "v1.recorded-state"  # the baseline is untouched

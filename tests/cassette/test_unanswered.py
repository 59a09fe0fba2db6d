"""Which recorded requests went unanswered, how the recorded session ended, and the engine's
answer to one (error -32051 marked ``close``), on hand-made cassettes."""

from __future__ import annotations

from typing import Any

import pytest

from harn_mcp_mock.cassette.model import Cassette, Message
from harn_mcp_mock.cassette.unanswered import how_it_ended, unanswered_requests
from harn_mcp_mock.jsonrpc.codes import RECORDED_UNANSWERED
from harn_mcp_mock.pytest_plugin import describe_problems
from harn_mcp_mock.replay.engine import ReplayEngine


def req(i: Any, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": params}


def res(i: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "result": {}}


EXIT = {"code": 1, "signal": None, "reason": "server-exit"}


def cassette(*messages: Message, exit_info: Any = EXIT) -> Cassette:
    return Cassette(list(messages), {"exit": exit_info})


def crashed() -> Cassette:
    return cassette(
        Message(0, "client", req(1, "initialize")),
        Message(1, "server", res(1), reply_to=0, latency_ms=1.0),
        Message(2, "client", req(2, "tools/call", name="boom", arguments={})),
    )


def test_a_request_with_no_response_is_listed_with_its_tool() -> None:
    (found,) = unanswered_requests(crashed())
    assert (found.seq, found.method, found.id, found.tool) == (2, "tools/call", 2, "boom")
    assert found.describe() == "tools/call boom (id 2)"


def test_a_request_the_client_cancelled_owes_no_answer() -> None:
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
    recorded = crashed()
    recorded.messages.append(Message(3, "client", cancel))
    assert unanswered_requests(recorded) == []


def test_batch_items_are_matched_to_their_responses_one_by_one() -> None:
    recorded = cassette(
        Message(0, "client", [req(1, "ping"), req(2, "tools/list")]),
        Message(1, "server", [res(1)], reply_to=[0], latency_ms=[1.0]),
    )
    assert [(u.id, u.method) for u in unanswered_requests(recorded)] == [(2, "tools/list")]


@pytest.mark.parametrize(
    ("exit_info", "text"),
    [
        (EXIT, "the server exited with code 1"),
        ({"code": 0, "signal": None, "reason": "client-eof"}, "the server exited with code 0 (client-eof)"),
        ({"code": None, "signal": "SIGKILL", "reason": "server-exit"}, "the server was ended by SIGKILL"),
        ({"code": None, "signal": None, "reason": "proxy-stopped"}, "the recording ended (proxy-stopped)"),
        (None, "the recording ended (no exit recorded)"),
    ],
)
def test_how_the_recorded_session_ended_in_words(exit_info: Any, text: str) -> None:
    assert how_it_ended(exit_info) == text


def test_the_engine_answers_with_the_error_marked_close_and_reports_it() -> None:
    engine = ReplayEngine(crashed())
    assert [o.close for o in engine.receive(req(1, "initialize"))] == [False]
    (out,) = engine.receive(req(9, "tools/call", name="boom", arguments={}))
    assert out.close
    assert out.message["id"] == 9
    assert out.message["error"]["code"] == RECORDED_UNANSWERED
    assert (
        "recorded without an answer: the server exited with code 1 before answering"
        in out.message["error"]["message"]
    )
    report = engine.finish()
    assert not report.clean
    assert report.to_dict()["unanswered"][0]["tool"] == "boom"
    assert "1 request(s) were recorded without an answer" in describe_problems(report, "c.json")


def test_a_batch_that_reaches_the_end_carries_close() -> None:
    engine = ReplayEngine(crashed())
    outs = engine.receive([req(1, "initialize"), req(2, "tools/call", name="boom", arguments={})])
    assert outs[-1].close
    assert [m["id"] for m in outs[-1].message] == [1, 2]

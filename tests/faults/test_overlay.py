"""The fault overlay on a replayed cassette, driven as an engine and through the SDK client in memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from harn_mcp_mock.api import open_replay
from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.faults.overlay import FaultOverlay, fault_plan
from harn_mcp_mock.faults.rules import FaultRule, parse_rules
from harn_mcp_mock.options import ReplayOptions
from harn_mcp_mock.replay.session import open_engine
from tests.faults.sequences import SECOND_THIRD_FIFTH, SEEN, seen_calls

ROOT = Path(__file__).resolve().parents[2]
TIME = ROOT / "cassettes" / "time.cassette.json"
ARGS = {"source_timezone": "Europe/Paris", "time": "09:30", "target_timezone": "Asia/Tokyo"}
WAIT = 30
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def engine(rules: list[dict[str, Any]], **options: Any) -> Any:
    return open_engine(TIME, ReplayOptions.build(faults=rules, **options))


def call(n: int, name: str = "convert_time", args: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": name, "arguments": ARGS if args is None else args}
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


def answers(eng: Any, messages: list[dict[str, Any]]) -> list[Any]:
    eng.receive(INIT)
    return [eng.receive(m) for m in messages]


def test_without_rules_the_engine_is_the_plain_replay_engine() -> None:
    assert not isinstance(open_engine(TIME, ReplayOptions()), FaultOverlay)


def test_an_answering_kind_answers_in_place_of_the_recording_which_a_retry_then_gets() -> None:
    eng = engine(
        [{"id": "rl", "tool": "convert_time", "kind": "rate_limit", "on_calls": [1], "retry_after_ms": 250}]
    )
    (faulted,), (retried,) = answers(eng, [call(1), call(2)])
    assert faulted.message == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32000,
            "message": "rate limited: retry after 250 ms",
            "data": {"kind": "rate_limit", "status": 429, "retry_after_ms": 250},
        },
    }
    assert "Europe/Paris" in retried.message["result"]["content"][0]["text"]
    report = eng.finish()
    assert report.faults_fired == [
        {
            "request": 2,
            "id": 1,
            "target": "tool convert_time",
            "ordinal": 1,
            "fault": "rl",
            "kind": "rate_limit",
        }
    ]
    assert report.to_dict()["faults_fired"] == report.faults_fired


def test_a_rule_that_fires_again_answers_each_request_under_its_own_id() -> None:
    eng = engine(
        [{"id": "rl", "tool": "convert_time", "kind": "rate_limit", "every": 2, "retry_after_ms": 1500}]
    )
    (first,), (recorded,), (again,) = answers(eng, [call(1), call(2), call(3)])
    assert (first.message["id"], again.message["id"]) == (1, 3)
    assert first.message["error"] == again.message["error"]
    assert first.message["error"]["message"] == "rate limited: retry after 1.5 s"
    assert "result" in recorded.message
    assert [(f["id"], f["ordinal"]) for f in eng.finish().faults_fired] == [(1, 1), (3, 3)]


def test_rules_built_in_code_with_the_same_id_keep_their_own_answers() -> None:
    rules = [
        FaultRule("same", "rate_limit", on_calls=(1,)),
        FaultRule("same", "tool_error", on_calls=(2,)),
    ]
    eng = FaultOverlay(open_engine(TIME, ReplayOptions()), rules)
    (limited,), (failed,) = answers(eng, [call(1), call(2)])
    assert limited.message["error"]["data"]["kind"] == "rate_limit"
    assert failed.message["result"]["isError"] is True


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            {"kind": "unavailable"},
            {"code": -32000, "message": "service unavailable: the service is down for now, retry later"},
        ),
        (
            {"kind": "timeout", "timeout_ms": 5000},
            {
                "code": -32001,
                "message": "timed out after 5 s: the operation may have completed, check before retrying",
            },
        ),
        (
            {"kind": "timeout", "timeout_ms": 1500, "message": "upstream ledger slow"},
            {
                "code": -32001,
                "message": "upstream ledger slow: timed out after 1.5 s, the operation may have completed, "
                "check before retrying",
            },
        ),
        (
            {"kind": "rate_limit", "message": "quota exceeded"},
            {"code": -32000, "message": "quota exceeded: retry after 1 s"},
        ),
    ],
)
def test_error_shapes_are_the_worlds(rule: dict[str, Any], expected: dict[str, Any]) -> None:
    ((out,),) = answers(engine([{"id": "f", **rule}]), [call(1)])
    assert {k: out.message["error"][k] for k in ("code", "message")} == expected
    assert out.message["error"]["data"]["kind"] == rule["kind"]


def test_a_tool_error_is_a_result_with_is_error() -> None:
    ((out,),) = answers(engine([{"id": "f", "kind": "tool_error", "message": "boom"}]), [call(1)])
    assert out.message["result"] == {"content": [{"type": "text", "text": "boom"}], "isError": True}


def test_a_tool_error_without_a_message_says_nothing_changed() -> None:
    ((out,),) = answers(engine([{"id": "f", "kind": "tool_error"}]), [call(1)])
    assert (
        out.message["result"]["content"][0]["text"] == "internal error: the call failed and changed nothing"
    )


def test_transport_kinds_tell_the_transport_what_to_do() -> None:
    rules = [
        {"id": "h", "kind": "hang", "on_calls": [1]},
        {"id": "d", "kind": "disconnect", "on_calls": [2]},
        {"id": "s", "kind": "http_status", "status": 429, "on_calls": [3], "retry_after_ms": 2000},
    ]
    hang, (bye,), (status,) = answers(engine(rules), [call(1), call(2), call(3)])
    assert hang == []
    assert (bye.message, bye.close, bye.fault) == (None, True, {"kind": "disconnect"})
    assert status.message is None
    assert status.fault == {
        "kind": "http_status",
        "status": 429,
        "headers": {"Retry-After": "2"},
        "body": "rate limited: retry after 2 s",
    }


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (
            504,
            "504 Gateway Timeout: gateway timeout: the operation may have completed, check before retrying",
        ),
        (503, "503 Service Unavailable: service unavailable: the service is down for now, retry later"),
        (401, "401 Unauthorized"),
    ],
)
def test_an_http_status_body_says_what_a_model_needs(status: int, body: str) -> None:
    ((out,),) = answers(engine([{"id": "s", "kind": "http_status", "status": status}]), [call(1)])
    assert out.fault is not None and out.fault["body"] == body


@pytest.mark.parametrize("how", ["truncated", "not_json", "wrong_id"])
def test_a_malformed_answer_is_the_recorded_one_broken(how: str) -> None:
    ((out,),) = answers(engine([{"id": "m", "kind": "malformed", "malformed": how}]), [call(7)])
    if how == "wrong_id":
        assert out.message["id"] == 1_000_007 and out.raw is None
        return
    assert out.raw is not None and out.fault == {"kind": "malformed", "raw": out.raw}
    with pytest.raises(ValueError):
        import orjson

        orjson.loads(out.raw)


def test_latency_delays_the_recorded_answer() -> None:
    ((out,),) = answers(engine([{"id": "l", "kind": "latency", "latency_ms": 1500}]), [call(1)])
    assert out.delay_ms == 1500 and "Europe/Paris" in out.message["result"]["content"][0]["text"]


def test_tools_changed_announces_the_change_and_lists_the_new_definition_from_then_on() -> None:
    new = {"name": "convert_time", "description": "v2", "inputSchema": {"type": "object"}}
    eng = engine(
        [{"id": "tc", "tool": "convert_time", "kind": "tools_changed", "on_calls": [1], "replace_with": new}]
    )
    listing = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
    before, called, after = answers(eng, [dict(listing), call(1), {**listing, "id": 10}])
    assert "v2" not in str(before[0].message)
    assert [o.message.get("method") for o in called] == ["notifications/tools/list_changed", None]
    tools = {t["name"]: t for t in after[0].message["result"]["tools"]}
    assert tools["convert_time"] == new and "get_current_time" in tools


def test_a_schema_violation_breaks_the_structured_content_against_the_listed_output_schema() -> None:
    eng = engine([{"id": "sv", "tool": "convert_time", "kind": "schema_violation"}])
    listed, (out,) = answers(eng, [{"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, call(1)])
    schema = next(t for t in listed[0].message["result"]["tools"] if t["name"] == "convert_time").get(
        "outputSchema"
    )
    structured = out.message["result"]["structuredContent"]
    assert schema["required"] and not set(schema["required"]) <= set(structured)
    assert out.message["result"]["content"][0]["text"].startswith("{")


def test_method_rules_count_requests_of_that_method() -> None:
    eng = engine([{"id": "l", "method": "tools/list", "kind": "unavailable", "on_calls": [2]}])
    listing = {"jsonrpc": "2.0", "method": "tools/list"}
    first, second, third = answers(eng, [{**listing, "id": 1}, {**listing, "id": 2}, {**listing, "id": 3}])
    assert ["error" in out[0].message for out in (first, second, third)] == [False, True, False]


def test_the_same_seed_fires_the_same_faults_and_another_seed_others() -> None:
    rules = [{"id": "p", "tool": "convert_time", "kind": "tool_error", "probability": 0.5}]

    def fired(seed: int, run_id: str = "run") -> list[int]:
        eng = engine(rules, seed=seed, run_id=run_id)
        answers(eng, [call(n) for n in range(1, 41)])
        return [f["ordinal"] for f in eng.finish().faults_fired]

    assert fired(7) == fired(7) and 8 < len(fired(7)) < 32
    assert fired(7) != fired(8) and fired(7) != fired(7, "other-run")


def test_the_dry_run_says_when_each_rule_fires_and_which_never_can() -> None:
    rules = parse_rules(
        [
            {"id": "second", "tool": "convert_time", "kind": "rate_limit", "on_calls": [2]},
            {"id": "ghost", "tool": "get_weather", "kind": "timeout"},
            {"id": "res", "method": "resources/read", "kind": "hang"},
            {"id": "never", "kind": "hang", "probability": 0},
        ]
    )
    plan = {r["fault"]: r for r in fault_plan(rules, load_cassette(TIME))["rules"]}
    assert [f["ordinal"] for f in plan["second"]["fires_on"]] == [2] and plan["second"]["never"] is None
    assert (
        plan["ghost"]["never"]
        == "no tool 'get_weather' in this cassette (it has: convert_time, get_current_time)"
    )
    assert plan["res"]["never"] == "the cassette has no resources/read request"
    assert plan["never"]["never"] == "probability 0"


async def test_the_sdk_client_sees_a_rate_limit_then_a_tool_error_then_the_connection_closing() -> None:
    with anyio.fail_after(WAIT):
        async with open_replay(TIME, faults=SECOND_THIRD_FIFTH) as replay:
            seen = await seen_calls(replay.session, 5)
    assert seen == SEEN
    assert replay.report is not None and [f["fault"] for f in replay.report.faults_fired or []] == [
        "rl",
        "te",
        "bye",
    ]

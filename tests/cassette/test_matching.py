"""Miss explanations a new user can act on: a replay of another server's cassette names the tool
that is not there and what the cassette has, first; and no message cuts a value mid-word."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from harn_mcp_mock.cassette.matching import Matcher, explain_miss, unknown_target
from harn_mcp_mock.textclip import clip, clip_repr

ROOT = Path(__file__).resolve().parents[2]
TIME_CASSETTE = ROOT / "cassettes" / "time.cassette.json"


def call(i: int, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


RECORDED = [call(1, "get_weather", city="Paris"), call(2, "get_time"), call(3, "get_weather", city="Rome")]


def test_a_tool_the_cassette_never_saw_leads_with_what_it_has() -> None:
    why = explain_miss(call(9, "read_note", title="todo"), RECORDED, Matcher())
    assert why == "no tool 'read_note' in this cassette (it has: get_time, get_weather)"


def test_a_known_tool_with_other_arguments_still_gets_the_nearest_match() -> None:
    why = explain_miss(call(9, "get_weather", city="Lyon"), RECORDED, Matcher())
    assert why.startswith("no recorded 'tools/call' request has these params; nearest of 3 recorded:")
    assert unknown_target(call(9, "get_weather"), RECORDED) is None


def test_prompts_and_resources_lead_the_same_way() -> None:
    recorded = [
        {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "greet"}},
        {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "file:///a"}},
    ]
    prompt = {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "summarise"}}
    resource = {"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "file:///b"}}
    assert unknown_target(prompt, recorded) == "no prompt 'summarise' in this cassette (it has: greet)"
    assert (
        unknown_target(resource, recorded) == "no resource 'file:///b' in this cassette (it has: file:///a)"
    )


def test_strict_order_names_what_the_whole_cassette_has() -> None:
    why = explain_miss(call(9, "read_note"), [RECORDED[0]], Matcher(), whole_cassette=RECORDED)
    assert why == "no tool 'read_note' in this cassette (it has: get_time, get_weather)"


def test_a_long_tool_list_is_counted_not_cut() -> None:
    many = [call(i, f"tool_{i:02d}") for i in range(20)]
    lead = unknown_target(call(99, "nope"), many)
    assert lead is not None and lead.endswith("tool_11, +8 more)")


async def test_the_sdk_client_calling_another_servers_tool_gets_the_lead_line() -> None:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "harn_mcp_mock", "replay", "--cassette", str(TIME_CASSETTE)]
    )
    with anyio.fail_after(30):
        async with Client(server, mode="auto") as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("read_note", {"name": "todo"})
    message = str(raised.value)
    lead = "no tool 'read_note' in this cassette (it has: convert_time)"
    assert lead in message
    assert "nearest" not in message


# -- never cut mid-word -------------------------------------------------------------------------


def test_clip_keeps_short_text_and_cuts_long_text_at_a_boundary_with_the_rest_counted() -> None:
    assert clip("short", 10) == "short"
    text = "alpha beta gamma delta epsilon"
    cut = clip(text, 18)
    assert cut == "alpha beta gamma … (+14 chars)"
    assert cut.startswith("alpha beta gamma ") and len("alpha beta gamma") + 14 == len(text)
    payload = '{"a":"' + "x" * 10 + '","b":"' + "y" * 300 + '"}'
    assert clip(payload, 100) == '{"a":"xxxxxxxxxx", … (+' + str(len(payload) - 18) + " chars)"


def test_clip_never_cuts_a_value_without_a_boundary() -> None:
    token = "z" * 500
    assert clip(token, 80) == token
    assert clip_repr("z" * 100, 40) == repr("z" * 100)


def test_a_long_recorded_value_in_a_miss_is_cut_at_a_word_with_its_length() -> None:
    recorded = [call(1, "echo", text="word " * 40)]
    why = explain_miss(call(2, "echo", text="other"), recorded, Matcher())
    assert re.search(r"recorded 'word( word)* … \(\+\d+ chars\), got 'other'", why), why


# --- what the protocol makes optional ---------------------------------------------------------


def request(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    return message


@pytest.mark.parametrize(
    ("sent", "recorded"),
    [
        (request("prompts/get", {"name": "p", "arguments": {}}), request("prompts/get", {"name": "p"})),
        (request("tools/call", {"name": "t", "arguments": {}}), request("tools/call", {"name": "t"})),
        (request("tools/call", {"name": "t", "arguments": None}), request("tools/call", {"name": "t"})),
        (request("tools/list", {"cursor": None}), request("tools/list")),
        (request("tools/list", {}), request("tools/list")),
        (request("resources/list", {"_meta": {}}), request("resources/list")),
        (
            request("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"}, "context": {}}),
            request("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"}}),
        ),
        (
            request("completion/complete", {"ref": {}, "context": {"arguments": {}}}),
            request("completion/complete", {"ref": {}}),
        ),
    ],
)
def test_what_the_protocol_makes_optional_matches_its_absence(
    sent: dict[str, Any], recorded: dict[str, Any]
) -> None:
    for matcher in (Matcher(), Matcher.with_paths(include_defaults=False)):  # _meta kept too
        assert matcher.key(sent) == matcher.key(recorded)
        assert matcher.comparable(sent) == matcher.comparable(recorded)


def test_an_empty_object_that_means_something_still_counts() -> None:
    matcher = Matcher()
    # A tool's own arguments are the tool's: an empty filter is not no filter.
    with_filter = request("tools/call", {"name": "t", "arguments": {"filter": {}}})
    assert matcher.key(with_filter) != matcher.key(request("tools/call", {"name": "t", "arguments": {}}))
    # A 2025-11-25 task-augmented call: `task: {}` asks for a task.
    assert matcher.key(request("tools/call", {"name": "t", "task": {}})) != matcher.key(
        request("tools/call", {"name": "t"})
    )
    assert matcher.key(request("tools/list", {"cursor": "2"})) != matcher.key(request("tools/list"))

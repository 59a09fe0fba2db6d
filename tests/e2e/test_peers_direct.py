"""The scenario drivers run directly against the real servers (no proxy in between).

These prove the drivers work and are deterministic, so that the proxy tests can run each one
twice (direct, and through ``harn mcp mock record``) and compare the two results with ``==``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.conftest import require_peer
from tests.e2e import scenarios
from tests.e2e.peers import PeerUnavailableError
from tests.e2e.scenarios import run_everything, run_time

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"


def _texts(result: dict[str, Any]) -> list[str]:
    return [block["text"] for block in result["content"] if block["type"] == "text"]


# --- server-everything -----------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_everything_scenario_covers_every_capability(everything_command: list[str], mode: str) -> None:
    got = await run_everything(everything_command, mode=mode)
    json.dumps(got)  # JSON-able as it is

    # auto: server/discover is answered -32601, and the client falls back to initialize.
    assert got["protocol_version"] == HANDSHAKE
    assert got["server_info"]["name"] == "mcp-servers/everything"
    caps = got["server_capabilities"]
    assert {"tools", "prompts", "resources", "logging", "completions"} <= caps.keys()
    assert got["instructions"]

    steps = got["steps"]
    assert steps["ping"] == {}
    assert steps["ping (last)"] == {}
    assert steps["logging/setLevel"] == {}

    tool_names = {tool["name"] for tool in steps["tools/list"]["tools"]}
    # The tools registered only once the client's capabilities are known (roots, sampling, elicitation).
    assert {"get-roots-list", "trigger-sampling-request", "trigger-elicitation-request"} <= tool_names

    assert _texts(steps["tools/call echo"]) == ["Echo: hello from harn e2e ✓"]
    assert _texts(steps["tools/call get-sum"]) == ["The sum of 2 and 3.5 is 5.5."]
    structured = steps["tools/call get-structured-content"]
    assert structured["structuredContent"] == {
        "temperature": 36,
        "conditions": "Light rain / drizzle",
        "humidity": 82,
    }

    # Progress: one notification per step, in order, delivered to the call's callback.
    assert got["progress"] == [[1.0, 3.0, None], [2.0, 3.0, None], [3.0, 3.0, None]]
    assert "Steps: 3" in _texts(steps["tools/call trigger-long-running-operation"])[0]

    # Sampling: the server asked once, and echoed the fixed reply back.
    [sampling] = got["sampling_requests"]
    assert sampling["messages"][0]["content"]["text"].endswith("Say hello to the harn e2e suite")
    assert sampling["maxTokens"] == 16
    assert scenarios.SAMPLING_REPLY.model in _texts(steps["tools/call trigger-sampling-request"])[0]

    # Elicitation: a form request, accepted with content valid for its schema.
    [elicitation] = got["elicitation_requests"]
    assert "name" in elicitation["requestedSchema"]["required"]
    elicited = "\n".join(_texts(steps["tools/call trigger-elicitation-request"]))
    assert "User provided the requested information" in elicited
    assert "- Name: Ada Lovelace" in elicited

    # Roots: the server fetched them from the client's callback and lists them back.
    assert got["roots_requested"] is True
    roots_text = _texts(steps["tools/call get-roots-list"])[0]
    assert "Current MCP Roots (1 total)" in roots_text
    assert str(scenarios.FIXED_ROOT.uri) in roots_text

    # Logging: the server's roots-sync log and one (normalised) simulated random-level message.
    assert {
        "level": "info",
        "logger": "everything-server",
        "data": "Roots updated: 1 root(s) received from client",
    } in got["logs"]
    assert {"level": "<random>", "data": "<simulated log message>"} in got["logs"]

    # Notifications: tools/list_changed as the conditional tools register, progress per step.
    assert got["notifications"]["notifications/tools/list_changed"] >= 1
    assert got["notifications"]["notifications/progress"] == 3
    assert got["stream_errors"] == []

    # Resources.
    assert steps["resources/list"]["resources"]
    static = steps["resources/read static"]["contents"][0]
    assert static["text"]
    text = steps["resources/read demo://resource/dynamic/text/7"]["contents"][0]["text"]
    assert text == "Resource 7: This is a plaintext resource created at <time>"
    blob = steps["resources/read demo://resource/dynamic/blob/7"]["contents"][0]["blob"]
    assert base64.b64decode(blob).decode() == "Resource 7: This is a base64 blob created at <time>"

    # Prompts (with arguments, and with an embedded resource).
    assert (
        steps["prompts/get args-prompt"]["messages"][0]["content"]["text"] == "What's weather in Paris, TX?"
    )
    embedded = steps["prompts/get resource-prompt"]["messages"][1]["content"]["resource"]
    assert embedded["text"] == "Resource 3: This is a plaintext resource created at <time>"

    # Completion, on a prompt argument (with context) and on a resource template variable.
    assert steps["completion/complete prompt department"]["completion"]["values"] == ["Engineering"]
    assert steps["completion/complete prompt name"]["completion"]["values"] == ["David", "Eve", "Frank"]
    assert steps["completion/complete resource template"]["completion"]["values"] == ["4"]


@pytest.mark.e2e
async def test_everything_scenario_is_deterministic_and_mode_independent(
    everything_command: list[str],
) -> None:
    first = await run_everything(everything_command, mode="auto")
    second = await run_everything(everything_command, mode="auto")
    legacy = await run_everything(everything_command, mode="legacy")
    assert first == second
    # The auto-mode fallback is invisible to the client: same session, same results.
    assert first == legacy


# --- mcp-server-time -------------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize(("mode", "version"), [("auto", MODERN), ("legacy", HANDSHAKE)])
async def test_time_scenario(time_command: list[str], mode: str, version: str) -> None:
    got = await run_time(time_command, mode=mode)
    json.dumps(got)

    # auto: mcp-server-time answers server/discover, so the client adopts 2026-07-28.
    assert got["protocol_version"] == version
    assert got["server_info"]["name"] == "mcp-time"
    steps = got["steps"]
    assert ("ping" in steps) is (version == HANDSHAKE)
    assert {tool["name"] for tool in steps["tools/list"]["tools"]} == {"get_current_time", "convert_time"}

    now = steps["tools/call get_current_time UTC"]
    assert now["structuredContent"] == {
        "timezone": "UTC",
        "datetime": "<now>",
        "day_of_week": "<weekday>",
        "is_dst": False,
    }
    assert json.loads(_texts(now)[0]) == now["structuredContent"]

    kolkata = steps["tools/call convert_time UTC 09:30 Asia/Kolkata"]["structuredContent"]
    assert kolkata["source"]["datetime"] == "<date>T09:30:00+00:00"
    assert kolkata["target"]["datetime"] == "<date>T15:00:00+05:30"
    assert kolkata["time_difference"] == "+5.5h"
    tokyo = steps["tools/call convert_time Asia/Tokyo 23:15 UTC"]["structuredContent"]
    assert tokyo["target"]["datetime"] == "<date>T14:15:00+00:00"
    assert tokyo["time_difference"] == "-9.0h"

    assert steps["tools/call convert_time invalid zone"]["isError"] is True
    assert steps["tools/call no_such_tool"]["error"]["code"] == -32602
    assert got["stream_errors"] == []


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_time_scenario_is_deterministic(time_command: list[str], mode: str) -> None:
    assert await run_time(time_command, mode=mode) == await run_time(time_command, mode=mode)


# --- normalisation and peer lookup (no server needed) ----------------------------------------


def test_normalise_rewrites_only_volatile_parts() -> None:
    value = {
        "text": "Resource 7: This is a plaintext resource created at 3:17:34 PM",
        "blob": base64.b64encode(b"Resource 7: This is a base64 blob created at 15:17:34").decode(),
        "n": 3,
        "items": ["created at noon", True, None],
    }
    got = scenarios.normalise(value, scenarios.EVERYTHING_RULES)
    assert got == {
        "text": "Resource 7: This is a plaintext resource created at <time>",
        "blob": base64.b64encode(b"Resource 7: This is a base64 blob created at <time>").decode(),
        "n": 3,
        "items": ["created at <time>", True, None],
    }
    assert scenarios.normalise({"blob": "not base64!"}, scenarios.EVERYTHING_RULES) == {"blob": "not base64!"}


def test_time_rules() -> None:
    stamp = '{"datetime": "2026-03-29T01:02:03+02:00", "day_of_week": "Sunday"}'
    assert (
        scenarios.normalise(stamp, scenarios.TIME_NOW_RULES)
        == '{"datetime": "<now>", "day_of_week": "<weekday>"}'
    )
    assert (
        scenarios.normalise(stamp, scenarios.TIME_CONVERT_RULES)
        == '{"datetime": "<date>T01:02:03+02:00", "day_of_week": "<weekday>"}'
    )


def _missing() -> list[str]:
    raise PeerUnavailableError("peer not installed: run `make peers`")


def test_missing_peer_skips_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="make peers"):
        require_peer(_missing)


@pytest.mark.parametrize("value", ["true", "1", "yes"])
def test_missing_peer_fails_on_ci(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="make peers"):
        require_peer(_missing)

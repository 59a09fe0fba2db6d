"""A cassette one client recorded replays for another client (docs/replay.md, Matching).

server-everything is recorded through ``record`` by the official SDK's ``mcp.Client`` and by
fastmcp's ``Client``, each in ``legacy`` (2025-11-25) and ``auto`` (2026-07-28) mode, walking
the same script; then each cassette is replayed with ``replay --strict`` to the other client.
The two clients word the same requests differently where the protocol makes a field optional:
given no prompt arguments, the SDK sends ``prompts/get`` with ``"arguments": {}`` and fastmcp
leaves ``arguments`` out. Both are valid and the live server answers both alike, so the replay
must too: each client sees what the recording client saw, nothing misses and nothing recorded
is left unused. ``--mode new_episodes`` with the live server behind forwards nothing either.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
import orjson
import pytest
from mcp import Client, StdioServerParameters

from harn_mcp_mock.cassette.model import load_cassette

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HARN = [sys.executable, "-m", "harn_mcp_mock"]
WAIT = 60  # seconds: the bound of one whole client session (server start included)
SIMPLE = types.PromptReference(type="ref/prompt", name="completable-prompt")


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


async def via_sdk(command: list[str], mode: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    server = StdioServerParameters(command=command[0], args=command[1:])
    with anyio.fail_after(WAIT):
        async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
            seen["tools"] = [t.name for t in (await client.list_tools()).tools]
            seen["tiny"] = dump(await client.call_tool("get-tiny-image", {}))
            seen["echo"] = dump(await client.call_tool("echo", {"message": "across clients"}))
            seen["prompts"] = dump(await client.list_prompts())
            seen["simple"] = dump(await client.get_prompt("simple-prompt", {}))
            seen["args"] = dump(await client.get_prompt("args-prompt", {"city": "Paris"}))
            seen["resources"] = dump(await client.list_resources())
            seen["complete"] = dump(await client.complete(SIMPLE, {"name": "department", "value": "E"}))
    return seen


async def via_fastmcp(command: list[str], mode: str) -> dict[str, Any]:
    from fastmcp import Client as FastClient
    from fastmcp.client.transports import StdioTransport

    seen: dict[str, Any] = {}
    transport = StdioTransport(command[0], command[1:], keep_alive=False)
    with anyio.fail_after(WAIT):
        async with FastClient(transport, mode=mode) as client:  # type: ignore[arg-type]
            seen["tools"] = [t.name for t in (await client.list_tools_mcp()).tools]
            seen["tiny"] = dump(await client.call_tool_mcp("get-tiny-image", {}))
            seen["echo"] = dump(await client.call_tool_mcp("echo", {"message": "across clients"}))
            seen["prompts"] = dump(await client.list_prompts_mcp())
            seen["simple"] = dump(await client.get_prompt_mcp("simple-prompt", {}))
            seen["args"] = dump(await client.get_prompt_mcp("args-prompt", {"city": "Paris"}))
            seen["resources"] = dump(await client.list_resources_mcp())
            seen["complete"] = dump(await client.complete_mcp(SIMPLE, {"name": "department", "value": "E"}))
    return seen


CLIENTS = {"sdk": via_sdk, "fastmcp": via_fastmcp}
OTHER = {"sdk": "fastmcp", "fastmcp": "sdk"}


def prompt_params(cassette: Any) -> dict[str, Any]:
    """The recorded ``prompts/get`` params of simple-prompt, ``_meta`` aside."""
    [params] = [
        {k: v for k, v in m.message["params"].items() if k != "_meta"}
        for m in load_cassette(cassette).requests()
        if m.method == "prompts/get" and m.message["params"]["name"] == "simple-prompt"
    ]
    return params


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("recorded_by", ["sdk", "fastmcp"])
def test_a_cassette_one_client_recorded_replays_for_the_other(
    recorded_by: str,
    mode: str,
    everything_command: list[str],
    fastmcp_client: Any,
    tmp_path: Any,
) -> None:
    cassette, report = tmp_path / "everything.cassette.json", tmp_path / "report.json"
    live = anyio.run(
        CLIENTS[recorded_by], [*HARN, "record", "--cassette", str(cassette), "--", *everything_command], mode
    )
    # The two clients word the same request differently; both are valid.
    assert prompt_params(cassette) == (
        {"name": "simple-prompt", "arguments": {}} if recorded_by == "sdk" else {"name": "simple-prompt"}
    )
    replay = [*HARN, "replay", "--strict", "--report", str(report), "--cassette", str(cassette)]

    seen = anyio.run(CLIENTS[OTHER[recorded_by]], replay, mode)

    assert seen == live
    summary = orjson.loads(report.read_bytes())
    assert summary["misses"] == [] and summary["unused"] == [], summary
    assert summary["ok"] is True

    episodes = [
        *HARN,
        "replay",
        "--mode",
        "new_episodes",
        "--report",
        str(report),
        "--cassette",
        str(cassette),
    ]
    assert anyio.run(CLIENTS[OTHER[recorded_by]], [*episodes, "--", *everything_command], mode) == live
    summary = orjson.loads(report.read_bytes())
    assert (summary["recorded"], summary["misses"]) == (0, []), summary  # nothing went to the server

"""A cassette of one handshake era replays for a client of the other (docs/replay.md).

Real servers (``mcp-server-time``, which speaks both eras, and server-everything) are recorded
through ``python -m harn_mcp_mock record`` once with the official SDK's ``ClientSession`` and its
classic ``initialize()`` handshake (2025-11-25), once with ``mcp.Client`` (``auto``: the
``server/discover`` probe of the stateless 2026-07-28 protocol, ``_meta`` stamped on every
request). Each cassette is then replayed by ``python -m harn_mcp_mock replay --strict`` to the
client of the other era, which lists the tools and calls one: it gets the recorded result, and
the replay reports no miss.

* discover-era cassette, ``initialize`` client: the replay answers ``initialize`` from the recorded
  discover result (serverInfo, capabilities, the client's protocol version), and the classic
  requests (no ``_meta``, no params where the 2026 client sent only ``_meta``) match the
  recorded 2026 ones.
* initialize-era cassette, discover client: the replay answers the probe -32601 as a classic
  server does, the client falls back to ``initialize``, which the cassette holds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client

from harn_mcp_mock.cassette.model import load_cassette
from tests.e2e.peers import WAIT
from tests.e2e.scenarios import server_parameters

pytestmark = pytest.mark.e2e


CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "time": ("convert_time", {"source_timezone": "UTC", "time": "09:30", "target_timezone": "Asia/Tokyo"}),
    "everything": ("echo", {"message": "hello across eras"}),
}


def record_argv(cassette: Path, command: list[str]) -> list[str]:
    return [sys.executable, "-m", "harn_mcp_mock", "record", "--cassette", str(cassette), "--", *command]


def replay_argv(cassette: Path, report: Path) -> list[str]:
    return [
        sys.executable,
        *("-m", "harn_mcp_mock", "replay", "--strict", "--report", str(report), "--cassette", str(cassette)),
    ]


async def via_initialize(command: list[str], tool: str, arguments: dict[str, Any]) -> tuple[str, Any]:
    """The classic client: ``ClientSession.initialize()``, then tools/list and one call."""
    with anyio.fail_after(WAIT):
        async with stdio_client(server_parameters(command)) as (read, write), ClientSession(read, write) as s:
            init = await s.initialize()
            await s.list_tools()
            result = await s.call_tool(tool, arguments)
    return init.protocol_version, result


async def via_discover(command: list[str], tool: str, arguments: dict[str, Any]) -> tuple[str, Any]:
    """The 2026-07-28 client: ``mcp.Client`` (``server/discover`` probe, ``_meta`` everywhere)."""
    with anyio.fail_after(WAIT):
        async with Client(server_parameters(command)) as client:
            await client.list_tools()
            result = await client.call_tool(tool, arguments)
            version = client.protocol_version
    assert version is not None
    return version, result


CLIENTS = {"initialize": via_initialize, "discover": via_discover}
OTHER = {"initialize": "discover", "discover": "initialize"}


def recorded_result(cassette: Path, tool: str) -> types.CallToolResult:
    loaded = load_cassette(cassette)
    [call] = [
        m for m in loaded.requests() if m.method == "tools/call" and m.message["params"]["name"] == tool
    ]
    [answer] = [m for m in loaded.messages if m.reply_to == call.seq]
    return types.CallToolResult.model_validate(answer.message["result"])


@pytest.mark.parametrize("recorded_with", ["initialize", "discover"])
@pytest.mark.parametrize("server", ["time", "everything"])
async def test_a_cassette_of_one_handshake_era_replays_for_a_client_of_the_other(
    server: str, recorded_with: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    command: list[str] = request.getfixturevalue(f"{server}_command")
    tool, arguments = CALLS[server]
    cassette = tmp_path / f"{server}-{recorded_with}.cassette.json"
    await CLIENTS[recorded_with](record_argv(cassette, command), tool, arguments)
    methods = [m.method for m in load_cassette(cassette).requests()]
    handshake = "initialize" if recorded_with == "initialize" else "server/discover"
    assert methods[0] == handshake, methods
    if server == "time" and recorded_with == "discover":
        assert "initialize" not in methods  # a pure 2026-07-28 recording: discover, then _meta
    live = recorded_result(cassette, tool)

    report_path = tmp_path / "report.json"
    version, result = await CLIENTS[OTHER[recorded_with]](replay_argv(cassette, report_path), tool, arguments)

    assert result == live  # the recorded answer, to a client of the other era
    if OTHER[recorded_with] == "initialize":
        assert version == "2025-11-25"  # the classic client's own version, not the recorded 2026 one
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["misses"] == [], report
    assert report["unanswered"] == []
    if server == "time":  # no server-to-client traffic: the whole session matched, nothing unused
        assert report["ok"] is True, report

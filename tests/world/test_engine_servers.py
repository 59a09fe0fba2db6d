"""A world of several servers in memory: each server (a ``ServerView``) answers ``initialize``
with its own serverInfo and shows and runs only its tools, every call lands in the one state and
log, and a fault rule with a ``server`` fires only through that server."""

from __future__ import annotations

from typing import Any

import pytest

from harn_mcp_mock.errors import WorldSpecError
from harn_mcp_mock.world.engine import ServerView, WorldEngine
from harn_mcp_mock.world.spec import compile_spec

OBJ = {"type": "object"}


def world(faults: list[dict[str, Any]] | None = None) -> WorldEngine:
    doc = {
        "format": "harn-mcp-mock/world",
        "version": 1,
        "name": "w",
        "server": {"name": "w-whole"},
        "state": {"n": 0},
        "tools": [
            {"name": "read", "inputSchema": OBJ, "result": {"n": {"$get": "/n"}}},
            {"name": "bump", "inputSchema": OBJ, "effects": [{"op": "add", "path": "/n", "by": 1}], "result": "ok"},
            {"name": "ping", "inputSchema": OBJ, "result": "pong"},
        ],
        "servers": [
            {"name": "desk", "version": "2.0.0", "instructions": "the desk", "tools": ["read", "ping"]},
            {"name": "bank", "tools": ["bump", "ping"]},
        ],
        "fault_profiles": {"p": faults or []},
    }  # fmt: skip
    return WorldEngine(compile_spec(doc), faults="p", seed=1, run_id="r")


def ask(engine: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    (out,) = engine.receive({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})
    return dict(out.message)


def call(engine: Any, tool: str) -> dict[str, Any]:
    return ask(engine, "tools/call", {"name": tool, "arguments": {}})


def test_each_server_has_its_own_server_info_and_tools_over_one_state() -> None:
    engine = world()
    desk, bank = ServerView(engine, "desk"), ServerView(engine, "bank")
    init = ask(desk, "initialize", {"protocolVersion": "2025-06-18"})["result"]
    assert (init["serverInfo"], init["instructions"]) == ({"name": "desk", "version": "2.0.0"}, "the desk")
    assert ask(bank, "initialize")["result"]["serverInfo"] == {"name": "bank", "version": "1.0.0"}
    assert ask(engine, "initialize")["result"]["serverInfo"]["name"] == "w-whole"
    assert [t["name"] for t in ask(desk, "tools/list")["result"]["tools"]] == ["read", "ping"]
    assert [t["name"] for t in ask(bank, "tools/list")["result"]["tools"]] == ["bump", "ping"]
    assert [t["name"] for t in ask(engine, "tools/list")["result"]["tools"]] == ["read", "bump", "ping"]
    # a write through the bank is what the desk reads: one state
    assert "ok" in str(call(bank, "bump"))
    assert '{"n":1}' in str(call(desk, "read"))
    # a tool the server does not show is unknown there, and changes and logs nothing
    assert call(desk, "bump")["error"]["message"] == "Unknown tool: bump"
    assert engine.state == {"n": 1}
    assert [(c["tool"], c["server"]) for c in engine.calls] == [("bump", "bank"), ("read", "desk")]


def test_a_fault_rule_with_a_server_fires_only_through_that_server() -> None:
    engine = world([{"id": "bank-down", "server": "bank", "tool": "ping", "kind": "unavailable"}])
    desk, bank = ServerView(engine, "desk"), ServerView(engine, "bank")
    assert call(desk, "ping")["result"]["content"][0]["text"] == "pong"
    assert call(bank, "ping")["error"]["data"]["kind"] == "unavailable"
    assert engine.faults_fired == [
        {
            "call": 1,
            "tool": "ping",
            "ordinal": 2,
            "fault": "bank-down",
            "kind": "unavailable",
            "server": "bank",
        }
    ]
    # the whole world as one server: a server's rule fires on the tools that server shows
    whole = world([{"id": "bank-any", "server": "bank", "tool": "*", "kind": "unavailable"}])
    assert "error" in call(whole, "bump") and "result" in call(whole, "read")


def test_a_world_of_one_server_logs_no_server_and_has_no_views() -> None:
    doc = {"format": "harn-mcp-mock/world", "version": 1, "name": "one", "state": {},
           "tools": [{"name": "ping", "inputSchema": OBJ, "result": "pong"}]}  # fmt: skip
    engine = WorldEngine(compile_spec(doc))
    call(engine, "ping")
    assert "server" not in engine.calls[0]
    with pytest.raises(WorldSpecError, match="this world is one server") as caught:
        ServerView(engine, "desk")
    assert caught.value.where == "--server"

"""The cassette's ``server`` summary from its messages (a recovered recording has no trailer)."""

from __future__ import annotations

from typing import Any

from harn_mcp_mock.cassette.handshake import server_from_messages, server_summary
from harn_mcp_mock.cassette.model import Message


def _msgs(*items: tuple[str, Any]) -> list[Message]:
    return [Message(seq=i, direction=d, message=m) for i, (d, m) in enumerate(items)]


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "notes", "version": "1.0"},
    "instructions": "hi",
}


def test_the_answered_initialize_gives_the_summary_the_recorder_writes() -> None:
    answer = {"jsonrpc": "2.0", "id": 1, "result": RESULT}
    server = server_from_messages(_msgs(("client", INIT), ("server", answer)))
    assert server == {**server_summary("initialize", answer), "attempts": [{"method": "initialize"}]}
    assert server["serverInfo"] == {"name": "notes", "version": "1.0"} and server["instructions"] == "hi"


def test_a_refused_discover_then_initialize_are_both_attempts_in_order() -> None:
    discover = {"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {}}
    refused = {"jsonrpc": "2.0", "id": "d", "error": {"code": -32601, "message": "no"}}
    noise = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
    answer = {"jsonrpc": "2.0", "id": 1, "result": RESULT}
    messages = _msgs(
        ("client", discover), ("server", refused), ("server", noise), ("client", INIT), ("server", answer)
    )
    server = server_from_messages(messages)
    assert server is not None and server["handshake"] == "initialize"
    assert server["attempts"] == [{"method": "server/discover", "error": -32601}, {"method": "initialize"}]


def test_a_2026_discover_names_the_server_from_its_meta() -> None:
    discover = {"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {}}
    info = {"name": "stateless", "version": "2"}
    answer = {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {
            "supportedVersions": ["2026-07-28"],
            "_meta": {"io.modelcontextprotocol/serverInfo": info},
        },
    }
    server = server_from_messages(_msgs(("client", discover), ("server", answer)))
    assert (
        server is not None and server["serverInfo"] == info and server["supportedVersions"] == ["2026-07-28"]
    )


def test_no_answered_handshake_gives_none_and_other_answers_are_not_taken_for_one() -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    answer = {"jsonrpc": "2.0", "id": 1, "result": RESULT}  # same id, but it answers tools/list
    assert server_from_messages(_msgs(("client", call), ("server", answer))) is None
    assert server_from_messages(_msgs(("client", INIT))) is None  # killed before the answer

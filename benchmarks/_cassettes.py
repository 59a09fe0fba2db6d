"""Pieces of the synthetic cassettes the replay benchmarks build (one home for the handshake)."""

from __future__ import annotations

from harn_mcp_mock.cassette.model import Message


def init_params(version: str) -> dict[str, object]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}


def handshake(version: str) -> list[Message]:
    """A recorded ``initialize`` request and its answer (seq 0 and 1)."""
    result = {
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "bench", "version": "1"},
    }
    return [
        Message(
            0, "client", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init_params(version)}
        ),
        Message(1, "server", {"jsonrpc": "2.0", "id": 0, "result": result}, reply_to=0, latency_ms=1.0),
    ]

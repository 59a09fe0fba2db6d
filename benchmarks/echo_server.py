"""A minimal, fast stdio MCP server (raw JSON-RPC, no SDK) used as the benchmarks' baseline peer."""

from __future__ import annotations

import sys

import orjson

TOOLS = [
    {
        "name": "echo",
        "description": "Echo the message back.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
        "annotations": {"readOnlyHint": True},
    }
]


def answer(msg: dict) -> dict | None:  # type: ignore[type-arg]
    method = msg.get("method")
    if "id" not in msg:
        return None
    if method == "initialize":
        result: dict = {  # type: ignore[type-arg]
            "protocolVersion": msg["params"].get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "echo", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        text = msg["params"]["arguments"]["message"]
        result = {"content": [{"type": "text", "text": text}], "structuredContent": {"echo": text}}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


def main() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        reply = answer(orjson.loads(line))
        if reply is not None:
            out.write(orjson.dumps(reply) + b"\n")
            out.flush()


if __name__ == "__main__":
    main()

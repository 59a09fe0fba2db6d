"""A raw JSON-RPC stdio MCP server that prints lines that are not JSON and asks for roots early.

    python noisy_server.py

Each answer and the lines around it go out in one write, so a recording sees them in this order:

* ``initialize``: the line ``noisy-server: starting up`` (not JSON), the result, then a
  ``roots/list`` request (id 0), all before the client's ``notifications/initialized``;
* ``tools/list``: one tool, ``echo(text)``;
* ``tools/call``: ``debug: echo called`` (not JSON), the result, then ``debug: echo done``.

The client's answer to ``roots/list`` is read and otherwise ignored; other requests get -32601.
The server exits at the end of its input.
"""

from __future__ import annotations

import json
import sys
from typing import Any

ECHO_TOOL = {
    "name": "echo",
    "description": "Say the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}


def line(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":")) + "\n"


def answer(request: dict[str, Any]) -> str:
    method, rid = request.get("method"), request.get("id")
    if method == "initialize":
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "noisy", "version": "1.0"},
        }
        roots = {"jsonrpc": "2.0", "id": 0, "method": "roots/list"}
        return (
            "noisy-server: starting up\n"
            + line({"jsonrpc": "2.0", "id": rid, "result": result})
            + line(roots)
        )
    if method == "tools/list":
        return line({"jsonrpc": "2.0", "id": rid, "result": {"tools": [ECHO_TOOL]}})
    if method == "tools/call":
        text = request["params"]["arguments"]["text"]
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        return (
            "debug: echo called\n"
            + line({"jsonrpc": "2.0", "id": rid, "result": result})
            + "debug: echo done\n"
        )
    error = {"code": -32601, "message": f"Method not found: {method}"}
    return line({"jsonrpc": "2.0", "id": rid, "error": error})


def main() -> None:
    for raw in sys.stdin:
        message = json.loads(raw)
        if "method" not in message or "id" not in message:
            continue  # notifications and the client's answers
        sys.stdout.write(answer(message))
        sys.stdout.flush()


if __name__ == "__main__":
    main()

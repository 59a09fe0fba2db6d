"""A stdio JSON-RPC server that echoes what it was given in every channel a recorder sees.

    python planted_server.py [ARGS...]

Its whole environment and argv come back in tool results (text and structuredContent), a log
notification, a JSON-RPC error and resources (text, JSON text, and a text blob over 4 KiB, in
base64); tool arguments are echoed the same ways. For tests/e2e/test_record_corpus.py: secrets
planted in its env and argv, or sent by the client, must never reach a byte the recorder writes.
"""

from __future__ import annotations

import base64
import json
import os
import sys

FILLER = "lorem ipsum dolor sit amet " * 160


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def dump() -> str:
    lines = [f"{k}={v}" for k, v in sorted(os.environ.items())]
    return "\n".join(["argv: " + " ".join(sys.argv[1:]), *lines])


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if rid is None:
            continue
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "protocolVersion": params.get("protocolVersion"),
                        "capabilities": {"tools": {}, "resources": {}, "logging": {}},
                        "serverInfo": {"name": "planted", "version": "1"},
                    },
                }
            )
        elif method == "tools/call" and params.get("name") == "fail":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {
                        "code": -32000,
                        "message": dump(),
                        "data": {"env": dict(os.environ), "argv": sys.argv, "args": params.get("arguments")},
                    },
                }
            )
        elif method == "tools/call":
            args = params.get("arguments")
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {
                        "level": "info",
                        "data": {"env": dict(os.environ), "argv": sys.argv, "args": args},
                    },
                }
            )
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "content": [
                            {"type": "text", "text": dump()},
                            {"type": "text", "text": json.dumps(args)},
                        ],
                        "structuredContent": {"env": dict(os.environ), "argv": sys.argv, "args": args},
                    },
                }
            )
        elif method == "resources/read":
            text = dump()
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "contents": [
                            {"uri": "file:///env.txt", "mimeType": "text/plain", "text": text},
                            {
                                "uri": "file:///env.json",
                                "mimeType": "application/json",
                                "text": json.dumps(dict(os.environ)),
                            },
                            {
                                "uri": "file:///big.txt",
                                "mimeType": "text/plain",
                                "blob": base64.b64encode((FILLER + "\n" + text).encode()).decode(),
                            },
                        ]
                    },
                }
            )
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})


if __name__ == "__main__":
    main()

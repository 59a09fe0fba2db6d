"""A changed variant of a real server: runs `mcp-server-time` and rewrites its tools/list.

    python variant_time.py [--remove-tool T] [--require-arg T:ARG] [--widen-output T:PROP]
                           [--flip-readonly T] -- <server command...>

Everything else passes through untouched, so the variant behaves like the real server except
for what it now declares: the verify end-to-end tests expect exactly the matching rule ids.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
from typing import Any


def mutate(tools: list[dict[str, Any]], args: argparse.Namespace) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        name = tool["name"]
        if name in args.remove_tool:
            continue
        for spec in args.require_arg:
            tname, arg = spec.split(":")
            if tname == name:
                schema = tool["inputSchema"]
                schema.setdefault("properties", {})[arg] = {"type": "string"}
                schema.setdefault("required", []).append(arg)
        for spec in args.widen_output:
            tname, prop = spec.split(":")
            if tname == name:
                target = tool["outputSchema"]["properties"][prop]
                target["type"] = [target["type"], "string"]
        if name in args.flip_readonly:
            tool.setdefault("annotations", {})["readOnlyHint"] = False
        out.append(tool)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--remove-tool", action="append", default=[])
    parser.add_argument("--require-arg", action="append", default=[])
    parser.add_argument("--widen-output", action="append", default=[])
    parser.add_argument("--flip-readonly", action="append", default=[])
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert child.stdin and child.stdout

    def forward_input() -> None:
        assert child.stdin
        for line in sys.stdin.buffer:
            child.stdin.write(line)
        child.stdin.close()

    threading.Thread(target=forward_input, daemon=True).start()
    out = sys.stdout.buffer
    for line in child.stdout:
        message = json.loads(line)
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(result, dict) and isinstance(result.get("tools"), list):
            result["tools"] = mutate(result["tools"], args)
            line = json.dumps(message).encode() + b"\n"
        out.write(line)
        out.flush()
    sys.exit(child.wait())


if __name__ == "__main__":
    main()

"""Drive an MCP server through a fixed list of tool calls: the session ``world init`` learns from.

    python examples/world_init/drive.py SESSION.json -- SERVER COMMAND ...

``SESSION.json`` is a list of ``{"tool": NAME, "arguments": {...}}``. The server command is
typically ``harn mcp mock record --cassette C -- <your server>``, so the session is recorded.
Each answer is printed as one line (``ok``/``error`` and its text, clipped). A real agent or an
MCP host pointed at the same ``record`` command records a session just as well.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError


async def drive(session: list[dict[str, Any]], command: list[str]) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    with anyio.fail_after(300):
        async with Client(params, mode="legacy") as client:
            await client.list_tools()
            for step in session:
                try:
                    result = await client.call_tool(step["tool"], step.get("arguments", {}))
                except MCPError as exc:
                    print(f"{step['tool']}: error {exc.code} {exc.error.message}")
                    continue
                texts = " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")
                mark = "error" if result.is_error else "ok"
                print(f"{step['tool']}: {mark} {' '.join(texts.split())[:70]}")


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") != 1 or len(argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    session = json.loads(Path(argv[0]).read_text())
    anyio.run(drive, session, argv[2:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""An MCP server built on the official SDK that says back whatever it is given, in every channel.

    python memory_server.py            # stdio
    python memory_server.py --http     # Streamable HTTP on 127.0.0.1, a free port; prints its URL

Tools: ``echo(text)`` (text content and structuredContent), ``log(text)`` (a log notification),
``fail(text)`` (a tool error), ``big(text)`` (a text over 4 KiB: a sidecar blob), and
``configure(settings)`` (the settings back as JSON text), ``config(path)`` (a file's text: what
the server alone says, the client never sent it). With ``--http`` every request must
carry the header ``X-Upstream-Key`` equal to the environment's ``UPSTREAM_KEY`` (401 otherwise).
For tests/e2e/test_record_value_memory.py: a value the recorder identified as a secret once must
not reach any byte it writes, wherever it comes back.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

FILLER = "lorem ipsum dolor sit amet " * 170

server = MCPServer("memory")


@server.tool()
def echo(text: str) -> dict[str, str]:
    """Say ``text`` back."""
    return {"said": text}


@server.tool()
async def log(text: str, ctx: Context) -> str:
    """Log ``text``."""
    await ctx.info(f"logged {text}")
    return "ok"


@server.tool()
def fail(text: str) -> str:
    """Fail with ``text``."""
    raise ToolError(f"cannot do {text}")


@server.tool()
def big(text: str) -> str:
    """``text`` inside a long text."""
    return f"{FILLER}\n{text}\n{FILLER}"


@server.tool()
def configure(settings: dict[str, Any]) -> str:
    """The settings back, as JSON."""
    return json.dumps(settings)


@server.tool()
def config(path: str) -> str:
    """The text of the file at ``path`` (a service's config dump)."""
    return Path(path).read_text()


def main() -> None:
    if "--http" not in sys.argv:
        server.run()
        return
    import socket

    import uvicorn

    inner = server.streamable_http_app()
    key = os.environ["UPSTREAM_KEY"].encode()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"x-upstream-key") != key:
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        await inner(scope, receive, send)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(guarded, lifespan="on", log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()

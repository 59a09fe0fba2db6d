"""An SDK ``MCPServer`` with 2026-07-28 multi-round-trip tools, for the verify and replay tests.

    python mrtr_server.py            # stdio
    python mrtr_server.py --http     # Streamable HTTP, stateless, on 127.0.0.1 port 0;
                                     # prints `HARN-LISTENING <url>` once it listens

``summarize`` samples the client's LLM (``Resolve(Sample)``): on 2026-07-28 the server answers
the first ``tools/call`` with an ``input_required`` result (``inputRequests`` plus a sealed
``requestState``), and the client retries with ``inputResponses`` and the echoed state; an
older session gets a ``sampling/createMessage`` request mid-call instead. ``lookup`` declares
an ``x-mcp-header`` argument, so a 2026-07-28 HTTP request must carry ``Mcp-Param-Region``.
``add`` is a plain tool. :func:`build` gives the server for in-process use.
"""

from __future__ import annotations

import sys
from typing import Annotated

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Resolve, Sample
from pydantic import Field


def ask_model(text: str) -> Sample:
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=f"Summarize: {text}")
    )
    return Sample([message], max_tokens=32)


def build() -> MCPServer:
    server = MCPServer("mrtr")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    def summarize(text: str, sampled: Annotated[types.CreateMessageResult, Resolve(ask_model)]) -> str:
        """Summarize text with the client's model."""
        content = sampled.content
        said = content.text if isinstance(content, types.TextContent) else "?"
        return f"summary of {len(text)} characters: {said}"

    @server.tool()
    def lookup(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
        """Look a region up (the region is mirrored in the Mcp-Param-Region header)."""
        return f"region {region} is up"

    return server


def main() -> None:
    server = build()
    if "--http" not in sys.argv[1:]:
        server.run("stdio")
        return
    from harn_mcp_mock.http.server import HttpServer

    app = server.streamable_http_app(stateless_http=True)
    http = HttpServer(app, lifespan="on")
    http.run(on_ready=lambda url: print(f"HARN-LISTENING {url}", flush=True))


if __name__ == "__main__":
    main()

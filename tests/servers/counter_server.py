"""A stateful SDK ``MCPServer`` over Streamable HTTP, for the multi-session replay tests.

    python counter_server.py     # Streamable HTTP on 127.0.0.1 port 0 (sessions);
                                 # prints `HARN-LISTENING <url>` once it listens

``increment`` adds one to a counter shared by every session (1, then 2, ...): a client that
reconnects sees the count go on. ``touch`` answers, then (outside any request) tells every
open session that the resource list changed: that notification goes on the session's GET
stream. ``big`` returns a text of ``size`` bytes (the large-answer benchmark).
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer


def build() -> MCPServer:
    server = MCPServer("counter")
    count = 0

    @server.tool()
    def increment() -> int:
        """Add one to the shared counter; the new count."""
        nonlocal count
        count += 1
        return count

    @server.tool()
    async def touch(ctx: Context) -> str:
        """Answer, and announce a resource list change on the GET stream."""
        await ctx.session.send_resource_list_changed()
        return "touched"

    @server.tool()
    def big(size: int) -> str:
        """A text of ``size`` bytes."""
        return "x" * size

    return server


def main() -> None:
    from harn_mcp_mock.http.server import HttpServer

    app = build().streamable_http_app()
    http = HttpServer(app, lifespan="on")
    http.run(on_ready=lambda url: print(f"HARN-LISTENING {url}", flush=True))


if __name__ == "__main__":
    main()

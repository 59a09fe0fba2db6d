"""An SDK ``MCPServer`` whose tools ask the client: sampling, elicitation and roots (era tests).

    python asking_server.py            # stdio
    python asking_server.py --http     # Streamable HTTP on 127.0.0.1 port 0 (stateful for
                                       # handshake-era clients, session-less for 2026-07-28);
                                       # prints `HARN-LISTENING <url>` once it listens

Each tool's parameter is filled by a resolver (``Resolve``) that asks the client, so the
server follows the negotiated protocol on its own: on 2026-07-28 it answers the first
``tools/call`` with an ``input_required`` result (``inputRequests`` and a sealed
``requestState``) and the client retries with ``inputResponses``; on 2025-11-25 and older it
sends ``sampling/createMessage``, ``elicitation/create`` or ``roots/list`` mid-call.

* ``summarize(text)`` samples the client's LLM;
* ``confirm(action)`` elicits ``{"ok": bool}`` from the user;
* ``where()`` lists the client's roots;
* ``plan(topic)`` asks all three (one round of three input requests on 2026-07-28, three
  requests in a row before that).
"""

from __future__ import annotations

import sys
from typing import Annotated

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
from pydantic import BaseModel


class Confirmation(BaseModel):
    ok: bool


def ask_model(text: str) -> Sample:
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=f"Summarize: {text}")
    )
    return Sample([message], max_tokens=32)


def ask_user(action: str) -> Elicit[Confirmation]:
    return Elicit(f"May I {action}?", Confirmation)


def ask_roots() -> ListRoots:
    return ListRoots()


def ask_model_topic(topic: str) -> Sample:
    return ask_model(topic)


def ask_user_topic(topic: str) -> Elicit[Confirmation]:
    return ask_user(f"plan {topic}")


def _said(sampled: types.CreateMessageResult) -> str:
    content = sampled.content
    return content.text if isinstance(content, types.TextContent) else "?"


def build() -> MCPServer:
    server = MCPServer("asking")

    @server.tool()
    def summarize(text: str, sampled: Annotated[types.CreateMessageResult, Resolve(ask_model)]) -> str:
        """Summarize text with the client's model."""
        return f"summary of {len(text)} characters: {_said(sampled)}"

    @server.tool()
    def confirm(action: str, answer: Annotated[Confirmation, Resolve(ask_user)]) -> str:
        """Ask the user before acting."""
        return f"{action}: {'confirmed' if answer.ok else 'refused'}"

    @server.tool()
    def where(roots: Annotated[types.ListRootsResult, Resolve(ask_roots)]) -> str:
        """Name the client's roots."""
        return "roots: " + ", ".join(str(root.uri) for root in roots.roots)

    @server.tool()
    def plan(
        topic: str,
        sampled: Annotated[types.CreateMessageResult, Resolve(ask_model_topic)],
        answer: Annotated[Confirmation, Resolve(ask_user_topic)],
        roots: Annotated[types.ListRootsResult, Resolve(ask_roots)],
    ) -> str:
        """Plan with the model, the user and the roots."""
        return f"plan for {topic}: {_said(sampled)}; ok={answer.ok}; {len(roots.roots)} root(s)"

    return server


def main() -> None:
    server = build()
    if "--http" not in sys.argv[1:]:
        server.run("stdio")
        return
    from harn_mcp_mock.http.server import HttpServer

    http = HttpServer(server.streamable_http_app(), lifespan="on")
    http.run(on_ready=lambda url: print(f"HARN-LISTENING {url}", flush=True))


if __name__ == "__main__":
    main()

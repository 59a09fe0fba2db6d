"""A Streamable HTTP MCP server with the fixtures the conformance suite's server scenarios call.

server-everything lacks them (``test_image_content``, ``test_sampling``, ``test://static-text``...),
so against it most scenarios stop at "not found". This server, written with the project's own
``mcp`` SDK, offers them, so the differential run (scripts/conformance.py) also drives
notifications (logging, progress) and server-to-client requests (sampling, elicitation)
through the record proxy and the replay. It is a test fixture, not a reference server: what it
lacks fails live, and must then fail the same way through the proxy and the replay.

Run: ``python tests/conformance/fixture_server.py`` prints ``http://127.0.0.1:PORT/mcp`` (port 0:
a free one) as its first stdout line and serves until SIGINT/SIGTERM.
"""

from __future__ import annotations

import base64
from typing import Any

from mcp.server.mcpserver import Audio, Context, Image, MCPServer
from pydantic import BaseModel

# A 1x1 PNG and a tiny WAV header: enough for "has data and a mime type".
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00\x80>\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00"


class Contact(BaseModel):
    username: str
    email: str


def build() -> MCPServer:
    server = MCPServer("harn-conformance-fixture", version="1.0.0")

    @server.tool()
    def test_simple_text() -> str:
        """Returns a fixed text."""
        return "This is a simple text response for testing."

    @server.tool()
    def test_image_content() -> Image:
        """Returns an image."""
        return Image(data=PNG, format="png")

    @server.tool()
    def test_audio_content() -> Audio:
        """Returns audio."""
        return Audio(data=WAV, format="wav")

    @server.tool()
    def test_embedded_resource() -> list[Any]:
        """Returns an embedded text resource."""
        from mcp_types import EmbeddedResource, TextResourceContents

        contents = TextResourceContents(
            uri="test://embedded-resource",
            mimeType="text/plain",
            text="This is an embedded resource content.",
        )
        return [EmbeddedResource(type="resource", resource=contents)]

    @server.tool()
    def test_multiple_content_types() -> list[Any]:
        """Returns text, an image and an embedded resource."""
        from mcp_types import EmbeddedResource, ImageContent, TextContent, TextResourceContents

        resource = TextResourceContents(
            uri="test://mixed-content-resource", mimeType="application/json", text='{"test": "data"}'
        )
        return [
            TextContent(type="text", text="Multiple content types test:"),
            ImageContent(type="image", data=base64.b64encode(PNG).decode(), mimeType="image/png"),
            EmbeddedResource(type="resource", resource=resource),
        ]

    @server.tool()
    async def test_tool_with_logging(ctx: Context) -> str:
        """Logs three messages while it runs."""
        for text in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await ctx.info(text)
        return "Tool with logging executed successfully"

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Reports progress 0, 50, 100."""
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        return "Tool with progress executed successfully"

    @server.tool()
    def test_error_handling() -> str:
        """Always fails."""
        raise RuntimeError("This tool intentionally returns an error for testing")

    @server.tool()
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Asks the client's LLM."""
        from mcp_types import SamplingMessage, TextContent

        message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
        result = await ctx.session.create_message(
            [message], max_tokens=100, related_request_id=ctx.request_id
        )
        content = result.content
        text = getattr(content, "text", None) or str(content)
        return f"LLM response: {text}"

    @server.tool()
    async def test_elicitation(message: str, ctx: Context) -> str:
        """Asks the user."""
        result = await ctx.elicit(message, Contact)
        return f"User response: action={result.action}, content={getattr(result, 'data', None)}"

    @server.resource("test://static-text", mime_type="text/plain")
    def static_text() -> str:
        """A static text resource."""
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", mime_type="image/png")
    def static_binary() -> bytes:
        """A static binary resource."""
        return PNG

    @server.resource("test://template/{id}/data", mime_type="application/json")
    def template(id: str) -> str:
        """A resource template."""
        return f'{{"id": "{id}", "templateTest": true, "data": "Data for ID: {id}"}}'

    @server.resource("test://watched-resource", mime_type="text/plain")
    def watched() -> str:
        """A resource to subscribe to."""
        return "Watched resource content"

    @server.prompt()
    def test_simple_prompt() -> str:
        """A prompt without arguments."""
        return "This is a simple prompt for testing."

    @server.prompt()
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with two arguments."""
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt()
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:
        """A prompt with an embedded resource."""
        from mcp.server.mcpserver.prompts.base import UserMessage
        from mcp_types import EmbeddedResource, TextContent, TextResourceContents

        contents = TextResourceContents(
            uri=resourceUri, mimeType="text/plain", text="Embedded resource content for testing."
        )
        return [
            UserMessage(content=EmbeddedResource(type="resource", resource=contents)),
            UserMessage(content=TextContent(type="text", text="Please process the embedded resource above.")),
        ]

    @server.prompt()
    def test_prompt_with_image() -> list[Any]:
        """A prompt with an image."""
        from mcp.server.mcpserver.prompts.base import UserMessage
        from mcp_types import ImageContent, TextContent

        return [
            UserMessage(
                content=ImageContent(type="image", data=base64.b64encode(PNG).decode(), mimeType="image/png")
            ),
            UserMessage(content=TextContent(type="text", text="Please analyze the image above.")),
        ]

    @server.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> Any:
        from mcp_types import Completion

        return Completion(values=["test1", "test2"], total=2, hasMore=False)

    return server


def main() -> None:
    from harn_mcp_mock.http.server import HttpServer

    app = build().streamable_http_app()
    try:
        HttpServer(app, lifespan="on").run()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

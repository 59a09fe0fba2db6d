"""A pydantic-ai agent for `harn mcp mock run`, offline.

    harn mcp mock run --spec bank -- python examples/frameworks/pydantic_ai/agent.py

The model is pydantic-ai's OpenAI model pointed at `harn mcp mock llm`'s scripted endpoint
(served here in-process, logging into the trial's folder); the tools are the trial's world, from
HARN_MCP_CONFIG, through `MCPToolset` (pydantic-ai 2 has no `MCPServerStdio`), one session for
the run.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from harn_mcp_mock.llm import trial_llm


def world_toolset() -> MCPToolset[Any]:
    """The world of this trial, as HARN_MCP_CONFIG names it (stdio command, or a loopback url)."""
    with open(os.environ["HARN_MCP_CONFIG"], encoding="utf-8") as f:
        ((_name, server),) = json.load(f)["mcpServers"].items()
    if "url" in server:
        return MCPToolset(server["url"])
    transport = StdioTransport(server["command"], server.get("args", []), env=server.get("env"))
    return MCPToolset(Client(transport))


async def main() -> int:
    with trial_llm(os.environ["HARN_SPEC"], os.environ.get("HARN_LLM_POLICY", "reference")) as url:  # type: ignore[arg-type]
        model = OpenAIChatModel("scripted", provider=OpenAIProvider(base_url=url, api_key="offline"))
        # retries: a tool error reaches the model as a retry prompt (the error's text and "Fix the
        # errors and try again."); the default of 1 ends the run on a second rate limit.
        agent = Agent(model, toolsets=[world_toolset()], retries=5)
        async with agent:  # one MCP session for the whole run
            result = await agent.run(os.environ["HARN_TASK_PROMPT"])
    print(result.output)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

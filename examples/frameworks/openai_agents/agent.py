"""An openai-agents (Agents SDK) agent for `harn mcp mock run`, offline.

    harn mcp mock run --spec bank -- python examples/frameworks/openai_agents/agent.py

The model is the OpenAI provider pointed at `harn mcp mock llm`'s scripted endpoint (served here
in-process, on loopback, logging into the trial's folder); the MCP servers are the trial's world,
from HARN_MCP_CONFIG: one, or every server of a world of several (`--spec support`: a ticket desk
and a bank over one state), each its own `MCPServerStdio` in `mcp_servers`. Tracing is off:
offline, its exporter would retry a network upload.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from contextlib import AsyncExitStack
from typing import Any

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunContextWrapper,
    Runner,
    set_tracing_disabled,
)
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp
from openai import AsyncOpenAI

from harn_mcp_mock.llm import trial_llm

API = os.environ.get("HARN_OPENAI_API", "responses")  # or chat_completions


def world_servers() -> list[Any]:
    """The world of this trial: each server HARN_MCP_CONFIG names (a stdio command, or a
    loopback url); several for a world of several servers, all over the trial's one state."""
    with open(os.environ["HARN_MCP_CONFIG"], encoding="utf-8") as f:
        servers = json.load(f)["mcpServers"]
    return [mcp_server(name, server) for name, server in servers.items()]


def mcp_server(name: str, server: dict[str, Any]) -> Any:
    if "url" in server:
        return MCPServerStreamableHttp({"url": server["url"]}, name=name, cache_tools_list=True)
    params = {"command": server["command"], "args": server.get("args", []), "env": server.get("env")}
    return MCPServerStdio(params, name=name, cache_tools_list=True, client_session_timeout_seconds=30)


def tool_error_text(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """The MCP error's own message for the model (the SDK's default hides it behind "An error
    occurred while running the tool. Please try again.", so a timeout reads as a plain failure)."""
    return f"Error: {error}"


async def main() -> int:
    set_tracing_disabled(True)
    with trial_llm(os.environ["HARN_SPEC"], os.environ.get("HARN_LLM_POLICY", "reference")) as url:  # type: ignore[arg-type]
        client = AsyncOpenAI(base_url=url, api_key="offline", max_retries=0)
        model = (
            OpenAIResponsesModel("scripted", client)
            if API == "responses"
            else OpenAIChatCompletionsModel("scripted", client)
        )
        async with AsyncExitStack() as stack:  # one session per server for the whole run
            servers = [await stack.enter_async_context(server) for server in world_servers()]
            agent = Agent(
                name="clerk",
                instructions="You operate tools carefully.",
                model=model,
                mcp_servers=servers,
                mcp_config={"failure_error_function": tool_error_text},
            )
            result = await Runner.run(agent, os.environ["HARN_TASK_PROMPT"], max_turns=30)
    print(result.final_output)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

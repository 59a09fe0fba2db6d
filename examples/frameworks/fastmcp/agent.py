"""A fastmcp `Client` agent for `harn mcp mock run`, offline: the smallest host there is.

    harn mcp mock run --spec bank -- python examples/frameworks/fastmcp/agent.py

fastmcp reads HARN_MCP_CONFIG as it is (an `mcpServers` config; with one server, tool names
keep no prefix) and keeps one session inside `async with client`. The model is `harn mcp mock
llm`'s scripted endpoint (served here in-process, logging into the trial's folder), asked through
the `openai` SDK's Chat Completions: this loop is what every host does around a model.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from fastmcp import Client
from fastmcp.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from openai import AsyncOpenAI

from harn_mcp_mock.llm import trial_llm

TURNS = 40


def mcp_config() -> dict[str, Any]:
    """HARN_MCP_CONFIG: {"mcpServers": {"<world>": {"command": ..., "args": [...]} or {"url": ...}}}."""
    with open(os.environ["HARN_MCP_CONFIG"], encoding="utf-8") as f:
        config: dict[str, Any] = json.load(f)
    return config


async def main() -> int:
    config = mcp_config()
    with trial_llm(os.environ["HARN_SPEC"], os.environ.get("HARN_LLM_POLICY", "reference")) as url:  # type: ignore[arg-type]
        model = AsyncOpenAI(base_url=url, api_key="offline", max_retries=0)
        async with Client(config) as world:  # one session for the whole run
            tools = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description or "",
                        "parameters": t.inputSchema,
                    },
                }
                for t in await world.list_tools()
            ]
            messages: list[Any] = [{"role": "user", "content": os.environ["HARN_TASK_PROMPT"]}]
            for _ in range(TURNS):
                answer = await model.chat.completions.create(model="scripted", messages=messages, tools=tools)
                message = answer.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    print(message.content)
                    return 0
                for call in message.tool_calls:
                    try:
                        result = await world.call_tool(
                            call.function.name, json.loads(call.function.arguments)
                        )
                        text = "\n".join(getattr(c, "text", "") for c in result.content)
                    except ToolError as exc:  # an isError result (fastmcp raises on it by default)
                        text = f"Error: {exc}"
                    except MCPError as exc:  # a JSON-RPC error (rate limit, timeout): the SDK's own
                        text = f"Error: {exc.error.message}"
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    return 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

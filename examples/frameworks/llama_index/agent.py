"""A LlamaIndex agent (`FunctionAgent`) for `harn mcp mock run`, offline.

    harn mcp mock run --spec bank -- python examples/frameworks/llama_index/agent.py

The tools are the trial's world (HARN_MCP_CONFIG) through `McpToolSpec`, given one `mcp`
`ClientSession` for the whole run: `BasicMCPClient`, the default, opens a new session (so a
fresh world) for every call. The model is LlamaIndex's own `MockFunctionCallingLLM` whose
response generator plays the task's reference plan (harn_mcp_mock.llm.next_move: the policy of
`harn mcp mock llm`, without HTTP).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.tools.mcp import McpToolSpec
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from harn_mcp_mock.llm import Conversation, Move, ToolCall, ToolResult, next_move
from harn_mcp_mock.llm.server import append_log, load_world, log_entry

SPEC = load_world(os.environ["HARN_SPEC"])
POLICY: Any = os.environ.get("HARN_LLM_POLICY", "reference")


def scripted_answer(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """The next move of the plan, read from LlamaIndex's messages."""
    conv = Conversation(tools=[t.metadata.name for t in kwargs.get("tools") or []])
    index: dict[str, int] = {}
    for m in messages:
        if m.role == MessageRole.TOOL:
            i = index.get(str(m.additional_kwargs.get("tool_call_id")))
            if i is not None:
                conv.calls[i] = (conv.calls[i][0], ToolResult(str(m.content or "")))
            continue
        conv.texts.append(str(m.content or ""))
        for block in m.blocks:
            if isinstance(block, ToolCallBlock):
                index[str(block.tool_call_id)] = len(conv.calls)
                args = (
                    block.tool_kwargs
                    if isinstance(block.tool_kwargs, dict)
                    else json.loads(block.tool_kwargs)
                )
                conv.calls.append((ToolCall(block.tool_name, args), None))
    move = next_move(SPEC, POLICY, conv)
    log(conv, move)
    if not move.calls:
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[TextBlock(text=move.text)])
    n = len(conv.calls)
    blocks = [
        ToolCallBlock(tool_call_id=f"call_{n}", tool_name=c.name, tool_kwargs=c.arguments) for c in move.calls
    ]
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)


MOVES: list[Move] = []


def log(conv: Conversation, move: Move) -> None:
    """Each move into the trial's llm.ndjson, as `harn mcp mock llm` logs its requests."""
    MOVES.append(move)
    trial = os.environ.get("HARN_TRIAL_DIR")
    if trial:
        append_log(
            Path(trial),
            log_entry(len(MOVES), conv, move, os.environ.get("HARN_LLM_POLICY", "reference"))
            | {"api": "inline"},
        )


def mcp_config() -> dict[str, Any]:
    """HARN_MCP_CONFIG: {"mcpServers": {"<world>": {"command": ..., "args": [...]} or {"url": ...}}}."""
    with open(os.environ["HARN_MCP_CONFIG"], encoding="utf-8") as f:
        config: dict[str, Any] = json.load(f)
    return config


async def main() -> int:
    ((_name, server),) = mcp_config()["mcpServers"].items()
    async with AsyncExitStack() as stack:
        if "url" in server:
            read, write, *_ = await stack.enter_async_context(streamable_http_client(server["url"]))
        else:
            params = StdioServerParameters(command=server["command"], args=server.get("args", []))
            read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()  # one session for the whole run
        tools = await McpToolSpec(client=session).to_tool_list_async()
        llm = MockFunctionCallingLLM(response_generator=scripted_answer)
        agent = FunctionAgent(tools=tools, llm=llm, system_prompt="You operate tools carefully.")
        result = await agent.run(user_msg=os.environ["HARN_TASK_PROMPT"], max_iterations=40)
    print(result)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

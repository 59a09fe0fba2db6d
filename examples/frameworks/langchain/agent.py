"""A LangChain agent (`langchain.agents.create_agent`, on LangGraph) for `harn mcp mock run`, offline.

    harn mcp mock run --spec bank -- python examples/frameworks/langchain/agent.py

The tools are the trial's world (HARN_MCP_CONFIG) as LangChain `StructuredTool`s over **one**
`mcp` `ClientSession` kept for the whole run (langchain-mcp-adapters opens a session per call by
default, and its 0.3 line needs mcp<2). A JSON-RPC error (rate limit, timeout) is returned to the
model as its message rather than raised: raised, it would end the run. The model is a LangChain
chat model that plays the task's reference plan (harn_mcp_mock.llm.next_move: the policy of
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

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import Field

from harn_mcp_mock.llm import Conversation, Move, ToolCall, ToolResult, next_move
from harn_mcp_mock.llm.server import append_log, load_world, log_entry

SPEC = load_world(os.environ["HARN_SPEC"])


class ScriptedChatModel(BaseChatModel):
    """Plays the plan: each turn, the next tool call (or the final answer) given the messages."""

    policy: str = "reference"
    tool_names: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "harn-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        return self.model_copy(update={"tool_names": names})

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        conv = Conversation(tools=list(self.tool_names))
        index: dict[str, int] = {}
        for m in messages:
            if isinstance(m, ToolMessage):
                i = index.get(m.tool_call_id)
                if i is not None:
                    conv.calls[i] = (conv.calls[i][0], ToolResult(str(m.content), m.status == "error"))
                continue
            conv.texts.append(m.text if isinstance(m.content, list) else str(m.content))
            for tc in getattr(m, "tool_calls", None) or []:
                index[str(tc["id"])] = len(conv.calls)
                conv.calls.append((ToolCall(tc["name"], dict(tc["args"])), None))
        move = next_move(SPEC, self.policy, conv)  # type: ignore[arg-type]
        log(conv, move)
        n = len(conv.calls)
        calls = [
            {"name": c.name, "args": c.arguments, "id": f"call_{n}", "type": "tool_call"} for c in move.calls
        ]
        return ChatResult(
            generations=[ChatGeneration(message=AIMessage(content=move.text, tool_calls=calls))]
        )


def world_tools(session: ClientSession, listed: Any) -> list[StructuredTool]:
    def make(name: str) -> Any:
        async def call(**arguments: Any) -> str:
            try:
                result = await session.call_tool(name, arguments)
            except MCPError as exc:  # returned, not raised: raised, it ends the agent's run
                return f"Error: {exc.error.message}"
            text = "\n".join(getattr(c, "text", "") for c in result.content)
            return f"Error: {text}" if result.is_error else text

        return call

    return [
        StructuredTool.from_function(
            coroutine=make(t.name),
            name=t.name,
            description=t.description or t.name,
            args_schema=t.input_schema,
        )
        for t in listed.tools
    ]


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
        tools = world_tools(session, await session.list_tools())
        model = ScriptedChatModel(policy=os.environ.get("HARN_LLM_POLICY", "reference"))
        agent = create_agent(model, tools, system_prompt="You operate tools carefully.")
        state = await agent.ainvoke(
            {"messages": [{"role": "user", "content": os.environ["HARN_TASK_PROMPT"]}]},
            {"recursion_limit": 60},
        )
    print(state["messages"][-1].content)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

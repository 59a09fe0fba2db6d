"""In-process agents for the endpoint's tests: an MCP session's tools handed to a model through
the official ``openai`` and ``anthropic`` SDKs, pointed at the scripted endpoint."""

from __future__ import annotations

import json
from typing import Any

from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from harn_mcp_mock.runner import Trial

TURNS = 20


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """A tool's answer as a host hands it to a model: its text, or the error's message."""
    try:
        result = await session.call_tool(name, arguments)
    except MCPError as exc:
        return f"Error: {exc.error.message}", True
    text = "\n".join(getattr(c, "text", "") for c in result.content)
    return text, bool(result.is_error)


def chat_agent(url: str, *, stream: bool = False) -> Any:
    async def agent(session: ClientSession, trial: Trial) -> None:
        from openai import AsyncOpenAI

        listed = await session.list_tools()
        tools = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description or "",
                    "parameters": t.input_schema,
                },
            }
            for t in listed.tools
        ]
        messages: list[Any] = [
            {"role": "system", "content": "You are a bank clerk."},
            {"role": "user", "content": trial.prompt},
        ]
        async with AsyncOpenAI(base_url=url, api_key="unused", max_retries=0) as client:
            for _ in range(TURNS):
                if stream:
                    events = await client.chat.completions.create(
                        model="scripted",
                        messages=messages,
                        tools=tools,
                        stream=True,
                        stream_options={"include_usage": True},
                    )
                    content, calls = "", {}
                    async for chunk in events:
                        for choice in chunk.choices:
                            content += choice.delta.content or ""
                            for tc in choice.delta.tool_calls or []:
                                slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                                slot["id"] += tc.id or ""
                                slot["name"] += (tc.function.name or "") if tc.function else ""
                                slot["arguments"] += (tc.function.arguments or "") if tc.function else ""
                    tool_calls = [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["name"], "arguments": c["arguments"]},
                        }
                        for c in calls.values()
                    ]
                else:
                    answer = await client.chat.completions.create(
                        model="scripted", messages=messages, tools=tools
                    )
                    message = answer.choices[0].message
                    content = message.content or ""
                    tool_calls = [tc.model_dump() for tc in message.tool_calls or []]
                messages.append(
                    {
                        "role": "assistant",
                        "content": content or None,
                        **({"tool_calls": tool_calls} if tool_calls else {}),
                    }
                )
                if not tool_calls:
                    return
                for tc in tool_calls:
                    text, _ = await call(
                        session, tc["function"]["name"], json.loads(tc["function"]["arguments"])
                    )
                    messages.append({"role": "tool", "tool_call_id": tc["id"], "content": text})

    return agent


def responses_agent(url: str, *, stream: bool = False) -> Any:
    async def agent(session: ClientSession, trial: Trial) -> None:
        from openai import AsyncOpenAI

        listed = await session.list_tools()
        tools = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description or "",
                "parameters": t.input_schema,
            }
            for t in listed.tools
        ]
        items: list[Any] = [{"role": "user", "content": trial.prompt}]
        async with AsyncOpenAI(base_url=url, api_key="unused", max_retries=0) as client:
            for _ in range(TURNS):
                if stream:
                    async with client.responses.stream(
                        model="scripted", instructions="You are a bank clerk.", input=items, tools=tools
                    ) as events:
                        async for _event in events:
                            pass
                        answer = await events.get_final_response()
                else:
                    answer = await client.responses.create(
                        model="scripted", instructions="You are a bank clerk.", input=items, tools=tools
                    )
                calls = [o for o in answer.output if o.type == "function_call"]
                items += [o.model_dump(exclude_none=True) for o in answer.output]
                if not calls:
                    return
                for fc in calls:
                    text, _ = await call(session, fc.name, json.loads(fc.arguments))
                    items.append({"type": "function_call_output", "call_id": fc.call_id, "output": text})

    return agent


def messages_agent(url: str, *, stream: bool = False, prefix: str = "mcp__bank__") -> Any:
    """Claude Code's way: tools offered as ``mcp__<server>__<tool>``, errors as ``is_error``."""

    async def agent(session: ClientSession, trial: Trial) -> None:
        from anthropic import AsyncAnthropic

        listed = await session.list_tools()
        tools = [
            {"name": prefix + t.name, "description": t.description or "", "input_schema": t.input_schema}
            for t in listed.tools
        ]
        messages: list[Any] = [{"role": "user", "content": [{"type": "text", "text": trial.prompt}]}]
        async with AsyncAnthropic(
            base_url=url.removesuffix("/v1"), api_key="unused", max_retries=0
        ) as client:
            for _ in range(TURNS):
                if stream:
                    async with client.messages.stream(
                        model="scripted",
                        max_tokens=1024,
                        system="You are a bank clerk.",
                        messages=messages,
                        tools=tools,
                    ) as events:
                        answer = await events.get_final_message()
                else:
                    answer = await client.messages.create(
                        model="scripted",
                        max_tokens=1024,
                        system="You are a bank clerk.",
                        messages=messages,
                        tools=tools,
                    )
                messages.append(
                    {
                        "role": "assistant",
                        "content": [b.model_dump(exclude_none=True) for b in answer.content],
                    }
                )
                uses = [b for b in answer.content if b.type == "tool_use"]
                if not uses:
                    return
                results = []
                for use in uses:
                    text, failed = await call(session, use.name.removeprefix(prefix), dict(use.input))
                    results.append(
                        {"type": "tool_result", "tool_use_id": use.id, "content": text, "is_error": failed}
                    )
                messages.append({"role": "user", "content": results})

    return agent

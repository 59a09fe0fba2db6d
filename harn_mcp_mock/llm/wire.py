"""The three wire formats the scripted endpoint speaks, read into one :class:`Conversation` and
written back from one :class:`Move`: OpenAI Chat Completions, OpenAI Responses and Anthropic
Messages, each as one JSON body or as server-sent events (``stream: true``).

Ids (``call_...``, ``toolu_...``, ``resp_...``) are digests of the request, so the same
conversation gets byte-identical answers; token counts are the texts' lengths over four.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any, Literal

from harn_mcp_mock.llm.policy import Conversation, Move, ToolCall, ToolResult

Api = Literal["chat", "responses", "messages"]
CREATED = 1_767_225_600  # 2026-01-01T00:00:00Z: answers carry no wall-clock time


def _text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif "content" in part and part.get("type") not in ("tool_result", "tool_use"):
                    parts.append(_text(part["content"]))
        return "\n".join(parts)
    return "" if content is None else json.dumps(content)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class _Calls:
    """Tool calls by id, in order, and their results as they come."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.index: dict[str, int] = {}

    def call(self, call_id: str, name: str, arguments: Any) -> None:
        self.index[call_id] = len(self.conversation.calls)
        self.conversation.calls.append((ToolCall(name, _arguments(arguments)), None))

    def result(self, call_id: str, text: str, is_error: bool = False) -> None:
        i = self.index.get(call_id)
        if i is not None:
            self.conversation.calls[i] = (self.conversation.calls[i][0], ToolResult(text, is_error))


def read_request(api: Api, body: dict[str, Any]) -> Conversation:
    """What a request says: its texts, the tools it offers, its tool calls and their results."""
    conv = Conversation()
    calls = _Calls(conv)
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function")
        name = fn.get("name") if isinstance(fn, dict) else tool.get("name")
        if isinstance(name, str):
            conv.tools.append(name)
    if api == "chat":
        for msg in body.get("messages") or []:
            if msg.get("role") == "tool":
                calls.result(str(msg.get("tool_call_id")), _text(msg.get("content")))
                continue
            conv.texts.append(_text(msg.get("content")))
            for tc in msg.get("tool_calls") or []:
                fn = tc.get("function") or {}
                calls.call(str(tc.get("id")), str(fn.get("name")), fn.get("arguments"))
    elif api == "responses":
        conv.texts.append(_text(body.get("instructions")))
        items = body.get("input")
        for item in [{"role": "user", "content": items}] if isinstance(items, str) else items or []:
            kind = item.get("type", "message")
            if kind == "function_call":
                calls.call(str(item.get("call_id")), str(item.get("name")), item.get("arguments"))
            elif kind == "function_call_output":
                calls.result(str(item.get("call_id")), _text(item.get("output")))
            elif kind == "message":
                conv.texts.append(_text(item.get("content")))
    else:
        conv.texts.append(_text(body.get("system")))
        for msg in body.get("messages") or []:
            content = msg.get("content")
            if isinstance(content, str):
                conv.texts.append(content)
                continue
            for block in content or []:
                kind = block.get("type")
                if kind == "tool_use":
                    calls.call(str(block.get("id")), str(block.get("name")), block.get("input"))
                elif kind == "tool_result":
                    text = _text(block.get("content"))
                    calls.result(str(block.get("tool_use_id")), text, bool(block.get("is_error")))
                elif kind == "text":
                    conv.texts.append(str(block.get("text", "")))
    return conv


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _digest(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def _move_text(move: Move) -> str:
    return move.text + "".join(c.name + json.dumps(c.arguments) for c in move.calls)


def render(api: Api, move: Move, raw: bytes, model: str) -> dict[str, Any]:
    """The whole answer to a request (no streaming)."""
    tag = _digest(raw)
    usage_in, usage_out = tokens(raw.decode("utf-8", "replace")), tokens(_move_text(move))
    args = [json.dumps(c.arguments, separators=(",", ":")) for c in move.calls]
    if api == "chat":
        message: dict[str, Any] = {"role": "assistant", "content": move.text or None}
        if move.calls:
            message["tool_calls"] = [
                {"id": f"call_{tag}_{i}", "type": "function", "function": {"name": c.name, "arguments": a}}
                for i, (c, a) in enumerate(zip(move.calls, args, strict=True))
            ]
        return {
            "id": f"chatcmpl-{tag}",
            "object": "chat.completion",
            "created": CREATED,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if move.calls else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": usage_in,
                "completion_tokens": usage_out,
                "total_tokens": usage_in + usage_out,
            },
        }
    if api == "responses":
        output: list[dict[str, Any]] = [
            {
                "type": "function_call",
                "id": f"fc_{tag}_{i}",
                "call_id": f"call_{tag}_{i}",
                "name": c.name,
                "arguments": a,
                "status": "completed",
            }
            for i, (c, a) in enumerate(zip(move.calls, args, strict=True))
        ]
        if not move.calls:
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{tag}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": move.text, "annotations": []}],
                }
            )
        return {
            "id": f"resp_{tag}",
            "object": "response",
            "created_at": CREATED,
            "status": "completed",
            "model": model,
            "output": output,
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": usage_in,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": usage_out,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": usage_in + usage_out,
            },
        }
    content: list[dict[str, Any]] = [
        {"type": "tool_use", "id": f"toolu_{tag}_{i}", "name": c.name, "input": c.arguments}
        for i, c in enumerate(move.calls)
    ]
    if not move.calls:
        content.append({"type": "text", "text": move.text})
    return {
        "id": f"msg_{tag}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if move.calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": usage_in, "output_tokens": usage_out},
    }


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"{head}data: {payload}\n\n".encode()


def stream(api: Api, answer: dict[str, Any], include_usage: bool = True) -> Iterator[bytes]:
    """The same answer as server-sent events, in the order each API's SDK reads them."""
    if api == "chat":
        yield from _stream_chat(answer, include_usage)
    elif api == "responses":
        yield from _stream_responses(answer)
    else:
        yield from _stream_messages(answer)


def _stream_chat(answer: dict[str, Any], include_usage: bool) -> Iterator[bytes]:
    head = {k: answer[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = answer["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(None, head | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": ""})
    if message.get("content"):
        yield chunk({"content": message["content"]})
    for i, tc in enumerate(message.get("tool_calls") or []):
        fn = tc["function"]
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": tc["id"],
                        "type": "function",
                        "function": {"name": fn["name"], "arguments": ""},
                    }
                ]
            }
        )
        yield chunk({"tool_calls": [{"index": i, "function": {"arguments": fn["arguments"]}}]})
    yield chunk({}, choice["finish_reason"])
    if include_usage:
        yield _sse(None, head | {"choices": [], "usage": answer["usage"]})
    yield _sse(None, "[DONE]")


def _stream_responses(answer: dict[str, Any]) -> Iterator[bytes]:
    seq = iter(range(1_000_000))
    start = answer | {"status": "in_progress", "output": []}

    def event(kind: str, **fields: Any) -> bytes:
        return _sse(kind, {"type": kind, "sequence_number": next(seq), **fields})

    yield event("response.created", response=start)
    yield event("response.in_progress", response=start)
    for i, item in enumerate(answer["output"]):
        if item["type"] == "function_call":
            yield event(
                "response.output_item.added",
                output_index=i,
                item=item | {"arguments": "", "status": "in_progress"},
            )
            yield event(
                "response.function_call_arguments.delta",
                output_index=i,
                item_id=item["id"],
                delta=item["arguments"],
            )
            yield event(
                "response.function_call_arguments.done",
                output_index=i,
                item_id=item["id"],
                name=item["name"],
                arguments=item["arguments"],
            )
        else:
            text = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": []}
            yield event(
                "response.output_item.added",
                output_index=i,
                item=item | {"content": [], "status": "in_progress"},
            )
            yield event(
                "response.content_part.added", output_index=i, item_id=item["id"], content_index=0, part=part
            )
            yield event(
                "response.output_text.delta",
                output_index=i,
                item_id=item["id"],
                content_index=0,
                delta=text,
                logprobs=[],
            )
            yield event(
                "response.output_text.done",
                output_index=i,
                item_id=item["id"],
                content_index=0,
                text=text,
                logprobs=[],
            )
            yield event(
                "response.content_part.done",
                output_index=i,
                item_id=item["id"],
                content_index=0,
                part=part | {"text": text},
            )
        yield event("response.output_item.done", output_index=i, item=item)
    yield event("response.completed", response=answer)


def _stream_messages(answer: dict[str, Any]) -> Iterator[bytes]:
    start = answer | {"content": [], "stop_reason": None, "usage": answer["usage"] | {"output_tokens": 1}}
    yield _sse("message_start", {"type": "message_start", "message": start})
    for i, block in enumerate(answer["content"]):
        if block["type"] == "tool_use":
            yield _sse(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": block | {"input": {}}},
            )
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            yield _sse(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
            )
            delta = {"type": "text_delta", "text": block["text"]}
        yield _sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": i})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": answer["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": answer["usage"]["output_tokens"]},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})

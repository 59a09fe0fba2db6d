"""The recording read as steps (a tool call and the answer it got), and what answers show."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harn_mcp_mock.errors import UsageError


@dataclass(slots=True)
class Step:
    session: int
    index: int
    tool: str
    arguments: dict[str, Any]
    answer: dict[str, Any]
    """``{"result": ...}`` or ``{"error": ...}``, as recorded (see :func:`normal`)."""
    method: str = "tools/call"
    """``tools/call`` (``tool`` is the tool's name), ``resources/read`` (the URI) or
    ``prompts/get`` (the prompt's name)."""

    @property
    def label(self) -> str:
        return self.tool if self.method == "tools/call" else f"{self.method} {self.tool}"

    @property
    def ok(self) -> bool:
        result = self.answer.get("result")
        return isinstance(result, dict) and not result.get("isError")


@dataclass(slots=True)
class Recording:
    tools: list[dict[str, Any]]
    server: dict[str, Any]
    sessions: list[list[Step]]
    resources: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def steps(self) -> list[Step]:
        """The tool calls of every session."""
        return [s for session in self.sessions for s in session if s.method == "tools/call"]


def read_recordings(paths: Sequence[Path]) -> Recording:
    """The tools and the tool calls (with their answers) of one or more cassettes of one server."""
    from harn_mcp_mock.cassette.model import load_cassette

    tools: list[dict[str, Any]] = []
    server: dict[str, Any] = {}
    sessions: list[list[Step]] = []
    offered: dict[str, list[dict[str, Any]]] = {"resources": [], "prompts": []}
    for n, path in enumerate(paths):
        cassette = load_cassette(path)
        answers = cassette.responses_by_request()
        steps: list[Step] = []
        for msg in cassette.requests("client"):
            answer = answers.get(msg.seq)
            reply = answer.message if answer is not None and isinstance(answer.message, dict) else None
            if reply is None:
                continue
            params: dict[str, Any] = (
                msg.message.get("params") if isinstance(msg.message.get("params"), dict) else {}
            )
            if msg.method == "initialize" and isinstance(reply.get("result"), dict):
                info = reply["result"].get("serverInfo") or {}
                server = {k: v for k, v in info.items() if k in ("name", "version") and isinstance(v, str)}
                if isinstance(reply["result"].get("instructions"), str):
                    server["instructions"] = reply["result"]["instructions"]
            elif msg.method == "tools/list" and isinstance(reply.get("result"), dict):
                listed = reply["result"].get("tools")
                if isinstance(listed, list) and listed:
                    tools = [t for t in listed if isinstance(t, dict) and isinstance(t.get("name"), str)]
            elif msg.method in ("resources/list", "prompts/list") and isinstance(reply.get("result"), dict):
                kind = msg.method.split("/")[0]
                found = reply["result"].get(kind)
                if isinstance(found, list) and found:
                    offered[kind] = [d for d in found if isinstance(d, dict)]
            elif msg.method == "tools/call" and isinstance(params.get("name"), str):
                args: dict[str, Any] = (
                    params["arguments"] if isinstance(params.get("arguments"), dict) else {}
                )
                steps.append(Step(n, len(steps), params["name"], args, normal(reply)))
            elif msg.method == "resources/read" and isinstance(params.get("uri"), str):
                steps.append(Step(n, len(steps), params["uri"], {}, normal(reply, tool=False), msg.method))
            elif msg.method == "prompts/get" and isinstance(params.get("name"), str):
                args = params["arguments"] if isinstance(params.get("arguments"), dict) else {}
                steps.append(Step(n, len(steps), params["name"], args, normal(reply, tool=False), msg.method))
        sessions.append(steps)
    if not tools:
        raise UsageError(
            f"{paths[0]}: no tools/list answer recorded: record a session that lists the tools "
            "(every MCP client does on start-up)"
        )
    return Recording(tools, server, sessions, offered["resources"], offered["prompts"])


def normal(reply: dict[str, Any], *, tool: bool = True) -> dict[str, Any]:
    """An answer as compared: a tool result's content, structuredContent and isError (false when
    absent), another result without its ``_meta``; an error's code and message."""
    if isinstance(reply.get("error"), dict):
        error = reply["error"]
        return {"error": {"code": error.get("code"), "message": error.get("message")}}
    result: dict[str, Any] = reply["result"] if isinstance(reply.get("result"), dict) else {}
    if not tool:
        return {"result": {k: v for k, v in result.items() if k != "_meta"}}
    out: dict[str, Any] = {"content": result.get("content", [])}
    if "structuredContent" in result:
        out["structuredContent"] = result["structuredContent"]
    out["isError"] = bool(result.get("isError", False))
    return {"result": out}


def value_of(answer: dict[str, Any]) -> Any:
    """What a successful answer shows: its structuredContent, else its text read as JSON, else
    the text."""
    result = answer.get("result") or {}
    if "structuredContent" in result:
        return result["structuredContent"]
    text = text_of(answer)
    if text is not None:
        import orjson

        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
    return None


def text_of(answer: dict[str, Any]) -> str | None:
    content = (answer.get("result") or {}).get("content")
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        text = content[0].get("text")
        if content[0].get("type") == "text" and isinstance(text, str):
            return text
    return None


def is_json(text: str) -> bool:
    import orjson

    try:
        return isinstance(orjson.loads(text), dict | list)
    except orjson.JSONDecodeError:
        return False


def templated(value: Any, args: dict[str, Any]) -> Any:
    if isinstance(value, str):
        return argument_template(value, args)
    if isinstance(value, list):
        return [templated(v, args) for v in value]
    if isinstance(value, dict):
        return {k: templated(v, args) for k, v in value.items()}
    return value


def structured_value(step: Step) -> Any:
    result = step.answer.get("result") or {}
    return result.get("structuredContent", value_of(step.answer))


def argument_template(text: str, args: dict[str, Any], prefix: str = "args") -> str:
    """``text`` with the (string) argument values in it replaced by ``{args.NAME}``, longest first."""
    pairs = sorted(
        ((k, v) for k, v in args.items() if isinstance(v, str) and len(v) >= 2),
        key=lambda kv: -len(kv[1]),
    )
    for k, v in pairs:
        text = text.replace(v, f"{{{prefix}.{k}}}")
    return text


def structured_of(answer: dict[str, Any]) -> Any:
    result = answer.get("result") or {}
    return result.get("structuredContent", value_of(answer))


def text_answer(shown: Step | None, template: Any) -> dict[str, Any]:
    """A model's ``result`` and ``text`` for an answer rendered by ``template``: inside the one
    field of the recorded structuredContent (``{"entities": …}``) when ``shown``, the tool's first
    recorded success, has such a field; else the text alone."""
    sc = (shown.answer.get("result") or {}).get("structuredContent") if shown is not None else None
    if isinstance(sc, dict) and len(sc) == 1:
        field_name = next(iter(sc))
        return {"result": {field_name: template}, "text": f"{{result.{field_name}}}"}
    return {"result": None, "text": template}

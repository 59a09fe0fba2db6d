"""What the scripted model says next: a task's reference plan played one turn at a time.

The endpoint keeps no state between requests. Each request carries the whole conversation, so
the next move is found by replaying the policy over it: :func:`next_move` feeds the tool
results the conversation already holds to a fresh plan generator, and the first call it yields
past them (or its final answer) is the answer to this request. The same conversation always
gets the same move.

Policies (``--policy``):

- ``reference``: plays the task's reference plan (the world spec's ``reference``) and recovers as
  a careful agent does, reading each tool result's text: a rate-limited or unavailable call is
  sent again; a timed-out call of an idempotent tool is sent again, and of one that is not
  idempotent (``annotations.idempotentHint``) is first checked with a read-only tool that takes
  the same arguments (for the bank, ``list_transfers`` after a ``transfer``) and sent again only
  when that read does not show it; a failed write of an idempotent tool (a partial write) is
  repeated; any other error is retried once, then the model gives up with a final answer.
- ``naive``: plays the same plan, but sends every failed call again blindly (a timeout
  included, so a ghost success is applied twice) and gives up on tool errors (``isError``):
  the agent that fault profiles are meant to catch.
- ``noop``: calls nothing and answers at once: the floor every goal is missed from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from harn_mcp_mock.world.spec import TaskSpec, WorldSpec

POLICIES = ("reference", "naive", "noop")
Policy = Literal["reference", "naive", "noop"]
MAX_ATTEMPTS = 4
"""Sends of one plan step at most (the first and three retries)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    """The tool's name as the host offered it (``mcp__bank__transfer``)."""
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    text: str
    is_error: bool = False
    """What the host said besides the text (Anthropic's ``is_error``); hosts that say nothing
    leave False, and the text is read."""


@dataclass(slots=True)
class Conversation:
    """A request, whatever API it came in: the texts (system, user, assistant), the tools
    offered, and the tool calls made so far with their results (in order)."""

    texts: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    calls: list[tuple[ToolCall, ToolResult | None]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Move:
    """The model's answer: tool calls to make (one, here), or a final text."""

    calls: tuple[ToolCall, ...] = ()
    text: str = ""


# -- reading a conversation ---------------------------------------------------------------------


def find_task(spec: WorldSpec, texts: Iterable[str]) -> TaskSpec | None:
    """The task whose description (or, failing that, whose id) the conversation holds."""
    joined = "\n".join(texts)
    squashed = " ".join(joined.split())
    for task in spec.tasks.values():
        if " ".join(task.description.split()) in squashed:
            return task
    for task in spec.tasks.values():
        if re.search(rf"(?<![\w-]){re.escape(task.id)}(?![\w-])", joined):
            return task
    return None


def offered_name(tool: str, offered: Iterable[str]) -> str | None:
    """The offered name of the world's ``tool``: itself, or with a host's prefix
    (``mcp__bank__transfer``, ``bank_transfer``, ``bank.transfer``)."""
    names = list(offered)
    if tool in names:
        return tool
    for sep in ("__", "_", ".", "-", "/"):
        found = sorted(n for n in names if n.endswith(sep + tool))
        if found:
            return found[0]
    return None


Outcome = Literal["ok", "rate_limited", "unavailable", "timeout", "partial", "error"]


def outcome(result: ToolResult) -> Outcome:
    """What a tool result's text says happened (the messages of docs/faults.md, as hosts pass
    them on: whole, or wrapped in their own words)."""
    text = result.text.lower()
    if "retry after" in text or "rate limit" in text:
        return "rate_limited"
    if "timed out" in text or "may have completed" in text:
        return "timeout"
    if "service unavailable" in text or "retry later" in text:
        return "unavailable"
    if "partly applied" in text or "partial failure" in text:
        return "partial"
    if result.is_error:
        return "error"
    if json_values(result.text) is not None:
        return "ok"
    return "error" if re.search(r"\b(error|exception|failed|invalid)\b", text) else "ok"


def json_values(text: str) -> Any:
    """The JSON a tool result's text holds (whole, or the first object in it), or None."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    start = text.find("{")
    while start != -1:
        try:
            return json.JSONDecoder().raw_decode(text, start)[0]
        except ValueError:
            start = text.find("{", start + 1)
    return None


def _objects(value: Any) -> Iterable[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item)
    elif isinstance(value, str) and value[:1] in "{[":
        inner = json_values(value)
        if inner is not None and inner != value:
            yield from _objects(inner)


def shows(result: ToolResult, arguments: dict[str, Any]) -> bool:
    """Whether a read's result holds an item carrying every scalar argument of a write."""
    wanted = [v for v in arguments.values() if isinstance(v, str | int | float) and not isinstance(v, bool)]
    for obj in _objects(json_values(result.text)):
        values = list(obj.values())
        if all(w in values for w in wanted):
            return True
    return False


# -- the plan ----------------------------------------------------------------------------------

Step = tuple[str, dict[str, Any]]
Plan = Generator[Step, ToolResult, str]


def _witness(spec: WorldSpec, tool: str, arguments: dict[str, Any]) -> Step | None:
    """A read-only tool taking the most of a write's arguments (by name): what shows whether
    the write happened."""
    best: Step | None = None
    for name, t in spec.tools.items():
        annotations = t.definition.get("annotations") or {}
        if name == tool or not annotations.get("readOnlyHint"):
            continue
        props = (t.definition.get("inputSchema") or {}).get("properties") or {}
        shared = {k: v for k, v in arguments.items() if k in props}
        if shared and (best is None or len(shared) > len(best[1])):
            best = (name, shared)
    return best


def _idempotent(spec: WorldSpec, tool: str) -> bool:
    t = spec.tools.get(tool)
    annotations = (t.definition.get("annotations") or {}) if t is not None else {}
    return bool(annotations.get("idempotentHint") or annotations.get("readOnlyHint"))


def _send(step: Step) -> Generator[Step, ToolResult, tuple[Outcome, ToolResult]]:
    """Send a step, again while it is rate limited or unavailable (up to MAX_ATTEMPTS)."""
    for _ in range(MAX_ATTEMPTS - 1):
        result = yield step
        seen = outcome(result)
        if seen not in ("rate_limited", "unavailable"):
            return seen, result
    result = yield step
    return outcome(result), result


def reference_plan(spec: WorldSpec, task: TaskSpec) -> Plan:
    done: list[str] = []
    for raw in task.reference:
        step: Step = (str(raw["tool"]), dict(raw.get("arguments") or {}))
        errors = 0
        for _ in range(MAX_ATTEMPTS):
            seen, result = yield from _send(step)
            if seen == "ok":
                break
            if seen == "timeout" and not _idempotent(spec, step[0]):
                witness = _witness(spec, *step)
                if witness is None:
                    return _final(task, done, f"{step[0]} timed out and nothing shows whether it happened")
                read, read_result = yield from _send(witness)
                if read == "ok" and shows(read_result, step[1]):
                    break  # it happened: sending it again would do it twice
            elif seen == "partial" and not _idempotent(spec, step[0]):
                return _final(task, done, f"{step[0]} partly applied: {result.text}")
            elif seen == "error":
                errors += 1
                if errors > 1:
                    return _final(task, done, f"{step[0]} failed: {result.text}")
        else:
            return _final(task, done, f"{step[0]} kept failing")
        done.append(step[0])
    return _final(task, done)


def naive_plan(spec: WorldSpec, task: TaskSpec) -> Plan:
    done: list[str] = []
    for raw in task.reference:
        step: Step = (str(raw["tool"]), dict(raw.get("arguments") or {}))
        for _ in range(MAX_ATTEMPTS):
            result = yield step
            seen = outcome(result)
            if seen == "ok":
                break
            if seen in ("error", "partial"):
                return _final(task, done, f"{step[0]} failed: {result.text}")
        else:
            return _final(task, done, f"{step[0]} kept failing")
        done.append(step[0])
    return _final(task, done)


def _final(task: TaskSpec, done: list[str], failure: str | None = None) -> str:
    calls = ", ".join(done) or "nothing"
    if failure is not None:
        return f"I could not finish {task.id}: {failure}. Done so far: {calls}."
    return f"Done: {task.id} ({calls})."


def next_move(spec: WorldSpec, policy: Policy, conversation: Conversation) -> Move:
    """This request's answer: the next tool call of the task's plan, or the final text."""
    task = find_task(spec, conversation.texts)
    if task is None:
        return Move(text=f"I found no {spec.name} task in this conversation.")
    if policy == "noop":
        return Move(text=f"I will not act on {task.id}.")
    plan = reference_plan(spec, task) if policy == "reference" else naive_plan(spec, task)
    try:
        step = next(plan)
        for _call, result in conversation.calls:
            if result is None:  # a call the host did not answer: ask again
                break
            step = plan.send(result)
    except StopIteration as stop:
        return Move(text=str(stop.value))
    name = offered_name(step[0], conversation.tools)
    if name is None:
        offered = ", ".join(conversation.tools) or "none"
        return Move(text=f"I cannot do {task.id}: no tool {step[0]!r} is offered (offered: {offered}).")
    return Move(calls=(ToolCall(name, step[1]),))
